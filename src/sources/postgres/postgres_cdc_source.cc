#include "sources/postgres/postgres_cdc_source.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <thread>
#include <utility>

#include "core/text.h"
#include "sources/postgres/slot.h"
#include "sources/postgres/walsender_protocol.h"

namespace faucet {

Result<std::unique_ptr<Source>> MakePostgresCdcSource(const config::Block& block) {
  ASSIGN_OR_RETURN(PostgresCdcConfig config, ParsePostgresCdcConfig(block));
  return std::unique_ptr<Source>(std::make_unique<postgres::PostgresCdcSource>(std::move(config)));
}

namespace postgres {
namespace {

using Clock = std::chrono::steady_clock;

// Most messages Receive handles in one call (see there).
constexpr size_t kBurstMessages = 1024;

Bookmark MakeBookmark(Lsn lsn) { return Bookmark{Json{{"last_lsn", lsn.ToString()}}}; }

Result<Lsn> ParseBookmark(const Bookmark& b) {
  if (b.value.is_object() && b.value.contains("last_lsn") && b.value["last_lsn"].is_string()) {
    Result<Lsn> lsn = Lsn::Parse(b.value["last_lsn"].get<std::string>());
    if (lsn.ok()) return *lsn;
  }
  return DataLoss("bookmark " + b.ToString() +
                  " is not a postgres-cdc bookmark ({\"last_lsn\":\"X/Y\"})");
}

}  // namespace

PostgresCdcSource::PostgresCdcSource(PostgresCdcConfig config)
    : config_(std::move(config)),
      decoder_(DecoderOptions{config_.stream_memory_bytes, config_.spill_dir}),
      pager_({config_.batch_size, config_.page_bytes, config_.linger, config_.linger}) {}

PostgresCdcSource::~PostgresCdcSource() {
  // Acknowledgements that arrived after the last timed update still reach the slot. Only
  // persisted positions are ever in acked_, so this is as safe as any other update.
  if (conn_ != nullptr && phase_ != Phase::kCreated) (void)SendStatus();
}

Status PostgresCdcSource::Open(const std::optional<Bookmark>& start) {
  if (phase_ != Phase::kCreated) return Internal("postgres-cdc source opened twice");
  std::optional<Lsn> bookmark;
  if (start) {
    ASSIGN_OR_RETURN(Lsn b, ParseBookmark(*start));
    bookmark = b;
  }
  ASSIGN_OR_RETURN(conn_,
                   Connect(config_.connection_url, config_.tls, ConnectionKind::kReplication));
  RETURN_IF_ERROR(CheckPublication(conn_.get(), config_.publication_name));
  ASSIGN_OR_RETURN(SlotInfo slot, EnsureSlot(conn_.get(), config_, config_.create_slot_if_missing));
  // Resume where the state says; with no state, at start_lsn; with neither, 0/0 lets the server
  // start at the slot's confirmed position.
  const Lsn resume = bookmark ? *bookmark : config_.start_lsn.value_or(Lsn());
  if (!resume.is_zero()) RETURN_IF_ERROR(CheckNotAheadOf(slot, config_.slot_name, resume));
  // Only a persisted bookmark may be reported; start_lsn is the user's wish, not a durability
  // claim of ours.
  acked_.store(bookmark ? bookmark->value() : 0);
  last_emitted_ = Lsn(acked_.load());
  idle_floor_ = std::max(resume, slot.confirmed_flush_lsn.value_or(Lsn()));
  RETURN_IF_ERROR(StartReplication(resume));
  phase_ = Phase::kStreaming;
  cycle_start_ = last_data_ = Clock::now();
  spdlog::info("postgres-cdc slot '{}': streaming publication '{}' from {} (proto {})",
               config_.slot_name, config_.publication_name,
               resume.is_zero() ? "the slot's confirmed position" : resume.ToString(),
               config_.proto_version);
  return SendStatus();
}

Status PostgresCdcSource::StartReplication(Lsn start) {
  char* ident = PQescapeIdentifier(conn_.get(), config_.publication_name.data(),
                                   config_.publication_name.size());
  if (ident == nullptr) return InvalidArgument("cannot quote publication name");
  // publication_names is a comma-separated list of identifiers inside a string literal.
  Result<std::string> publications = Literal(conn_.get(), ident);
  PQfreemem(ident);
  if (!publications.ok()) return publications.status();
  // Options: docs "Logical Streaming Replication Parameters". streaming 'on' (protocol 2) sends
  // large in-progress transactions in chunks instead of spilling them on the server.
  std::string sql = "START_REPLICATION SLOT \"" + config_.slot_name + "\" LOGICAL " +
                    start.ToString() + " (proto_version '" + std::to_string(config_.proto_version) +
                    "', publication_names " + *publications + ", messages 'true'" +
                    (config_.proto_version >= 2 ? ", streaming 'on'" : "") + ")";
  for (int attempt = 0;; ++attempt) {
    ResultPtr r(PQexec(conn_.get(), sql.c_str()));
    if (r != nullptr && PQresultStatus(r.get()) == PGRES_COPY_BOTH) return Status::Ok();
    Status error = StatementError(conn_.get(), r.get(),
                                  "starting replication from slot '" + config_.slot_name + "'");
    if (SqlState(r.get()) != kSqlStateObjectInUse) return error;
    if (attempt >= config_.slot_acquire_retries) {
      return Unavailable(error.message() + " (still active after " +
                         std::to_string(config_.slot_acquire_retries) + " retries)");
    }
    spdlog::info("postgres-cdc slot '{}' is active; retrying in {} ms", config_.slot_name,
                 SlotBusyBackoff(attempt).count());
    std::this_thread::sleep_for(SlotBusyBackoff(attempt));
  }
}

Status PostgresCdcSource::SendStatus() {
  const Lsn position(acked_.load());
  const std::string message = EncodeStandbyStatus(position, position, position, NowPostgresMicros(),
                                                  /*reply_requested=*/false);
  if (PQputCopyData(conn_.get(), message.data(), static_cast<int>(message.size())) != 1 ||
      PQflush(conn_.get()) == -1) {
    return StatementError(conn_.get(), nullptr, "sending standby status update");
  }
  last_status_ = Clock::now();
  ++stats_.status_updates;
  return Status::Ok();
}

Status PostgresCdcSource::KeepAlive() {
  if (phase_ != Phase::kStreaming) return Status::Ok();
  if (Clock::now() - last_status_ < config_.status_update_interval) return Status::Ok();
  return SendStatus();
}

PostgresCdcStats PostgresCdcSource::stats() const {
  PostgresCdcStats s = stats_;
  s.spilled_bytes = decoder_.stream_buffer().spilled_bytes();
  return s;
}

Status PostgresCdcSource::Acknowledge(const Bookmark& durable) {
  ASSIGN_OR_RETURN(Lsn lsn, ParseBookmark(durable));
  uint64_t seen = acked_.load();
  while (lsn.value() > seen && !acked_.compare_exchange_weak(seen, lsn.value())) {
  }
  return Status::Ok();
}

Result<SourceEvent> PostgresCdcSource::Next(std::chrono::milliseconds wait) {
  if (phase_ == Phase::kCreated) return Internal("postgres-cdc source: Next before Open");
  const Clock::time_point deadline = Clock::now() + wait;
  while (true) {
    if (pager_.has_ready()) return SourceEvent{SourceEvent::Kind::kPage, pager_.PopReady()};
    if (phase_ == Phase::kEnded) return SourceEvent{SourceEvent::Kind::kEnd, {}};

    Clock::time_point now = Clock::now();
    if (now - last_status_ >= config_.status_update_interval) RETURN_IF_ERROR(SendStatus());
    if (decoder_.replaying()) {
      events_.clear();
      RETURN_IF_ERROR(decoder_.Replay(config_.batch_size, events_));
      RETURN_IF_ERROR(AddEvents(events_));
      continue;
    }
    const bool idle = now - last_data_ >= config_.idle_timeout;
    const bool long_cycle =
        now - cycle_start_ >= config_.max_cycle_duration && !decoder_.in_transaction();
    if (idle || long_cycle) {
      spdlog::info(
          "postgres-cdc slot '{}': cycle ends ({}); {} keepalives, {} streamed "
          "transactions, {} bytes spilled",
          config_.slot_name, idle ? "idle_timeout without data" : "max_cycle_duration",
          stats_.keepalives, stats_.streamed_transactions, stats().spilled_bytes);
      // Complete transactions go out; the open one (if any) and the staged changes not handed
      // out yet are dropped unacknowledged, and come again next cycle (the sink drops what it
      // staged of them when it opens).
      pager_.DropOpen();
      pager_.Flush();
      staged_page_ = Page{};
      phase_ = Phase::kEnded;
      continue;
    }
    pager_.Tick(now);
    if (pager_.has_ready()) continue;
    if (now >= deadline) return SourceEvent{SourceEvent::Kind::kIdle, {}};

    Clock::time_point until = std::min({deadline, last_status_ + config_.status_update_interval,
                                        last_data_ + config_.idle_timeout});
    // A long cycle ends between transactions only: inside one, its end is no reason to wake.
    if (!decoder_.in_transaction()) {
      until = std::min(until, cycle_start_ + config_.max_cycle_duration);
    }
    if (std::optional<Clock::time_point> linger = pager_.deadline()) {
      until = std::min(until, *linger);
    }
    Status received = Receive(until);
    if (!received.ok()) {
      return received.WithContext("postgres-cdc slot '" + config_.slot_name + "'");
    }
  }
}

Status PostgresCdcSource::Receive(Clock::time_point until) {
  bool read_socket = false;  // the socket was read and gave no complete message
  // Messages handled in this call: a burst that libpq already holds is taken whole (up to
  // kBurstMessages, or until a page is ready or a streamed transaction replays), with one clock
  // reading for it rather than one per message.
  size_t handled = 0;
  bool data = false;  // a handled message carried WAL data (keepalives do not count)
  auto done = [&] {
    if (data) last_data_ = Clock::now();
    return Status::Ok();
  };
  while (true) {
    char* buffer = nullptr;
    int n = PQgetCopyData(conn_.get(), &buffer, /*async=*/1);
    if (n > 0) {
      Result<bool> carried = HandleCopyData(std::string_view(buffer, static_cast<size_t>(n)));
      PQfreemem(buffer);
      if (!carried.ok()) return carried.status();
      data = data || *carried;
      if (++handled < kBurstMessages && !pager_.has_ready() && !decoder_.replaying()) continue;
      return done();
    }
    if (n == -1) {
      ResultPtr r(PQgetResult(conn_.get()));
      if (r != nullptr && PQresultStatus(r.get()) == PGRES_FATAL_ERROR) {
        return StatementError(conn_.get(), r.get(), "replication stream");
      }
      return Unavailable("the server ended the replication stream");
    }
    if (n == -2) {
      return StatementError(conn_.get(), nullptr, "replication connection failed");
    }
    // No complete message is buffered. A whole burst queued is read at once; less than that is
    // left to fill while the server is sending (kBurstNap), and waited for in poll() when the
    // stream has gone quiet.
    if (!BurstQueued(conn_.get())) {
      if (handled > 0) return done();
      const Clock::time_point now = Clock::now();
      if (now >= until) {
        if (read_socket) return Status::Ok();  // out of time: one read, no wait
      } else if (now - last_data_ < kBurstNap) {
        std::this_thread::sleep_for(std::min<Clock::duration>(kBurstNap, until - now));
      } else if (read_socket) {
        // Quiet for a nap: complete transactions leave now rather than at their linger.
        pager_.FlushChanges();
        if (pager_.has_ready()) return done();
        auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now);
        pollfd fd{PQsocket(conn_.get()), POLLIN, 0};
        int ready = poll(&fd, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno != EINTR) {
          return Unavailable("poll on replication connection failed");
        }
        if (ready <= 0) return Status::Ok();
      }
    }
    if (!ReadAvailable(conn_.get())) {
      return StatementError(conn_.get(), nullptr, "replication connection failed");
    }
    read_socket = true;
  }
}

Result<bool> PostgresCdcSource::HandleCopyData(std::string_view data) {
  ASSIGN_OR_RETURN(ReplicationMessage message, ParseReplicationMessage(data));
  if (const auto* x = std::get_if<XLogData>(&message)) {
    events_.clear();
    Status s = decoder_.Decode(x->payload, events_);
    if (!s.ok()) return s.WithContext("at WAL position " + x->wal_start.ToString());
    if (decoder_.replaying()) ++stats_.streamed_transactions;
    RETURN_IF_ERROR(AddEvents(events_));
    return true;
  }
  const Keepalive& k = std::get<Keepalive>(message);
  ++stats_.keepalives;
  // The reply carries the persisted position, never k.wal_end (spec/000 §3).
  if (k.reply_requested) RETURN_IF_ERROR(SendStatus());
  MaybeEmitIdlePage(k.wal_end);
  return false;
}

namespace {

bool KeyChanged(const Change& c) {
  return KeyChanged(*c.relation, *c.before, *c.after, [](const Column& col) { return col.key; });
}

}  // namespace

Status PostgresCdcSource::FillMovedToast(Change& c, bool committed) {
  if (c.op != ChangeOp::kUpdate || !c.before || !c.after) return Status::Ok();
  Row& after = *c.after;
  std::vector<size_t> missing;
  for (size_t i = 0; i < after.size(); ++i) {
    if (after[i].state != CellState::kUnchangedToast) continue;
    // REPLICA IDENTITY FULL sends the old row in full: its value is the unchanged one.
    if (i < c.before->size() && (*c.before)[i].state == CellState::kValue) {
      after[i] = (*c.before)[i];
    } else {
      missing.push_back(i);
    }
  }
  if (missing.empty() || !committed || !KeyChanged(c)) return Status::Ok();

  // The row moved to a new key and Postgres did not send its unchanged TOAST values (they are
  // not in this transaction's WAL). A destination has them only under the old key, which the
  // move deletes, so they are read from the source: the row's current values, which are these
  // or, if a later transaction changed them, values that transaction will deliver again, so
  // the destination converges either way. A row that no longer exists keeps the cells
  // unchanged; the later change that removed it removes it downstream too.
  const Relation& r = *c.relation;
  std::string sql = "SELECT ";
  for (size_t k = 0; k < missing.size(); ++k) {
    sql += (k ? ", " : "") + QuoteIdentifier(r.columns[missing[k]].name, '"');
  }
  sql += " FROM " + QuoteIdentifier(r.schema, '"') + "." + QuoteIdentifier(r.name, '"') + " WHERE ";
  std::vector<const char*> params;
  for (size_t i = 0; i < r.columns.size(); ++i) {
    if (!r.columns[i].key) continue;
    if (after[i].state != CellState::kValue) return Status::Ok();
    params.push_back(after[i].text.c_str());
    sql += (params.size() > 1 ? " AND " : "") + QuoteIdentifier(r.columns[i].name, '"') + " = $" +
           std::to_string(params.size());
  }
  if (params.empty()) return Status::Ok();
  if (!lookup_conn_) {
    ASSIGN_OR_RETURN(lookup_conn_,
                     Connect(config_.connection_url, config_.tls, ConnectionKind::kSql));
  }
  ResultPtr res(PQexecParams(lookup_conn_.get(), sql.c_str(), static_cast<int>(params.size()),
                             nullptr, params.data(), nullptr, nullptr, 0));
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK) {
    Status st = StatementError(
        lookup_conn_.get(), res.get(),
        "reading the unchanged TOAST values of a moved row of " + r.schema + "." + r.name);
    lookup_conn_.reset();
    return st;
  }
  if (PQntuples(res.get()) == 0) return Status::Ok();
  for (size_t k = 0; k < missing.size(); ++k) {
    std::optional<std::string> v = Value(res.get(), 0, static_cast<int>(k));
    after[missing[k]] = v ? Cell::Value(std::move(*v)) : Cell::Null();
  }
  ++stats_.moved_toast_lookups;
  return Status::Ok();
}

