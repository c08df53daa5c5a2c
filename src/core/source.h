// Source: where changes come from (a replication stream, a query, a generator).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bookmark.h"
#include "core/page.h"
#include "core/position.h"
#include "core/status.h"

namespace faucet {

struct SourceEvent {
  enum class Kind {
    kPage,  // `page` holds the next page
    kIdle,  // nothing arrived within the wait; call Next again
    kEnd,   // the source is done for this run (count reached, idle timeout ended the cycle)
  };
  Kind kind = Kind::kIdle;
  Page page;
};

// What a built source can do, as parsed from its config (no I/O). Callers decide from these,
// never from the `type:` name.
struct SourceCapabilities {
  // Replays the same changes from the same bookmark: the precondition of exactly-once.
  bool deterministic_replay = false;
  // A change stream whose current position can be captured (CapturePosition): what a mirror
  // streams from.
  bool captures_position = false;
  // Why a captured position would not survive this process ("" when it does): a mirror needs
  // one that does. Text for an error, naming the config key to change.
  std::string position_not_durable;
  // Reads a table's rows once (a query source), also inside a ConsistentSnapshot exported by
  // a change stream of the same database (ReadInSnapshot): what a mirror snapshots with.
  bool reads_snapshots = false;
  // Its pages carry no bookmark: it reads a finite result that a rerun reads again whole (a
  // query). `faucet run` writes such a read as one bulk load (assembly/bulk_read.h).
  bool one_shot = false;
  // Lists the tables it can read (DiscoverTables): what a multi-table mirror snapshots with.
  bool discovers_tables = false;
  // A change stream of many tables whose changes name their table (Change::relation) and have
  // an ordered position (ChangePosition): what a multi-table mirror routes from.
  bool routes_tables = false;
  // Its position is a set of parts that advance independently and may move between processes
  // (a consumer group's partitions): each page names its part (Page::token_scope), and under
  // the atomic watermark the source reads each part's committed token back itself
  // (UseCommittedTokens) when it gets the part, so the sink must keep a token per part
  // (SinkCapabilities::many_scopes).
  bool tokens_per_part = false;
};

// Reads the commit token the sink holds for the pipeline's scope followed by `part` (a
// Page::token_scope); nullopt when it holds none.
using CommittedTokenReader =
    std::function<Result<std::optional<std::string>>(const std::string& part)>;

// A table a source can read, as DiscoverTables reports it.
struct DiscoveredTable {
  std::string name;    // "schema.table": the name a multi-table mirror selects and keys by
  std::string schema;  // "schema"
  std::string table;   // "table"
  std::vector<std::string> key;  // primary-key columns in key order; empty when it has none
  std::optional<int64_t> estimated_rows;  // the catalog's estimate; nullopt when unknown
  // Names ("schema.leaf") under which the change stream may report this table's changes:
  // the leaf partitions of a partitioned table (discovered once, via its root).
  std::vector<std::string> partitions;
  // The keys to set in the source's `config:` so that it reads just this table
  // (Postgres: {"query": "SELECT * FROM \"schema\".\"table\""}).
  std::map<std::string, std::string> read_patch;
};

// The source database held still at a captured position, for as long as this object lives:
// a read inside it sees every change up to the position and none after (an exact cut).
class ConsistentSnapshot {
 public:
  virtual ~ConsistentSnapshot() = default;
  // What a reading source imports (Postgres: the exported snapshot's name).
  virtual const std::string& id() const = 0;
};

// A change stream's log as its server reports it at one moment, for the lag ladder. A field
// the source cannot tell is empty.
struct LogStatus {
  std::optional<Position> head;           // the log's end (Postgres: pg_current_wal_lsn)
  std::optional<Position> acknowledged;   // what the server holds as acknowledged for this
                                          // stream (Postgres: the slot's confirmed_flush_lsn)
  std::optional<int64_t> retained_bytes;  // log the server keeps for this stream
  // Log the server may still write before it drops some this stream needs (Postgres: the
  // slot's safe_wal_size under max_slot_wal_keep_size); empty when there is no such limit.
  std::optional<int64_t> headroom_bytes;
};

struct CapturedPosition {
  Bookmark position;
  std::unique_ptr<ConsistentSnapshot> snapshot;  // null: the source could not export one
};

class Source {
 public:
  virtual ~Source() = default;

  // What this source can do. Known from the config alone (before Open).
  virtual SourceCapabilities Capabilities() const { return {}; }

  // Before Open: the sink stages (SinkCapabilities::stages), so pages of transactions whose
  // outcome is not known yet (Page::staged) may come from Next. A source that receives a large
  // transaction while it runs (Postgres streaming) then hands it over as it arrives rather than
  // holding it until its commit. Others ignore it.
  virtual void AllowStaging() {}

  // Starts reading just after `start`, a bookmark this source produced earlier (possibly in a
  // previous process). Without one, the source starts at its configured default (a slot's
  // confirmed position, the first row). Called once, before Next.
  virtual Status Open(const std::optional<Bookmark>& start) = 0;

  // Waits at most `wait` for the next event. An error ends the run; what was written before it
  // is still flushed by the pipeline. Called from one thread only.
  virtual Result<SourceEvent> Next(std::chrono::milliseconds wait) = 0;

