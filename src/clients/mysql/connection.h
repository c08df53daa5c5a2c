// The one MariaDB Connector/C wrapper, for the mysql sink, the mysql-cdc and mysql sources and
// their doctor: URLs, TLS, connections, small queries, and the mapping of server error numbers
// onto Status codes. Every message that could carry the connection URL passes through Redact.
#pragma once

#include <mysql.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/block.h"
#include "core/status.h"

namespace faucet {

struct MysqlUrl {
  std::string user;
  std::string password;
  std::string host = "localhost";
  uint16_t port = 3306;
  std::string database;  // "" when the URL names none
};

// Parses mysql://user:pass@host:port/db (also mariadb://); user and password are
// percent-decoded; query parameters are ignored. kInvalidArgument (password redacted) when the
// URL is not of that shape, or names no database and `database_required`.
Result<MysqlUrl> ParseMysqlUrl(const std::string& url, bool database_required = true);

// `tls: {mode: ..., ca_path: ...}`, as for Postgres: disable (the default), require (encrypted,
// the server's certificate not checked), verify_ca, verify_full (also its host name).
enum class MysqlTlsMode { kDisable, kRequire, kVerifyCa, kVerifyFull };

struct MysqlTls {
  MysqlTlsMode mode = MysqlTlsMode::kDisable;
  std::optional<std::string> ca_path;
};

}  // namespace faucet

namespace faucet::mysql {

// The optional `tls:` child of a connector's config block; errors are located at their key.
Result<MysqlTls> ParseTls(const config::Block& block);

struct ConnDeleter {
  void operator()(MYSQL* c) const { mysql_close(c); }
};
struct ResultDeleter {
  void operator()(MYSQL_RES* r) const { mysql_free_result(r); }
};
using ConnPtr = std::unique_ptr<MYSQL, ConnDeleter>;
using ResultPtr = std::unique_ptr<MYSQL_RES, ResultDeleter>;

// Where to connect and how: the URL (kept for messages, always redacted), its parts, TLS.
struct Endpoint {
  std::string url;
  MysqlUrl parts;
  MysqlTls tls;
};

// Connects to `endpoint` with utf8mb4, a 10 s connect timeout and the session in UTC (so
// TIMESTAMP values read as UTC). `configure` may set more options before the connect.
// Failure is kUnavailable naming `who` (e.g. "mysql-cdc"), the redacted URL and the reason.
Result<ConnPtr> Connect(const Endpoint& endpoint, const std::string& who,
                        const std::function<void(MYSQL*)>& configure = {});

// What a MySQL/MariaDB error number means for the caller: kUnavailable when it may succeed
// later (connection lost, lock wait, deadlock, shutdown), kInvalidArgument for the data's own
// errors (a value or constraint the table refuses), kFailedPrecondition for a missing table or
// column or a denied privilege, kInternal otherwise.
StatusCode ErrorCode(unsigned int err);

// The connection's last error as a Status coded by ErrorCode: "<what>: <message> (error N)".
Status StatementError(MYSQL* conn, const std::string& what);

// Runs `sql`, which returns no rows.
Status Exec(MYSQL* conn, const std::string& sql, const std::string& what);

// Runs `sql` and returns its whole result (for small results: catalogs, status). NULL is
// nullopt.
using Rows = std::vector<std::vector<std::optional<std::string>>>;
Result<Rows> Fetch(MYSQL* conn, const std::string& sql, const std::string& what);

// `text` as an SQL string literal ('...'), escaped for this connection.
std::string Literal(MYSQL* conn, const std::string& text);

// Bytes of the longest character of collation `collation`'s charset (utf8mb4: 4, latin1: 1),
// from the connector's table of charsets; 4 for one it does not know.
uint32_t BytesPerChar(uint32_t collation);

}  // namespace faucet::mysql