Status PostgresCdcSource::AddEvents(std::vector<TxnEvent>& events) {
  for (TxnEvent& e : events) {
    switch (e.kind) {
      case TxnEvent::Kind::kChange:
        RETURN_IF_ERROR(FillMovedToast(e.change, /*committed=*/true));
        pager_.AddChange(std::move(e.change));
        break;
      case TxnEvent::Kind::kCommit:
        pager_.Commit(MakeBookmark(e.end_lsn));
        last_emitted_ = e.end_lsn;
        break;
      case TxnEvent::Kind::kStagedChange: {
        // A page holds one subtransaction's changes, so that its rollback names them.
        if (!staged_page_.changes.empty() &&
            (staged_page_.staged->txn != e.xid || staged_page_.staged->part != e.subxid)) {
          EmitStagedChanges();
        }
        if (staged_page_.changes.empty()) {
          staged_page_.staged = StagedStep{StagedStep::Kind::kChanges, e.xid, e.subxid, 0, 0};
        }
        RETURN_IF_ERROR(FillMovedToast(e.change, /*committed=*/false));
        staged_bytes_ += e.change.ApproxBytes();
        staged_page_.changes.push_back(std::move(e.change));
        if (staged_page_.changes.size() >= config_.batch_size ||
            staged_bytes_ >= config_.page_bytes) {
          EmitStagedChanges();
        }
        break;
      }
      case TxnEvent::Kind::kStagedAbort:
      case TxnEvent::Kind::kStagedCommit: {
        EmitStagedChanges();
        const bool commit = e.kind == TxnEvent::Kind::kStagedCommit;
        Page page;
        page.staged = StagedStep{commit ? StagedStep::Kind::kCommit : StagedStep::Kind::kAbort,
                                 e.xid, e.subxid, e.commit_lsn.value(), e.commit_time_us};
        if (commit) {
          // After the transactions that committed before it.
          pager_.Flush();
          ++stats_.streamed_transactions;
          page.bookmark = MakeBookmark(e.end_lsn);
          last_emitted_ = e.end_lsn;
        }
        pager_.Emit(std::move(page));
        break;
      }
    }
  }
  return Status::Ok();
}

