#include "sources/mysql/query_source.h"

#include <mysqld_error.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>

#include "core/redact.h"
#include "core/text.h"
#include "sources/mysql/mysql_types.h"
#include "sources/mysql/value_format.h"

namespace faucet {

Result<std::unique_ptr<Source>> MakeMysqlQuerySource(const config::Block& block) {
  ASSIGN_OR_RETURN(MysqlQueryConfig config, ParseMysqlQueryConfig(block));
  return std::unique_ptr<Source>(std::make_unique<mysql::MysqlQuerySource>(std::move(config)));
}

namespace mysql {
namespace {

// A string or bytes column's bound buffer starts at its declared width (within these bounds)
// and grows, up to kMaxBound, to the longest value seen; a longer value is fetched on its own
// (mysql_stmt_fetch_column), so memory per column stays bounded by kMaxBound.
constexpr unsigned long kMinBound = 64;
constexpr unsigned long kMaxBound = 64 * 1024;

// A prepared statement takes one statement without its terminator.
std::string StripTerminator(std::string query) {
  while (!query.empty() &&
         (query.back() == ';' || std::isspace(static_cast<unsigned char>(query.back())))) {
    query.pop_back();
  }
  return query;
}

// The query as messages quote it: whole when short, else its start.
std::string Quoted(const std::string& query) {
  constexpr size_t kMax = 200;
  return "\"" + (query.size() <= kMax ? query : query.substr(0, kMax) + "...") + "\"";
}

// Errors in the query's own text: the user's input, as for the postgres query source.
bool IsQueryMistake(unsigned int err) {
  switch (err) {
    case ER_PARSE_ERROR:
    case ER_SYNTAX_ERROR:
    case ER_NO_SUCH_TABLE:
    case ER_BAD_FIELD_ERROR:
    case ER_BAD_DB_ERROR:
    case ER_NON_UNIQ_ERROR:
    case ER_SP_DOES_NOT_EXIST:
    case ER_WRONG_FIELD_WITH_GROUP:
    case ER_UNSUPPORTED_PS:
    case ER_EMPTY_QUERY:
      return true;
    default:
      return false;
  }
}

// The real type of a result column: the binary protocol sends ENUM and SET as STRING with a
// flag, as a binlog table map does.
uint8_t RealType(const MYSQL_FIELD& f) {
  if (f.type == MYSQL_TYPE_STRING && (f.flags & ENUM_FLAG) != 0) return kTypeEnum;
  if (f.type == MYSQL_TYPE_STRING && (f.flags & SET_FLAG) != 0) return kTypeSet;
  return static_cast<uint8_t>(f.type);
}

}  // namespace

// How one result column is bound and formatted.
struct MysqlQuerySource::ColumnSlot {
  enum class Kind {
    kSigned,
    kUnsigned,
    kFloat,
    kDouble,
    kDate,
    kTime,
    kDateTime,
    kTimestamp,
    kText,   // DECIMAL, strings, ENUM, SET, JSON: the bytes as sent (UTF-8)
    kBytes,  // binary strings, BLOB, GEOMETRY: hex
    kBit,
  };
  Kind kind = Kind::kText;
  uint32_t fsp = 0;   // temporal types: fractional digits
  uint32_t bits = 0;  // BIT(n)
  size_t width = 8;   // integers: bytes on the wire

