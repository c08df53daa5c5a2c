#include "sinks/sqlite/sqlite_sink.h"

#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>

#include "core/json_render.h"
#include "core/text.h"
#include "sinks/sql/session_pool.h"
#include "sinks/sql/table_sink.h"

namespace faucet {
namespace {

using sql::RangeResult;
using sql::RowAction;
using sql::WritePlan;

constexpr char kOverwriteSuffix[] = "__faucet_new";

std::string Quote(std::string_view ident) { return QuoteIdentifier(ident, '"'); }

bool Contains(const std::string& upper, const char* part) {
  return upper.find(part) != std::string::npos;
}

// How a cell's text is bound, from the column's declared type: SQLite converts bound text by
// the column's affinity (https://sqlite.org/datatype3.html#type_affinity) except for what a
// Postgres text form spells differently.
enum class Binding : uint8_t {
  kText,     // bound as text; the affinity converts
  kNumeric,  // INTEGER/NUMERIC/BOOLEAN affinity: 't'/'f' (Postgres bool) become 1/0
  kReal,     // REAL affinity: Postgres "Infinity"/"-Infinity" become IEEE infinities
  kBlob,     // BLOB/BYTEA: Postgres hex "\x0a0b" becomes the bytes
};

Binding BindingFor(const std::string& declared_type) {
  std::string t = declared_type;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::toupper(c); });
  if (Contains(t, "BLOB") || Contains(t, "BYTEA")) return Binding::kBlob;
  if (Contains(t, "INT") || Contains(t, "BOOL")) return Binding::kNumeric;
  if (Contains(t, "CHAR") || Contains(t, "CLOB") || Contains(t, "TEXT")) return Binding::kText;
  if (Contains(t, "REAL") || Contains(t, "FLOA") || Contains(t, "DOUB")) return Binding::kReal;
  if (t.empty()) return Binding::kText;
  return Binding::kNumeric;
}

// SQLite result codes as statuses: constraint and type errors are the row's; a busy or
// locked database may free up; a corrupt file is data loss.
Status StatusFor(sqlite3* db, int rc, const std::string& what) {
  std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
      return InvalidArgument(message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
      return Unavailable(what + ": " + message);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return DataLoss(what + ": " + message);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_ERROR:
      return FailedPrecondition(what + ": " + message);
    default:
      return Internal(what + ": " + message);
  }
}

// A destination session: the open database and its prepared statements by SQL text (they
// re-prepare themselves after the schema changes).
struct SqliteSession {
  ~SqliteSession() {
    for (auto& [sql, stmt] : statements) sqlite3_finalize(stmt);
    sqlite3_close_v2(db);
  }
  // No transaction open: a sink that failed mid-page leaves its session to be closed.
  bool Reusable() const { return sqlite3_get_autocommit(db) != 0; }

  sqlite3* db = nullptr;
  std::map<std::string, sqlite3_stmt*> statements;
};
using SqlitePool = sql::SessionPool<SqliteSession>;

Result<std::unique_ptr<SqliteSession>> OpenSession(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    return NotFound("sqlite sink: database " + path +
                    " does not exist (create it and its tables before the first run)");
  }
  auto session = std::make_unique<SqliteSession>();
  int rc = sqlite3_open_v2(path.c_str(), &session->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                           nullptr);
  sqlite3* db = session->db;
  if (rc != SQLITE_OK) return StatusFor(db, rc, "cannot open " + path);
  sqlite3_extended_result_codes(db, 1);
  // A writer holding the lock (another process, a checkpoint) is waited for, not failed on.
  sqlite3_busy_timeout(db, 10000);
  // WAL with synchronous=FULL: a commit is on disk (WAL fsync'ed) when COMMIT returns, which
  // is what "durable when Write returns" needs; NORMAL would lose the last commits on power
  // loss.
  sqlite3_stmt* stmt = nullptr;
  rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode=WAL", -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return StatusFor(db, rc, "cannot set journal_mode=WAL");
  rc = sqlite3_step(stmt);
  const unsigned char* text = rc == SQLITE_ROW ? sqlite3_column_text(stmt, 0) : nullptr;
  const std::string mode = text != nullptr ? reinterpret_cast<const char*>(text) : "";
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) return StatusFor(db, rc, "cannot set journal_mode=WAL");
  if (mode != "wal") {
    // Still durable (a rollback journal with synchronous=FULL), only slower for readers.
    spdlog::warn("sqlite sink: {} stays in journal mode {} (WAL is not available there)", path,
                 mode);
  }
  rc = sqlite3_exec(db, "PRAGMA synchronous=FULL", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return StatusFor(db, rc, "cannot set synchronous=FULL");
  return session;
}

