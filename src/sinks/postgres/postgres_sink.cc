#include "sinks/postgres/postgres_sink.h"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "clients/postgres/connection.h"
#include "core/redact.h"
#include "core/text.h"
#include "sinks/sql/session_pool.h"
#include "sinks/sql/table_sink.h"

namespace faucet {
namespace {

using sql::RangeResult;
using sql::RowAction;
using sql::WritePlan;

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

// The staging tables of keyed writes, "pg_temp._faucet_stage_<hash of the column types>":
// pg_temp, so private to the session and never colliding with a user table; named by the
// types, so the tables of one shape share one in each session they use.
constexpr char kStagePrefix[] = "pg_temp._faucet_stage_";
constexpr char kOverwriteSuffix[] = "__faucet_new";
constexpr char kOldSuffix[] = "__faucet_old";
constexpr size_t kMaxIdentifierBytes = 63;  // NAMEDATALEN - 1: longer names are truncated
constexpr size_t kCopyChunkBytes = 1 << 20;
// One COPY statement of a bulk load carries at most this much; the rows after it go into
// another COPY of the same transaction. A statement then lasts seconds, not the whole snapshot,
// so a destination's statement_timeout does not cancel the load (and retrying it would not
// help), while the per-statement cost stays negligible.
constexpr size_t kBulkCopyBytes = 128 << 20;
constexpr size_t kUnnestMaxRows = 4096;       // a larger page takes the staged path,
constexpr size_t kUnnestMaxBytes = 64 << 20;  // and so does a page of more bytes than this

std::string Quote(std::string_view ident) { return QuoteIdentifier(ident, '"'); }

// The class of a column type as format_type spells it ("integer", "character varying(20)",
// "timestamp(3) with time zone", "integer[]").
sql::TypeClass ClassOf(std::string_view type) {
  using K = ValueType;
  auto starts = [&](std::string_view prefix) { return type.substr(0, prefix.size()) == prefix; };
  auto length = [&](std::string_view prefix) {  // "(n)" after prefix, 0 when absent
    int n = 0;
    if (type.size() > prefix.size() + 1 && type[prefix.size()] == '(') {
      std::from_chars(type.data() + prefix.size() + 1, type.data() + type.size(), n);
    }
    return n;
  };
  if (type.size() > 2 && type.substr(type.size() - 2) == "[]") return {K::kArray, 0};
  if (type == "smallint") return {K::kInt, 16};
  if (type == "integer") return {K::kInt, 32};
  if (type == "bigint") return {K::kInt, 64};
  if (type == "real") return {K::kFloat, 32};
  if (type == "double precision") return {K::kFloat, 64};
  if (starts("numeric")) return {K::kNumeric, 0};
  if (type == "text") return {K::kText, 0};
  if (starts("character varying")) return {K::kText, length("character varying")};
  if (starts("character")) return {K::kText, std::max(1, length("character"))};
  if (type == "boolean") return {K::kBool, 0};
  if (type == "bytea") return {K::kBytes, 0};
  if (type == "json" || type == "jsonb") return {K::kJson, 0};
  if (type == "date") return {K::kDate, 0};
  if (type == "uuid") return {K::kUuid, 0};
  if (starts("interval")) return {K::kInterval, 0};
  const bool without_zone = type.find("without time zone") != std::string_view::npos;
  if (starts("timestamp")) return {without_zone ? K::kTimestamp : K::kTimestampTz, 0};
  if (starts("time") && without_zone) return {K::kTime, 0};
  return {};
}

// The Postgres type of a column for `source`: its own type when the source is Postgres and the
// type is built in, else one that holds its logical type's text form.
std::string PostgresType(const Column& source) {
  const int32_t mod = source.type_modifier;
  auto with_length = [&](const char* name) {
    const int length = sql::SourceClass(source).width;
    return length > 0 ? std::string(name) + "(" + std::to_string(length) + ")" : std::string(name);
  };
  auto with_precision = [&](const char* name, const char* zone) {
    return std::string(name) + (mod >= 0 ? "(" + std::to_string(mod) + ")" : "") + zone;
  };
  switch (source.type_oid) {
    case 16:
      return "boolean";
    case 17:
      return "bytea";
    case 20:
      return "bigint";
    case 21:
      return "smallint";
    case 23:
      return "integer";
    case 25:
      return "text";
    case 114:
      return "json";
    case 700:
      return "real";
    case 701:
      return "double precision";
    case 869:
      return "inet";
    case 650:
      return "cidr";
    case 829:
      return "macaddr";
    case 1042:
      return with_length("character");
    case 1043:
      return with_length("character varying");
    case 1082:
      return "date";
    case 1083:
      return with_precision("time", " without time zone");
    case 1114:
      return with_precision("timestamp", " without time zone");
    case 1184:
      return with_precision("timestamp", " with time zone");
    case 1186:
      return "interval";
    case 1266:
      return with_precision("time", " with time zone");
    case 1700:
      if (std::optional<sql::NumericPrecision> p = sql::DeclaredPrecision(source)) {
        return "numeric(" + std::to_string(p->precision) + "," + std::to_string(p->scale) + ")";
      }
      return "numeric";
    case 2950:
      return "uuid";
    case 3802:
      return "jsonb";
    case 1000:
      return "boolean[]";
    case 1005:
      return "smallint[]";
    case 1007:
      return "integer[]";
    case 1016:
      return "bigint[]";
    case 1009:
      return "text[]";
    case 1015:
      return "character varying[]";
    case 1021:
      return "real[]";
    case 1022:
      return "double precision[]";
    case 1231:
      return "numeric[]";
    case 2951:
      return "uuid[]";
    case 3807:
      return "jsonb[]";
    default:
      break;
  }
  switch (source.type) {
    case ValueType::kBool:
      return "boolean";
    case ValueType::kInt: {
      // A width from a source without OIDs (MySQL): its unsigned BIGINT needs 20 digits.
      const int bits = sql::SourceClass(source).width;
      return bits > 64    ? "numeric(20,0)"
             : bits <= 16 ? "smallint"
             : bits <= 32 ? "integer"
                          : "bigint";
    }
    case ValueType::kFloat:
      return "double precision";
    case ValueType::kNumeric:
      return "numeric";
    case ValueType::kBytes:
      return "bytea";
    case ValueType::kJson:
      return "jsonb";
    case ValueType::kDate:
      return "date";
    case ValueType::kTime:
      return "time without time zone";
    case ValueType::kTimestamp:
      return "timestamp without time zone";
    case ValueType::kTimestampTz:
      return "timestamp with time zone";
    case ValueType::kInterval:
      return "interval";
    case ValueType::kUuid:
      return "uuid";
    default:
      return "text";  // text, arrays and types of unknown kind, as their text form
  }
}

// libpq messages end with a newline and may span lines; one line reads better in a log.
std::string OneLine(const char* message) {
  std::string out(message == nullptr ? "" : message);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  for (char& c : out) {
    if (c == '\n') c = ' ';
  }
  return out;
}

void AppendNumber(int64_t v, std::string& out) {
  char digits[24];
  auto end = std::to_chars(digits, digits + sizeof(digits), v).ptr;
  out.append(digits, end);
}

// A cell in COPY's text format: \N is null.
void AppendCopyCell(const Cell* cell, std::string& out) {
  if (cell == nullptr || cell->state != CellState::kValue) {
    out += "\\N";
  } else {
    AppendEscapedField(cell->text, out);
  }
}

// The message names the server's primary message and detail; the code is the client's one
// SQLSTATE mapping (postgres::SqlStateCode). A row's own error (kInvalidArgument) carries no
// `what`: the caller names the table, key and column.
Status ErrorStatus(PGconn* conn, const PGresult* res, std::string_view what) {
  const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string message;
  if (res != nullptr && PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) != nullptr) {
    message = OneLine(PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY));
    const char* detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
    if (detail != nullptr) message += " (" + OneLine(detail) + ")";
  } else {
    message = OneLine(PQerrorMessage(conn));
  }
  StatusCode code = PQstatus(conn) != CONNECTION_OK
                        ? StatusCode::kUnavailable
                        : postgres::SqlStateCode(state != nullptr ? state : "");
  if (code == StatusCode::kInvalidArgument) return InvalidArgument(message);
  return Status(code, Redact(std::string(what) + ": " + message));
}

