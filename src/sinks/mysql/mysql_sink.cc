#include "sinks/mysql/mysql_sink.h"

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>

#include "clients/mysql/connection.h"
#include "core/bounded_queue.h"
#include "core/json_render.h"
#include "core/redact.h"
#include "core/text.h"
#include "sinks/sql/session_pool.h"
#include "sinks/sql/table_sink.h"

namespace faucet {
namespace {

using sql::RangeResult;
using sql::WritePlan;

constexpr char kOverwriteSuffix[] = "__faucet_new";
constexpr char kOldSuffix[] = "__faucet_old";
constexpr size_t kMaxIdentifierChars = 64;
constexpr size_t kScopeChars = 255;  // VARCHAR(255) of _faucet_commit_token.scope
// Statements are cut at about this size: far below the default max_allowed_packet (16 MiB on
// MariaDB, 64 MiB on MySQL 8) and big enough that a 1000-row page is one statement.
constexpr size_t kStatementBytes = 4 << 20;
// A bulk load's rows go to its LOAD DATA statement in pieces of about this size.
constexpr size_t kLoadChunkBytes = 256 << 10;
// An upsert batch holds at most this many rows (its bulk execution's arrays are per value).
constexpr size_t kBatchRows = 1000;
// Prepared statements a session keeps (every session's count against the server's
// max_prepared_stmt_count, 16382 by default).
constexpr size_t kPreparedPerSession = 32;

std::string Quote(std::string_view ident) { return QuoteIdentifier(ident, '`'); }

// How a cell's Postgres text form becomes a MySQL literal, from the column's DATA_TYPE.
enum class Literal : uint8_t {
  kString,    // quoted and escaped
  kNumber,    // bool t/f -> 1/0; a plain number unquoted (BIT needs it); anything else quoted
  kDateTime,  // "... +02" (timestamptz) shifted to UTC, which the session's time zone is
  kTime,      // "12:00:00+05:30" (timetz) shifted to UTC
  kBinary,    // Postgres hex "\x0a0b" -> X'0a0b'
};

Literal LiteralFor(const std::string& data_type) {
  static const char* kNumbers[] = {"tinyint", "smallint", "mediumint", "int",     "integer",
                                   "bigint",  "decimal",  "numeric",   "float",   "double",
                                   "real",    "bit",      "bool",      "boolean", "year"};
  static const char* kBinaries[] = {"binary", "varbinary",  "tinyblob",
                                    "blob",   "mediumblob", "longblob"};
  for (const char* t : kNumbers) {
    if (data_type == t) return Literal::kNumber;
  }
  for (const char* t : kBinaries) {
    if (data_type == t) return Literal::kBinary;
  }
  if (data_type == "datetime" || data_type == "timestamp") return Literal::kDateTime;
  if (data_type == "time") return Literal::kTime;
  return Literal::kString;
}

// The class of a column from information_schema's DATA_TYPE, COLUMN_TYPE and
// CHARACTER_MAXIMUM_LENGTH. DATETIME and TIMESTAMP hold zoned values too: the sink shifts them
// to UTC.
sql::TypeClass ClassOf(const std::string& data_type, const std::string& column_type,
                       const char* max_length) {
  using K = ValueType;
  static const std::pair<const char*, int> kInts[] = {
      {"tinyint", 8}, {"smallint", 16}, {"mediumint", 24}, {"int", 32}, {"bigint", 64}};
  if (column_type == "tinyint(1)") return {K::kBool, 0};
  for (const auto& [name, bits] : kInts) {
    // An unsigned column holds what a signed one a bit wider does.
    if (data_type == name) {
      return {K::kInt, bits + (column_type.find("unsigned") != std::string::npos ? 1 : 0)};
    }
  }
  if (data_type == "float") return {K::kFloat, 32};
  if (data_type == "double") return {K::kFloat, 64};
  if (data_type == "decimal") return {K::kNumeric, 0};
  // TEXT (64 KiB) and MEDIUMTEXT are taken as unlimited: judging them would flag every
  // Postgres text column mirrored into one.
  if (data_type == "longtext" || data_type == "text" || data_type == "mediumtext") {
    return {K::kText, 0};
  }
  if (data_type == "varchar" || data_type == "char" || data_type == "tinytext") {
    int64_t n = max_length != nullptr ? std::atoll(max_length) : 0;
    return {K::kText, static_cast<int>(std::min<int64_t>(n, std::numeric_limits<int>::max()))};
  }
  if (LiteralFor(data_type) == Literal::kBinary) return {K::kBytes, 0};
  if (data_type == "json") return {K::kJson, 0};
  if (data_type == "date") return {K::kDate, 0};
  if (data_type == "time") return {K::kTime, 0};
  if (data_type == "datetime" || data_type == "timestamp") return {K::kTimestampTz, 0};
  return {};
}

// The MySQL type of a column for `source`, from its logical type and its width (int4 -> int,
// varchar(20), numeric(12,2); a MySQL BIGINT UNSIGNED -> decimal(20,0)).
std::string MysqlType(const Column& source) {
  const sql::TypeClass c = sql::SourceClass(source);
  switch (source.type) {
    case ValueType::kBool:
      return "tinyint(1)";
    case ValueType::kInt:
      if (c.width > 64) return "decimal(20,0)";
      return c.width <= 16 ? "smallint" : c.width <= 32 ? "int" : "bigint";
    case ValueType::kFloat:
      return c.width <= 32 ? "float" : "double";
    case ValueType::kNumeric:
      if (std::optional<sql::NumericPrecision> p = sql::DeclaredPrecision(source);
          p && p->precision <= 65 && p->scale <= 30) {
        return "decimal(" + std::to_string(p->precision) + "," + std::to_string(p->scale) + ")";
      }
      return "decimal(65,30)";
    case ValueType::kText:
      // A VARCHAR of utf8mb4 holds at most 16383 characters.
      return c.width > 0 && c.width <= 16383 ? "varchar(" + std::to_string(c.width) + ")"
                                             : "longtext";
    case ValueType::kBytes:
      return "longblob";
    case ValueType::kJson:
      return "json";
    case ValueType::kDate:
      return "date";
    case ValueType::kTime:
      return "time(6)";
    case ValueType::kTimestamp:
    case ValueType::kTimestampTz:
      return "datetime(6)";
    default:
      return "longtext";  // intervals, uuids, arrays, others: their text form
  }
}

bool IsPlainNumber(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  bool digits = false, dot = false;
  for (; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9') {
      digits = true;
    } else if (s[i] == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  if (!digits) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return HexDigit(c) >= 0; });
}

bool ParseInt(std::string_view s, int* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, int* m, int* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

// The seconds east of UTC of a Postgres offset suffix "+HH", "+HH:MM" or "+HH:MM:SS".
bool ParseOffset(std::string_view s, int* seconds) {
  if (s.size() < 3 || (s[0] != '+' && s[0] != '-')) return false;
  int h = 0, m = 0, sec = 0;
  if (!ParseInt(s.substr(1, 2), &h)) return false;
  if (s.size() >= 6 && (s[3] != ':' || !ParseInt(s.substr(4, 2), &m))) return false;
  if (s.size() >= 9 && (s[6] != ':' || !ParseInt(s.substr(7, 2), &sec))) return false;
  if (s.size() != 3 && s.size() != 6 && s.size() != 9) return false;
  *seconds = (s[0] == '-' ? -1 : 1) * (h * 3600 + m * 60 + sec);
  return true;
}

// "YYYY-MM-DD HH:MM:SS[.f]+HH[:MM]" (timestamptz) or "HH:MM:SS[.f]+HH[:MM]" (timetz) as the
// same instant in UTC, without offset. False when the text has no offset or another shape
// (infinity, BC): it is then written as it is, for the server to take or refuse.
bool ShiftToUtc(std::string_view text, bool has_date, std::string& out) {
  const size_t clock = has_date ? 11 : 0;  // where HH:MM:SS starts
  if (text.size() < clock + 8 + 3) return false;
  size_t sign = text.find_first_of("+-", clock + 8);
  if (sign == std::string_view::npos) return false;
  int offset = 0, hh = 0, mi = 0, ss = 0, mo = 1, dd = 1;
  int64_t yy = 1970;
  if (!ParseOffset(text.substr(sign), &offset)) return false;
  if (has_date) {
    int y = 0;
    if (text[4] != '-' || text[7] != '-' || text[10] != ' ' || !ParseInt(text.substr(0, 4), &y) ||
        !ParseInt(text.substr(5, 2), &mo) || !ParseInt(text.substr(8, 2), &dd)) {
      return false;
    }
    yy = y;
  }
  std::string_view t = text.substr(clock);
  if (t[2] != ':' || t[5] != ':' || !ParseInt(t.substr(0, 2), &hh) ||
      !ParseInt(t.substr(3, 2), &mi) || !ParseInt(t.substr(6, 2), &ss)) {
    return false;
  }
  std::string_view fraction = text.substr(clock + 8, sign - clock - 8);
  int64_t seconds = DaysFromCivil(yy, mo, dd) * 86400 + hh * 3600 + mi * 60 + ss - offset;
  int64_t days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400;
  int64_t rest = seconds - days * 86400;
  out.clear();
  if (has_date) {
    CivilFromDays(days, &yy, &mo, &dd);
    if (yy < 0) return false;  // before year 0: not a shape Postgres prints without " BC"
    AppendPadded(out, static_cast<uint64_t>(yy), 4);
    out += '-';
    AppendPadded(out, static_cast<uint64_t>(mo), 2);
    out += '-';
    AppendPadded(out, static_cast<uint64_t>(dd), 2);
    out += ' ';
  }
  AppendPadded(out, static_cast<uint64_t>(rest / 3600), 2);
  out += ':';
  AppendPadded(out, static_cast<uint64_t>(rest / 60 % 60), 2);
  out += ':';
  AppendPadded(out, static_cast<uint64_t>(rest % 60), 2);
  out.append(fraction);
  return true;
}

// A cell as MySQL is to take it, whether it is sent as a literal (INSERT) or as a field of a
// bulk load (LOAD DATA): the one place Postgres text forms are converted by column type.
struct Value {
  enum class Kind : uint8_t {
    kNull,
    kNumber,  // unquoted in SQL (a BIT or YEAR column reads a number and a string differently)
    kText,    // a string
    kHex,     // the hex digits of a binary string
  };
  Kind kind = Kind::kNull;
  std::string_view text;
};

// `shifted` holds the text of a converted timestamp: it must outlive the value.
Value ValueOf(Literal literal, const Cell* cell, std::string& shifted) {
  if (cell == nullptr || cell->state != CellState::kValue) return {};
  const std::string& text = cell->text;
  switch (literal) {
    case Literal::kNumber:
      if (std::optional<bool> b = ParseBoolText(text))
        return {Value::Kind::kNumber, *b ? "1" : "0"};
      if (IsPlainNumber(text)) return {Value::Kind::kNumber, text};
      break;
    case Literal::kDateTime:
    case Literal::kTime:
      if (ShiftToUtc(text, literal == Literal::kDateTime, shifted)) {
        return {Value::Kind::kText, shifted};
      }
      break;
    case Literal::kBinary:
      if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x' &&
          IsHex(std::string_view(text).substr(2)) && text.size() % 2 == 0) {
        return {Value::Kind::kHex, std::string_view(text).substr(2)};
      }
      break;
    case Literal::kString:
      break;
  }
  return {Value::Kind::kText, text};
}

// `value` as a field of LOAD DATA's text format (FIELDS TERMINATED BY '\t' ESCAPED BY '\\'
// LINES TERMINATED BY '\n'): \N for NULL, the terminators, the escape and NUL escaped. A
// binary column's field is the hex of its bytes, loaded through UNHEX: the server reads the
// data as utf8mb4, which arbitrary bytes are not.
void AppendField(const Value& value, bool binary, std::string& out) {
  if (value.kind == Value::Kind::kNull) {
    out += "\\N";
  } else if (binary && value.kind == Value::Kind::kHex) {
    out += value.text;
  } else if (binary) {
    AppendHex(value.text, out);
  } else {
    AppendEscapedField(value.text, out);
  }
}

// The column a MySQL message names: "... for column 'qty' at row 1", "Column 'qty' cannot be
// null", "... for column `db`.`t`.`qty` at row 1" (the last quoted part), "Column set to
// default value; NULL supplied to NOT NULL column 'qty' at row 2" (the first quoted one).
std::string ColumnOf(const std::string& message) {
  size_t at = 0;
  do {
    at = message.find("olumn ", at);
    if (at == std::string::npos) return "";
    at += 6;
  } while (at == message.size() || (message[at] != '\'' && message[at] != '`'));
  std::string column;
  while (at < message.size() && (message[at] == '\'' || message[at] == '`')) {
    char q = message[at];
    size_t close = message.find(q, at + 1);
    if (close == std::string::npos) break;
    column = message.substr(at + 1, close - at - 1);
    at = close + 1;
    if (at < message.size() && message[at] == '.') ++at;
  }
  return column;
}

// What a LOAD DATA LOCAL INFILE of a session reads, from memory: the pieces of data queued in
// `data` by the bulk load's LoadStatement, until it closes the queue. Without a queue (no load
// in progress) a request for a file fails: the server can never make the client read one.
struct InfileFeed {
  BoundedQueue<std::string>* data = nullptr;
  std::string piece;  // the piece being read
  size_t at = 0;      // bytes of `piece` already read

