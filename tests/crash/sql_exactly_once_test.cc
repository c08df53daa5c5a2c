// Effectively-once through each SQL sink: the process dies between the sink's commit of a page
// (rows and commit token in one transaction) and the persist of its bookmark. On restart the
// pipeline re-anchors at the sink's token, so no row is written twice and none is lost. The
// sinks write in append mode here, so a duplicate would show; the at-least-once control shows
// that the same crash does duplicate without the watermark.
#include <gtest/gtest.h>

#include <fstream>

#include "sources/postgres/pg_test_support.h"
#include "testing/process.h"
#include "testing/services.h"

namespace faucet {
namespace {

using postgres::testing::SlotGuard;
using postgres::testing::TestDb;

struct MysqlUrl {
  std::string user, password, host, port, db;
};

MysqlUrl ParseMysql(const std::string& url) {  // mysql://user:pass@host:port/db
  MysqlUrl m;
  std::string rest = url.substr(url.find("://") + 3);
  m.user = rest.substr(0, rest.find(':'));
  m.password = rest.substr(rest.find(':') + 1, rest.find('@') - rest.find(':') - 1);
  std::string hostport = rest.substr(rest.find('@') + 1, rest.find('/') - rest.find('@') - 1);
  m.host = hostport.substr(0, hostport.find(':'));
  m.port = hostport.substr(hostport.find(':') + 1);
  m.db = rest.substr(rest.find('/') + 1);
  return m;
}

enum class Dest { kPostgres, kSqlite, kMysql };

class SqlExactlyOnce : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override {
    name_ = testing::UniqueName("eo");
    dir_ = testing::TempDir("eo");
    src_.Exec("CREATE TABLE " + name_ + " (id int PRIMARY KEY, name text)");
    src_.Exec("CREATE PUBLICATION " + name_ + "_pub FOR TABLE " + name_);
    guard_ = std::make_unique<SlotGuard>(src_.url(), name_ + "_slot");
    // The slot exists before the data, so the stream carries all of it.
    src_.Exec("SELECT pg_create_logical_replication_slot('" + name_ + "_slot', 'pgoutput')");
    // Ten transactions of 100 rows: with batch_size 100 each is a page of its own.
    for (int t = 0; t < 10; ++t) {
      src_.Exec("INSERT INTO " + name_ + " SELECT g, 'row ' || g FROM generate_series(" +
                std::to_string(t * 100 + 1) + ", " + std::to_string(t * 100 + 100) + ") g");
    }
    // No key: an append that writes a row twice shows it.
    std::string ddl = "CREATE TABLE " + name_ + " (id int, name text)";
    switch (GetParam()) {
      case Dest::kPostgres:
        src_.Exec("CREATE DATABASE " + name_);
        dest_url_ = src_.url().substr(0, src_.url().rfind('/') + 1) + name_;
        TestDb(dest_url_).Exec(ddl);
        sink_ = "{type: postgres, config: {connection_url: '" + dest_url_ + "', table_name: " +
                name_ + ", column_mapping: auto_map}}";
        break;
      case Dest::kSqlite:
        dest_url_ = dir_ + "/dest.db";
        Sql(ddl);
        sink_ = "{type: sqlite, config: {database_url: '" + dest_url_ + "', table_name: " + name_ +
                ", column_mapping: auto_map}}";
        break;
      case Dest::kMysql:
        dest_url_ = testing::RequireEnv("FAUCET_TEST_MYSQL_URL");
        Sql(ddl);
        sink_ = "{type: mysql, config: {connection_url: '" + dest_url_ + "', table_name: " +
                name_ + ", column_mapping: auto_map}}";
        break;
    }
  }

  // Runs SQL on the destination and returns its output (first column of the first row).
  std::string Sql(const std::string& sql) {
    testing::ProcessResult r;
    switch (GetParam()) {
      case Dest::kPostgres:
        return TestDb(dest_url_).Scalar(sql).value_or("");
      case Dest::kSqlite:
        r = testing::RunProcess({"/usr/bin/sqlite3", dest_url_, sql});
        break;
      case Dest::kMysql: {
        MysqlUrl m = ParseMysql(dest_url_);
        r = testing::RunProcess({"/usr/bin/mariadb", "-h", m.host, "-P", m.port, "-u", m.user,
                                 "-p" + m.password, "-N", "-B", m.db, "-e", sql});
        break;
      }
    }
    EXPECT_EQ(r.exit_code, 0) << sql << "\n" << r.output;
    while (!r.output.empty() && (r.output.back() == '\n' || r.output.back() == '\r')) {
      r.output.pop_back();
    }
    return r.output;
  }

  std::string Config(const std::string& delivery) {
    std::string path = dir_ + "/" + delivery + ".yaml";
    std::ofstream(path) << "version: 1\nname: " << name_ << "\ndelivery: " << delivery << "\n"
                        << "pipeline:\n  source: {type: postgres-cdc, config: {connection_url: '"
                        << src_.url() << "', slot_name: " << name_ << "_slot, publication_name: "
                        << name_ << "_pub, batch_size: 100, idle_timeout: 2, "
                        << "status_update_interval: 1}}\n"
                        << "  transforms: [{type: cdc_unwrap}]\n"
                        << "  sink: " << sink_ << "\n"
                        << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n";
    return path;
  }

  // Crashes right after the sink committed page `nth`, then resumes; returns "rows/distinct".
  std::string CrashAfterCommitThenResume(const std::string& delivery) {
    std::string config = Config(delivery);
    testing::ProcessResult crashed = testing::RunProcess(
        {FAUCET_BINARY, "run", config}, {{"FAUCET_CRASH_AT", "pipeline.after_write:3"}});
    EXPECT_EQ(crashed.exit_code, 86) << crashed.output;
    testing::ProcessResult resumed = testing::RunProcess({FAUCET_BINARY, "run", config});
    EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
    if (GetParam() == Dest::kMysql) {  // where || is OR
      return Sql("SELECT CONCAT(count(*), '/', count(DISTINCT id)) FROM " + name_);
    }
    return Sql("SELECT count(*) || '/' || count(DISTINCT id) FROM " + name_);
  }

  TestDb src_;
  std::unique_ptr<SlotGuard> guard_;
  std::string name_, dir_, dest_url_, sink_;
};

TEST_P(SqlExactlyOnce, CrashBetweenSinkCommitAndPersistLeavesNoDuplicateAndNoGap) {
  EXPECT_EQ(CrashAfterCommitThenResume("exactly_once"), "1000/1000");
}

TEST_P(SqlExactlyOnce, TheSameCrashDuplicatesAPageWithoutTheWatermark) {
  EXPECT_EQ(CrashAfterCommitThenResume("at_least_once"), "1100/1000");
}

INSTANTIATE_TEST_SUITE_P(Sinks, SqlExactlyOnce,
                         ::testing::Values(Dest::kPostgres, Dest::kSqlite, Dest::kMysql),
                         [](const auto& info) {
                           return std::string(info.param == Dest::kPostgres ? "postgres"
                                              : info.param == Dest::kSqlite ? "sqlite"
                                                                            : "mysql");
                         });

}  // namespace
}  // namespace faucet