class SqliteSink : public sql::TableSink {
 public:
  SqliteSink(sql::WriteSpec spec, std::shared_ptr<SqlitePool> pool, std::string table)
      : TableSink(std::move(spec)),
        pool_(std::move(pool)),
        table_(std::move(table)),
        write_table_(Quote(table_)) {}

 protected:
  Status Hold() override {
    if (!session_) {
      ASSIGN_OR_RETURN(session_, pool_->Acquire());
    }
    return Status::Ok();
  }

  void Release() override {
    ClearStatements();
    session_.Reset();
  }

  Result<std::optional<std::string>> ReadToken(const std::string& scope) override {
    sqlite3_stmt* exists = nullptr;
    RETURN_IF_ERROR(
        Prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", &exists));
    sqlite3_bind_text(exists, 1, sql::kCommitTokenTable, -1, SQLITE_STATIC);
    int rc = sqlite3_step(exists);
    sqlite3_finalize(exists);
    if (rc == SQLITE_DONE) return std::optional<std::string>();
    if (rc != SQLITE_ROW) return Error(rc, "cannot read the commit token");
    sqlite3_stmt* read = nullptr;
    RETURN_IF_ERROR(Prepare("SELECT token FROM _faucet_commit_token WHERE scope = ?", &read));
    sqlite3_bind_text(read, 1, scope.data(), static_cast<int>(scope.size()), SQLITE_STATIC);
    rc = sqlite3_step(read);
    std::optional<std::string> token;
    if (rc == SQLITE_ROW) {
      token = std::string(reinterpret_cast<const char*>(sqlite3_column_text(read, 0)),
                          sqlite3_column_bytes(read, 0));
    }
    sqlite3_finalize(read);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return Error(rc, "cannot read the commit token");
    return token;
  }

  Status OpenTable() override { return Reread(); }

  // IMMEDIATE takes the write lock now: a deferred transaction that upgrades later can fail
  // with SQLITE_BUSY without waiting for the busy timeout.
  Status Begin() override { return ExecText("BEGIN IMMEDIATE", "cannot begin a transaction"); }
  Status Commit() override { return ExecText("COMMIT", "cannot commit"); }
  void Rollback() override {
    if (sqlite3_get_autocommit(db()) == 0)
      sqlite3_exec(db(), "ROLLBACK", nullptr, nullptr, nullptr);
  }

  // Rows are stepped one by one in page order; a refused row undoes only its own statement
  // (SQLite's default ABORT), so the rows before it stay applied.
  RangeResult ApplyRange(const WritePlan& plan, size_t begin, size_t end) override {
    // Looked up once per range, not per row.
    group_statements_.assign(plan.groups().size(), nullptr);
    sqlite3_stmt* delete_statement = nullptr;
    for (size_t r = begin; r < end; ++r) {
      const bool is_delete = plan.row(r).action == RowAction::kDelete;
      const std::vector<int>& columns = is_delete ? plan.key() : plan.groups()[plan.row(r).group];
      sqlite3_stmt*& stmt = is_delete ? delete_statement : group_statements_[plan.row(r).group];
      if (stmt == nullptr) {
        if (Status st = Statement(columns, plan.row(r).action, &stmt); !st.ok()) return {st};
      }
      int param = 1;
      for (int c : columns) Bind(stmt, param++, c, plan.cell(r, c));
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) {
        sqlite3_reset(stmt);
        continue;
      }
      RangeResult failed{Error(rc, "table " + target().display_name)};
      sqlite3_reset(stmt);
      if (failed.status.code() != StatusCode::kInvalidArgument) return failed;
      failed.failed_at = r;
      failed.prefix_applied = true;
      failed.column = ColumnOf(failed.status.message());
      return failed;
    }
    return RangeResult::Ok();
  }

  // Bulk load: one transaction for every page of the load, as `sqlite3 .import` writes, its
  // rows stepped as in a page. Any target: an upsert statement takes a key that exists. Not
  // with more than one connection to the file: the others would wait for its write lock past
  // their busy timeout.
  Result<bool> BulkStart(const WritePlan& plan) override {
    (void)plan;
    if (pool_->size() > 1) return false;
    RETURN_IF_ERROR(Begin());
    bulk_rows_ = 0;
    return true;
  }