  // The callbacks of mysql_set_local_infile_handler, `userdata` the feed.
  static int Init(void** state, const char* /*filename*/, void* userdata) {
    *state = userdata;  // the end and error callbacks get it even when this fails
    return static_cast<InfileFeed*>(userdata)->data != nullptr ? 0 : 1;
  }
  static int Read(void* state, char* buf, unsigned int size) {
    auto* feed = static_cast<InfileFeed*>(state);
    unsigned int n = 0;
    while (n < size) {
      if (feed->at == feed->piece.size()) {
        std::optional<std::string> next = feed->data->Pop();  // waits for the sink thread
        if (!next) break;
        feed->piece = std::move(*next);
        feed->at = 0;
      }
      const size_t k = std::min<size_t>(size - n, feed->piece.size() - feed->at);
      std::memcpy(buf + n, feed->piece.data() + feed->at, k);
      feed->at += k;
      n += static_cast<unsigned int>(k);
    }
    return static_cast<int>(n);
  }
  static void End(void* /*state*/) {}
  static int Error(void* /*state*/, char* message, unsigned int size) {
    std::snprintf(message, size, "faucet: LOAD DATA LOCAL INFILE outside a bulk load");
    return CR_UNKNOWN_ERROR;
  }
};

struct StmtCloser {
  void operator()(MYSQL_STMT* stmt) const { mysql_stmt_close(stmt); }
};
using StmtPtr = std::unique_ptr<MYSQL_STMT, StmtCloser>;

// The INSERTs a session has prepared, by their SQL text, with when each was last used.
struct PreparedStatements {
  struct Entry {
    StmtPtr stmt;
    uint64_t used = 0;
  };
  std::unordered_map<std::string, Entry> by_sql;
  uint64_t clock = 0;
};

// A destination session: its connection, whether it failed, whether a transaction is open, and
// its prepared statements (declared after the connection: they are closed before it).
struct MysqlSession {
  // Connected and outside any transaction: a sink that failed mid-page leaves its session to
  // be closed, never handed to the next.
  bool Reusable() const { return !broken && !in_transaction; }

