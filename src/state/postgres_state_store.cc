#include "state/postgres_state_store.h"

#include <libpq-fe.h>

#include <chrono>
#include <thread>

#include "clients/postgres/connection.h"
#include "core/redact.h"
#include "state/state_json.h"

namespace faucet {
namespace {

std::string TableDdl(const std::string& quoted_table) {
  return "CREATE TABLE IF NOT EXISTS " + quoted_table +
         " (key TEXT PRIMARY KEY, value JSONB NOT NULL,"
         " updated_at TIMESTAMPTZ NOT NULL DEFAULT now())";
}

// libpq messages end with a newline and may span indented lines ("DETAIL: ..."); one line
// reads better in a log.
std::string OneLine(const char* message) {
  std::string out;
  for (const char* p = message == nullptr ? "" : message; *p != '\0'; ++p) {
    bool space = *p == '\n' || *p == '\t' || *p == ' ';
    if (!space) {
      out += *p;
    } else if (!out.empty() && out.back() != ' ') {
      out += ' ';
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace

PostgresStateStore::PostgresStateStore(std::string url, const std::string& table)
    : url_(std::move(url)), quoted_table_('"' + table + '"') {}

PostgresStateStore::~PostgresStateStore() {
  if (conn_ != nullptr) PQfinish(conn_);
}

Result<std::unique_ptr<PostgresStateStore>> PostgresStateStore::Open(const std::string& url,
                                                                     const std::string& table,
                                                                     bool ensure_table) {
  std::unique_ptr<PostgresStateStore> store(new PostgresStateStore(url, table));
  {
    MutexLock lock(store->mu_);
    RETURN_IF_ERROR(store->Connect());
  }
  if (ensure_table) {
    // Two processes creating the table at once: the loser fails with a unique violation in
    // the catalog, and its second CREATE ... IF NOT EXISTS finds the table there.
    if (!store->Exec(TableDdl(store->quoted_table_), {}).ok()) {
      Result<Rows> again = store->Exec(TableDdl(store->quoted_table_), {});
      if (!again.ok()) return again.status().WithContext("cannot create the state table");
    }
  }
  return store;
}

std::string PostgresStateStore::Describe() const {
  return "postgres state store " + Redact(url_) + " table " + quoted_table_;
}

Status PostgresStateStore::Connect() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
  Result<postgres::ConnPtr> conn =
      postgres::Connect(url_, PostgresTls{}, postgres::ConnectionKind::kSql);
  if (!conn.ok()) return conn.status().WithContext(Redact(Describe()));
  conn_ = conn->release();
  return Status::Ok();
}

Result<PostgresStateStore::Rows> PostgresStateStore::Exec(const std::string& sql,
                                                          const std::vector<std::string>& params) {
  MutexLock lock(mu_);
  bool fresh = false;
  if (conn_ == nullptr || PQstatus(conn_) == CONNECTION_BAD) {
    RETURN_IF_ERROR(Connect());
    fresh = true;
  }
  Result<Rows> rows = ExecOnce(sql, params);
  if (rows.ok() || fresh || PQstatus(conn_) != CONNECTION_BAD) return rows;
  // The server restarted, or a proxy dropped the idle connection: one fresh attempt. Every
  // statement here is idempotent, so one that committed before the break may run again.
  RETURN_IF_ERROR(Connect());
  return ExecOnce(sql, params);
}

Result<PostgresStateStore::Rows> PostgresStateStore::ExecOnce(
    const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  for (const std::string& p : params) values.push_back(p.c_str());
  std::unique_ptr<PGresult, decltype(&PQclear)> res(
      PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), /*paramTypes=*/nullptr,
                   values.data(), /*paramLengths=*/nullptr, /*paramFormats=*/nullptr,
                   /*resultFormat=*/0),
      &PQclear);
  ExecStatusType status = PQresultStatus(res.get());
  if (status == PGRES_COMMAND_OK) return Rows{};
  if (status == PGRES_TUPLES_OK) {
    Rows rows;
    for (int i = 0; i < PQntuples(res.get()); ++i) {
      if (PQgetisnull(res.get(), i, 0)) {
        rows.first_column.emplace_back();
      } else {
        rows.first_column.emplace_back(PQgetvalue(res.get(), i, 0));
      }
    }
    return rows;
  }

  const char* state_field = res ? PQresultErrorField(res.get(), PG_DIAG_SQLSTATE) : nullptr;
  std::string state = state_field == nullptr ? "" : state_field;
  std::string why = OneLine(res ? PQresultErrorMessage(res.get()) : PQerrorMessage(conn_));
  if (state == "42P01") {
    return FailedPrecondition(Redact(Describe() + ": the table does not exist; create it with `" +
                                     TableDdl(quoted_table_) +
                                     "`, or set ensure_table: true in the state config"));
  }
  std::string message = Redact(Describe() + ": " + why);
  if (PQstatus(conn_) == CONNECTION_BAD ||
      postgres::SqlStateCode(state) == StatusCode::kUnavailable) {
    return Unavailable(message);
  }
  return Internal(message + " (SQLSTATE " + state + ")");
}

namespace {

constexpr auto kLeaseWait = std::chrono::seconds(3);

// A session-level advisory lock, held by a connection of its own: the server releases it when
// the session ends, however the process ends. That happens a moment after the connection
// closes, so the lease unlocks first: released when destroyed means released.
class AdvisoryLease final : public StateLease {
 public:
  explicit AdvisoryLease(postgres::ConnPtr conn) : conn_(std::move(conn)) {}
  ~AdvisoryLease() override {
    postgres::ResultPtr unlocked(PQexec(conn_.get(), "SELECT pg_advisory_unlock_all()"));
  }
  AdvisoryLease(const AdvisoryLease&) = delete;
  AdvisoryLease& operator=(const AdvisoryLease&) = delete;

