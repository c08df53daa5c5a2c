// The destination database of a SQL sink (postgres, sqlite, mysql) for tests that run the sink
// through faucet and then look at what it wrote, on the servers scripts/services.sh starts.
#pragma once

#include <string>

namespace faucet::testing {

enum class SqlDest { kPostgres, kSqlite, kMysql };

// "postgres", "sqlite" or "mysql": the sink's type, also used in test names.
std::string SqlDestName(SqlDest dest);

class SqlDestination {
 public:
  // For Postgres a new database `name` on the test server (FAUCET_TEST_PG_URL); for SQLite a new
  // file "<dir>/<name>.db"; for MySQL the test database itself (FAUCET_TEST_MYSQL_URL), which
  // all tests share, so their tables need unique names (and dropping).
  SqlDestination(SqlDest dest, const std::string& name, const std::string& dir);

  SqlDest dest() const { return dest_; }
  // The database's URL (Postgres, MySQL) or the SQLite file's path.
  const std::string& url() const { return url_; }

  // The sink's YAML flow mapping for `table`, its config followed by `extra` entries
  // (", write_mode: upsert, key: [id]"): "{type: sqlite, config: {database_url: '...',
  // table_name: t, ...}}".
  std::string SinkYaml(const std::string& table, const std::string& extra = "") const;

  // Runs `sql` on a connection opened for it (so one dropped by the server in between does not
  // matter) and returns the first column of the first row as text, "" for none or NULL. An
  // error fails the test (ADD_FAILURE) with the statement and the database's message.
  std::string Query(const std::string& sql) const;

 private:
  SqlDest dest_;
  std::string url_;  // the SQLite file's path for sqlite
};

}  // namespace faucet::testing