  mysql::ConnPtr conn;
  bool broken = false;
  bool in_transaction = false;
  InfileFeed feed;              // the connection's infile handler reads it (a session never moves)
  bool bulk_execution = false;  // the server runs COM_STMT_BULK_EXECUTE (MariaDB, not MySQL)
  PreparedStatements prepared;
};
using MysqlPool = sql::SessionPool<MysqlSession>;

// One LOAD DATA LOCAL INFILE kept open across the pages of a bulk load, as the Postgres sink
// keeps one COPY: a thread runs the statement on the session's connection while the sink
// thread queues its data, which the server reads through the session's feed. So the server
// loads while faucet reads and renders the next rows, and memory holds at most
// kLoadQueueBytes of data. Nothing else may use the connection until End returns.
class LoadStatement {
 public:
  LoadStatement(MysqlSession& session, std::string sql)
      : session_(session), queue_(kLoadQueueBytes) {
    session_.feed.data = &queue_;
    thread_ = std::thread([this, sql = std::move(sql)] {
      result_ = mysql_real_query(session_.conn.get(), sql.data(), sql.size());
      queue_.Close();  // a statement that failed early fails the next Append, not blocks it
    });
  }
  ~LoadStatement() { End(); }
  LoadStatement(const LoadStatement&) = delete;
  LoadStatement& operator=(const LoadStatement&) = delete;

  // Queues `data` (whole lines), blocking while kLoadQueueBytes are queued; false once the
  // statement has ended, which only a failure does before End (End then tells which).
  bool Append(std::string data) {
    const size_t bytes = data.size();
    return queue_.Push(std::move(data), bytes);
  }
  // Ends the data and waits for the statement: mysql_real_query's answer (0 when it ran).
  int End() {
    if (thread_.joinable()) {
      queue_.Close();
      thread_.join();
      session_.feed = {};
    }
    return result_;
  }

 private:
  static constexpr size_t kLoadQueueBytes = 4 << 20;
  MysqlSession& session_;
  BoundedQueue<std::string> queue_;
  std::thread thread_;
  int result_ = 0;  // written by thread_, read after it is joined
};

Result<std::unique_ptr<MysqlSession>> OpenSession(const mysql::Endpoint& endpoint) {
  auto session = std::make_unique<MysqlSession>();
  // For the bulk load's LOAD DATA LOCAL INFILE, whose rows come from the session's feed.
  ASSIGN_OR_RETURN(session->conn, mysql::Connect(endpoint, "mysql sink", [&session](MYSQL* conn) {
                     unsigned int local_infile = 1;
                     mysql_options(conn, MYSQL_OPT_LOCAL_INFILE, &local_infile);
                     mysql_set_local_infile_handler(conn, &InfileFeed::Init, &InfileFeed::Read,
                                                    &InfileFeed::End, &InfileFeed::Error,
                                                    &session->feed);
                   }));
  // Strict mode: a value the column cannot hold is an error, never silently truncated or
  // zeroed. NO_AUTO_VALUE_ON_ZERO: a mirrored id 0 stays 0. (The session is in UTC, the zone
  // timestamptz values are converted to: mysql::Connect.)
  const std::string set =
      "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION,NO_AUTO_VALUE_ON_ZERO'";
  if (mysql_real_query(session->conn.get(), set.data(), set.size()) != 0) {
    return Unavailable(Redact("mysql sink " + endpoint.url +
                              ": cannot set the session: " + mysql_error(session->conn.get())));
  }
  unsigned long capabilities = 0;
  session->bulk_execution =
      mariadb_get_infov(session->conn.get(), MARIADB_CONNECTION_EXTENDED_SERVER_CAPABILITIES,
                        &capabilities) == 0 &&
      (capabilities & (MARIADB_CLIENT_STMT_BULK_OPERATIONS >> 32)) != 0;
  return session;
}

class MysqlSink : public sql::TableSink {
 public:
  MysqlSink(sql::WriteSpec spec, std::shared_ptr<MysqlPool> pool, MysqlUrl parts, std::string table)
      : TableSink(std::move(spec)),
        pool_(std::move(pool)),
        parts_(std::move(parts)),
        table_(std::move(table)),
        write_table_(Quote(table_)) {}

 protected:
  Status Hold() override {
    if (!session_) {
      ASSIGN_OR_RETURN(session_, pool_->Acquire());
    }
    return Status::Ok();
  }

  void Release() override { session_.Reset(); }