void PostgresCdcSource::EmitStagedChanges() {
  if (staged_page_.changes.empty()) return;
  pager_.Emit(std::exchange(staged_page_, Page{}));
  staged_bytes_ = 0;
}

void PostgresCdcSource::MaybeEmitIdlePage(Lsn wal_end) {
  const Lsn acked(acked_.load());
  // Everything the server sent before this keepalive (all transactions committed before
  // wal_end) has been emitted and acknowledged; nothing is open. Then wal_end is as good a
  // resume position as any commit end, and checkpointing it lets the slot advance.
  // While the walsender catches up from the slot's restart_lsn its keepalives report positions
  // below where this run started: checkpointing one would move the state behind the slot.
  if (decoder_.in_transaction() || decoder_.open_streams() > 0 || !pager_.empty() ||
      last_emitted_ > acked || wal_end <= std::max(acked, idle_floor_)) {
    return;
  }
  pager_.Commit(MakeBookmark(wal_end));
  pager_.Flush();
  last_emitted_ = wal_end;
}

Result<Bookmark> PostgresCdcSource::CapturePosition() {
  if (config_.temporary_slot) {
    return FailedPrecondition(
        "slot_type temporary cannot hold a position across runs; use a "
        "permanent slot to capture a resume position");
  }
  ASSIGN_OR_RETURN(ConnPtr conn,
                   Connect(config_.connection_url, config_.tls, ConnectionKind::kReplication));
  RETURN_IF_ERROR(CheckPublication(conn.get(), config_.publication_name));
  ASSIGN_OR_RETURN(SlotInfo slot, EnsureSlot(conn.get(), config_, config_.create_slot_if_missing));
  if (slot.temporary) {
    return FailedPrecondition("replication slot '" + config_.slot_name +
                              "' is temporary and cannot hold a position across runs");
  }
  // The slot's own position, so that changes it already retains are not skipped; the current
  // WAL end only for a slot that has neither (never happens for a slot that finished creation).
  if (slot.confirmed_flush_lsn) return MakeBookmark(*slot.confirmed_flush_lsn);
  if (slot.restart_lsn) return MakeBookmark(*slot.restart_lsn);
  ASSIGN_OR_RETURN(ResultPtr r, Exec(conn.get(), "SELECT pg_current_wal_lsn()", "reading WAL end"));
  ASSIGN_OR_RETURN(Lsn current, Lsn::Parse(PQgetvalue(r.get(), 0, 0)));
  return MakeBookmark(current);
}

