#include "sources/mysql/binlog_stream.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <utility>

namespace faucet::mysql {
namespace {

bool IsRows(uint8_t type) {
  switch (static_cast<EventType>(type)) {
    case EventType::kWriteRowsV1:
    case EventType::kUpdateRowsV1:
    case EventType::kDeleteRowsV1:
    case EventType::kWriteRowsV2:
    case EventType::kUpdateRowsV2:
    case EventType::kDeleteRowsV2:
    case EventType::kWriteRowsCompressedV1:
    case EventType::kUpdateRowsCompressedV1:
    case EventType::kDeleteRowsCompressedV1:
    case EventType::kWriteRowsCompressed:
    case EventType::kUpdateRowsCompressed:
    case EventType::kDeleteRowsCompressed:
      return true;
    default:
      return false;
  }
}

bool IsCompressed(uint8_t type) {
  return type >= static_cast<uint8_t>(EventType::kQueryCompressed) &&
         type <= static_cast<uint8_t>(EventType::kDeleteRowsCompressed);
}

// The number of a binlog file name ("binlog.000012" -> 12).
std::optional<uint64_t> FileNumberOf(const std::string& file) {
  const size_t dot = file.rfind('.');
  if (dot == std::string::npos || dot + 1 == file.size()) return std::nullopt;
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(file.data() + dot + 1, file.data() + file.size(), n);
  if (ec != std::errc() || ptr != file.data() + file.size()) return std::nullopt;
  return n;
}

// The table id at the front of a TABLE_MAP body (6 bytes; 4 in old formats).
uint64_t TableIdOf(std::string_view body, const FormatDescription& fde) {
  const size_t n = fde.PostHeaderLength(static_cast<uint8_t>(EventType::kTableMap)) == 6 ? 4 : 6;
  uint64_t id = 0;
  for (size_t i = 0; i < n && i < body.size(); ++i) {
    id |= uint64_t{static_cast<unsigned char>(body[i])} << (8 * i);
  }
  return id;
}

}  // namespace

Bookmark BinlogPosition::ToBookmark() const {
  Json j = {{"file", file}, {"pos", pos}};
  if (!gtid.empty()) j["gtid"] = gtid;
  return Bookmark{std::move(j)};
}

Result<BinlogPosition> BinlogPosition::FromBookmark(const Bookmark& bookmark) {
  const Json& j = bookmark.value;
  if (!j.is_object() || !j.contains("file") || !j["file"].is_string() || !j.contains("pos") ||
      !j["pos"].is_number_integer() || j["pos"].get<int64_t>() < 0) {
    return DataLoss("not a mysql-cdc bookmark ({\"file\": ..., \"pos\": ...}): " +
                    bookmark.ToString());
  }
  BinlogPosition p;
  p.file = j["file"].get<std::string>();
  p.pos = j["pos"].get<uint64_t>();
  if (j.contains("gtid") && j["gtid"].is_string()) p.gtid = j["gtid"].get<std::string>();
  if (p.file.empty() || !FileNumberOf(p.file)) {
    return DataLoss("mysql-cdc bookmark " + bookmark.ToString() + ": not a binlog file name");
  }
  return p;
}

Result<Position> BinlogPosition::ToPosition() const {
  std::optional<uint64_t> n = FileNumberOf(file);
  if (!n) return DataLoss("binlog file name without a number: '" + file + "'");
  return Position{{*n, pos}};
}

BinlogStream::BinlogStream(Options options, TableResolver resolver, TxnPager& pager,
                           BinlogPosition start)
    : options_(options),
      resolver_(std::move(resolver)),
      pager_(pager),
      position_(std::move(start)),
      file_number_(FileNumberOf(position_.file).value_or(0)) {
  // The events before the first format description (the dump's fake ROTATE) are checksummed
  // as the server's binlog is.
  fde_.checksums = options_.checksums;
}

Status BinlogStream::Handle(std::string_view event) {
  ASSIGN_OR_RETURN(EventHeader h, ParseHeader(event));
  const auto type = static_cast<EventType>(h.type);
  if (type == EventType::kFormatDescription) {
    ASSIGN_OR_RETURN(fde_, ParseFormatDescription(event));
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(std::string_view body, EventBody(event, h, fde_));
  if (IsCompressed(h.type)) {
    RETURN_IF_ERROR(InflateCompressedBody(h.type, body, fde_, inflated_));
    body = inflated_;
  }
  if (type == EventType::kRotate) {
    ASSIGN_OR_RETURN(Rotate r, ParseRotate(body));
    position_.file = std::move(r.file);
    position_.pos = r.position;
    file_number_ = FileNumberOf(position_.file).value_or(0);
    return Status::Ok();
  }
  if (type == EventType::kHeartbeat || type == EventType::kHeartbeatV2) return Status::Ok();
  // Within a file positions only grow; an event resent at the start of a dump (the file's
  // format description) does not move the position back.
  const uint64_t event_start = position_.pos;
  if (h.next_position > position_.pos) position_.pos = h.next_position;

  switch (type) {
    case EventType::kMariaGtid: {
      ASSIGN_OR_RETURN(Gtid g, ParseMariaGtid(body, h.server_id));
      RETURN_IF_ERROR(Begin(h, std::move(g.text), event_start));
      standalone_ = g.standalone;
      return Status::Ok();
    }
    case EventType::kMysqlGtid:
    case EventType::kMysqlAnonymousGtid: {
      ASSIGN_OR_RETURN(Gtid g, ParseMysqlGtid(body));
      RETURN_IF_ERROR(Begin(h, std::move(g.text), event_start));
      standalone_ = true;  // until a BEGIN says otherwise: MySQL logs DDL as GTID + query
      return Status::Ok();
    }
    case EventType::kQuery:
    case EventType::kQueryCompressed:
      return HandleQuery(h, body, event_start);
    case EventType::kXid:
      if (!in_transaction_) RETURN_IF_ERROR(Begin(h, "", event_start));
      Commit();
      return Status::Ok();
    case EventType::kTableMap:
      return HandleTableMap(body);
    case EventType::kPartialUpdateRows:
      return FailedPrecondition(
          "binlog at " + position_.file + ":" + std::to_string(event_start) +
          ": a PARTIAL_UPDATE_ROWS event (binlog_row_value_options=PARTIAL_JSON) carries JSON "
          "diffs, not rows; set binlog_row_value_options='' on the server");
    case EventType::kStartEncryption:
      return FailedPrecondition("binlog " + position_.file +
                                " is encrypted, and a replica receives it so only from a server "
                                "that cannot decrypt it");
    default:
      if (IsRows(h.type)) return HandleRows(h, body, event_start);
      return Status::Ok();  // INTVAR, RAND, USER_VAR, annotations, checkpoints, GTID lists
  }
}

Status BinlogStream::Begin(const EventHeader& header, std::string gtid, uint64_t event_start) {
  if (in_transaction_) {
    // A group that never ended (a non-transactional statement without COMMIT): it ends where
    // this one starts.
    spdlog::warn("mysql-cdc: binlog {}:{} starts a transaction inside another; ending that one",
                 position_.file, event_start);
    const uint64_t end = position_.pos;
    position_.pos = event_start;
    Commit();
    position_.pos = end;
  }
  in_transaction_ = true;
  standalone_ = false;
  txn_ = std::make_shared<const SourceTxn>(SourceTxn{std::move(gtid), header.server_id});
  ordinal_ = 0;
  txn_time_us_ = int64_t{header.timestamp} * 1'000'000;
  txn_position_ = (file_number_ << 32) | (event_start & 0xffffffffULL);
  return Status::Ok();
}

void BinlogStream::Commit() {
  if (!txn_->gtid.empty()) position_.gtid = txn_->gtid;
  pager_.Commit(position_.ToBookmark(), /*empty=*/ordinal_ == 0);
  in_transaction_ = false;
  standalone_ = false;
}

Status BinlogStream::HandleQuery(const EventHeader& h, std::string_view body,
                                 uint64_t event_start) {
  ASSIGN_OR_RETURN(Query q, ParseQuery(body, fde_));
  const std::string_view s = q.statement;
  if (s == "BEGIN" || s == "XA START" || s.rfind("XA START ", 0) == 0) {
    if (!in_transaction_) RETURN_IF_ERROR(Begin(h, "", event_start));
    standalone_ = false;
    return Status::Ok();
  }
  if (s == "COMMIT" || s == "ROLLBACK" || s.rfind("XA COMMIT", 0) == 0 ||
      s.rfind("XA ROLLBACK", 0) == 0) {
    if (!in_transaction_) RETURN_IF_ERROR(Begin(h, "", event_start));
    Commit();
    return Status::Ok();
  }
  if (s.rfind("XA END", 0) == 0 || s.rfind("XA PREPARE", 0) == 0 || s.rfind("SAVEPOINT", 0) == 0 ||
      s.rfind("ROLLBACK TO", 0) == 0) {
    return Status::Ok();
  }
  // A statement logged as such in a row-based binlog: DDL (or a statement on a table whose
  // changes are not row-logged). The tables it may have changed are read again.
  ForgetTables();
  spdlog::info("mysql-cdc: binlog {}:{}: {}", position_.file, event_start,
               s.substr(0, std::min<size_t>(s.size(), 200)));
  if (!in_transaction_) {
    RETURN_IF_ERROR(Begin(h, "", event_start));
    Commit();
  } else if (standalone_) {
    Commit();
  }
  return Status::Ok();
}

Status BinlogStream::HandleTableMap(std::string_view body) {
  const uint64_t id = TableIdOf(body, fde_);
  auto it = tables_.find(id);
  if (it != tables_.end() && it->second.map_bytes == body) return Status::Ok();
  ASSIGN_OR_RETURN(TableMap map, ParseTableMap(body, fde_));
  ASSIGN_OR_RETURN(std::shared_ptr<const StreamTable> table, resolver_(map));
  tables_[id] = Mapped{std::string(body), std::move(table)};
  return Status::Ok();
}

Status BinlogStream::HandleRows(const EventHeader& h, std::string_view body, uint64_t event_start) {
  ASSIGN_OR_RETURN(RowsEvent rows, ParseRowsEvent(h.type, body, fde_));
  auto it = tables_.find(rows.table_id);
  if (it == tables_.end()) {
    return FailedPrecondition("binlog at " + position_.file + ":" + std::to_string(event_start) +
                              ": a rows event of table id " + std::to_string(rows.table_id) +
                              " without its table map");
  }
  const StreamTable& table = *it->second.table;
  if (!table.streamed) return Status::Ok();
  if (!in_transaction_) RETURN_IF_ERROR(Begin(h, "", event_start));
  std::string_view data = rows.rows;
  while (!data.empty()) {
    Change c;
    c.relation = table.relation;
    c.commit_time_us = txn_time_us_;
    c.commit_position = txn_position_;
    c.ordinal = ordinal_++;
    c.txn = txn_;
    ++changes_;
    Row first;
    RETURN_IF_ERROR(DecodeRow(table.codecs, rows.present, data, first, table.name));
    switch (rows.kind) {
      case RowsKind::kWrite:
        c.op = ChangeOp::kInsert;
        c.after = std::move(first);
        break;
      case RowsKind::kDelete:
        c.op = ChangeOp::kDelete;
        c.before = std::move(first);
        break;
      case RowsKind::kUpdate: {
        c.op = ChangeOp::kUpdate;
        Row second;
        RETURN_IF_ERROR(DecodeRow(table.codecs, rows.present_after, data, second, table.name));
        if (options_.include_before) c.before = std::move(first);
        c.after = std::move(second);
        break;
      }
    }
    pager_.AddChange(std::move(c));
  }
  return Status::Ok();
}

}  // namespace faucet::mysql