  Result<std::optional<std::string>> ReadToken(const std::string& scope) override {
    std::string sql = "SELECT token FROM _faucet_commit_token WHERE scope = ";
    AppendString(scope, sql);
    if (mysql_real_query(conn(), sql.data(), sql.size()) != 0) {
      if (mysql_errno(conn()) == ER_NO_SUCH_TABLE) return std::optional<std::string>();
      return Error("cannot read the commit token");
    }
    MYSQL_RES* res = mysql_store_result(conn());
    if (res == nullptr) return Error("cannot read the commit token");
    std::optional<std::string> token;
    if (MYSQL_ROW row = mysql_fetch_row(res)) {
      token = std::string(row[0], mysql_fetch_lengths(res)[0]);
    }
    mysql_free_result(res);
    return token;
  }

  Status OpenTable() override {
    sql::TargetTable target;
    RETURN_IF_ERROR(ReadTarget(target));
    RETURN_IF_ERROR(SetTarget(std::move(target)));
    WarnIfNotDurable();
    return Status::Ok();
  }

  Status Begin() override {
    RETURN_IF_ERROR(Query("START TRANSACTION", "cannot begin a transaction"));
    session_->in_transaction = true;
    return Status::Ok();
  }
  Status Commit() override {
    RETURN_IF_ERROR(Query("COMMIT", "cannot commit"));
    session_->in_transaction = false;
    return Status::Ok();
  }
  void Rollback() override {
    if (!session_->broken && mysql_real_query(conn(), "ROLLBACK", 8) == 0) {
      session_->in_transaction = false;
    }
  }

  // The range's deletes as DELETE ... WHERE key IN (...), then per column group one
  // multi-row INSERT ... ON DUPLICATE KEY UPDATE, cut at kStatementBytes; all inside a
  // savepoint so that a refused row undoes the whole range.
  RangeResult ApplyRange(const WritePlan& plan, size_t begin, size_t end) override {
    if (Status st = Query("SAVEPOINT faucet_range", "table " + target().display_name); !st.ok()) {
      return {st};
    }
    RangeResult result = ApplyStatements(plan, begin, end);
    if (!result.status.ok()) {
      // Best effort: should the rollback fail, the next statement fails and ends the page.
      if (!session_->broken) (void)Query("ROLLBACK TO SAVEPOINT faucet_range", "");
      return result;
    }
    if (Status st = Query("RELEASE SAVEPOINT faucet_range", "table " + target().display_name);
        !st.ok()) {
      return {st};
    }
    return RangeResult::Ok();
  }

  Status EnsureTokenTable() override {
    // A binary collation: state keys are case-sensitive.
    return Query(
        "CREATE TABLE IF NOT EXISTS _faucet_commit_token (scope VARCHAR(255) NOT NULL PRIMARY "
        "KEY, token TEXT NOT NULL, updated_at TIMESTAMP(6) NOT NULL DEFAULT "
        "CURRENT_TIMESTAMP(6)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin",
        "cannot create _faucet_commit_token");
  }

  Status StoreToken(const std::string& scope, const std::string& token) override {
    std::string sql = "INSERT INTO _faucet_commit_token (scope, token, updated_at) VALUES (";
    AppendString(scope, sql);
    sql += ", ";
    AppendString(token, sql);
    sql +=
        ", CURRENT_TIMESTAMP(6)) ON DUPLICATE KEY UPDATE token = VALUES(token),"
        " updated_at = VALUES(updated_at)";
    return Query(sql, "cannot store the commit token");
  }

  size_t ScopeWidth() const override { return kScopeChars; }

  std::string TypeFor(const Column& source) const override { return MysqlType(source); }

  // MODIFY restates the whole column: its NULL-ness, character set and collation are kept; a
  // column with a default, AUTO_INCREMENT or ON UPDATE is refused (MODIFY would drop them).
  // A column comment is not kept.
  // ADD COLUMN racing another writer of the table (a snapshot's shards) is fine: the column is
  // there either way.
  Status AlterTarget(const std::vector<sql::SchemaChange>& changes) override {
    std::string actions;
    for (const sql::SchemaChange& c : changes) {
      const int t = target().Find(c.column);
      std::string action;
      if (c.kind == sql::SchemaChange::kAddColumn) {  // MySQL has no ADD COLUMN IF NOT EXISTS
        if (t < 0) action = "ADD COLUMN " + Quote(c.column) + " " + c.type;
      } else {
        if (t < 0) return NotFound("column " + c.column + " is not in the table");
        const Definition& d = definitions_[t];
        if (d.more) {
          return FailedPrecondition("column " + c.column +
                                    " has a default, AUTO_INCREMENT or ON UPDATE, which MODIFY "
                                    "COLUMN would drop: change it by hand");
        }
        const bool widen = c.kind == sql::SchemaChange::kWidenColumn;
        action =
            "MODIFY COLUMN " + Quote(c.column) + " " + (widen ? c.type : target().columns[t].type);
        if (!d.charset.empty()) action += " CHARACTER SET " + d.charset + " COLLATE " + d.collation;
        action += widen && !d.nullable ? " NOT NULL" : " NULL";
      }
      if (!action.empty()) actions += (actions.empty() ? "" : ", ") + action;
    }
    Status altered = actions.empty() ? Status::Ok()
                                     : Query("ALTER TABLE " + write_table_ + " " + actions,
                                             "cannot change the table");
    sql::TargetTable target;
    RETURN_IF_ERROR(ReadTarget(target));
    if (!altered.ok()) {
      for (const sql::SchemaChange& c : changes) {
        if (c.kind != sql::SchemaChange::kAddColumn || target.Find(c.column) < 0) return altered;
      }
    }
    return SetTarget(std::move(target));
  }

  Status CreateOverwriteTable() override {
    if (table_.size() + std::strlen(kOverwriteSuffix) > kMaxIdentifierChars) {
      return InvalidArgument("table " + target().display_name + ": the name is too long for " +
                             "write_mode overwrite (" + table_ + kOverwriteSuffix +
                             " exceeds 64 characters)");
    }
    std::string fresh = Quote(table_ + kOverwriteSuffix);
    RETURN_IF_ERROR(Query("DROP TABLE IF EXISTS " + fresh, "cannot create the overwrite table"));
    RETURN_IF_ERROR(Query("CREATE TABLE " + fresh + " LIKE " + Quote(table_),
                          "cannot create the overwrite table " + table_ + kOverwriteSuffix));
    write_table_ = fresh;
    return Status::Ok();
  }

  // RENAME TABLE of several tables is atomic: readers see the old table or the new one.
  Status SwapOverwriteTable() override {
    std::string old_table = Quote(table_ + kOldSuffix);
    RETURN_IF_ERROR(Query("DROP TABLE IF EXISTS " + old_table, "cannot swap"));
    RETURN_IF_ERROR(Query("RENAME TABLE " + Quote(table_) + " TO " + old_table + ", " +
                              write_table_ + " TO " + Quote(table_),
                          "cannot swap in the overwrite table " + table_ + kOverwriteSuffix));
    write_table_ = Quote(table_);
    return Query("DROP TABLE " + old_table, "cannot drop the replaced table");
  }