// A COPY error's context names the line (1-based) and column: "COPY t, line 3, column n: ...".
void ParseCopyContext(const PGresult* res, RangeResult& out) {
  const char* context = PQresultErrorField(res, PG_DIAG_CONTEXT);
  if (context == nullptr) return;
  std::string_view ctx(context);
  size_t copy = ctx.find("COPY ");
  if (copy == std::string_view::npos) return;
  size_t line = ctx.find(", line ", copy);
  if (line == std::string_view::npos) return;
  size_t n = 0;
  const char* first = ctx.data() + line + 7;
  auto [ptr, ec] = std::from_chars(first, ctx.data() + ctx.size(), n);
  if (ec != std::errc() || n == 0) return;
  out.failed_at = n - 1;
  std::string_view rest = ctx.substr(ptr - ctx.data());
  if (rest.substr(0, 9) == ", column ") {
    rest.remove_prefix(9);
    out.column = std::string(rest.substr(0, rest.find(':')));
  }
}

// Server notices ("table ... does not exist, skipping") are not errors: debug log, not stderr.
void LogNotice(void*, const char* message) { spdlog::debug("postgres sink: {}", OneLine(message)); }

// A destination session: its connection and the staging tables created in it.
struct PgSession {
  postgres::ConnPtr conn;
  std::set<std::string> stages;
  // Connected, and outside any transaction: a sink that failed mid-page leaves its session to
  // be closed, never handed to the next.
  bool Reusable() const {
    return PQstatus(conn.get()) == CONNECTION_OK && PQtransactionStatus(conn.get()) == PQTRANS_IDLE;
  }
};
using PgPool = sql::SessionPool<PgSession>;

Result<std::unique_ptr<PgSession>> OpenSession(const std::string& url) {
  Result<postgres::ConnPtr> conn =
      postgres::Connect(url, PostgresTls{}, postgres::ConnectionKind::kSql);
  if (!conn.ok()) return conn.status().WithContext(Redact("postgres sink " + url));
  auto session = std::make_unique<PgSession>();
  session->conn = std::move(*conn);
  PQsetNoticeProcessor(session->conn.get(), LogNotice, nullptr);
  // "Durable when Write returns" needs the commit record flushed: a server or database
  // configured with synchronous_commit=off is overridden for this session.
  RETURN_IF_ERROR(postgres::Exec(session->conn.get(),
                                 "SELECT set_config('synchronous_commit', 'local', false)"
                                 " WHERE current_setting('synchronous_commit') = 'off'",
                                 Redact("postgres sink " + url) + ": cannot set synchronous_commit")
                      .status());
  return session;
}

class PostgresSink : public sql::TableSink {
 public:
  PostgresSink(sql::WriteSpec spec, std::shared_ptr<PgPool> pool, std::string schema,
               std::string table)
      : TableSink(std::move(spec)),
        pool_(std::move(pool)),
        schema_(std::move(schema)),
        table_(std::move(table)),
        qualified_(Quote(schema_) + "." + Quote(table_)),
        write_table_(qualified_) {}

 protected:
  Status Hold() override {
    if (!session_) {
      ASSIGN_OR_RETURN(session_, pool_->Acquire());
    }
    return EnsureStage();
  }

