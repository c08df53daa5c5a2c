// A minimal libpq client for the torture driver: every failure throws TortureError carrying
// the statement and the server's message, so the driver never continues on a half-done step.
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace faucet::torture {

struct TortureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Param = std::optional<std::string>;  // nullopt = SQL NULL

// The rows of one result, every value as text (nullopt for NULL).
class PgRows {
 public:
  explicit PgRows(PGresult* r) : r_(r, &PQclear) {}
  int size() const { return PQntuples(r_.get()); }
  std::optional<std::string> Get(int row, int col) const;
  std::string Text(int row, int col) const;  // throws on NULL
  int64_t Int(int row, int col) const;

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> r_;
};

class PgConn {
 public:
  explicit PgConn(const std::string& url);
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  PgRows Exec(const std::string& sql, const std::vector<Param>& params = {});
  // The first column of the first row (nullopt for NULL or no row).
  std::optional<std::string> Scalar(const std::string& sql, const std::vector<Param>& params = {});
  // md5 of `bytes` computed by the server (bytes passed binary, so any content is fine).
  std::string Md5(const std::string& bytes);

 private:
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_;
};

// `url` with its database name replaced by `db` (postgres://user:pw@host:port/db?opts).
std::string WithDatabase(const std::string& url, const std::string& db);

// A SQL string literal ('...' with quotes doubled), for identifiers built by the driver.
std::string Quote(const std::string& s);

}  // namespace faucet::torture