  Status BulkAppend(const WritePlan& plan) override {
    RangeResult applied = ApplyRange(plan, 0, plan.size());
    if (applied.status.code() == StatusCode::kInvalidArgument) {
      std::optional<size_t> row;
      if (applied.failed_at) row = bulk_rows_ + *applied.failed_at;
      return BulkRefusal(row, applied.column, applied.status);
    }
    bulk_rows_ += plan.size();
    return applied.status;
  }

  Status BulkCommit() override { return Commit(); }
  void BulkRollback() override { Rollback(); }

  Status EnsureTokenTable() override {
    return ExecText(
        "CREATE TABLE IF NOT EXISTS _faucet_commit_token (scope TEXT PRIMARY KEY,"
        " token TEXT NOT NULL,"
        " updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')))",
        "cannot create _faucet_commit_token");
  }

  Status StoreToken(const std::string& scope, const std::string& token) override {
    sqlite3_stmt* stmt = nullptr;
    RETURN_IF_ERROR(
        Prepare("INSERT INTO _faucet_commit_token (scope, token, updated_at)"
                " VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))"
                " ON CONFLICT (scope) DO UPDATE SET token = excluded.token,"
                " updated_at = excluded.updated_at",
                &stmt));
    sqlite3_bind_text(stmt, 1, scope.data(), static_cast<int>(scope.size()), SQLITE_STATIC);
    sqlite3_bind_text(stmt, 2, token.data(), static_cast<int>(token.size()), SQLITE_STATIC);
    int rc = sqlite3_step(stmt);
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? Status::Ok() : Error(rc, "cannot store the commit token");
  }

  size_t ScopeWidth() const override { return std::numeric_limits<size_t>::max(); }

  // SQLite has no CREATE TABLE ... LIKE: the new table is created from the target's own
  // CREATE TABLE text (columns, types, inline PRIMARY KEY/UNIQUE/CHECK, STRICT), renamed.
  // Separately created indexes and triggers are recreated from their text after the swap.
  Status CreateOverwriteTable() override {
    std::string create;
    RETURN_IF_ERROR(SchemaSql("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?",
                              &create, nullptr));
    size_t paren = create.find('(');
    if (paren == std::string::npos) {
      return Internal("table " + target().display_name + ": cannot read its CREATE TABLE");
    }
    std::string fresh = Quote(table_ + kOverwriteSuffix);
    RETURN_IF_ERROR(ExecText(
        "DROP TABLE IF EXISTS " + fresh + "; CREATE TABLE " + fresh + " " + create.substr(paren),
        "cannot create the overwrite table " + table_ + kOverwriteSuffix));
    ClearStatements();
    write_table_ = fresh;
    return Status::Ok();
  }

  // SQLite's declared types are affinities, not limits: a column takes a value of any type, so
  // types never drift and only a missing column is added.
  std::string TypeFor(const Column& source) const override {
    switch (source.type) {
      case ValueType::kBool:
        return "INTEGER";
      case ValueType::kInt:
        // Wider than 64 bits (MySQL's BIGINT UNSIGNED): INTEGER affinity would make the
        // largest values REAL; TEXT keeps their digits.
        return sql::SourceClass(source).width > 64 ? "TEXT" : "INTEGER";
      case ValueType::kFloat:
        return "REAL";
      case ValueType::kNumeric:
        return strict_ ? "ANY" : "NUMERIC";  // a STRICT table takes only its five types and ANY
      case ValueType::kBytes:
        return "BLOB";
      default:
        return "TEXT";
    }
  }

  Status AlterTarget(const std::vector<sql::SchemaChange>& changes) override {
    for (const sql::SchemaChange& c : changes) {
      if (c.kind != sql::SchemaChange::kAddColumn) {
        return FailedPrecondition("SQLite cannot change column " + c.column +
                                  " in place (only a missing column can be added)");
      }
      if (target().Find(c.column) >= 0) continue;
      Status added =
          ExecText("ALTER TABLE " + write_table_ + " ADD COLUMN " + Quote(c.column) + " " + c.type,
                   "cannot add column " + c.column);
      // Another writer of the table (a snapshot's shard) may have added it meanwhile.
      if (!added.ok() && (!Reread().ok() || target().Find(c.column) < 0)) return added;
    }
    return Reread();
  }

