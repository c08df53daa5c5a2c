#include "sources/mysql/mysql_cdc_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "core/redact.h"
#include "sources/mysql/mysql_snapshot.h"
#include "sources/mysql/mysql_types.h"

namespace faucet {
namespace mysql {
namespace {

using Clock = std::chrono::steady_clock;

// A page with changes waits its linger for more transactions only while events keep coming:
// once none has arrived for this long, its complete transactions leave.
constexpr auto kQuiet = std::chrono::milliseconds(20);

// The members of an ENUM or SET column from its COLUMN_TYPE: "enum('a','b''c')" -> a, b'c.
std::vector<std::string> MembersOf(const std::string& column_type) {
  std::vector<std::string> out;
  size_t i = column_type.find('(');
  if (i == std::string::npos) return out;
  for (++i; i < column_type.size() && column_type[i] == '\'';) {
    std::string member;
    for (++i; i < column_type.size(); ++i) {
      if (column_type[i] == '\'') {
        if (i + 1 < column_type.size() && column_type[i + 1] == '\'') {
          member += '\'';
          ++i;
          continue;
        }
        break;
      }
      member += column_type[i];
    }
    out.push_back(std::move(member));
    i += 2;  // the closing quote and the comma (or parenthesis)
  }
  return out;
}

}  // namespace

MysqlCdcSource::MysqlCdcSource(MysqlCdcConfig config)
    : config_(std::move(config)),
      who_("mysql-cdc server_id " + std::to_string(config_.server_id)),
      pager_({config_.batch_size, config_.page_bytes, config_.linger, config_.empty_linger}) {}

MysqlCdcSource::~MysqlCdcSource() = default;

SourceCapabilities MysqlCdcSource::Capabilities() const {
  SourceCapabilities c;
  c.deterministic_replay = true;
  c.captures_position = true;
  c.routes_tables = true;
  return c;
}

Status MysqlCdcSource::LoadCollations() {
  ASSIGN_OR_RETURN(Rows rows, Fetch(sql_.get(),
                                    "SELECT ID, COLLATION_NAME, CHARACTER_SET_NAME FROM "
                                    "information_schema.COLLATIONS",
                                    who_ + ": reading the server's collations"));
  for (const auto& r : rows) {
    if (!r[0] || !r[1] || !r[2]) continue;
    const auto id = static_cast<uint32_t>(std::stoul(*r[0]));
    charset_of_[id] = *r[2];
    collation_id_[*r[1]] = id;
  }
  charsets_ = DefaultCharsets([this](uint32_t id) {
    auto it = charset_of_.find(id);
    return it == charset_of_.end() ? std::string() : it->second;
  });
  return Status::Ok();
}

Status MysqlCdcSource::Open(const std::optional<Bookmark>& start) {
  if (phase_ != Phase::kCreated) return Internal(who_ + ": opened twice");
  ASSIGN_OR_RETURN(sql_, Connect(config_.endpoint, who_));
  ASSIGN_OR_RETURN(Rows vars,
                   Fetch(sql_.get(), "SELECT @@log_bin, @@binlog_format, @@binlog_row_image",
                         who_ + ": reading the binlog settings"));
  const auto& v = vars.at(0);
  if (v[0].value_or("0") != "1") {
    return FailedPrecondition(who_ +
                              ": the server writes no binlog (log_bin is OFF); start it "
                              "with log_bin, binlog_format=ROW, binlog_row_image=FULL");
  }
  if (v[1].value_or("") != "ROW") {
    return FailedPrecondition(who_ + ": binlog_format is " + v[1].value_or("unknown") +
                              "; row changes are only in a ROW binlog: SET GLOBAL "
                              "binlog_format = 'ROW' (and in the server's config)");
  }
  if (v[2].value_or("") != "FULL") {
    spdlog::warn(
        "{}: binlog_row_image is {}: columns an update does not change are not in the "
        "binlog and reach the sink as unchanged (left as they are)",
        who_, v[2].value_or("unknown"));
  }
  RETURN_IF_ERROR(LoadCollations());
  ASSIGN_OR_RETURN(BinlogPosition from, StartPosition(start));
  DumpStart dump{from.file, from.pos, from.gtid};
  if (!from.file.empty()) dump.gtid.clear();
  BinlogReader::Options options;
  options.server_id = config_.server_id;
  options.heartbeat = config_.heartbeat;
  ASSIGN_OR_RETURN(reader_, BinlogReader::Start(config_.endpoint, options, dump, who_));
  stream_ = std::make_unique<BinlogStream>(
      BinlogStream::Options{config_.include_columns, reader_->checksums()},
      [this](const TableMap& map) { return Resolve(map); }, pager_, std::move(from));
  spdlog::info("{}: streaming from {}:{} ({})", who_, dump.file.empty() ? dump.gtid : dump.file,
               dump.pos, reader_->server_version());
  last_data_ = Clock::now();
  phase_ = Phase::kStreaming;
  return Status::Ok();
}

Status MysqlCdcSource::CheckFileExists(const std::string& file, const std::string& what) {
  ASSIGN_OR_RETURN(Rows logs, Fetch(sql_.get(), "SHOW BINARY LOGS", who_ + ": SHOW BINARY LOGS"));
  for (const auto& r : logs) {
    if (r[0] && *r[0] == file) return Status::Ok();
  }
  std::string have = logs.empty()
                         ? std::string("none")
                         : logs.front()[0].value_or("?") + " .. " + logs.back()[0].value_or("?");
  return FailedPrecondition(who_ + ": " + what + " is in binlog " + file +
                            ", which the server no longer has (it has " + have +
                            "): changes after it are lost to this source; a resync is needed "
                            "(a new snapshot, or a new start_position with the state cleared)");
}

Result<BinlogPosition> MysqlCdcSource::StartPosition(const std::optional<Bookmark>& start) {
  if (start) {
    ASSIGN_OR_RETURN(BinlogPosition p, BinlogPosition::FromBookmark(*start));
    RETURN_IF_ERROR(CheckFileExists(p.file, "the persisted position " + start->ToString()));
    return p;
  }
  const MysqlStartPosition& s = config_.start_position;
  switch (s.kind) {
    case MysqlStartPosition::Kind::kCurrent: {
      ASSIGN_OR_RETURN(Bookmark now, CapturePosition());
      return BinlogPosition::FromBookmark(now);
    }
    case MysqlStartPosition::Kind::kEarliest: {
      ASSIGN_OR_RETURN(Rows logs,
                       Fetch(sql_.get(), "SHOW BINARY LOGS", who_ + ": SHOW BINARY LOGS"));
      if (logs.empty() || !logs.front()[0]) {
        return FailedPrecondition(who_ + ": the server lists no binlog");
      }
      return BinlogPosition{*logs.front()[0], 4, ""};
    }
    case MysqlStartPosition::Kind::kFilePos:
      RETURN_IF_ERROR(CheckFileExists(s.file, "start_position"));
      return BinlogPosition{s.file, s.pos, ""};
    case MysqlStartPosition::Kind::kGtidSet:
      return BinlogPosition{"", 4, s.gtid_set};
  }
  return Internal(who_ + ": unknown start position");
}

Result<Bookmark> MysqlCdcSource::CapturePosition() {
  ConnPtr own;
  MYSQL* conn = sql_.get();
  if (conn == nullptr) {
    ASSIGN_OR_RETURN(own, Connect(config_.endpoint, who_));
    conn = own.get();
  }
  ASSIGN_OR_RETURN(Rows status, Fetch(conn, "SHOW MASTER STATUS", who_ + ": SHOW MASTER STATUS"));
  if (status.empty() || !status[0][0] || !status[0][1]) {
    return FailedPrecondition(who_ + ": SHOW MASTER STATUS is empty: the server writes no binlog");
  }
  BinlogPosition p{*status[0][0], std::stoull(*status[0][1]), ""};
  if (std::string(mysql_get_server_info(conn)).find("MariaDB") != std::string::npos) {
    ASSIGN_OR_RETURN(Rows gtid, Fetch(conn, "SELECT @@gtid_binlog_pos", who_ + ": gtid"));
    if (!gtid.empty() && gtid[0][0]) p.gtid = *gtid[0][0];
  }
  return p.ToBookmark();
}

Result<CapturedPosition> MysqlCdcSource::CapturePositionWithSnapshot() {
  ASSIGN_OR_RETURN(std::unique_ptr<MysqlSnapshot> snapshot,
                   MysqlSnapshot::Start(config_.endpoint, who_));
  if (!snapshot->position()) {
    spdlog::warn(
        "{}: the server does not tell the binlog position of a consistent snapshot "
        "(binlog_snapshot_file is MariaDB's): the snapshot overlaps the stream",
        who_);
    ASSIGN_OR_RETURN(Bookmark now, CapturePosition());
    return CapturedPosition{std::move(now), nullptr};
  }
  Bookmark position = snapshot->position()->ToBookmark();
  return CapturedPosition{std::move(position), std::move(snapshot)};
}

Result<SourceEvent> MysqlCdcSource::Next(std::chrono::milliseconds wait) {
  if (phase_ == Phase::kCreated) return Internal(who_ + ": Next before Open");
  const Clock::time_point deadline = Clock::now() + wait;
  while (true) {
    if (pager_.has_ready()) return SourceEvent{SourceEvent::Kind::kPage, pager_.PopReady()};
    if (phase_ == Phase::kEnded) return SourceEvent{SourceEvent::Kind::kEnd, {}};
    const Clock::time_point now = Clock::now();
    if (now - last_data_ >= config_.idle_timeout) {
      spdlog::info("{}: cycle ends (idle_timeout without a change) at {}:{}", who_,
                   stream_->position().file, stream_->position().pos);
      // Complete transactions go out; the open one (if any) comes again next cycle.
      pager_.DropOpen();
      pager_.Flush();
      reader_.reset();
      phase_ = Phase::kEnded;
      continue;
    }
    pager_.Tick(now);
    if (pager_.has_ready()) continue;
    if (now >= deadline) return SourceEvent{SourceEvent::Kind::kIdle, {}};
    Clock::time_point until = std::min(deadline, last_data_ + config_.idle_timeout);
    if (std::optional<Clock::time_point> linger = pager_.deadline()) {
      until = std::min(until, *linger);
    }
    // Waking to see whether the stream went quiet only helps a page with changes: one of only
    // empty transactions waits out its (long) linger in one wait.
    const bool quiet_flush = pager_.complete_changes();
    if (quiet_flush) until = std::min(until, now + kQuiet);
    Result<std::string> batch = reader_->Next(until);
    if (!batch.ok()) return batch.status();
    if (quiet_flush && batch->empty() && Clock::now() >= now + kQuiet) pager_.FlushChanges();
    const uint64_t changes = stream_->changes();
    Status handled =
        ForEachEvent(*batch, [&](std::string_view event) { return stream_->Handle(event); });
    if (!handled.ok()) return handled.WithContext(who_);
    if (stream_->changes() != changes) last_data_ = Clock::now();
  }
}

Status MysqlCdcSource::Acknowledge(const Bookmark& durable) {
  return BinlogPosition::FromBookmark(durable).status();
}

Result<Position> MysqlCdcSource::PositionOf(const Bookmark& bookmark) const {
  ASSIGN_OR_RETURN(BinlogPosition p, BinlogPosition::FromBookmark(bookmark));
  return p.ToPosition();
}

std::optional<Position> MysqlCdcSource::ChangePosition(const Change& change) const {
  if (change.commit_position == 0) return std::nullopt;
  return Position{{change.commit_position >> 32, change.commit_position & 0xffffffffULL}};
}

Result<std::map<std::string, std::string>> MysqlCdcSource::TablesNotStreamed(
    const std::vector<std::string>& tables) const {
  std::map<std::string, std::string> out;
  for (const std::string& name : tables) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos || !config_.Streams(name.substr(0, dot), name.substr(dot + 1))) {
      out[name] =
          "not streamed by the mysql-cdc source: add it to include_tables (or take it out of "
          "exclude_tables)";
    }
  }
  return out;
}