 private:
  postgres::ConnPtr conn_;
};

}  // namespace

Result<std::unique_ptr<StateLease>> PostgresStateStore::Lease(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  ASSIGN_OR_RETURN(postgres::ConnPtr conn,
                   postgres::Connect(url_, PostgresTls{}, postgres::ConnectionKind::kSql));
  // One lock space per state table: the same key in two tables is two names.
  ASSIGN_OR_RETURN(std::string name, postgres::Literal(conn.get(), quoted_table_ + "/" + key));
  const std::string sql = "SELECT pg_try_advisory_lock(hashtextextended(" + name + ", 0))";
  // A holder that has just died keeps the lock until its server process notices the closed
  // connection, a moment later: tried again for a while before it counts as held.
  const auto until = std::chrono::steady_clock::now() + kLeaseWait;
  while (true) {
    ASSIGN_OR_RETURN(postgres::ResultPtr r,
                     postgres::Exec(conn.get(), sql, Redact(Describe()) + ": taking " + key));
    if (postgres::Value(r.get(), 0, 0) == "t") break;
    if (std::chrono::steady_clock::now() >= until) {
      return FailedPrecondition(key + " is held by another session (advisory lock in " +
                                Redact(Describe()) + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return std::unique_ptr<StateLease>(new AdvisoryLease(std::move(conn)));
}

Result<std::optional<Json>> PostgresStateStore::Get(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  ASSIGN_OR_RETURN(Rows rows,
                   Exec("SELECT value::text FROM " + quoted_table_ + " WHERE key = $1", {key}));
  if (rows.first_column.empty() || !rows.first_column[0]) return std::optional<Json>();
  ASSIGN_OR_RETURN(Json value,
                   ParseStateValue(*rows.first_column[0], Describe() + " row '" + key + "'"));
  return std::optional<Json>(std::move(value));
}

Status PostgresStateStore::Put(const std::string& key, const Json& value) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  ASSIGN_OR_RETURN(std::string text, DumpStateValue(value));
  return Exec("INSERT INTO " + quoted_table_ +
                  " (key, value) VALUES ($1, $2::jsonb) ON CONFLICT (key) DO UPDATE SET"
                  " value = EXCLUDED.value, updated_at = now()",
              {key, text})
      .status();
}

Status PostgresStateStore::Delete(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  return Exec("DELETE FROM " + quoted_table_ + " WHERE key = $1", {key}).status();
}

}  // namespace faucet