  Status DropOverwriteTable() override {
    std::string fresh = write_table_;
    write_table_ = Quote(table_);
    return Query("DROP TABLE IF EXISTS " + fresh, "cannot drop the overwrite table");
  }

  // Bulk load: one transaction, and one LOAD DATA LOCAL INFILE kept open across pages (a new
  // one when the written columns change), run by a LoadStatement while the pages' rows are
  // rendered into it. A keyed target must be empty: LOAD DATA cannot upsert. Declined when the
  // server refuses local infile, and for a table with a BIT or YEAR column, which a LOAD DATA
  // field (a string) fills differently from the page's unquoted number.
  Result<bool> BulkStart(const WritePlan& plan) override {
    if (!textual_mismatch_.empty()) {
      spdlog::info(
          "table {}: column {} reads a number and a string differently: the load is "
          "written page by page",
          target().display_name, textual_mismatch_);
      return false;
    }
    RETURN_IF_ERROR(Begin());
    std::string sql = "SELECT @@local_infile";
    if (plan.keyed()) sql += ", EXISTS (SELECT 1 FROM " + write_table_ + ")";
    Status read = Query(sql, "cannot read the table");
    MYSQL_RES* res = read.ok() ? mysql_store_result(conn()) : nullptr;
    if (read.ok() && res == nullptr) read = Error("cannot read the table");
    if (!read.ok()) {
      Rollback();
      return read;
    }
    MYSQL_ROW row = mysql_fetch_row(res);
    const bool local_infile = row != nullptr && row[0] != nullptr && std::strcmp(row[0], "1") == 0;
    const bool has_rows =
        plan.keyed() && row != nullptr && row[1] != nullptr && std::strcmp(row[1], "1") == 0;
    mysql_free_result(res);
    if (!local_infile || has_rows) {
      Rollback();
      spdlog::info("table {}: {}: the load is written page by page", target().display_name,
                   has_rows ? "it already holds rows" : "the server has local_infile off");
      return false;
    }
    load_rows_ = 0;
    return true;
  }

  Status BulkAppend(const WritePlan& plan) override {
    for (size_t g = 0; g < plan.groups().size(); ++g) {
      const std::vector<int>& columns = plan.groups()[g];  // every group has rows
      if (load_ == nullptr || load_columns_ != columns) {
        RETURN_IF_ERROR(EndLoad());
        StartLoad(columns);
      }
      for (size_t r = 0; r < plan.size(); ++r) {
        if (plan.row(r).group != g) continue;
        const size_t row = load_rows_ + r;
        if (load_runs_.empty() ||
            load_runs_.back().second + (load_lines_ - load_runs_.back().first) != row) {
          load_runs_.emplace_back(load_lines_, row);
        }
        ++load_lines_;
        for (size_t i = 0; i < columns.size(); ++i) {
          if (i) load_chunk_ += '\t';
          const Literal literal = literals_[columns[i]];
          AppendField(ValueOf(literal, plan.cell(r, columns[i]), shifted_),
                      literal == Literal::kBinary, load_chunk_);
        }
        load_chunk_ += '\n';
        if (load_chunk_.size() >= kLoadChunkBytes && !load_->Append(std::move(load_chunk_))) {
          return EndLoad();  // the statement failed: its error
        }
        if (load_chunk_.capacity() == 0) load_chunk_.reserve(kLoadChunkBytes + 4096);
      }
    }
    load_rows_ += plan.size();
    return Status::Ok();
  }

  Status BulkCommit() override {
    RETURN_IF_ERROR(EndLoad());
    return Commit();
  }
  void BulkRollback() override {
    load_chunk_.clear();
    (void)EndLoad();  // the statement ends on the data sent so far; the rollback undoes it
    Rollback();
  }

 private:
  // The held session's connection. REQUIRES: a session is held.
  MYSQL* conn() const { return session_->conn.get(); }

  // With innodb_flush_log_at_trx_commit != 1 a commit is not on disk when COMMIT returns:
  // Flush's promise then holds against a process crash but not an OS crash.
  void WarnIfNotDurable() {
    const char* sql = "SELECT @@innodb_flush_log_at_trx_commit";
    if (mysql_real_query(conn(), sql, std::strlen(sql)) != 0) return;
    MYSQL_RES* res = mysql_store_result(conn());
    if (res == nullptr) return;
    MYSQL_ROW row = mysql_fetch_row(res);
    if (row != nullptr && row[0] != nullptr && std::strcmp(row[0], "1") != 0) {
      spdlog::warn(
          "{}: the server has innodb_flush_log_at_trx_commit={}, so a committed page "
          "may be lost in an OS crash; set it to 1 for durable writes",
          "mysql sink table " + target().display_name, row[0]);
    }
    mysql_free_result(res);
  }

  // Starts the bulk load's LOAD DATA statement for rows writing `columns`.
  void StartLoad(const std::vector<int>& columns) {
    const std::vector<sql::TargetColumn>& cols = target().columns;
    std::string load = "LOAD DATA LOCAL INFILE 'faucet' INTO TABLE " + write_table_ +
                       " CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\'"
                       " LINES TERMINATED BY '\\n' (";
    std::string set;
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string name = Quote(cols[columns[i]].name);
      if (literals_[columns[i]] == Literal::kBinary) {
        const std::string var = "@b" + std::to_string(i);
        set += (set.empty() ? " SET " : ", ") + name + " = UNHEX(" + var + ")";
        name = var;
      }
      load += (i ? ", " : "") + name;
    }
    load += ")" + set;
    load_columns_ = columns;
    load_lines_ = 0;
    load_runs_.clear();
    load_ = std::make_unique<LoadStatement>(*session_, std::move(load));
  }

  // Sends the rest of the statement's data, waits for it to end and checks it (CheckLoad).
  Status EndLoad() {
    if (load_ == nullptr) return Status::Ok();
    if (!load_chunk_.empty()) (void)load_->Append(std::move(load_chunk_));
    load_chunk_.clear();
    const int result = load_->End();
    load_.reset();
    if (result == 0) return CheckLoad();
    Status failed = Error("table " + target().display_name);
    if (failed.code() != StatusCode::kInvalidArgument) return failed;
    return BulkRefusal(std::nullopt, ColumnOf(failed.message()), failed);
  }