  Status SwapOverwriteTable() override {
    std::vector<std::string> extras;
    RETURN_IF_ERROR(
        SchemaSql("SELECT sql FROM sqlite_master WHERE tbl_name = ?"
                  " AND type IN ('index', 'trigger') AND sql IS NOT NULL",
                  nullptr, &extras));
    std::string swap = "BEGIN IMMEDIATE; DROP TABLE " + Quote(table_) + "; ALTER TABLE " +
                       write_table_ + " RENAME TO " + Quote(table_) + ";";
    for (const std::string& s : extras) swap += s + ";";
    swap += "COMMIT";
    // Legacy rename leaves views and triggers elsewhere alone: the modern one would rewrite,
    // or refuse over, views naming the table that is being dropped.
    ClearStatements();
    RETURN_IF_ERROR(ExecText("PRAGMA legacy_alter_table=ON", "cannot swap"));
    Status st = ExecText(swap, "cannot swap in the overwrite table " + table_ + kOverwriteSuffix);
    if (!st.ok()) Rollback();
    Status restore = ExecText("PRAGMA legacy_alter_table=OFF", "cannot swap");
    RETURN_IF_ERROR(st);
    write_table_ = Quote(table_);
    return restore;
  }

  Status DropOverwriteTable() override {
    ClearStatements();
    std::string fresh = write_table_;
    write_table_ = Quote(table_);
    return ExecText("DROP TABLE IF EXISTS " + fresh, "cannot drop the overwrite table");
  }

 private:
  // The held session's database. REQUIRES: a session is held.
  sqlite3* db() const { return session_->db; }

  Status Error(int rc, const std::string& what) const { return StatusFor(db(), rc, what); }

  // SQLite names a column as "table.column" at the end of its constraint messages.
  std::string ColumnOf(const std::string& message) const {
    size_t dot = message.rfind(table_ + ".");
    if (dot == std::string::npos) return "";
    std::string column = message.substr(dot + table_.size() + 1);
    return column.substr(0, column.find_first_of(", "));
  }

  Status ExecText(const std::string& sql, const std::string& what) {
    char* err = nullptr;
    int rc = sqlite3_exec(db(), sql.c_str(), nullptr, nullptr, &err);
    sqlite3_free(err);
    return rc == SQLITE_OK ? Status::Ok() : Error(rc, what);
  }

  Status Prepare(const std::string& sql, sqlite3_stmt** stmt) {
    int rc = sqlite3_prepare_v3(db(), sql.c_str(), static_cast<int>(sql.size()),
                                SQLITE_PREPARE_PERSISTENT, stmt, nullptr);
    return rc == SQLITE_OK ? Status::Ok() : Error(rc, "table " + target().display_name);
  }

