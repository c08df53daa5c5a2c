// libpq plumbing shared by the Postgres sources, slot control and doctor: connections,
// results, and the mapping of server errors onto Status codes. Every message that could carry
// the connection string passes through Redact.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "sources/postgres/postgres_config.h"

namespace faucet::postgres {

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ConnPtr = std::unique_ptr<PGconn, ConnDeleter>;
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

// Replication connections (replication=database) speak the walsender protocol and also run
// plain SQL, but only through the simple query protocol: no parameters, hence Literal().
enum class ConnectionKind { kSql, kReplication };

// Connects to `url` with `tls` applied. Failure is kUnavailable with the server's reason and
// the redacted URL.
Result<ConnPtr> Connect(const std::string& url, const PostgresTls& tls, ConnectionKind kind);

// SQLSTATE codes we act on.
inline constexpr const char* kSqlStateObjectInUse = "55006";  // "replication slot is active"
inline constexpr const char* kSqlStateDuplicateObject = "42710";
inline constexpr const char* kSqlStateUndefinedObject = "42704";

// The failed result's SQLSTATE ("" when the connection itself failed).
std::string SqlState(const PGresult* result);

// A Status for a failed statement: kUnavailable for connection loss and other transient
// classes (08, 40, 53, 57), kNotFound for undefined objects, kFailedPrecondition for
// privilege and object-state errors (42501, 55, 28), kInternal otherwise. The message is
// "<what>: <server message> (SQLSTATE xxxxx)".
Status StatementError(PGconn* conn, const PGresult* result, const std::string& what);

// Runs `sql` (simple protocol); any status but `expected` is StatementError.
Result<ResultPtr> Exec(PGconn* conn, const std::string& sql, const std::string& what,
                       ExecStatusType expected = PGRES_TUPLES_OK);

// `text` as an SQL string literal, escaped for this connection; kInvalidArgument when it is
// not valid in the connection's encoding.
Result<std::string> Literal(PGconn* conn, const std::string& text);

// The value at (row, col), or nullopt for SQL NULL.
std::optional<std::string> Value(const PGresult* result, int row, int col);

}  // namespace faucet::postgres