  // Whether the ended LOAD DATA took its load_lines_ rows as an INSERT would. With LOCAL the
  // server cannot stop the client mid-file, so it loads as with IGNORE: a row it cannot take
  // (a duplicate key, a value the column cannot hold, NULL into NOT NULL) is skipped or
  // altered with a warning instead of failing the statement, whatever the sql_mode. Any
  // warning but a note (which an INSERT gives for the same value, e.g. a rounded decimal) and
  // any row not taken refuse the load, naming the row when the message does ("at row N", its
  // line in the statement).
  Status CheckLoad() {
    const size_t rows = load_lines_;
    const unsigned int warnings = mysql_warning_count(conn());
    const uint64_t taken = mysql_affected_rows(conn());
    if (warnings == 0 && taken == rows) return Status::Ok();
    std::string message;
    if (warnings > 0) {
      RETURN_IF_ERROR(Query("SHOW WARNINGS", "cannot read the load's warnings"));
      MYSQL_RES* res = mysql_store_result(conn());
      if (res == nullptr) return Error("cannot read the load's warnings");
      unsigned int listed = 0;
      while (MYSQL_ROW row = mysql_fetch_row(res)) {
        ++listed;
        if (row[0] != nullptr && std::strcmp(row[0], "Note") == 0) continue;
        message = row[2] != nullptr ? row[2] : "";
        if (message.empty()) message = "warning " + std::string(row[1] != nullptr ? row[1] : "");
        break;
      }
      mysql_free_result(res);
      if (message.empty() && listed < warnings) {
        message = std::to_string(warnings) + " warnings, of which SHOW WARNINGS lists " +
                  std::to_string(listed) + " notes";
      }
    }
    if (message.empty()) {
      if (taken == rows) return Status::Ok();  // notes only
      message = "the server took " + std::to_string(taken) + " of " + std::to_string(rows) +
                " rows without a warning";
    }
    std::optional<size_t> row;
    if (size_t at = message.rfind(" at row "); at != std::string::npos) {
      size_t line = 0;
      const char* begin = message.data() + at + 8;
      auto [ptr, ec] = std::from_chars(begin, message.data() + message.size(), line);
      if (ec == std::errc() && ptr != begin && line >= 1 && line <= rows) {
        // The run of consecutive load rows that holds the statement's line.
        auto run = std::upper_bound(load_runs_.begin(), load_runs_.end(),
                                    std::make_pair(line - 1, SIZE_MAX));
        row = std::prev(run)->second + (line - 1 - std::prev(run)->first);
      }
    }
    return BulkRefusal(row, ColumnOf(message), InvalidArgument(message));
  }

  // The connection's (or a statement's) last error as a Status: a refused value is
  // kInvalidArgument with the server's message (which names the column); a lost connection
  // marks the session broken.
  Status Error(const std::string& what) {
    return ErrorOf(mysql_errno(conn()), mysql_error(conn()), what);
  }
  Status StatementError(MYSQL_STMT* stmt, const std::string& what) {
    return ErrorOf(mysql_stmt_errno(stmt), mysql_stmt_error(stmt), what);
  }
  Status ErrorOf(unsigned int err, const std::string& message, const std::string& what) {
    StatusCode code = mysql::ErrorCode(err);
    if (err >= CR_MIN_ERROR && err <= CR_MAX_ERROR) code = StatusCode::kUnavailable;
    if (code == StatusCode::kUnavailable) session_->broken = true;
    if (code == StatusCode::kInvalidArgument) return InvalidArgument(message);
    return Status(code, Redact(what + ": " + message));
  }

  Status Query(const std::string& sql, const std::string& what) {
    if (mysql_real_query(conn(), sql.data(), sql.size()) == 0) return Status::Ok();
    return Error(what);
  }