  // Runs a query over sqlite_master with the table name bound; the first text into `one`, or
  // every text into `all`.
  Status SchemaSql(const char* sql, std::string* one, std::vector<std::string>* all) {
    sqlite3_stmt* stmt = nullptr;
    RETURN_IF_ERROR(Prepare(sql, &stmt));
    sqlite3_bind_text(stmt, 1, table_.data(), static_cast<int>(table_.size()), SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string text(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
      if (one != nullptr) *one = text;
      if (all != nullptr) all->push_back(text);
    }
    sqlite3_finalize(stmt);
    return rc == SQLITE_DONE ? Status::Ok() : Error(rc, "cannot read the schema");
  }

  // Reads the table being written (and its column bindings) and hands it to SetTarget.
  Status Reread() {
    ClearStatements();
    sqlite3_stmt* strict = nullptr;
    RETURN_IF_ERROR(Prepare("SELECT strict FROM pragma_table_list WHERE name = ?", &strict));
    sqlite3_bind_text(strict, 1, table_.data(), static_cast<int>(table_.size()), SQLITE_STATIC);
    strict_ = sqlite3_step(strict) == SQLITE_ROW && sqlite3_column_int(strict, 0) != 0;
    sqlite3_finalize(strict);
    sql::TargetTable target;
    RETURN_IF_ERROR(ReadTarget(target));
    bindings_.clear();
    for (const sql::TargetColumn& c : target.columns) bindings_.push_back(BindingFor(c.type));
    return SetTarget(std::move(target));
  }

  Status ReadTarget(sql::TargetTable& table) {
    table.display_name = table_;
    const std::string written = write_table_ == Quote(table_) ? table_ : table_ + kOverwriteSuffix;
    sqlite3_stmt* stmt = nullptr;
    // table_xinfo also lists generated columns (hidden 2 and 3), which are not written. A
    // primary key column is filled by the rowid when it is its alias, so it is never required.
    RETURN_IF_ERROR(
        Prepare("SELECT name, type, pk, hidden, \"notnull\" AND dflt_value IS NULL AND pk = 0"
                " FROM pragma_table_xinfo(?)",
                &stmt));
    sqlite3_bind_text(stmt, 1, written.data(), static_cast<int>(written.size()), SQLITE_STATIC);
    std::map<int, std::string> primary_key;
    int rc;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      const unsigned char* type = sqlite3_column_text(stmt, 1);
      int pk = sqlite3_column_int(stmt, 2);
      if (pk > 0) primary_key[pk] = name;
      if (sqlite3_column_int(stmt, 3) != 0) continue;
      table.columns.push_back({name, type != nullptr ? reinterpret_cast<const char*>(type) : "",
                               sql::TypeClass{}, sqlite3_column_int(stmt, 4) != 0});
    }
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) return Error(rc, "cannot read the table's columns");
    if (table.columns.empty()) {
      return NotFound("sqlite sink: table " + table_ + " does not exist in " +
                      sqlite3_db_filename(db(), "main") + " (create it before the first run)");
    }
    // The primary key is a conflict target even as the rowid alias, which has no index.
    if (!primary_key.empty()) {
      table.unique_keys.emplace_back();
      for (auto& [seq, name] : primary_key) table.unique_keys.back().push_back(name);
    }
    RETURN_IF_ERROR(
        Prepare("SELECT il.name, ii.name FROM pragma_index_list(?) AS il,"
                " pragma_index_info(il.name) AS ii WHERE il.\"unique\" AND NOT il.partial"
                " ORDER BY il.name, ii.seqno",
                &stmt));
    sqlite3_bind_text(stmt, 1, written.data(), static_cast<int>(written.size()), SQLITE_STATIC);
    std::string index;
    bool has_expression = false;
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      std::string name = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      const unsigned char* column = sqlite3_column_text(stmt, 1);
      if (name != index) {
        if (has_expression) table.unique_keys.pop_back();
        index = name;
        has_expression = false;
        table.unique_keys.emplace_back();
      }
      if (column == nullptr) {
        has_expression = true;
      } else {
        table.unique_keys.back().push_back(reinterpret_cast<const char*>(column));
      }
    }
    if (has_expression) table.unique_keys.pop_back();
    sqlite3_finalize(stmt);
    if (rc != SQLITE_DONE) return Error(rc, "cannot read the table's indexes");
    return Status::Ok();
  }

  // The prepared statement writing `columns` (deletes: by the key), cached per column set while
  // the session is held, and by its text in the session.
  Status Statement(const std::vector<int>& columns, RowAction action, sqlite3_stmt** out) {
    std::pair<RowAction, std::vector<int>> cache_key(action, columns);
    auto it = statements_.find(cache_key);
    if (it != statements_.end()) {
      *out = it->second;
      return Status::Ok();
    }
    const std::vector<sql::TargetColumn>& cols = target().columns;
    const std::vector<int>& key = plan().key();
    std::string sql;
    if (action == RowAction::kDelete) {
      sql = "DELETE FROM " + write_table_ + " WHERE ";
      for (size_t k = 0; k < key.size(); ++k) {
        sql += (k ? " AND " : "") + Quote(cols[key[k]].name) + " = ?";
      }
    } else {
      std::string names, params, updates;
      for (int c : columns) {
        std::string name = Quote(cols[c].name);
        names += (names.empty() ? "" : ", ") + name;
        params += params.empty() ? "?" : ", ?";
        if (std::find(key.begin(), key.end(), c) == key.end()) {
          updates += (updates.empty() ? "" : ", ") + name + " = excluded." + name;
        }
      }
      sql = "INSERT INTO " + write_table_ + " (" + names + ") VALUES (" + params + ")";
      if (action == RowAction::kUpsert) {
        std::string conflict;
        for (int k : key) conflict += (conflict.empty() ? "" : ", ") + Quote(cols[k].name);
        sql += " ON CONFLICT (" + conflict + ") " +
               (updates.empty() ? "DO NOTHING" : "DO UPDATE SET " + updates);
      }
    }
    sqlite3_stmt*& prepared = session_->statements[sql];
    if (prepared == nullptr) RETURN_IF_ERROR(Prepare(sql, &prepared));
    *out = prepared;
    statements_.emplace(std::move(cache_key), *out);
    return Status::Ok();
  }

  // Forgets the statements looked up (they stay prepared in the session).
  void ClearStatements() { statements_.clear(); }

  void Bind(sqlite3_stmt* stmt, int param, int column, const Cell* cell) {
    if (cell == nullptr || cell->state != CellState::kValue) {
      sqlite3_bind_null(stmt, param);
      return;
    }
    const std::string& text = cell->text;
    switch (bindings_[column]) {
      case Binding::kNumeric:
        if (std::optional<bool> b = ParseBoolText(text)) {
          sqlite3_bind_int(stmt, param, *b ? 1 : 0);
          return;
        }
        break;
      case Binding::kReal:
        if (text == "Infinity" || text == "-Infinity") {
          double inf = std::numeric_limits<double>::infinity();
          sqlite3_bind_double(stmt, param, text[0] == '-' ? -inf : inf);
          return;
        }
        break;
      case Binding::kBlob:
        blob_.clear();
        if (text.size() >= 2 && text[0] == '\\' && text[1] == 'x' &&
            AppendUnhex(std::string_view(text).substr(2), blob_)) {
          sqlite3_bind_blob(stmt, param, blob_.data(), static_cast<int>(blob_.size()),
                            SQLITE_TRANSIENT);
          return;
        }
        break;
      case Binding::kText:
        break;
    }
    // The page outlives the step: no copy.
    sqlite3_bind_text(stmt, param, text.data(), static_cast<int>(text.size()), SQLITE_STATIC);
  }

  const std::shared_ptr<SqlitePool> pool_;
  SqlitePool::Lease session_;  // held from Hold to Release
  const std::string table_;
  bool strict_ = false;            // a STRICT table (CREATE TABLE ... STRICT)
  std::string write_table_;        // the quoted table, or the overwrite table while one is open
  std::vector<Binding> bindings_;  // per target column
  // The statements looked up while the session is held (owned by the session).
  std::map<std::pair<RowAction, std::vector<int>>, sqlite3_stmt*> statements_;
  std::vector<sqlite3_stmt*> group_statements_;  // per group of the plan, during ApplyRange
  std::string blob_;
  size_t bulk_rows_ = 0;  // rows the open bulk load holds
};

}  // namespace