namespace {

class PostgresSnapshot final : public ConsistentSnapshot {
 public:
  explicit PostgresSnapshot(ExportedSnapshot exported) : exported_(std::move(exported)) {}
  const std::string& id() const override { return exported_.snapshot_name; }

 private:
  ExportedSnapshot exported_;  // its replication session holds the snapshot open
};

// A snapshot exported by a repeatable-read transaction of a plain SQL session.
class SessionSnapshot final : public ConsistentSnapshot {
 public:
  SessionSnapshot(ConnPtr holder, std::string id)
      : holder_(std::move(holder)), id_(std::move(id)) {}
  const std::string& id() const override { return id_; }

 private:
  ConnPtr holder_;  // in the transaction that exported it
  std::string id_;
};

}  // namespace

Result<std::unique_ptr<ConsistentSnapshot>> PostgresCdcSource::ExportSnapshot() {
  ASSIGN_OR_RETURN(ConnPtr conn,
                   Connect(config_.connection_url, config_.tls, ConnectionKind::kSql));
  // Idle in its transaction for as long as the reads need it: a server-wide timeout must not
  // end it (the parts still to read would find no snapshot).
  RETURN_IF_ERROR(Exec(conn.get(), "SET idle_in_transaction_session_timeout = 0",
                       "configuring the snapshot session", PGRES_COMMAND_OK)
                      .status());
  RETURN_IF_ERROR(Exec(conn.get(), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
                       "starting the snapshot transaction", PGRES_COMMAND_OK)
                      .status());
  ASSIGN_OR_RETURN(ResultPtr r,
                   Exec(conn.get(), "SELECT pg_export_snapshot()", "exporting a snapshot"));
  std::optional<std::string> id = Value(r.get(), 0, 0);
  if (!id) return Internal("pg_export_snapshot() returned no name");
  return std::unique_ptr<ConsistentSnapshot>(
      std::make_unique<SessionSnapshot>(std::move(conn), *id));
}

