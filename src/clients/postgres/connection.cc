#include "clients/postgres/connection.h"

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

Result<PostgresTls> ParseTls(const config::Block& block) {
  PostgresTls tls;
  ASSIGN_OR_RETURN(std::optional<config::Block> b, block.OptionalChild("tls"));
  if (!b) return tls;
  if (!b->Has("mode")) {
    return b->Error("mode", "is required (disable, require, verify_ca or verify_full)");
  }
  ASSIGN_OR_RETURN(std::string mode,
                   b->Enum("mode", "", {"disable", "require", "verify_ca", "verify_full"}));
  if (mode == "disable") tls.mode = PostgresTlsMode::kDisable;
  if (mode == "require") tls.mode = PostgresTlsMode::kRequire;
  if (mode == "verify_ca") tls.mode = PostgresTlsMode::kVerifyCa;
  if (mode == "verify_full") tls.mode = PostgresTlsMode::kVerifyFull;
  ASSIGN_OR_RETURN(tls.ca_path, b->OptionalString("ca_path"));
  if (tls.ca_path && tls.mode != PostgresTlsMode::kVerifyCa &&
      tls.mode != PostgresTlsMode::kVerifyFull) {
    return b->Error("ca_path", "applies only to mode verify_ca or verify_full");
  }
  return tls;
}

Result<ConnPtr> Connect(const std::string& url, const PostgresTls& tls, ConnectionKind kind) {
  // With expand_dbname, keywords before the URL are defaults it may override and keywords
  // after it override the URL (libpq docs, PQconnectdbParams).
  std::vector<const char*> keys = {"connect_timeout", "application_name", "dbname",
                                   "client_encoding"};
  std::vector<const char*> values = {"10", "faucet", url.c_str(), "UTF8"};
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

StatusCode SqlStateCode(const std::string& state) {
  if (state.empty()) return StatusCode::kUnavailable;
  const std::string cls = state.substr(0, 2);
  if (cls == "08" || cls == "40" || cls == "53" || cls == "57" || state == "25006") {
    return StatusCode::kUnavailable;
  }
  if (cls == "22" || cls == "23" || state == "21000") return StatusCode::kInvalidArgument;
  if (state == kSqlStateUndefinedObject || state == "42P01") return StatusCode::kNotFound;
  if (cls == "28" || cls == "42" || cls == "55") return StatusCode::kFailedPrecondition;
  return StatusCode::kInternal;
}

Status StatementError(PGconn* conn, const PGresult* result, const std::string& what) {
  std::string state = SqlState(result);
  std::string message = result != nullptr ? Trimmed(PQresultErrorMessage(result)) : "";
  if (message.empty()) message = Trimmed(PQerrorMessage(conn));
  message = what + ": " + Redact(message);
  if (!state.empty()) message += " (SQLSTATE " + state + ")";
  if (PQstatus(conn) != CONNECTION_OK) return Unavailable(message);
  return Status(SqlStateCode(state), message);
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
