// A minimal MariaDB client for the torture driver (through clients/mysql): every failure throws
// TortureError carrying the statement and the server's message, as PgConn does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "clients/mysql/connection.h"
#include "pg_client.h"

namespace faucet::torture {

class MyConn {
 public:
  // `url`: mysql://user:pw@host:port/db; the session is utf8mb4 (clients/mysql).
  explicit MyConn(const std::string& url);
  MyConn(const MyConn&) = delete;
  MyConn& operator=(const MyConn&) = delete;

  // Runs `sql` and returns the rows it changed.
  uint64_t Exec(const std::string& sql);
  mysql::Rows Fetch(const std::string& sql);
  // The first column of the first row (nullopt for NULL or no row).
  std::optional<std::string> Scalar(const std::string& sql);
  // `p` as an SQL literal: '...' escaped for this connection, or NULL.
  std::string Literal(const Param& p);
  // The database the URL names.
  const std::string& database() const { return endpoint_.parts.database; }

 private:
  mysql::Endpoint endpoint_;
  mysql::ConnPtr conn_;
};

}  // namespace faucet::torture