Result<CapturedPosition> PostgresCdcSource::CapturePositionWithSnapshot() {
  if (config_.create_slot_if_missing && !config_.temporary_slot) {
    Result<ExportedSnapshot> exported = CreateSlotWithSnapshot(config_);
    if (exported.ok()) {
      Bookmark position = MakeBookmark(exported->consistent_point);
      return CapturedPosition{std::move(position),
                              std::make_unique<PostgresSnapshot>(std::move(*exported))};
    }
    if (exported.status().code() != StatusCode::kFailedPrecondition) return exported.status();
  }
  ASSIGN_OR_RETURN(Bookmark position, CapturePosition());
  return CapturedPosition{std::move(position), nullptr};
}

SourceCapabilities PostgresCdcSource::Capabilities() const {
  SourceCapabilities caps;
  caps.deterministic_replay = true;
  caps.captures_position = true;
  caps.routes_tables = true;
  if (config_.temporary_slot) {
    caps.position_not_durable =
        "slot_type: temporary: a temporary slot is dropped with the session that created it, "
        "and the captured position with it (a mirror needs a permanent slot)";
  }
  return caps;
}

Result<Position> PostgresCdcSource::PositionOf(const Bookmark& bookmark) const {
  ASSIGN_OR_RETURN(Lsn lsn, ParseBookmark(bookmark));
  return Position{{lsn.value()}};
}