LogStatus MysqlCdcSource::ReadLogStatus() const {
  LogStatus status;
  Result<ConnPtr> conn = Connect(config_.endpoint, who_);
  if (!conn.ok()) return status;
  Result<Rows> rows = Fetch(conn->get(), "SHOW MASTER STATUS", who_ + ": SHOW MASTER STATUS");
  if (!rows.ok() || rows->empty() || !(*rows)[0][0] || !(*rows)[0][1]) return status;
  BinlogPosition head{*(*rows)[0][0], std::stoull(*(*rows)[0][1]), ""};
  if (Result<Position> p = head.ToPosition(); p.ok()) status.head = *p;
  return status;
}

Status MysqlCdcSource::FillFromCatalog(TableMap& map) {
  const std::string where = " WHERE TABLE_SCHEMA = " + Literal(sql_.get(), map.database) +
                            " AND TABLE_NAME = " + Literal(sql_.get(), map.table);
  ASSIGN_OR_RETURN(Rows cols,
                   Fetch(sql_.get(),
                         "SELECT COLUMN_NAME, COLUMN_TYPE, COLLATION_NAME FROM "
                         "information_schema.COLUMNS" +
                             where + " ORDER BY ORDINAL_POSITION",
                         who_ + ": reading the columns of " + map.database + "." + map.table));
  if (cols.size() != map.columns.size()) {
    return FailedPrecondition(
        who_ + ": the binlog's table map of " + map.database + "." + map.table + " has " +
        std::to_string(map.columns.size()) + " columns and the catalog " +
        std::to_string(cols.size()) +
        " (the table changed since): set binlog_row_metadata=FULL on the server so that the "
        "binlog names its columns");
  }
  for (size_t i = 0; i < cols.size(); ++i) {
    ColumnDef& c = map.columns[i];
    const std::string type = cols[i][1].value_or("");
    if (!c.name) c.name = cols[i][0].value_or("");
    if (!c.is_unsigned && IsNumeric(c.type)) {
      c.is_unsigned = type.find(" unsigned") != std::string::npos;
    }
    if (!c.collation && cols[i][2]) {
      auto it = collation_id_.find(*cols[i][2]);
      if (it != collation_id_.end()) c.collation = it->second;
    }
    if (type.rfind("enum(", 0) == 0 && c.enum_values.empty()) c.enum_values = MembersOf(type);
    if (type.rfind("set(", 0) == 0 && c.set_values.empty()) c.set_values = MembersOf(type);
  }
  if (!map.primary_key) {
    ASSIGN_OR_RETURN(Rows key,
                     Fetch(sql_.get(),
                           "SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE" + where +
                               " AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY "
                               "ORDINAL_POSITION",
                           who_ + ": reading the key of " + map.table));
    std::vector<uint32_t> pk;
    for (const auto& k : key) {
      for (uint32_t i = 0; i < map.columns.size(); ++i) {
        if (k[0] && map.columns[i].name == *k[0]) pk.push_back(i);
      }
    }
    map.primary_key = std::move(pk);
  }
  return Status::Ok();
}