  Status ReadTarget(sql::TargetTable& table) {
    table.display_name = parts_.database + "." + table_;
    std::string name;
    AppendString(write_table_ == Quote(table_) ? table_ : table_ + kOverwriteSuffix, name);
    // MariaDB reports a nullable column's NULL default as the text NULL, and a column without
    // default as SQL NULL.
    std::string sql =
        "SELECT COLUMN_NAME, COLUMN_TYPE, DATA_TYPE, EXTRA, CHARACTER_MAXIMUM_LENGTH,"
        " IS_NULLABLE = 'NO' AND COLUMN_DEFAULT IS NULL AND EXTRA NOT LIKE '%auto_increment%',"
        " IS_NULLABLE = 'YES', COALESCE(COLUMN_DEFAULT, 'NULL') <> 'NULL' OR EXTRA <> '',"
        " CHARACTER_SET_NAME, COLLATION_NAME, GENERATION_EXPRESSION"
        " FROM information_schema.COLUMNS"
        " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = " +
        name + " ORDER BY ORDINAL_POSITION";
    RETURN_IF_ERROR(Query(sql, "cannot read the table's columns"));
    MYSQL_RES* res = mysql_store_result(conn());
    if (res == nullptr) return Error("cannot read the table's columns");
    literals_.clear();
    definitions_.clear();
    textual_mismatch_.clear();
    auto is_true = [](const char* v) { return v != nullptr && std::strcmp(v, "1") == 0; };
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      // A generated column has an expression (EXTRA's DEFAULT_GENERATED is an expression
      // default, a column to write).
      if (row[10] != nullptr && row[10][0] != '\0') continue;
      table.columns.push_back({row[0], row[1], ClassOf(row[2], row[1], row[4]), is_true(row[5])});
      literals_.push_back(LiteralFor(row[2]));
      if (textual_mismatch_.empty() &&
          (std::strcmp(row[2], "bit") == 0 || std::strcmp(row[2], "year") == 0)) {
        textual_mismatch_ = row[0];
      }
      definitions_.push_back({is_true(row[6]), is_true(row[7]), row[8] != nullptr ? row[8] : "",
                              row[9] != nullptr ? row[9] : ""});
    }
    mysql_free_result(res);
    if (table.columns.empty()) {
      return NotFound("mysql sink: table " + table.display_name +
                      " does not exist (create it before the first run)");
    }
    RETURN_IF_ERROR(
        Query("SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS"
              " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = " +
                  name + " AND NON_UNIQUE = 0 ORDER BY INDEX_NAME, SEQ_IN_INDEX",
              "cannot read the table's unique indexes"));
    res = mysql_store_result(conn());
    if (res == nullptr) return Error("cannot read the table's unique indexes");
    std::string index;
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      if (table.unique_keys.empty() || index != row[0]) {
        index = row[0];
        table.unique_keys.emplace_back();
      }
      table.unique_keys.back().push_back(row[1]);
    }
    mysql_free_result(res);
    return Status::Ok();
  }

  // `text` as a string literal. mysql_real_escape_string escapes only the bytes NUL, \n, \r, \,
  // ', " and ^Z and copies every other byte, in any charset: a text without them (nearly every
  // value) is its own literal body, copied without the library's per-character charset check.
  void AppendString(std::string_view text, std::string& out) {
    static constexpr auto kSpecial = [] {
      std::array<bool, 256> special{};
      for (unsigned char c : {'\0', '\n', '\r', '\\', '\'', '"', '\x1a'}) special[c] = true;
      return special;
    }();
    if (std::none_of(text.begin(), text.end(),
                     [](char c) { return kSpecial[static_cast<unsigned char>(c)]; })) {
      out += '\'';
      out += text;
      out += '\'';
      return;
    }
    size_t at = out.size();
    out.resize(at + 2 * text.size() + 3);
    out[at] = '\'';
    unsigned long n = mysql_real_escape_string(conn(), out.data() + at + 1, text.data(),
                                               static_cast<unsigned long>(text.size()));
    out[at + 1 + n] = '\'';
    out.resize(at + n + 2);
  }

  void AppendValue(int column, const Cell* cell, std::string& out) {
    const Value v = ValueOf(literals_[column], cell, shifted_);
    switch (v.kind) {
      case Value::Kind::kNull:
        out += "NULL";
        return;
      case Value::Kind::kNumber:
        out += v.text;
        return;
      case Value::Kind::kHex:
        out += "X'";
        out += v.text;
        out += '\'';
        return;
      case Value::Kind::kText:
        AppendString(v.text, out);
        return;
    }
  }

  // Runs the statement in sql_ if it is not empty, then clears it.
  Status FlushStatement() {
    if (sql_.empty()) return Status::Ok();
    Status st = Query(sql_, "table " + target().display_name);
    sql_.clear();
    return st;
  }

  RangeResult ApplyStatements(const WritePlan& plan, size_t begin, size_t end) {
    const std::vector<sql::TargetColumn>& cols = target().columns;
    const std::vector<int>& key = plan.key();
    // Deletes.
    std::string head = "DELETE FROM " + write_table_ + " WHERE ";
    if (key.size() == 1) {
      head += Quote(cols[key[0]].name);
    } else {
      head += "(";
      for (size_t k = 0; k < key.size(); ++k) head += (k ? ", " : "") + Quote(cols[key[k]].name);
      head += ")";
    }
    head += " IN (";
    sql_.clear();
    for (size_t r = begin; r < std::min(end, plan.deletes()); ++r) {
      sql_ += sql_.empty() ? head : ", ";
      if (key.size() > 1) sql_ += '(';
      for (size_t k = 0; k < key.size(); ++k) {
        if (k) sql_ += ", ";
        AppendValue(key[k], plan.cell(r, key[k]), sql_);
      }
      if (key.size() > 1) sql_ += ')';
      if (sql_.size() >= kStatementBytes) {
        sql_ += ')';
        if (Status st = FlushStatement(); !st.ok()) return Failed(st);
      }
    }
    if (!sql_.empty()) sql_ += ')';
    if (Status st = FlushStatement(); !st.ok()) return Failed(st);

    // Inserts and upserts, per column group, in batches of kBatchRows rows or fewer, whose
    // values reach about kStatementBytes.
    const size_t first = std::max(begin, plan.deletes());
    for (size_t g = 0; g < plan.groups().size(); ++g) {
      const std::vector<int>& columns = plan.groups()[g];
      std::string insert = "INSERT INTO " + write_table_ + " (";
      std::string update;
      for (size_t i = 0; i < columns.size(); ++i) {
        std::string name = Quote(cols[columns[i]].name);
        insert += (i ? ", " : "") + name;
        if (std::find(key.begin(), key.end(), columns[i]) == key.end()) {
          update += (update.empty() ? "" : ", ") + name + " = VALUES(" + name + ")";
        }
      }
      insert += ") VALUES ";
      std::string tail;
      if (plan.keyed()) {
        // A row of key columns only changes nothing when it exists.
        tail =
            " ON DUPLICATE KEY UPDATE " +
            (update.empty() ? Quote(cols[key[0]].name) + " = " + Quote(cols[key[0]].name) : update);
      }
      batch_.clear();
      size_t bytes = 0;
      for (size_t r = first; r < end; ++r) {
        if (plan.row(r).group != g) continue;
        batch_.push_back(r);
        for (int c : columns) {
          if (const Cell* cell = plan.cell(r, c)) bytes += cell->text.size();
        }
        if (batch_.size() == kBatchRows || bytes >= kStatementBytes) {
          if (Status st = InsertBatch(plan, columns, insert, tail); !st.ok()) return Failed(st);
          batch_.clear();
          bytes = 0;
        }
      }
      if (Status st = InsertBatch(plan, columns, insert, tail); !st.ok()) return Failed(st);
    }
    return RangeResult::Ok();
  }

  // Inserts the plan rows in batch_ (of one column group): by MariaDB's bulk execution when it
  // can (InsertBulk), else as one multi-row INSERT in SQL text. `insert` and `tail` are the
  // statement's text before and after its rows.
  Status InsertBatch(const WritePlan& plan, const std::vector<int>& columns,
                     const std::string& insert, const std::string& tail) {
    if (batch_.empty()) return Status::Ok();
    ASSIGN_OR_RETURN(bool bulk, InsertBulk(plan, columns, insert, tail));
    if (bulk) return Status::Ok();
    sql_ = insert;
    for (size_t r = 0; r < batch_.size(); ++r) {
      sql_ += r ? ", (" : "(";
      for (size_t i = 0; i < columns.size(); ++i) {
        if (i) sql_ += ", ";
        AppendValue(columns[i], plan.cell(batch_[r], columns[i]), sql_);
      }
      sql_ += ')';
    }
    sql_ += tail;
    return FlushStatement();
  }

  // One prepared INSERT of a single row, executed over the rows of batch_ as an array (MariaDB's
  // COM_STMT_BULK_EXECUTE): the server parses the statement once per session rather than every
  // value of every row, and values travel without quoting or escaping. False, having done
  // nothing, when the server has no bulk execution (MySQL), or when a column's values in the
  // batch are of different kinds (a number column's "NaN" among numbers): an array binding has
  // one type per column.
  Result<bool> InsertBulk(const WritePlan& plan, const std::vector<int>& columns,
                          const std::string& insert, const std::string& tail) {
    if (!session_->bulk_execution) return false;
    const size_t rows = batch_.size();
    const size_t values = rows * columns.size();
    binds_.assign(columns.size(), MYSQL_BIND{});
    pointers_.resize(values);
    lengths_.resize(values);
    indicators_.resize(values);
    converted_.clear();
    converted_at_.clear();
    for (size_t i = 0; i < columns.size(); ++i) {
      Value::Kind kind = Value::Kind::kNull;
      for (size_t r = 0; r < rows; ++r) {
        const size_t p = i * rows + r;
        const Value v = ValueOf(literals_[columns[i]], plan.cell(batch_[r], columns[i]), shifted_);
        indicators_[p] = v.kind == Value::Kind::kNull ? STMT_INDICATOR_NULL : STMT_INDICATOR_NONE;
        pointers_[p] = v.text.data();
        lengths_[p] = v.text.size();
        if (v.kind == Value::Kind::kNull) continue;
        if (kind == Value::Kind::kNull) kind = v.kind;
        if (v.kind != kind) return false;
        if (v.kind == Value::Kind::kHex) {  // its bytes, in converted_ (ValueOf checked the digits)
          converted_at_.emplace_back(p, converted_.size());
          AppendUnhex(v.text, converted_);
          lengths_[p] = v.text.size() / 2;
        } else if (v.text.data() == shifted_.data()) {  // a shifted timestamp, in converted_
          converted_at_.emplace_back(p, converted_.size());
          converted_ += v.text;
        }
      }
      // A number as a decimal's text, which a BIT or YEAR column reads as a number; a binary
      // string as bytes, which no character set converts; text in the connection's.
      MYSQL_BIND& b = binds_[i];
      b.buffer_type = kind == Value::Kind::kNumber ? MYSQL_TYPE_NEWDECIMAL
                      : kind == Value::Kind::kHex  ? MYSQL_TYPE_BLOB
                                                   : MYSQL_TYPE_STRING;
      b.buffer = &pointers_[i * rows];
      b.length = &lengths_[i * rows];
      b.u.indicator = &indicators_[i * rows];
    }
    // converted_ no longer grows: its values' addresses hold.
    for (const auto& [p, at] : converted_at_) pointers_[p] = converted_.data() + at;
    const std::string what = "table " + target().display_name;
    sql_ = insert + "(?";
    for (size_t i = 1; i < columns.size(); ++i) sql_ += ", ?";
    sql_ += ')' + tail;
    ASSIGN_OR_RETURN(MYSQL_STMT * stmt, Prepared(sql_, what));
    unsigned int array_size = static_cast<unsigned int>(rows);
    if (mysql_stmt_attr_set(stmt, STMT_ATTR_ARRAY_SIZE, &array_size) != 0 ||
        mysql_stmt_bind_param(stmt, binds_.data()) != 0 || mysql_stmt_execute(stmt) != 0) {
      return StatementError(stmt, what);
    }
    return true;
  }

  // The session's prepared statement for `sql`, prepared the first time. A session keeps
  // kPreparedPerSession of them, closing the least recently used.
  Result<MYSQL_STMT*> Prepared(const std::string& sql, const std::string& what) {
    PreparedStatements& prepared = session_->prepared;
    auto it = prepared.by_sql.find(sql);
    if (it == prepared.by_sql.end()) {
      if (prepared.by_sql.size() >= kPreparedPerSession) {
        prepared.by_sql.erase(std::min_element(
            prepared.by_sql.begin(), prepared.by_sql.end(),
            [](const auto& a, const auto& b) { return a.second.used < b.second.used; }));
      }
      StmtPtr stmt(mysql_stmt_init(conn()));
      if (stmt == nullptr) return Error(what);
      if (mysql_stmt_prepare(stmt.get(), sql.data(), sql.size()) != 0) {
        return StatementError(stmt.get(), what);
      }
      it = prepared.by_sql.emplace(sql, PreparedStatements::Entry{std::move(stmt)}).first;
    }
    it->second.used = ++prepared.clock;
    return it->second.stmt.get();
  }

  static RangeResult Failed(const Status& st) {
    RangeResult result{st};
    if (st.code() == StatusCode::kInvalidArgument) result.column = ColumnOf(st.message());
    return result;
  }

  const std::shared_ptr<MysqlPool> pool_;
  MysqlPool::Lease session_;  // held from Hold to Release
  const MysqlUrl parts_;
  const std::string table_;
  std::string write_table_;        // the quoted table, or the overwrite table while one is open
  std::vector<Literal> literals_;  // per target column
  // What MODIFY COLUMN must restate, per target column.
  struct Definition {
    bool nullable = true;
    bool more = false;  // a default, AUTO_INCREMENT or ON UPDATE, which MODIFY would drop
    std::string charset, collation;
  };
  std::vector<Definition> definitions_;
  // A BIT or YEAR column of the target, which declines the bulk load; empty when none.
  std::string textual_mismatch_;
  // Reused across pages.
  std::string sql_;
  std::string shifted_;
  // An upsert batch's plan rows; for its bulk execution, a binding per column and per value
  // (column by column) its data, length and indicator; the values faucet converted (timestamps
  // shifted to UTC, binary strings' bytes) one after another, and where each one starts.
  std::vector<size_t> batch_;
  std::vector<MYSQL_BIND> binds_;
  std::vector<const char*> pointers_;
  std::vector<unsigned long> lengths_;
  std::vector<char> indicators_;
  std::string converted_;
  std::vector<std::pair<size_t, size_t>> converted_at_;  // (value, offset in converted_)
  // The bulk load's open LOAD DATA statement (null between statements), the columns it writes,
  // the data not sent to it yet, and its lines so far. load_runs_ maps lines to the load's
  // rows (to name a refused row): (first line, its row) of each run of consecutive rows.
  std::unique_ptr<LoadStatement> load_;
  std::vector<int> load_columns_;
  std::string load_chunk_;
  size_t load_lines_ = 0;
  std::vector<std::pair<size_t, size_t>> load_runs_;
  size_t load_rows_ = 0;  // plan rows in the bulk load before the page
};

}  // namespace