std::optional<Position> PostgresCdcSource::ChangePosition(const Change& change) const {
  if (change.commit_position == 0) return std::nullopt;
  return Position{{change.commit_position}};
}

namespace {

// For each existing table among `names` (an SQL text[]): schema, table, whether it or one of
// its partitions is listed for publication `pub` (an SQL literal), and its leaves (itself, for
// an ordinary table) without a replica identity, as a JSON array of [schema, table,
// relreplident]. A partitioned table counts as published when its root (with
// publish_via_partition_root) or any partition is listed; its leaves are what is decoded, with
// their own identity. pg_partition_tree lists nothing for an ordinary table, hence the table
// itself in both sets. Without an identity: NOTHING, or USING INDEX whose index was dropped
// (relreplident stays 'i'). A table without a primary key (DEFAULT) is its caller's to judge:
// its inserts stream, and a mirror may want just those (without_primary_key: append).
std::string TablesNotStreamedSql(const std::string& names, const std::string& pub) {
  return R"sql(
WITH published AS (
  SELECT c.oid FROM pg_publication_tables pt
  JOIN pg_namespace n ON n.nspname = pt.schemaname
  JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename
  WHERE pt.pubname = )sql" +
         pub + R"sql()
SELECT n.nspname, c.relname,
  EXISTS (SELECT 1 FROM (SELECT c.oid UNION SELECT relid FROM pg_partition_tree(c.oid)) t
          WHERE t.oid IN (SELECT oid FROM published)),
  (SELECT coalesce(json_agg(json_build_array(ln.nspname, l.relname, l.relreplident)
                            ORDER BY ln.nspname, l.relname), '[]')
   FROM pg_class l JOIN pg_namespace ln ON ln.oid = l.relnamespace
   WHERE l.oid IN (SELECT c.oid WHERE c.relkind = 'r'
                   UNION SELECT relid FROM pg_partition_tree(c.oid) WHERE isleaf)
     AND (l.relreplident = 'n'
     OR (l.relreplident = 'i' AND NOT EXISTS (
           SELECT 1 FROM pg_index i WHERE i.indrelid = l.oid AND i.indisreplident))))
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND n.nspname || '.' || c.relname = ANY ()sql" +
         names + ")";
}

std::string QuotedTable(const std::string& schema, const std::string& table) {
  return QuoteIdentifier(schema, '"') + "." + QuoteIdentifier(table, '"');
}

Status BadCatalogRow(const std::string& pub) {
  return Internal("checking the tables of publication '" + pub +
                  "': unexpected replica identities from the catalog");
}

// Why table `schema`.`table`, through its leaf `leaf_schema`.`leaf` (the table itself unless
// partitioned) without a replica identity (pg_class.relreplident `ident`), misses changes.
// Postgres does not log the old key of such a row, and rejects its UPDATE and DELETE outright
// while a publication that publishes them holds the table (CheckCmdReplicaIdentity).
std::string NoReplicaIdentity(const std::string& schema, const std::string& table,
                              const std::string& leaf_schema, const std::string& leaf,
                              const std::string& ident) {
  std::string why;
  if (leaf_schema != schema || leaf != table) {
    why = "partition " + leaf_schema + "." + leaf + " has ";
  }
  why += ident == "i" ? "replica identity USING INDEX with the index dropped"
                      : "replica identity NOTHING";
  const std::string fix = "ALTER TABLE " + QuotedTable(leaf_schema, leaf) +
                          " REPLICA IDENTITY DEFAULT (with a primary key) or FULL";
  return why +
         ": its updates and deletes are not streamed (the server rejects them while the "
         "publication publishes them) — " +
         fix;
}

}  // namespace