Result<std::shared_ptr<const StreamTable>> MysqlCdcSource::Resolve(TableMap map) {
  auto table = std::make_shared<StreamTable>();
  table->name = map.database + "." + map.table;
  table->streamed = config_.Streams(map.database, map.table);
  if (!table->streamed) return std::shared_ptr<const StreamTable>(std::move(table));
  bool complete = map.has_names() && map.primary_key.has_value();
  for (const ColumnDef& c : map.columns) {
    if (IsNumeric(c.type) && !c.is_unsigned) complete = false;
  }
  if (!complete) RETURN_IF_ERROR(FillFromCatalog(map));
  ASSIGN_OR_RETURN(table->codecs, ResolveColumns(map, charsets_));
  auto relation = std::make_shared<Relation>();
  relation->id = static_cast<uint32_t>(map.table_id);
  relation->schema = map.database;
  relation->name = map.table;
  const std::string& file = stream_->position().file;
  relation->binlog_base = file.substr(0, file.rfind('.'));
  for (size_t i = 0; i < map.columns.size(); ++i) {
    Column col;
    col.name = map.columns[i].name.value_or("col_" + std::to_string(i));
    col.type = table->codecs[i].value_type;  // type_oid stays 0: it holds Postgres OIDs only
    const ColumnCodec& codec = table->codecs[i];
    col.width = DeclaredWidth(codec.type, codec.is_unsigned, codec.binary,
                              codec.type == kTypeString ? codec.length : codec.meta,
                              BytesPerChar(map.columns[i].collation.value_or(kUtf8mb4GeneralCi)));
    relation->columns.push_back(std::move(col));
  }
  for (uint32_t k : map.primary_key.value_or(std::vector<uint32_t>())) {
    if (k < relation->columns.size()) relation->columns[k].key = true;
  }
  table->relation = std::move(relation);
  return std::shared_ptr<const StreamTable>(std::move(table));
}

}  // namespace mysql

Result<std::unique_ptr<Source>> MakeMysqlCdcSource(const config::Block& block) {
  ASSIGN_OR_RETURN(MysqlCdcConfig config, ParseMysqlCdcConfig(block));
  return std::unique_ptr<Source>(new mysql::MysqlCdcSource(std::move(config)));
}

}  // namespace faucet
