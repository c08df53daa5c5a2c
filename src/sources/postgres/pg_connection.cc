#include "sources/postgres/pg_connection.h"

#include <cstring>

#include "core/redact.h"

namespace faucet::postgres {
namespace {

std::string Trimmed(const char* text) {
  std::string s = text != nullptr ? text : "";
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

const char* SslMode(PostgresTlsMode mode) {
  switch (mode) {
    case PostgresTlsMode::kFromUrl:
      return nullptr;
    case PostgresTlsMode::kDisable:
      return "disable";
    case PostgresTlsMode::kRequire:
      return "require";
    case PostgresTlsMode::kVerifyCa:
      return "verify-ca";
    case PostgresTlsMode::kVerifyFull:
      return "verify-full";
  }
  return nullptr;
}

}  // namespace

Result<ConnPtr> Connect(const std::string& url, const PostgresTls& tls, ConnectionKind kind) {
  // With expand_dbname, keywords before the URL are defaults it may override and keywords
  // after it override the URL (libpq docs, PQconnectdbParams).
  std::vector<const char*> keys = {"application_name", "dbname", "client_encoding"};
  std::vector<const char*> values = {"faucet", url.c_str(), "UTF8"};
  if (kind == ConnectionKind::kReplication) {
    keys.push_back("replication");
    values.push_back("database");
  }
  if (const char* mode = SslMode(tls.mode)) {
    keys.push_back("sslmode");
    values.push_back(mode);
  }
  if (tls.ca_path) {
    keys.push_back("sslrootcert");
    values.push_back(tls.ca_path->c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  ConnPtr conn(PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1));
  if (conn == nullptr) return Unavailable("cannot connect to " + Redact(url) + ": out of memory");
  if (PQstatus(conn.get()) != CONNECTION_OK) {
    return Unavailable("cannot connect to " + Redact(url) + ": " +
                       Redact(Trimmed(PQerrorMessage(conn.get()))));
  }
  return conn;
}

std::string SqlState(const PGresult* result) {
  const char* s = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  return s != nullptr ? s : "";
}

Status StatementError(PGconn* conn, const PGresult* result, const std::string& what) {
  std::string state = SqlState(result);
  std::string message = result != nullptr ? Trimmed(PQresultErrorMessage(result)) : "";
  if (message.empty()) message = Trimmed(PQerrorMessage(conn));
  message = what + ": " + Redact(message);
  if (!state.empty()) message += " (SQLSTATE " + state + ")";
  if (state.empty() || PQstatus(conn) != CONNECTION_OK) return Unavailable(message);
  std::string cls = state.substr(0, 2);
  if (cls == "08" || cls == "40" || cls == "53" || cls == "57") return Unavailable(message);
  if (state == kSqlStateUndefinedObject || state == "42P01") return NotFound(message);
  if (state == "42501" || cls == "55" || cls == "28") return FailedPrecondition(message);
  return Internal(message);
}

Result<ResultPtr> Exec(PGconn* conn, const std::string& sql, const std::string& what,
                       ExecStatusType expected) {
  ResultPtr r(PQexec(conn, sql.c_str()));
  if (r == nullptr || PQresultStatus(r.get()) != expected) {
    return StatementError(conn, r.get(), what);
  }
  return r;
}

Result<std::string> Literal(PGconn* conn, const std::string& text) {
  char* quoted = PQescapeLiteral(conn, text.data(), text.size());
  if (quoted == nullptr) {
    return InvalidArgument("cannot quote '" + text + "': " + Trimmed(PQerrorMessage(conn)));
  }
  std::string s = quoted;
  PQfreemem(quoted);
  return s;
}

std::optional<std::string> Value(const PGresult* result, int row, int col) {
  if (PQgetisnull(result, row, col)) return std::nullopt;
  return std::string(PQgetvalue(result, row, col), PQgetlength(result, row, col));
}

}  // namespace faucet::postgres
