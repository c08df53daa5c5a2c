// The MariaDB of scripts/services.sh for the mysql source tests: a connection for setup
// statements, and the tables a test creates, dropped when it ends (the test database is
// shared by every test).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "clients/mysql/connection.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::mysql::testing {

inline std::string TestUrl() { return faucet::testing::RequireEnv("FAUCET_TEST_MYSQL_URL"); }

inline Endpoint TestEndpoint(const std::string& url) {
  Endpoint e;
  e.url = url;
  Result<MysqlUrl> parts = ParseMysqlUrl(url, /*database_required=*/false);
  EXPECT_OK(parts);
  if (parts.ok()) e.parts = *parts;
  return e;
}

class TestDb {
 public:
  TestDb() : endpoint_(TestEndpoint(TestUrl())) {
    Result<ConnPtr> conn = Connect(endpoint_, "test");
    EXPECT_OK(conn);
    if (conn.ok()) conn_ = std::move(conn).value();
  }
  ~TestDb() {
    for (const std::string& t : tables_) Exec("DROP TABLE IF EXISTS " + t);
  }
  TestDb(const TestDb&) = delete;
  TestDb& operator=(const TestDb&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  const std::string& url() const { return endpoint_.url; }
  MYSQL* conn() const { return conn_.get(); }

  // A new table name, dropped with this object.
  std::string Table(const std::string& prefix) {
    tables_.push_back(faucet::testing::UniqueName(prefix));
    return tables_.back();
  }

  void Exec(const std::string& sql) const {
    if (conn_ == nullptr) return;
    EXPECT_OK(mysql::Exec(conn_.get(), sql, sql));
  }

  // The first column of the first row; nullopt for NULL or no row.
  std::optional<std::string> Scalar(const std::string& sql) const {
    if (conn_ == nullptr) return std::nullopt;
    Result<Rows> rows = Fetch(conn_.get(), sql, sql);
    EXPECT_OK(rows);
    if (!rows.ok() || rows->empty() || rows->front().empty()) return std::nullopt;
    return rows->front().front();
  }

 private:
  Endpoint endpoint_;
  ConnPtr conn_;
  std::vector<std::string> tables_;
};

}  // namespace faucet::mysql::testing