  // Tells the source that everything up to `durable` is written, flushed and persisted: only
  // now may it be acknowledged upstream (Postgres: the standby status flush/apply LSN). Called
  // from the sink thread, concurrently with Next: implementations publish it atomically and do
  // not block. Bookmarks arrive in increasing order. A bookmark this source cannot read is an
  // error naming it (the run then ends), never ignored.
  virtual Status Acknowledge(const Bookmark& durable) {
    (void)durable;
    return Status::Ok();
  }

  // Under the atomic watermark, for a source with tokens_per_part, before Open: how to read the
  // sink's committed token of a part. Callable from the source thread (inside Next) only; it
  // waits while the sink thread writes a page. Called again with an empty reader when the run
  // ends (the reader refers to the pipeline, which the source may outlive).
  virtual void UseCommittedTokens(CommittedTokenReader read) { (void)read; }

  // Called on the source thread, about once a second, while the pipeline waits for the sink
  // to make room for the next page: a source whose server drops silent clients (Postgres'
  // wal_sender_timeout) sends what keeps the session alive. Must not consume data.
  virtual Status KeepAlive() { return Status::Ok(); }

  // Ensures the source retains its log from now on (e.g. creates the replication slot) and
  // returns the current position without consuming anything. Used by the mirror.
  virtual Result<Bookmark> CapturePosition() {
    return FailedPrecondition("this source cannot capture a resume position");
  }

  // CapturePosition, plus the database exactly at that position when the source can export
  // it now (Postgres: only when the slot is created by this call). Otherwise `snapshot` is
  // null and a read of the current state overlaps the stream from the position.
  virtual Result<CapturedPosition> CapturePositionWithSnapshot() {
    ASSIGN_OR_RETURN(Bookmark position, CapturePosition());
    return CapturedPosition{std::move(position), nullptr};
  }

  // The database as it is now, held still for as long as the result lives: reads inside it
  // (ReadInSnapshot) all see the same moment. Not an exact cut: it is taken after any position
  // captured before the call, so the stream from that position overlaps it. What a read split
  // into parts needs to read each row once (a row updated between two parts' reads can move
  // from one part to another). With its own connection.
  virtual Result<std::unique_ptr<ConsistentSnapshot>> ExportSnapshot() {
    return FailedPrecondition("this source cannot export a snapshot");
  }

  // Makes the next Open read inside `snapshot` instead of the current state. REQUIRES: before
  // Open; `snapshot` alive until Open returns. kFailedPrecondition unless reads_snapshots.
  virtual Status ReadInSnapshot(const ConsistentSnapshot& snapshot) {
    (void)snapshot;
    return FailedPrecondition("this source cannot read inside a snapshot");
  }

  // The bookmark as an ordered Position; kDataLoss when it is not one of this source's
  // bookmarks (a stored position was damaged), kFailedPrecondition when the source has no
  // order.
  virtual Result<Position> PositionOf(const Bookmark& bookmark) const {
    (void)bookmark;
    return FailedPrecondition("this source's positions cannot be ordered");
  }

  // Best effort, with its own connection, for progress reports: how many rows a read will
  // return (the planner's estimate), and how far the source's log is ahead of `position` in
  // bytes. nullopt when unknown or unreachable.
  virtual std::optional<int64_t> EstimateRows() const { return std::nullopt; }
  // One answer per position, from one read of the log (ReadLogStatus): how far its head is
  // past each (BytesBetween); nullopt where unknown.
  std::vector<std::optional<int64_t>> BytesBehind(const std::vector<Bookmark>& positions) const;

  // Best effort, with its own connection, for metrics: the log's state now.
  virtual LogStatus ReadLogStatus() const { return {}; }
  // The bytes of log from `from` to `to` (0 when `to` is not after `from`); nullopt when this
  // source's positions have no byte distance.
  virtual std::optional<int64_t> BytesBetween(const Position& from, const Position& to) const {
    (void)from, (void)to;
    return std::nullopt;
  }

  // The tables this source can read, with their keys and row estimates, in name order; with
  // its own connection. kFailedPrecondition unless discovers_tables.
  virtual Result<std::vector<DiscoveredTable>> DiscoverTables() const {
    return FailedPrecondition("this source cannot discover tables");
  }

  // Splits the read of `table` (as DiscoverTables reported it) into at most `n` parts that
  // together read each of its rows once, for any key: the `config:` patches of the parts, each
  // to merge over the table's read_patch (Postgres: ranges of physical blocks, ctid). Fewer
  // parts for a small table, one for an empty one. With its own connection.
  // kFailedPrecondition unless discovers_tables.
  virtual Result<std::vector<std::map<std::string, std::string>>> PlanShards(
      const DiscoveredTable& table, int64_t n) const {
    (void)table, (void)n;
    return FailedPrecondition("this source cannot split a table's read");
  }

  // For each of `tables` (DiscoveredTable::name) whose changes this stream would not carry in
  // full, why, and how to fix it (Postgres: not in the publication, replica identity
  // NOTHING); tables it carries are absent. With its own connection.
  virtual Result<std::map<std::string, std::string>> TablesNotStreamed(
      const std::vector<std::string>& tables) const {
    (void)tables;
    return std::map<std::string, std::string>();
  }

  // The position of `change`'s transaction (Postgres: {commit LSN}): a bookmark B covers the
  // change, i.e. a resume from B does not deliver it again, exactly when
  // ChangePosition(change) < PositionOf(B). nullopt when the source cannot tell.
  virtual std::optional<Position> ChangePosition(const Change& change) const {
    (void)change;
    return std::nullopt;
  }
};

}  // namespace faucet
