// The one Postgres client wrapper, for sources, slot control, doctor, the sink and the state
// store: connections (TLS, connect timeout, UTF-8, application name), results, and the mapping
// of server errors (SQLSTATE) onto Status codes. Every message that could carry the connection
// string passes through Redact.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/block.h"
#include "core/status.h"

namespace faucet {

// `tls: {mode: ..., ca_path: ...}`, mapped onto libpq's sslmode / sslrootcert.
enum class PostgresTlsMode {
  kFromUrl,  // no `tls:` block: the URL's own sslmode (libpq's default "prefer" if none)
  kDisable,
  kRequire,
  kVerifyCa,
  kVerifyFull,
};

struct PostgresTls {
  PostgresTlsMode mode = PostgresTlsMode::kFromUrl;
  std::optional<std::string> ca_path;
};

}  // namespace faucet

namespace faucet::postgres {

// The optional `tls:` child of a connector's config block; errors are located at their key.
Result<PostgresTls> ParseTls(const config::Block& block);

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

// Connects to `url` with `tls` applied, sending UTF-8, named "faucet", giving up on an
// unreachable server after 10 s unless the URL sets its own connect_timeout. Failure is
// kUnavailable with the server's reason and the redacted URL.
Result<ConnPtr> Connect(const std::string& url, const PostgresTls& tls, ConnectionKind kind);

// SQLSTATE codes we act on.
inline constexpr const char* kSqlStateObjectInUse = "55006";  // "replication slot is active"
inline constexpr const char* kSqlStateDuplicateObject = "42710";
inline constexpr const char* kSqlStateUndefinedObject = "42704";

// The failed result's SQLSTATE ("" when the connection itself failed).
std::string SqlState(const PGresult* result);

// What a failed statement's SQLSTATE means for the caller
// (https://www.postgresql.org/docs/current/errcodes-appendix.html): kUnavailable when it may
// succeed later (no SQLSTATE: the connection failed; 08 connection, 40 rollback, 53 resources,
// 57 operator intervention, 25006 read-only during a failover); kInvalidArgument for the
// data's own errors (22 data exception, 23 integrity violation, 21000 a row affected twice);
// kNotFound for undefined objects (42704, 42P01); kFailedPrecondition for privileges, object
// state and other statement errors (28, 42, 55); kInternal otherwise.
StatusCode SqlStateCode(const std::string& sqlstate);

// A Status for a failed statement, coded by SqlStateCode (kUnavailable whenever the connection
// is gone). The message is "<what>: <server message> (SQLSTATE xxxxx)".
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