Result<std::map<std::string, std::string>> PostgresCdcSource::TablesNotStreamed(
    const std::vector<std::string>& tables) const {
  std::map<std::string, std::string> reasons;
  if (tables.empty()) return reasons;
  ASSIGN_OR_RETURN(ConnPtr conn,
                   Connect(config_.connection_url, config_.tls, ConnectionKind::kSql));
  const std::string& pub = config_.publication_name;
  const std::string quoted_pub = QuoteIdentifier(pub, '"');
  ASSIGN_OR_RETURN(std::string pub_literal, Literal(conn.get(), pub));
  std::string names = "ARRAY[";
  for (size_t i = 0; i < tables.size(); ++i) {
    ASSIGN_OR_RETURN(std::string literal, Literal(conn.get(), tables[i]));
    names += (i ? ", " : "") + literal;
  }
  names += "]::text[]";

  // What the publication leaves out of every table.
  const std::string flags_sql =
      "SELECT pubinsert, pubupdate, pubdelete FROM pg_publication WHERE pubname = " + pub_literal;
  ASSIGN_OR_RETURN(ResultPtr p, Exec(conn.get(), flags_sql, "reading publication '" + pub + "'"));
  std::string every_table;
  if (PQntuples(p.get()) == 0) {
    every_table = "publication '" + pub + "' does not exist: CREATE PUBLICATION " + quoted_pub +
                  " FOR TABLE ";
  } else {
    std::string missing;
    const char* kinds[] = {"inserts", "updates", "deletes"};
    for (int i = 0; i < 3; ++i) {
      if (std::string(PQgetvalue(p.get(), 0, i)) != "t") {
        missing += (missing.empty() ? "" : ", ") + std::string(kinds[i]);
      }
    }
    if (!missing.empty()) {
      every_table = "publication '" + pub + "' does not publish " + missing +
                    ": ALTER PUBLICATION " + quoted_pub +
                    " SET (publish = 'insert, update, delete, truncate')";
    }
  }

  ASSIGN_OR_RETURN(ResultPtr r, Exec(conn.get(), TablesNotStreamedSql(names, pub_literal),
                                     "checking the tables of publication '" + pub + "'"));
  for (int row = 0; row < PQntuples(r.get()); ++row) {
    const std::string schema = PQgetvalue(r.get(), row, 0);
    const std::string table = PQgetvalue(r.get(), row, 1);
    const std::string name = schema + "." + table;
    std::vector<std::string> why;
    if (PQntuples(p.get()) == 0) {
      why.push_back(every_table + QuotedTable(schema, table));
    } else {
      if (!every_table.empty()) why.push_back(every_table);
      if (std::string(PQgetvalue(r.get(), row, 2)) != "t") {
        why.push_back("not in publication '" + pub +
                      "' (its changes would never arrive): ALTER PUBLICATION " + quoted_pub +
                      " ADD TABLE " + QuotedTable(schema, table));
      }
    }
    const Json leaves = Json::parse(PQgetvalue(r.get(), row, 3), nullptr, false);
    if (!leaves.is_array()) return BadCatalogRow(pub);
    for (const Json& leaf : leaves) {
      if (!leaf.is_array() || leaf.size() != 3 || !leaf[0].is_string() || !leaf[1].is_string() ||
          !leaf[2].is_string()) {
        return BadCatalogRow(pub);
      }
      why.push_back(NoReplicaIdentity(schema, table, leaf[0].get<std::string>(),
                                      leaf[1].get<std::string>(), leaf[2].get<std::string>()));
    }
    if (why.empty()) continue;
    std::string& reason = reasons[name];
    for (const std::string& w : why) reason += (reason.empty() ? "" : "; ") + w;
  }
  return reasons;
}