Result<std::unique_ptr<Sink>> MakeMysqlSink(const config::Block& cfg) {
  ASSIGN_OR_RETURN(std::string url, cfg.RequiredString("connection_url"));
  Result<MysqlUrl> parts = ParseMysqlUrl(url);
  if (!parts.ok()) return cfg.Error("connection_url", parts.status().message());
  ASSIGN_OR_RETURN(MysqlTls tls, mysql::ParseTls(cfg));
  ASSIGN_OR_RETURN(std::string table, cfg.RequiredString("table_name"));
  if (table.empty()) return cfg.Error("table_name", "must not be empty");
  ASSIGN_OR_RETURN(sql::WriteSpec spec, sql::ParseWriteSpec(cfg, {{"json"}, false}));
  // The sessions every sink writing to this database shares (the first sink's size counts).
  ASSIGN_OR_RETURN(int64_t max_connections, cfg.Int("max_connections", 5, 1, 1000));
  std::shared_ptr<MysqlPool> pool = MysqlPool::Shared(
      url, static_cast<size_t>(max_connections),
      [endpoint = mysql::Endpoint{url, *parts, tls}] { return OpenSession(endpoint); });
  return std::unique_ptr<Sink>(
      new MysqlSink(std::move(spec), std::move(pool), *std::move(parts), std::move(table)));
}

}  // namespace faucet