  void Release() override {
    begin_pending_ = false;
    session_.Reset();
  }

  Status OpenTable() override {
    sql::TargetTable target;
    RETURN_IF_ERROR(ReadTarget(target));
    RETURN_IF_ERROR(SetTarget(std::move(target)));
    return EnsureStage();
  }

  // BEGIN goes out in front of the page's first statement (TakeBegin), not in a round trip of
  // its own: a page costs BEGIN+SAVEPOINT+COPY, the rows, COMMIT.
  Status Begin() override {
    begin_pending_ = true;
    return Status::Ok();
  }
  Status Commit() override {
    if (begin_pending_) {  // nothing was sent: nothing to commit
      begin_pending_ = false;
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(PgResult res, Exec("COMMIT", "cannot commit"));
    // COMMIT of a transaction that failed earlier answers ROLLBACK instead of an error.
    if (std::strcmp(PQcmdStatus(res.get()), "COMMIT") != 0) {
      return Internal("table " + target().display_name + ": the transaction was rolled back");
    }
    return Status::Ok();
  }

  void Rollback() override {
    if (begin_pending_) {
      begin_pending_ = false;
      return;
    }
    if (PQstatus(conn()) == CONNECTION_OK) PgResult(PQexec(conn(), "ROLLBACK"));
  }

  RangeResult ApplyRange(const WritePlan& plan, size_t begin, size_t end) override {
    if (!plan.keyed()) return ApplyCopy(plan, begin, end);
    const bool whole_page = begin == 0 && end == plan.size();
    if (plan.deletes() == 0 && whole_page) {
      std::optional<RangeResult> direct = TryInsertOnly(plan);
      if (direct) return *std::move(direct);
    }
    // A whole page goes in one statement batch; ranges are what ApplyIsolating tries after
    // the page was refused, and the staged path names the refused row and column.
    if (whole_page && CanUnnest(plan)) return ApplyUnnest(plan);
    return ApplyStaged(plan, begin, end);
  }

  Status EnsureTokenTable() override {
    const char* ddl =
        "CREATE TABLE IF NOT EXISTS _faucet_commit_token (scope TEXT PRIMARY KEY,"
        " token TEXT NOT NULL, updated_at TIMESTAMPTZ NOT NULL DEFAULT now())";
    // Two sinks creating it at once: the loser fails on the catalog's unique index, and its
    // second CREATE ... IF NOT EXISTS finds the table.
    if (Exec(ddl, "").ok()) return Status::Ok();
    return Exec(ddl, "cannot create _faucet_commit_token").status();
  }

  Status StoreToken(const std::string& scope, const std::string& token) override {
    return ExecParams(
               "INSERT INTO _faucet_commit_token (scope, token, updated_at) VALUES ($1, $2, now())"
               " ON CONFLICT (scope) DO UPDATE SET token = EXCLUDED.token,"
               " updated_at = EXCLUDED.updated_at",
               {scope, token}, "cannot store the commit token")
        .status();
  }

  size_t ScopeWidth() const override { return std::numeric_limits<size_t>::max(); }

  std::string TypeFor(const Column& source) const override { return PostgresType(source); }

  Status AlterTarget(const std::vector<sql::SchemaChange>& changes) override {
    std::string ddl = "ALTER TABLE " + write_table_ + " ";
    for (size_t i = 0; i < changes.size(); ++i) {
      const sql::SchemaChange& c = changes[i];
      const std::string column = Quote(c.column);
      if (i > 0) ddl += ", ";
      switch (c.kind) {
        case sql::SchemaChange::kAddColumn:
          ddl += "ADD COLUMN IF NOT EXISTS " + column + " " + c.type;
          break;
        case sql::SchemaChange::kWidenColumn:
          ddl += "ALTER COLUMN " + column + " TYPE " + c.type + " USING " + column + "::" + c.type;
          break;
        case sql::SchemaChange::kDropNotNull:
          ddl += "ALTER COLUMN " + column + " DROP NOT NULL";
          break;
      }
    }
    RETURN_IF_ERROR(Exec(ddl, "cannot change the table").status());
    sql::TargetTable target;
    RETURN_IF_ERROR(ReadTarget(target));
    RETURN_IF_ERROR(SetTarget(std::move(target)));
    return EnsureStage();  // the new types have a staging table of their own
  }

  Status CreateOverwriteTable() override {
    RETURN_IF_ERROR(CheckOverwriteName());
    std::string fresh = Quote(schema_) + "." + Quote(table_ + kOverwriteSuffix);
    RETURN_IF_ERROR(Exec("DROP TABLE IF EXISTS " + fresh + "; CREATE TABLE " + fresh + " (LIKE " +
                             qualified_ + " INCLUDING ALL)",
                         "cannot create the overwrite table " + table_ + kOverwriteSuffix)
                        .status());
    write_table_ = fresh;
    return Status::Ok();
  }

  Status SwapOverwriteTable() override {
    std::string s = Quote(schema_) + ".";
    std::string old_name = table_ + kOldSuffix;
    // One transaction: readers see the old table or the new one, never neither.
    Result<PgResult> swapped =
        Exec("BEGIN; DROP TABLE IF EXISTS " + s + Quote(old_name) + "; ALTER TABLE " + qualified_ +
                 " RENAME TO " + Quote(old_name) + "; ALTER TABLE " + write_table_ + " RENAME TO " +
                 Quote(table_) + "; DROP TABLE " + s + Quote(old_name) + "; COMMIT",
             "cannot swap in the overwrite table " + table_ + kOverwriteSuffix);
    if (!swapped.ok()) {
      Rollback();
      return swapped.status();
    }
    write_table_ = qualified_;
    return Status::Ok();
  }

  Status DropOverwriteTable() override {
    std::string fresh = write_table_;
    write_table_ = qualified_;
    return Exec("DROP TABLE IF EXISTS " + fresh, "cannot drop the overwrite table").status();
  }

  Result<std::optional<std::string>> ReadToken(const std::string& scope) override {
    ASSIGN_OR_RETURN(PgResult exists, Exec("SELECT to_regclass('_faucet_commit_token') IS NOT NULL",
                                           "cannot read the commit token"));
    if (std::strcmp(PQgetvalue(exists.get(), 0, 0), "t") != 0) return std::optional<std::string>();
    ASSIGN_OR_RETURN(PgResult res,
                     ExecParams("SELECT token FROM _faucet_commit_token WHERE scope = $1", {scope},
                                "cannot read the commit token"));
    if (PQntuples(res.get()) == 0) return std::optional<std::string>();
    return std::optional<std::string>(PQgetvalue(res.get(), 0, 0));
  }

 private:
  // The held session's connection. REQUIRES: a session is held.
  PGconn* conn() const { return session_->conn.get(); }

  Status CheckOverwriteName() const {
    if (table_.size() + std::strlen(kOverwriteSuffix) > kMaxIdentifierBytes) {
      return InvalidArgument("table " + target().display_name + ": the name is too long for " +
                             "write_mode overwrite (" + table_ + kOverwriteSuffix +
                             " exceeds 63 bytes)");
    }
    return Status::Ok();
  }

  // Creates this table's staging table in the held session unless it is there: outside a
  // page's transaction, so that no rollback can take it away unseen.
  Status EnsureStage() {
    if (!has_target() || !plan().keyed() || session_->stages.count(stage_) > 0) {
      return Status::Ok();
    }
    // Staging takes the target's types (a domain's base type, so that a NOT NULL domain does
    // not refuse the placeholder of a column the row does not write) and checks every value
    // at COPY, where an error names the line, hence the row.
    std::string ddl = "CREATE TEMP TABLE IF NOT EXISTS " + stage_ + " (pos int4, grp int4";
    for (size_t c = 0; c < stage_types_.size(); ++c) {
      ddl += ", c" + std::to_string(c) + " " + stage_types_[c];
    }
    ddl += ") ON COMMIT DELETE ROWS";
    RETURN_IF_ERROR(Exec(ddl, "cannot create the staging table").status());
    session_->stages.insert(stage_);
    return Status::Ok();
  }

  Status ReadTarget(sql::TargetTable& table) {
    table.display_name = schema_ + "." + table_;
    ASSIGN_OR_RETURN(PgResult oid, ExecParams("SELECT to_regclass($1)::oid", {write_table_},
                                              "cannot look up the table"));
    if (PQgetisnull(oid.get(), 0, 0)) {
      return NotFound("postgres sink: table " + table.display_name +
                      " does not exist (create it before the first run)");
    }
    std::string relid = PQgetvalue(oid.get(), 0, 0);
    ASSIGN_OR_RETURN(
        PgResult cols,
        ExecParams("SELECT a.attname, format_type(a.atttypid, a.atttypmod),"
                   " CASE WHEN t.typtype = 'd' THEN format_type(t.typbasetype, t.typtypmod)"
                   " ELSE format_type(a.atttypid, a.atttypmod) END, a.attgenerated <> '',"
                   " format_type(CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE a.atttypid END,"
                   " -1), COALESCE(b.typtype = 'd', false),"
                   " a.attnotnull AND NOT a.atthasdef AND a.attidentity = ''"
                   " FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid"
                   " LEFT JOIN pg_type b ON t.typtype = 'd' AND b.oid = t.typbasetype"
                   " WHERE a.attrelid = $1::oid AND a.attnum > 0 AND NOT a.attisdropped"
                   " ORDER BY a.attnum",
                   {relid}, "cannot read the table's columns"));
    stage_types_.clear();
    cast_types_.clear();
    unnest_ok_ = true;
    for (int i = 0; i < PQntuples(cols.get()); ++i) {
      if (std::strcmp(PQgetvalue(cols.get(), i, 3), "t") == 0) continue;  // generated
      table.columns.push_back({PQgetvalue(cols.get(), i, 0), PQgetvalue(cols.get(), i, 1),
                               ClassOf(PQgetvalue(cols.get(), i, 2)),
                               std::strcmp(PQgetvalue(cols.get(), i, 6), "t") == 0});
      stage_types_.push_back(PQgetvalue(cols.get(), i, 2));
      cast_types_.push_back(PQgetvalue(cols.get(), i, 4));
      // A domain over a domain: the cast to the inner domain would apply its base type's
      // modifier the explicit way (truncating); such tables take the staged path.
      if (std::strcmp(PQgetvalue(cols.get(), i, 5), "t") == 0) unnest_ok_ = false;
    }
    std::string shape;
    for (const std::string& type : stage_types_) shape += type + ",";
    stage_ = kStagePrefix + sql::Fnv1aHex(shape);
    // ON CONFLICT can name a unique index only if it is immediate, total and on plain columns.
    ASSIGN_OR_RETURN(
        PgResult keys,
        ExecParams("SELECT i.indexrelid, a.attname FROM pg_index i"
                   " CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)"
                   " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum"
                   " WHERE i.indrelid = $1::oid AND i.indisunique AND i.indimmediate"
                   " AND i.indpred IS NULL AND i.indexprs IS NULL AND k.ord <= i.indnkeyatts"
                   " ORDER BY i.indexrelid, k.ord",
                   {relid}, "cannot read the table's unique indexes"));
    std::string index;
    for (int i = 0; i < PQntuples(keys.get()); ++i) {
      if (index != PQgetvalue(keys.get(), i, 0)) {
        index = PQgetvalue(keys.get(), i, 0);
        table.unique_keys.emplace_back();
      }
      table.unique_keys.back().push_back(PQgetvalue(keys.get(), i, 1));
    }
    return Status::Ok();
  }

  // "BEGIN;" when the page's transaction is still to be started, to go in front of the next
  // statement; "" otherwise.
  std::string TakeBegin() {
    if (!begin_pending_) return "";
    begin_pending_ = false;
    return "BEGIN;";
  }

  Result<PgResult> Exec(const std::string& sql, std::string_view what) {
    PgResult res(PQexec(conn(), (TakeBegin() + sql).c_str()));
    ExecStatusType st = PQresultStatus(res.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
    return ErrorStatus(conn(), res.get(), what);
  }

  Result<PgResult> ExecParams(const char* sql, const std::vector<std::string>& params,
                              std::string_view what) {
    // One statement only: a pending BEGIN goes first, on its own.
    if (begin_pending_) RETURN_IF_ERROR(Exec("", "cannot begin a transaction").status());
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    PgResult res(PQexecParams(conn(), sql, static_cast<int>(values.size()), nullptr, values.data(),
                              nullptr, nullptr, 0));
    ExecStatusType st = PQresultStatus(res.get());
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return res;
    return ErrorStatus(conn(), res.get(), what);
  }

  // Reads every remaining result of the current query, keeping the first error.
  RangeResult DrainResults(RangeResult result, std::string_view what) {
    while (PGresult* raw = PQgetResult(conn())) {
      PgResult res(raw);
      ExecStatusType st = PQresultStatus(raw);
      if (result.status.ok() && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
        result.status = ErrorStatus(conn(), raw, what);
        if (const char* column = PQresultErrorField(raw, PG_DIAG_COLUMN_NAME)) {
          result.column = column;
        }
      }
    }
    return result;
  }

  // Sends `command`, whose last statement is a COPY ... FROM STDIN, and streams `rows` lines
  // written by `write_row`. On a COPY error, failed_at is the 0-based line the server named.
  RangeResult Copy(const std::string& command, size_t rows,
                   const std::function<void(size_t, std::string&)>& write_row) {
    if (RangeResult started = StartCopy(command); !started.status.ok()) return started;
    bool sent = true;
    for (size_t i = 0; i < rows && sent; ++i) {
      write_row(i, buf_);
      if (buf_.size() >= kCopyChunkBytes) sent = SendCopyData();
    }
    return EndCopy(sent && SendCopyData());
  }

  // Starts `command`, whose last statement is a COPY ... FROM STDIN.
  RangeResult StartCopy(const std::string& command) {
    const std::string what = "table " + target().display_name + ": COPY";
    if (PQsendQuery(conn(), (TakeBegin() + command).c_str()) != 1) {
      return {Unavailable(Redact(what + ": " + OneLine(PQerrorMessage(conn()))))};
    }
    for (;;) {
      PgResult res(PQgetResult(conn()));
      if (res == nullptr) return {Internal(what + ": the server did not start the COPY")};
      ExecStatusType st = PQresultStatus(res.get());
      if (st == PGRES_COPY_IN) break;
      if (st != PGRES_COMMAND_OK) {
        return DrainResults({ErrorStatus(conn(), res.get(), what)}, what);
      }
    }
    buf_.clear();
    return RangeResult::Ok();
  }

  // Sends the rows buffered in buf_ to the open COPY.
  bool SendCopyData() {
    bool sent =
        buf_.empty() || PQputCopyData(conn(), buf_.data(), static_cast<int>(buf_.size())) == 1;
    buf_.clear();
    return sent;
  }

  // Ends the open COPY: its result, with the line and column of a refused value.
  RangeResult EndCopy(bool sent) {
    const std::string what = "table " + target().display_name + ": COPY";
    buf_.clear();
    PQputCopyEnd(conn(), sent ? nullptr : "faucet: sending the rows failed");
    PgResult res(PQgetResult(conn()));
    RangeResult result;
    last_sqlstate_.clear();
    if (res == nullptr || PQresultStatus(res.get()) != PGRES_COMMAND_OK) {
      result.status = ErrorStatus(conn(), res.get(), what);
      if (res != nullptr && PQresultErrorField(res.get(), PG_DIAG_SQLSTATE) != nullptr) {
        last_sqlstate_ = PQresultErrorField(res.get(), PG_DIAG_SQLSTATE);
      }
      if (res != nullptr && result.status.code() == StatusCode::kInvalidArgument) {
        ParseCopyContext(res.get(), result);
      }
    }
    return DrainResults(std::move(result), what);
  }

  // Runs `sql` (statements ending with RELEASE SAVEPOINT faucet_range), undoing the range's
  // savepoint when one fails.
  RangeResult ExecRange(const std::string& sql) {
    const std::string what = "table " + target().display_name;
    if (PQsendQuery(conn(), (TakeBegin() + sql).c_str()) != 1) {
      return {Unavailable(Redact(what + ": " + OneLine(PQerrorMessage(conn()))))};
    }
    RangeResult result = DrainResults({}, what);
    if (!result.status.ok()) UndoRange();
    return result;
  }

  void UndoRange() {
    PgResult(PQexec(conn(), "ROLLBACK TO SAVEPOINT faucet_range; RELEASE SAVEPOINT faucet_range"));
  }

  // An upsert page whose keys are all new (a mirror's snapshot, an insert-heavy stream) is an
  // insert, and a COPY straight into the table costs a third of staging plus INSERT ... ON
  // CONFLICT. When a key exists, the COPY fails on the primary key (early: COPY stops at the
  // first error) and the page takes the staged path; later pages then skip the attempt for an
  // exponentially growing number of pages, so an update-heavy stream pays almost nothing.
  // Returns nothing when the staged path must run.
  std::optional<RangeResult> TryInsertOnly(const WritePlan& plan) {
    if (insert_only_skips_ > 0) {
      --insert_only_skips_;
      return std::nullopt;
    }
    RangeResult direct = ApplyCopy(plan, 0, plan.size());
    if (direct.status.ok()) {
      insert_only_backoff_ = 1;
      return direct;
    }
    if (direct.status.code() != StatusCode::kInvalidArgument) return direct;
    if (last_sqlstate_ == "23505") {
      insert_only_skips_ = insert_only_backoff_;
      insert_only_backoff_ = std::min<size_t>(insert_only_backoff_ * 2, 1024);
    }
    return std::nullopt;  // a refused value is found, and named, by the staged path
  }

  // Keyed writes of a whole page, in one round trip and without the staging table: each
  // column's values travel as one text array literal, unnested and cast to the column's type
  // (unconstrained: the assignment to the column then applies its modifier as COPY does, an
  // error rather than the explicit cast's silent truncation). One DELETE ... USING for the
  // deletes, one INSERT ... ON CONFLICT per column group. Against the staged path it saves the
  // COPY into the staging table and, at COMMIT, the truncation of that table's files, which
  // costs milliseconds per page on some file systems (ftruncate with online discard). The
  // errors do not name a row: a refused page is isolated by the staged path, range by range.
  bool CanUnnest(const WritePlan& plan) const {
    // Past a few thousand rows the staged path is as fast or faster: the truncation it pays
    // once per page is spread thin, and COPY parses values faster than array literals.
    if (!unnest_ok_ || plan.size() > kUnnestMaxRows) return false;
    // The literals must stay far from the server's 1 GB limit on a query or a value.
    size_t bytes = 0;
    const size_t width = target().columns.size();
    for (size_t r = 0; r < plan.size(); ++r) {
      for (size_t c = 0; c < width; ++c) {
        const Cell* cell = plan.cell(r, c);
        if (cell != nullptr) bytes += cell->text.size() + 4;
      }
      if (bytes > kUnnestMaxBytes) return false;
    }
    return true;
  }

  // E'{"v1","v2",NULL}'::text[] of column `column` of the rows in positions_.
  void AppendArrayLiteral(const WritePlan& plan, size_t column, std::string& out) const {
    out += "E'{";
    for (size_t i = 0; i < positions_.size(); ++i) {
      if (i > 0) out += ',';
      const Cell* cell = plan.cell(positions_[i], column);
      if (cell == nullptr || cell->state != CellState::kValue) {
        out += "NULL";
        continue;
      }
      out += '"';
      // Array element quoting (\ before " and \), then E'' string quoting (\ doubled, '
      // doubled): \ becomes four backslashes, " becomes \\", ' becomes ''.
      const std::string& v = cell->text;
      size_t start = 0;
      for (size_t k = 0; k < v.size(); ++k) {
        const char ch = v[k];
        if (ch != '\\' && ch != '"' && ch != '\'') continue;
        out.append(v, start, k - start);
        out += ch == '\\' ? "\\\\\\\\" : ch == '"' ? "\\\\\"" : "''";
        start = k + 1;
      }
      out.append(v, start, v.size() - start);
      out += '"';
    }
    out += "}'::text[]";
  }

  RangeResult ApplyUnnest(const WritePlan& plan) {
    const std::vector<int>& key = plan.key();
    sql_.assign("SAVEPOINT faucet_range;");
    if (plan.deletes() > 0) {
      positions_.clear();
      for (size_t r = 0; r < plan.deletes(); ++r) positions_.push_back(r);
      sql_ += "DELETE FROM " + write_table_ + " AS t USING unnest(";
      for (size_t k = 0; k < key.size(); ++k) {
        if (k > 0) sql_ += ", ";
        AppendArrayLiteral(plan, key[k], sql_);
      }
      sql_ += ") AS u(";
      for (size_t k = 0; k < key.size(); ++k) sql_ += (k ? ", c" : "c") + std::to_string(k);
      sql_ += ") WHERE ";
      for (size_t k = 0; k < key.size(); ++k) {
        sql_ += (k ? " AND t." : "t.") + Quote(target().columns[key[k]].name) + " = u.c" +
                std::to_string(k) + "::" + cast_types_[key[k]];
      }
      sql_ += ";";
    }
    std::string conflict;
    for (int k : key) conflict += (conflict.empty() ? "" : ", ") + Quote(target().columns[k].name);
    for (size_t g = 0; g < plan.groups().size(); ++g) {
      positions_.clear();
      for (size_t r = plan.deletes(); r < plan.size(); ++r) {
        if (plan.row(r).group == g) positions_.push_back(r);
      }
      if (positions_.empty()) continue;
      const std::vector<int>& columns = plan.groups()[g];
      std::string names, values, updates;
      for (size_t i = 0; i < columns.size(); ++i) {
        const int c = columns[i];
        const std::string name = Quote(target().columns[c].name);
        names += (i ? ", " : "") + name;
        values += (i ? ", u.c" : "u.c") + std::to_string(i) + "::" + cast_types_[c];
        if (std::find(key.begin(), key.end(), c) == key.end()) {
          updates += (updates.empty() ? "" : ", ") + name + " = EXCLUDED." + name;
        }
      }
      sql_ += "INSERT INTO " + write_table_ + " (" + names + ") OVERRIDING SYSTEM VALUE SELECT " +
              values + " FROM unnest(";
      for (size_t i = 0; i < columns.size(); ++i) {
        if (i > 0) sql_ += ", ";
        AppendArrayLiteral(plan, columns[i], sql_);
      }
      sql_ += ") AS u(";
      for (size_t i = 0; i < columns.size(); ++i) sql_ += (i ? ", c" : "c") + std::to_string(i);
      sql_ += ") ON CONFLICT (" + conflict + ") " +
              (updates.empty() ? "DO NOTHING" : "DO UPDATE SET " + updates) + ";";
    }
    sql_ += "RELEASE SAVEPOINT faucet_range";
    return ExecRange(sql_);
  }

  // Keyed writes: the range goes into the staging table with one COPY, then one DELETE for its
  // deletes and one INSERT ... ON CONFLICT per column group, all in one round trip.
  RangeResult ApplyStaged(const WritePlan& plan, size_t begin, size_t end) {
    const size_t width = target().columns.size();
    RangeResult copied = Copy("SAVEPOINT faucet_range; COPY " + stage_ + " FROM STDIN", end - begin,
                              [&](size_t i, std::string& out) {
                                size_t r = begin + i;
                                AppendNumber(static_cast<int64_t>(r), out);
                                out += '\t';
                                if (plan.row(r).action == RowAction::kDelete) {
                                  out += "-1";
                                } else {
                                  AppendNumber(plan.row(r).group, out);
                                }
                                for (size_t c = 0; c < width; ++c) {
                                  out += '\t';
                                  AppendCopyCell(plan.cell(r, c), out);
                                }
                                out += '\n';
                              });
    if (!copied.status.ok()) {
      UndoRange();
      if (copied.failed_at) *copied.failed_at += begin;
      // Staging columns are c<index of the target column>.
      if (copied.column.size() > 1 && copied.column[0] == 'c') {
        size_t c = std::strtoul(copied.column.c_str() + 1, nullptr, 10);
        copied.column = c < width ? target().columns[c].name : "";
      }
      return copied;
    }

    // Qualified: a target column may be called pos too.
    std::string filter;
    if (begin != 0 || end != plan.size()) {
      filter = " AND s.pos >= " + std::to_string(begin) + " AND s.pos < " + std::to_string(end);
    }
    const std::vector<int>& key = plan.key();
    sql_.clear();
    if (begin < plan.deletes()) {
      sql_ += "DELETE FROM " + write_table_ + " AS t USING " + stage_ + " AS s WHERE s.grp = -1" +
              filter;
      for (int k : key) {
        sql_ += " AND t." + Quote(target().columns[k].name) + " = s.c" + std::to_string(k);
      }
      sql_ += ";";
    }
    present_.assign(plan.groups().size(), false);
    for (size_t r = std::max(begin, plan.deletes()); r < end; ++r)
      present_[plan.row(r).group] = true;
    std::string conflict;
    for (int k : key) conflict += (conflict.empty() ? "" : ", ") + Quote(target().columns[k].name);
    for (size_t g = 0; g < present_.size(); ++g) {
      if (!present_[g]) continue;
      std::string columns, values, updates;
      for (int c : plan.groups()[g]) {
        const std::string name = Quote(target().columns[c].name);
        columns += (columns.empty() ? "" : ", ") + name;
        values += (values.empty() ? "s.c" : ", s.c") + std::to_string(c);
        if (std::find(key.begin(), key.end(), c) == key.end()) {
          updates += (updates.empty() ? "" : ", ") + name + " = EXCLUDED." + name;
        }
      }
      sql_ += "INSERT INTO " + write_table_ + " (" + columns + ") OVERRIDING SYSTEM VALUE SELECT " +
              values + " FROM " + stage_ + " AS s WHERE s.grp = " + std::to_string(g) + filter +
              " ON CONFLICT (" + conflict + ") " +
              (updates.empty() ? "DO NOTHING" : "DO UPDATE SET " + updates) + ";";
    }
    sql_ += "RELEASE SAVEPOINT faucet_range";
    return ExecRange(sql_);
  }

  // Inserts: COPY straight into the table, one COPY per column group; the savepoint goes with
  // the first COPY. A whole page keeps its savepoint (COMMIT releases it, and a failure rolls
  // back to it): a round trip less per page.
  RangeResult ApplyCopy(const WritePlan& plan, size_t begin, size_t end) {
    const std::string what = "table " + target().display_name;
    bool savepoint = false;
    for (size_t g = 0; g < plan.groups().size(); ++g) {
      positions_.clear();
      for (size_t r = begin; r < end; ++r) {
        if (plan.row(r).group == g) positions_.push_back(r);
      }
      if (positions_.empty()) continue;
      const std::vector<int>& columns = plan.groups()[g];
      std::string command = CopyInto(columns);
      if (!savepoint) command = "SAVEPOINT faucet_range; " + command;
      savepoint = true;
      RangeResult copied = Copy(command, positions_.size(), [&](size_t i, std::string& out) {
        AppendCopyRow(plan, positions_[i], columns, out);
      });
      if (!copied.status.ok()) {
        UndoRange();
        if (copied.failed_at) {
          copied.failed_at = *copied.failed_at < positions_.size()
                                 ? std::optional<size_t>(positions_[*copied.failed_at])
                                 : std::nullopt;
        }
        return copied;
      }
    }
    if (savepoint && (begin != 0 || end != plan.size())) {
      if (Result<PgResult> rel = Exec("RELEASE SAVEPOINT faucet_range", what); !rel.ok()) {
        return {rel.status()};
      }
    }
    return RangeResult::Ok();
  }

  // "COPY <write table> (<columns>) FROM STDIN".
  std::string CopyInto(const std::vector<int>& columns) const {
    std::string command = "COPY " + write_table_ + " (";
    for (size_t i = 0; i < columns.size(); ++i) {
      command += (i ? ", " : "") + Quote(target().columns[columns[i]].name);
    }
    return command + ") FROM STDIN";
  }

  static void AppendCopyRow(const WritePlan& plan, size_t r, const std::vector<int>& columns,
                            std::string& out) {
    for (size_t k = 0; k < columns.size(); ++k) {
      if (k) out += '\t';
      AppendCopyCell(plan.cell(r, columns[k]), out);
    }
    out += '\n';
  }

  // Bulk load: one transaction and one COPY into the table for every page, as the raw
  // `COPY ... FROM STDIN` of a pipe would be (PostgreSQL pays per COPY statement much more than
  // its setup: 1000-row COPYs load at under half the rate of one). A keyed target must be
  // empty: an upsert of an existing key cannot go through COPY.
  Result<bool> BulkStart(const WritePlan& plan) override {
    RETURN_IF_ERROR(Begin());
    if (plan.keyed()) {
      ASSIGN_OR_RETURN(PgResult res, Exec("SELECT EXISTS (SELECT 1 FROM " + write_table_ + ")",
                                          "cannot read the table"));
      if (std::strcmp(PQgetvalue(res.get(), 0, 0), "t") == 0) {
        Rollback();
        spdlog::info("table {} already holds rows: the load upserts page by page",
                     target().display_name);
        return false;
      }
    }
    bulk_columns_.clear();
    bulk_rows_ = 0;
    bulk_copy_first_row_ = 0;
    return true;
  }

  Status BulkAppend(const WritePlan& plan) override {
    for (size_t g = 0; g < plan.groups().size(); ++g) {
      const std::vector<int>& columns = plan.groups()[g];
      bool open = columns == bulk_columns_;  // the open COPY takes this group's columns
      for (size_t r = 0; r < plan.size(); ++r) {
        if (plan.row(r).group != g) continue;
        if (!open) {
          RETURN_IF_ERROR(EndBulkCopy());
          if (RangeResult started = StartCopy(CopyInto(columns)); !started.status.ok()) {
            return started.status;
          }
          bulk_columns_ = columns;
          bulk_copy_first_row_ = bulk_rows_;
          bulk_copy_bytes_ = 0;
          open = true;
        }
        const size_t before = buf_.size();
        AppendCopyRow(plan, r, columns, buf_);
        bulk_copy_bytes_ += buf_.size() - before;
        ++bulk_rows_;
        if (buf_.size() >= kCopyChunkBytes && !SendCopyData()) return EndBulkCopy(false);
        if (bulk_copy_bytes_ >= kBulkCopyBytes) {
          if (!SendCopyData()) return EndBulkCopy(false);
          RETURN_IF_ERROR(EndBulkCopy());
          open = false;
        }
      }
    }
    return SendCopyData() ? Status::Ok() : EndBulkCopy(false);
  }

  Status BulkCommit() override {
    RETURN_IF_ERROR(EndBulkCopy());
    return Commit();
  }

  void BulkRollback() override {
    if (!bulk_columns_.empty()) {
      PQputCopyEnd(conn(), "faucet: the load is abandoned");
      DrainResults({}, "");
      bulk_columns_.clear();
    }
    Rollback();
  }

  // Ends the load's open COPY, if any. A refused row names its place in the load: the row
  // itself is gone, and the caller redoes the load page by page to name its key.
  Status EndBulkCopy(bool sent = true) {
    if (bulk_columns_.empty()) return Status::Ok();
    bulk_columns_.clear();
    RangeResult ended = EndCopy(sent);
    if (ended.status.ok() || ended.status.code() != StatusCode::kInvalidArgument) {
      return ended.status;
    }
    std::optional<size_t> row;
    if (ended.failed_at) row = bulk_copy_first_row_ + *ended.failed_at;
    return BulkRefusal(row, ended.column, ended.status);
  }

  const std::shared_ptr<PgPool> pool_;
  PgPool::Lease session_;  // held from Hold to Release
  const std::string schema_;
  const std::string table_;
  const std::string qualified_;           // "schema"."table"
  std::string write_table_;               // qualified_, or the overwrite table while one is open
  std::vector<std::string> stage_types_;  // per target column
  std::string stage_;                     // the staging table of these types
  std::vector<std::string> cast_types_;   // per target column: its (base) type, unconstrained
  bool unnest_ok_ = true;                 // the whole-page path may run (see CanUnnest)
  // Reused across pages.
  std::string buf_;
  std::string sql_;
  std::vector<size_t> positions_;
  std::vector<bool> present_;
  std::string last_sqlstate_;  // of the last COPY that failed
  size_t insert_only_skips_ = 0;
  bool begin_pending_ = false;  // Begin() was called and BEGIN is not sent yet
  size_t insert_only_backoff_ = 1;
  // The bulk load's open COPY: its columns (empty: none open), and rows counted over the load.
  std::vector<int> bulk_columns_;
  size_t bulk_rows_ = 0;
  size_t bulk_copy_first_row_ = 0;
  size_t bulk_copy_bytes_ = 0;  // COPY text sent in the open COPY
};

}  // namespace

Result<std::unique_ptr<Sink>> MakePostgresSink(const config::Block& cfg) {
  ASSIGN_OR_RETURN(std::string url, cfg.RequiredString("connection_url"));
  ASSIGN_OR_RETURN(std::string table, cfg.RequiredString("table_name"));
  if (table.empty()) return cfg.Error("table_name", "must not be empty");
  ASSIGN_OR_RETURN(std::string schema, cfg.String("schema", "public"));
  ASSIGN_OR_RETURN(sql::WriteSpec spec, sql::ParseWriteSpec(cfg, {{"jsonb"}, false}));
  // The sessions every sink writing to this database shares (the first sink's size counts).
  ASSIGN_OR_RETURN(int64_t max_connections, cfg.Int("max_connections", 5, 1, 1000));
  std::shared_ptr<PgPool> pool =
      PgPool::Shared(url, static_cast<size_t>(max_connections), [url] { return OpenSession(url); });
  // Accepted for compatibility: each page is written with COPY whatever it says.
  ASSIGN_OR_RETURN(std::string method, cfg.Enum("write_method", "insert", {"insert", "copy"}));
  (void)method;
  return std::unique_ptr<Sink>(
      new PostgresSink(std::move(spec), std::move(pool), std::move(schema), std::move(table)));
}

}  // namespace faucet