LogStatus PostgresCdcSource::ReadLogStatus() const {
  LogStatus out;
  Result<ConnPtr> conn = Connect(config_.connection_url, config_.tls, ConnectionKind::kSql);
  if (!conn.ok()) return out;
  Result<std::string> slot = Literal(conn->get(), config_.slot_name);
  if (!slot.ok()) return out;
  Result<ResultPtr> r = Exec(conn->get(),
                             "SELECT pg_current_wal_lsn(), s.confirmed_flush_lsn, "
                             "pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn)::int8, "
                             "s.safe_wal_size FROM (SELECT 1) one LEFT JOIN pg_replication_slots "
                             "s ON s.slot_name = " +
                                 *slot,
                             "reading the WAL and the slot");
  if (!r.ok()) return out;
  auto lsn_at = [&r](int col) -> std::optional<Position> {
    std::optional<std::string> text = Value(r->get(), 0, col);
    if (!text) return std::nullopt;
    Result<Lsn> lsn = Lsn::Parse(*text);
    if (!lsn.ok()) return std::nullopt;
    return Position{{lsn->value()}};
  };
  auto int_at = [&r](int col) -> std::optional<int64_t> {
    std::optional<std::string> text = Value(r->get(), 0, col);
    if (!text) return std::nullopt;
    return std::strtoll(text->c_str(), nullptr, 10);
  };
  out.head = lsn_at(0);
  out.acknowledged = lsn_at(1);
  out.retained_bytes = int_at(2);
  out.headroom_bytes = int_at(3);
  return out;
}

std::optional<int64_t> PostgresCdcSource::BytesBetween(const Position& from,
                                                       const Position& to) const {
  if (from.parts.size() != 1 || to.parts.size() != 1) return std::nullopt;
  return to.parts[0] > from.parts[0] ? static_cast<int64_t>(to.parts[0] - from.parts[0]) : 0;
}

}  // namespace postgres
}  // namespace faucet