  // What mysql_stmt_fetch fills.
  alignas(8) unsigned char number[8] = {};
  MYSQL_TIME time{};
  std::vector<char> buffer;  // strings and bytes
  size_t grow_to = 0;        // the buffer's size from the next row on (Rebind)
  unsigned long length = 0;
  my_bool is_null = 0;
  my_bool error = 0;
};

MysqlQuerySource::MysqlQuerySource(MysqlQueryConfig config)
    : config_(std::move(config)), query_(StripTerminator(config_.query)) {}

MysqlQuerySource::~MysqlQuerySource() {
  // mysql_stmt_close of an unfinished unbuffered result reads the rest of it off the wire;
  // closing the connection first detaches the statement, which is then only freed.
  if (!done_) conn_.reset();
}

SourceCapabilities MysqlQuerySource::Capabilities() const {
  SourceCapabilities caps;
  caps.one_shot = true;
  caps.reads_snapshots = true;
  caps.discovers_tables = true;
  return caps;
}

Status MysqlQuerySource::ReadInSnapshot(const ConsistentSnapshot& snapshot) {
  const auto* mine = dynamic_cast<const MysqlSnapshot*>(&snapshot);
  if (mine == nullptr) {
    return FailedPrecondition("mysql: cannot read inside a snapshot of another kind of source");
  }
  snapshot_ = mine;
  return Status::Ok();
}

Status MysqlQuerySource::QueryError(const std::string& what) const {
  const unsigned int err = mysql_stmt_errno(stmt_.get());
  const std::string text =
      Redact("mysql " + config_.endpoint.url + ": " + what + " " + Quoted(query_) + ": " +
             mysql_stmt_error(stmt_.get()) + " (error " + std::to_string(err) + ")");
  return Status(IsQueryMistake(err) ? StatusCode::kInvalidArgument : ErrorCode(err), text);
}

Status MysqlQuerySource::Open(const std::optional<Bookmark>&) {
  if (stmt_ != nullptr || done_) return Internal("mysql query source opened twice");
  if (snapshot_ == nullptr) {
    ASSIGN_OR_RETURN(conn_, Connect(config_.endpoint, "mysql"));
  } else {
    lease_ = snapshot_->Lease();
  }
  stmt_.reset(mysql_stmt_init(snapshot_ != nullptr ? snapshot_->conn() : conn_.get()));
  if (stmt_ == nullptr) return Internal("mysql query source: out of memory");
  if (mysql_stmt_prepare(stmt_.get(), query_.data(), query_.size()) != 0) {
    return QueryError("query");
  }
  RETURN_IF_ERROR(Describe());
  RETURN_IF_ERROR(Bind());
  // Unbuffered: no mysql_stmt_store_result, each fetch reads the next row off the wire.
  if (mysql_stmt_execute(stmt_.get()) != 0) return QueryError("query");
  return Status::Ok();
}

Status MysqlQuerySource::Describe() {
  ResultPtr meta(mysql_stmt_result_metadata(stmt_.get()));
  if (meta == nullptr) {
    if (mysql_stmt_errno(stmt_.get()) != 0) return QueryError("describing the query");
    // Checked before the execute: a DELETE given as the query must not run.
    return InvalidArgument(
        Redact("mysql " + config_.endpoint.url + ": query " + Quoted(query_) + " returns no rows"));
  }
  const unsigned int n = mysql_num_fields(meta.get());
  const MYSQL_FIELD* fields = mysql_fetch_fields(meta.get());
  auto rel = std::make_shared<Relation>();
  rel->name = "query";
  bool one_table = n > 0 && fields[0].org_table_length > 0;
  slots_.resize(n);
  for (unsigned int i = 0; i < n; ++i) {
    const MYSQL_FIELD& f = fields[i];
    const uint8_t type = RealType(f);
    const bool binary = f.charsetnr == kBinaryCollation;
    Column c;
    c.name.assign(f.name, f.name_length);  // type_oid stays 0: it holds Postgres OIDs only
    c.type = ValueTypeOf(type, binary, static_cast<uint32_t>(f.length));
    c.width = DeclaredWidth(type, (f.flags & UNSIGNED_FLAG) != 0, binary,
                            static_cast<uint32_t>(f.length), BytesPerChar(f.charsetnr));
    c.key = (f.flags & PRI_KEY_FLAG) != 0;
    rel->columns.push_back(std::move(c));
    if (f.org_table_length == 0 ||
        std::string_view(f.org_table, f.org_table_length) !=
            std::string_view(fields[0].org_table, fields[0].org_table_length) ||
        std::string_view(f.db, f.db_length) !=
            std::string_view(fields[0].db, fields[0].db_length)) {
      one_table = false;
    }

    ColumnSlot& s = slots_[i];
    using Kind = ColumnSlot::Kind;
    const bool is_unsigned = (f.flags & UNSIGNED_FLAG) != 0;
    switch (type) {
      case kTypeTiny:
        s.kind = is_unsigned ? Kind::kUnsigned : Kind::kSigned;
        s.width = 1;
        break;
      case kTypeShort:
      case kTypeYear:
        s.kind = is_unsigned ? Kind::kUnsigned : Kind::kSigned;
        s.width = 2;
        break;
      case kTypeLong:
      case kTypeInt24:
        s.kind = is_unsigned ? Kind::kUnsigned : Kind::kSigned;
        s.width = 4;
        break;
      case kTypeLongLong:
        s.kind = is_unsigned ? Kind::kUnsigned : Kind::kSigned;
        s.width = 8;
        break;
      case kTypeFloat:
        s.kind = Kind::kFloat;
        break;
      case kTypeDouble:
        s.kind = Kind::kDouble;
        break;
      case kTypeDate:
      case kTypeNewDate:
        s.kind = Kind::kDate;
        break;
      case kTypeTime:
      case kTypeTime2:
        s.kind = Kind::kTime;
        break;
      case kTypeDateTime:
      case kTypeDateTime2:
        s.kind = Kind::kDateTime;
        break;
      case kTypeTimestamp:
      case kTypeTimestamp2:
        s.kind = Kind::kTimestamp;
        break;
      case kTypeBit:
        s.kind = Kind::kBit;
        s.bits = static_cast<uint32_t>(f.length);
        break;
      case kTypeGeometry:
        s.kind = Kind::kBytes;
        break;
      case kTypeDecimal:
      case kTypeNewDecimal:
      case kTypeEnum:
      case kTypeSet:
      case kTypeJson:
        s.kind = Kind::kText;
        break;
      default:  // CHAR, VARCHAR, TEXT, BLOB and their binary forms; NULL
        s.kind = binary ? Kind::kBytes : Kind::kText;
        break;
    }
    s.fsp = std::min<uint32_t>(f.decimals, 6);
    if (s.kind == Kind::kText || s.kind == Kind::kBytes || s.kind == Kind::kBit) {
      s.buffer.resize(std::clamp<unsigned long>(f.length, kMinBound, kMinBound * 16));
    }
  }
  if (one_table) {
    rel->schema.assign(fields[0].db, fields[0].db_length);
    rel->name.assign(fields[0].org_table, fields[0].org_table_length);
  } else {
    for (Column& c : rel->columns) c.key = false;  // keys of a table, not of a query
  }
  relation_ = std::move(rel);
  return Status::Ok();
}

Status MysqlQuerySource::Bind() {
  using Kind = ColumnSlot::Kind;
  binds_.assign(slots_.size(), MYSQL_BIND{});
  for (size_t i = 0; i < slots_.size(); ++i) {
    ColumnSlot& s = slots_[i];
    MYSQL_BIND& b = binds_[i];
    b.length = &s.length;
    b.is_null = &s.is_null;
    b.error = &s.error;
    switch (s.kind) {
      case Kind::kSigned:
      case Kind::kUnsigned: {
        // Bound at its own width, so the connector copies the bytes without converting.
        static constexpr enum_field_types kByWidth[] = {
            MYSQL_TYPE_NULL, MYSQL_TYPE_TINY, MYSQL_TYPE_SHORT, MYSQL_TYPE_NULL, MYSQL_TYPE_LONG};
        b.buffer_type = s.width == 8 ? MYSQL_TYPE_LONGLONG : kByWidth[s.width];
        b.buffer = s.number;
        b.buffer_length = static_cast<unsigned long>(s.width);
        b.is_unsigned = s.kind == Kind::kUnsigned;
        break;
      }
      case Kind::kFloat:
        b.buffer_type = MYSQL_TYPE_FLOAT;
        b.buffer = s.number;
        b.buffer_length = sizeof(float);
        break;
      case Kind::kDouble:
        b.buffer_type = MYSQL_TYPE_DOUBLE;
        b.buffer = s.number;
        b.buffer_length = sizeof(double);
        break;
      case Kind::kDate:
      case Kind::kTime:
      case Kind::kDateTime:
      case Kind::kTimestamp:
        b.buffer_type = s.kind == Kind::kDate       ? MYSQL_TYPE_DATE
                        : s.kind == Kind::kTime     ? MYSQL_TYPE_TIME
                        : s.kind == Kind::kDateTime ? MYSQL_TYPE_DATETIME
                                                    : MYSQL_TYPE_TIMESTAMP;
        b.buffer = &s.time;
        b.buffer_length = sizeof(MYSQL_TIME);
        break;
      case Kind::kText:
      case Kind::kBytes:
      case Kind::kBit:
        b.buffer_type = MYSQL_TYPE_BLOB;  // the bytes as sent, without a terminator
        b.buffer = s.buffer.data();
        b.buffer_length = static_cast<unsigned long>(s.buffer.size());
        break;
    }
  }
  if (mysql_stmt_bind_result(stmt_.get(), binds_.data()) != 0) {
    return QueryError("binding the result of");
  }
  return Status::Ok();
}

Status MysqlQuerySource::Rebind() {
  rebind_ = false;
  for (size_t i = 0; i < slots_.size(); ++i) {
    ColumnSlot& s = slots_[i];
    if (s.grow_to <= s.buffer.size()) continue;
    s.buffer.resize(s.grow_to);
    binds_[i].buffer = s.buffer.data();
    binds_[i].buffer_length = static_cast<unsigned long>(s.buffer.size());
  }
  if (mysql_stmt_bind_result(stmt_.get(), binds_.data()) != 0) {
    return QueryError("binding the result of");
  }
  return Status::Ok();
}

Status MysqlQuerySource::ReadColumn(size_t i, Cell& cell) {
  using Kind = ColumnSlot::Kind;
  ColumnSlot& s = slots_[i];
  if (s.is_null != 0) {
    cell = Cell::Null();
    return Status::Ok();
  }
  cell.state = CellState::kValue;
  std::string& out = cell.text;
  auto temporal = [&s] {
    TemporalParts t;
    t.negative = s.time.neg != 0;
    t.year = s.time.year;
    t.month = s.time.month;
    t.day = s.time.day;
    t.hour = s.time.hour;
    t.minute = s.time.minute;
    t.second = s.time.second;
    t.microsecond = static_cast<uint32_t>(s.time.second_part);
    return t;
  };
  switch (s.kind) {
    case Kind::kSigned: {
      int64_t v = 0;
      if (s.width == 1) v = static_cast<int8_t>(s.number[0]);
      if (s.width == 2)
        v = [&] {
          int16_t x;
          std::memcpy(&x, s.number, 2);
          return x;
        }();
      if (s.width == 4)
        v = [&] {
          int32_t x;
          std::memcpy(&x, s.number, 4);
          return x;
        }();
      if (s.width == 8) std::memcpy(&v, s.number, 8);
      AppendInt(out, v);
      return Status::Ok();
    }
    case Kind::kUnsigned: {
      uint64_t v = 0;
      if (s.width == 1) v = s.number[0];
      if (s.width == 2)
        v = [&] {
          uint16_t x;
          std::memcpy(&x, s.number, 2);
          return x;
        }();
      if (s.width == 4)
        v = [&] {
          uint32_t x;
          std::memcpy(&x, s.number, 4);
          return x;
        }();
      if (s.width == 8) std::memcpy(&v, s.number, 8);
      AppendUint(out, v);
      return Status::Ok();
    }
    case Kind::kFloat: {
      float v = 0;
      std::memcpy(&v, s.number, sizeof v);
      AppendFloat(out, v);
      return Status::Ok();
    }
    case Kind::kDouble: {
      double v = 0;
      std::memcpy(&v, s.number, sizeof v);
      AppendDouble(out, v);
      return Status::Ok();
    }
    case Kind::kDate:
      AppendDate(out, temporal());
      return Status::Ok();
    case Kind::kTime: {
      // The connector may hold a TIME over 24 hours as days and hours; the text has hours.
      TemporalParts t = temporal();
      t.hour += t.day * 24;
      t.day = 0;
      AppendTime(out, t, s.fsp);
      return Status::Ok();
    }
    case Kind::kDateTime:
      AppendDateTime(out, temporal(), s.fsp);
      return Status::Ok();
    case Kind::kTimestamp:
      AppendTimestamp(out, temporal(), s.fsp);
      return Status::Ok();
    case Kind::kText:
    case Kind::kBytes:
    case Kind::kBit:
      break;
  }
  // Bytes: in the bound buffer when they fit, else fetched whole on their own; the buffer then
  // grows for the next rows (up to kMaxBound).
  std::string long_value;
  std::string_view bytes(s.buffer.data(), std::min<size_t>(s.length, s.buffer.size()));
  if (s.length > s.buffer.size()) {
    long_value.resize(s.length);
    MYSQL_BIND b{};
    unsigned long length = 0;
    my_bool is_null = 0;
    my_bool error = 0;
    b.buffer_type = MYSQL_TYPE_BLOB;
    b.buffer = long_value.data();
    b.buffer_length = s.length;
    b.length = &length;
    b.is_null = &is_null;
    b.error = &error;
    if (mysql_stmt_fetch_column(stmt_.get(), &b, static_cast<unsigned int>(i), 0) != 0) {
      return QueryError("reading column " + relation_->columns[i].name + " of");
    }
    bytes = long_value;
    // Rebound after the row (Next): binding now would lose the row's other columns, which
    // mysql_stmt_fetch_column finds through the bindings.
    if (s.buffer.size() < kMaxBound) {
      s.grow_to = std::min<size_t>(std::max<size_t>(s.length, s.buffer.size() * 2), kMaxBound);
      rebind_ = true;
    }
  }
  if (s.kind == Kind::kBytes) {
    AppendBytes(out, bytes);
  } else if (s.kind == Kind::kBit) {
    AppendBit(out, bytes, s.bits);
  } else if (!long_value.empty()) {
    out = std::move(long_value);
  } else {
    out.assign(bytes);
  }
  return Status::Ok();
}

Result<SourceEvent> MysqlQuerySource::Next(std::chrono::milliseconds) {
  if (done_) return SourceEvent{SourceEvent::Kind::kEnd, {}};
  if (stmt_ == nullptr) return Internal("mysql query source: Next before Open");
  Page page;
  page.changes.reserve(std::min<size_t>(config_.batch_size, 1024));
  const size_t columns = slots_.size();
  while (page.changes.size() < config_.batch_size) {
    const int rc = mysql_stmt_fetch(stmt_.get());
    if (rc == MYSQL_NO_DATA) {
      Close();
      break;
    }
    if (rc != 0 && rc != MYSQL_DATA_TRUNCATED) return QueryError("reading the rows of");
    Change& c = page.changes.emplace_back();
    c.op = ChangeOp::kRead;
    c.relation = relation_;
    c.ordinal = static_cast<uint32_t>(page.changes.size() - 1);
    Row& row = c.after.emplace(columns);
    for (size_t i = 0; i < columns; ++i) RETURN_IF_ERROR(ReadColumn(i, row[i]));
    if (rebind_) RETURN_IF_ERROR(Rebind());
  }
  if (page.changes.empty()) return SourceEvent{SourceEvent::Kind::kEnd, {}};
  return SourceEvent{SourceEvent::Kind::kPage, std::move(page)};
}

void MysqlQuerySource::Close() {
  done_ = true;
  stmt_.reset();
  conn_.reset();
  lease_.reset();
}

std::optional<int64_t> MysqlQuerySource::EstimateRows() const {
  Result<ConnPtr> conn = Connect(config_.endpoint, "mysql");
  if (!conn.ok()) return std::nullopt;
  const std::string sql = "EXPLAIN " + query_;
  if (mysql_real_query(conn->get(), sql.data(), sql.size()) != 0) return std::nullopt;
  ResultPtr r(mysql_store_result(conn->get()));
  if (r == nullptr || mysql_num_rows(r.get()) != 1) return std::nullopt;  // one table only
  const unsigned int n = mysql_num_fields(r.get());
  const MYSQL_FIELD* fields = mysql_fetch_fields(r.get());
  MYSQL_ROW row = mysql_fetch_row(r.get());
  std::optional<double> rows;
  double filtered = 100;
  for (unsigned int i = 0; i < n && row != nullptr; ++i) {
    if (row[i] == nullptr) continue;
    const std::string_view name(fields[i].name, fields[i].name_length);
    double v = 0;
    const char* end = row[i] + std::strlen(row[i]);
    if (std::from_chars(row[i], end, v).ptr != end) continue;
    if (name == "rows") rows = v;
    if (name == "filtered") filtered = v;
  }
  if (!rows) return std::nullopt;
  return static_cast<int64_t>(std::llround(*rows * filtered / 100));
}

Result<std::vector<DiscoveredTable>> MysqlQuerySource::DiscoverTables() const {
  const std::string who = "mysql: discovering tables";
  ASSIGN_OR_RETURN(ConnPtr conn, Connect(config_.endpoint, "mysql"));
  MYSQL* c = conn.get();
  const std::string where = " = " + Literal(c, config_.endpoint.parts.database);
  ASSIGN_OR_RETURN(Rows tables, Fetch(c,
                                      "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS FROM "
                                      "information_schema.TABLES WHERE TABLE_TYPE IN ('BASE "
                                      "TABLE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA" +
                                          where + " ORDER BY TABLE_SCHEMA, TABLE_NAME",
                                      who));
  ASSIGN_OR_RETURN(Rows keys, Fetch(c,
                                    "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM "
                                    "information_schema.STATISTICS WHERE INDEX_NAME = 'PRIMARY' "
                                    "AND TABLE_SCHEMA" +
                                        where + " ORDER BY TABLE_SCHEMA, TABLE_NAME, SEQ_IN_INDEX",
                                    who + "' keys"));
  std::map<std::string, std::vector<std::string>> key_of;
  for (const auto& r : keys) {
    if (r[0] && r[1] && r[2]) key_of[*r[0] + "." + *r[1]].push_back(*r[2]);
  }
  std::vector<DiscoveredTable> out;
  for (const auto& r : tables) {
    if (!r[0] || !r[1]) continue;
    DiscoveredTable t;
    t.schema = *r[0];
    t.table = *r[1];
    t.name = t.schema + "." + t.table;
    if (auto k = key_of.find(t.name); k != key_of.end()) t.key = std::move(k->second);
    if (r[2]) t.estimated_rows = std::stoll(*r[2]);
    t.read_patch["query"] =
        "SELECT * FROM " + QuoteIdentifier(t.schema, '`') + "." + QuoteIdentifier(t.table, '`');
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace mysql
}  // namespace faucet