Result<std::string> SqlitePath(const std::string& database_url) {
  std::string path = database_url;
  for (const char* prefix : {"sqlite://", "sqlite:"}) {
    if (path.rfind(prefix, 0) == 0) {
      path = path.substr(std::string(prefix).size());
      break;
    }
  }
  path = path.substr(0, path.find('?'));  // sqlx-style options (?mode=rwc) do not apply
  if (path.empty() || path == ":memory:") {
    return InvalidArgument("database_url must name a database file, got '" + database_url + "'");
  }
  return path;
}

Result<std::unique_ptr<Sink>> MakeSqliteSink(const config::Block& cfg) {
  ASSIGN_OR_RETURN(std::string url, cfg.RequiredString("database_url"));
  Result<std::string> path = SqlitePath(url);
  if (!path.ok()) return cfg.Error("database_url", path.status().message());
  ASSIGN_OR_RETURN(std::string table, cfg.RequiredString("table_name"));
  if (table.empty()) return cfg.Error("table_name", "must not be empty");
  ASSIGN_OR_RETURN(sql::WriteSpec spec, sql::ParseWriteSpec(cfg, {{"json"}, true}));
  // The sessions every sink writing to this file shares (the first sink's size counts): SQLite
  // has one writer at a time, so more than one only wait on each other's locks.
  ASSIGN_OR_RETURN(int64_t max_connections, cfg.Int("max_connections", 1, 1, 1000));
  std::shared_ptr<SqlitePool> pool = SqlitePool::Shared(
      *path, static_cast<size_t>(max_connections), [path = *path] { return OpenSession(path); });
  return std::unique_ptr<Sink>(new SqliteSink(std::move(spec), std::move(pool), std::move(table)));
}

}  // namespace faucet
