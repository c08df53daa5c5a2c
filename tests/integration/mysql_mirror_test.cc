// `faucet mirror` from MariaDB, as a user runs it: a source table changing (inserts, updates,
// deletes, key changes, multi-row transactions) while the mirror snapshots it inside a
// consistent snapshot and then streams its binlog from exactly that snapshot's position, with
// SIGKILLs during the snapshot and during the stream; at the end each destination (Postgres,
// MariaDB, SQLite) equals the source by aggregates the databases compute themselves.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <random>
#include <thread>

#include "clients/mysql/connection.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/sql_destination.h"
#include "testing/status_matchers.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using namespace std::chrono_literals;
using testing::SqlDest;

constexpr int kRows = 20000;

class MysqlMirrorTest : public ::testing::TestWithParam<SqlDest> {
 protected:
  void SetUp() override {
    url_ = testing::RequireEnv("FAUCET_TEST_MYSQL_URL");
    Result<MysqlUrl> parts = ParseMysqlUrl(url_);
    ASSERT_OK(parts);
    endpoint_ = {url_, *parts, {}};
    table_ = testing::UniqueName("mymirror");
    dest_table_ = table_ + "_d";
    dir_ = testing::TempDir("mymirror");
    Result<mysql::ConnPtr> conn = mysql::Connect(endpoint_, "test");
    ASSERT_OK(conn);
    src_ = std::move(*conn);
    Exec("CREATE TABLE " + table_ + " (id BIGINT PRIMARY KEY, v VARCHAR(100), n BIGINT NOT NULL)");
    Exec("INSERT INTO " + table_ + " SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_" +
         std::to_string(kRows));
    next_id_ = kRows + 1;
    dest_ = std::make_unique<testing::SqlDestination>(GetParam(), table_, dir_);
    dest_->Query("CREATE TABLE " + dest_table_ +
                 " (id BIGINT PRIMARY KEY, v VARCHAR(100), n BIGINT)");
    WriteConfig();
  }
  void TearDown() override {
    mirror_.reset();
    StopWriter();
    Exec("DROP TABLE IF EXISTS " + table_);
    if (GetParam() == SqlDest::kMysql) dest_->Query("DROP TABLE IF EXISTS " + dest_table_);
  }

  void Exec(const std::string& sql) { EXPECT_OK(mysql::Exec(src_.get(), sql, sql)); }

  void WriteConfig() {
    const uint32_t server_id =
        1000 + std::hash<std::string>()(testing::UniqueName("server_id")) % 4'000'000'000u;
    config_ = dir_ + "/mirror.yaml";
    std::ofstream(config_)
        << "version: 1\nname: " << table_ << "\npipeline:\n"
        << "  source: {type: mysql-cdc, config: {connection_url: '" << url_
        << "', server_id: " << server_id << ", include_tables: [" << endpoint_.parts.database << "."
        << table_ << "], idle_timeout: 2}}\n"
        << "  transforms: [{type: cdc_unwrap}]\n"
        << "  sink: "
        << dest_->SinkYaml(dest_table_,
                           ", column_mapping: auto_map, write_mode: upsert, key: [id], "
                           "delete_marker: {field: __op, values: [d]}")
        << "\n"
        << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n"
        << "mirror: {mode: snapshot_then_cdc, continuous: true, snapshot: {source: {type: "
           "mysql, config: {connection_url: '"
        << url_ << "', query: 'SELECT * FROM " << table_ << "'}}}}\n";
  }

  void StartMirror() {
    mirror_ = std::make_unique<testing::Process>(
        std::vector<std::string>{FAUCET_BINARY, "mirror", config_},
        std::map<std::string, std::string>{});
  }
  testing::ProcessResult StopMirror(int sig) {
    mirror_->Kill(sig);
    testing::ProcessResult r = mirror_->Wait();
    mirror_.reset();
    return r;
  }

  // Changes the source until told to stop, on its own connection.
  void StartWriter() {
    writer_ = std::thread([this] {
      Result<mysql::ConnPtr> conn = mysql::Connect(endpoint_, "writer");
      ASSERT_OK(conn);
      MYSQL* c = conn->get();
      auto exec = [&](const std::string& sql) { EXPECT_OK(mysql::Exec(c, sql, sql)); };
      std::mt19937 rng(7);
      while (!writer_stop_) {
        const int64_t id = 1 + rng() % (next_id_ - 1);
        const std::string t = table_;
        switch (rng() % 6) {
          case 0:  // a 100-row transaction
            exec("INSERT INTO " + t + " SELECT seq, 'new', seq FROM seq_" +
                 std::to_string(next_id_) + "_to_" + std::to_string(next_id_ + 99));
            next_id_ += 100;
            break;
          case 1:
            exec("UPDATE " + t +
                 " SET n = n + 1, v = 'upd' WHERE id % 97 = " + std::to_string(id % 97));
            break;
          case 2:
            exec("BEGIN");
            exec("UPDATE " + t + " SET v = CONCAT(v, '+') WHERE id = " + std::to_string(id));
            exec("DELETE FROM " + t + " WHERE id = " + std::to_string(id + 1));
            exec("COMMIT");
            break;
          case 3:
            exec("DELETE FROM " + t + " WHERE id = " + std::to_string(id));
            break;
          case 4:  // a key change
            exec("UPDATE IGNORE " + t + " SET id = " + std::to_string(next_id_++) +
                 " WHERE id = " + std::to_string(id));
            break;
          case 5:
            exec("INSERT INTO " + t + " VALUES (" + std::to_string(next_id_++) + ", 'one', 1)");
            break;
        }
        ++changes_;
        std::this_thread::sleep_for(5ms);
      }
    });
  }
  void StopWriter() {
    writer_stop_ = true;
    if (writer_.joinable()) writer_.join();
  }

  // count/sum(id)/sum(n)/sum(id * length(v)): any lost, doubled or stale row changes it.
  static std::string SummarySql(const std::string& table, bool mysql_dialect) {
    const std::string parts[] = {"count(*)", "coalesce(sum(id), 0)", "coalesce(sum(n), 0)",
                                 "coalesce(sum(id * length(v)), 0)"};
    std::string sql;
    for (const std::string& part : parts) {
      if (!sql.empty()) sql += mysql_dialect ? ", '/', " : " || '/' || ";
      sql += part;
    }
    return "SELECT " + (mysql_dialect ? "CONCAT(" + sql + ")" : sql) + " FROM " + table;
  }
  std::string SourceSummary() {
    Result<mysql::Rows> rows = mysql::Fetch(src_.get(), SummarySql(table_, true), "summary");
    EXPECT_OK(rows);
    return rows.ok() && !rows->empty() ? (*rows)[0][0].value_or("") : "";
  }
  std::string DestSummary() {
    return dest_->Query(SummarySql(dest_table_, GetParam() == SqlDest::kMysql));
  }
  int64_t DestCount() {
    const std::string n = dest_->Query("SELECT count(*) FROM " + dest_table_);
    return n.empty() ? 0 : std::stoll(n);
  }

  std::string url_, table_, dest_table_, dir_, config_;
  mysql::Endpoint endpoint_;
  mysql::ConnPtr src_;
  std::unique_ptr<testing::SqlDestination> dest_;
  std::unique_ptr<testing::Process> mirror_;
  std::thread writer_;
  std::atomic<bool> writer_stop_{false};
  std::atomic<int64_t> next_id_{1};
  std::atomic<int64_t> changes_{0};
};

TEST_P(MysqlMirrorTest, SigkillsDuringTheSnapshotAndTheStreamLoseNothing) {
  StartWriter();
  StartMirror();
  // During the snapshot (SQLite and MariaDB show rows as they load; a Postgres COPY does not
  // until it commits, so there the kill may land before or after it).
  ASSERT_TRUE(testing::WaitFor([&] { return DestCount() > 0 || GetParam() == SqlDest::kPostgres; },
                               60s, "the snapshot to write rows"));
  std::this_thread::sleep_for(200ms);
  StopMirror(SIGKILL);
  StartMirror();
  ASSERT_TRUE(testing::WaitFor([&] { return DestCount() >= kRows / 2; }, 60s,
                               "the snapshot to be written"));
  // Then during the stream, twice.
  for (int i = 0; i < 2; ++i) {
    const int64_t before = changes_;
    ASSERT_TRUE(testing::WaitFor([&] { return changes_ > before + 100; }, 30s, "more changes"));
    StopMirror(SIGKILL);
    StartMirror();
  }
  std::this_thread::sleep_for(1s);
  StopWriter();
  const std::string want = SourceSummary();
  std::string got;
  EXPECT_TRUE(testing::WaitFor([&] { return (got = DestSummary()) == want; }, 60s,
                               "the destination to equal the source", 500ms))
      << "source " << want << ", destination " << got << " (count/sum id/sum n/sum id*len)";
  EXPECT_GT(changes_.load(), 200);
}

// The reference system's mysql_cdc_to_jsonl.yaml, its keys unchanged (only the URL and the
// paths are this machine's): validated, then run while rows are inserted.
TEST(MysqlCli, TheReferenceExampleRuns) {
  const std::string url = testing::RequireEnv("FAUCET_TEST_MYSQL_URL");
  Result<MysqlUrl> parts = ParseMysqlUrl(url);
  ASSERT_OK(parts);
  Result<mysql::ConnPtr> conn = mysql::Connect({url, *parts, {}}, "test");
  ASSERT_OK(conn);
  const std::string table = testing::UniqueName("refex");
  auto exec = [&](const std::string& sql) { EXPECT_OK(mysql::Exec(conn->get(), sql, sql)); };
  exec("CREATE TABLE " + table + " (id INT PRIMARY KEY, note VARCHAR(20))");
  const std::string dir = testing::TempDir("refex");
  const uint32_t server_id =
      1000 + std::hash<std::string>()(testing::UniqueName("server_id")) % 4'000'000'000u;
  const std::string config = dir + "/mysql_cdc_to_jsonl.yaml";
  std::ofstream(config) << "version: 1\nname: mysql-cdc-to-jsonl\npipeline:\n  source:\n"
                        << "    type: mysql-cdc\n    config:\n      connection_url: \"" << url
                        << "\"\n      server_id: " << server_id
                        << "\n      start_position:\n        type: current\n"
                        << "      include_columns: true\n      idle_timeout: 30\n"
                        << "      batch_size: 1000\n  sink:\n    type: file\n    config:\n"
                        << "      path: " << dir << "/out/mysql_cdc.jsonl\n  state:\n"
                        << "    type: file\n    config:\n      path: " << dir
                        << "/state/mysql_cdc.json\n";
  testing::ProcessResult validated = testing::RunProcess({FAUCET_BINARY, "validate", config});
  EXPECT_EQ(validated.exit_code, 0) << validated.output;
  EXPECT_NE(validated.output.find("delivery: at-least-once"), std::string::npos)
      << validated.output;
  EXPECT_EQ(validated.output.find("unknown key"), std::string::npos) << validated.output;

  testing::Process run({FAUCET_BINARY, "run", config}, {});
  // Rows until some reach the file (the source starts at the binlog's end when it opens).
  int next = 1;
  std::string lines;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        exec("INSERT INTO " + table + " VALUES (" + std::to_string(next++) + ", 'x')");
        std::ifstream in(dir + "/out/mysql_cdc.jsonl");
        lines.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        return !lines.empty();
      },
      30s, "changes in the jsonl file", 200ms));
  run.Kill(SIGTERM);
  testing::ProcessResult r = run.Wait();
  EXPECT_EQ(r.exit_code, 0) << r.output;
  exec("DROP TABLE " + table);
  EXPECT_NE(lines.find(R"("op":"c","schema":")" + parts->database + R"(","table":")" + table +
                       R"(","lsn":{"file":")"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find(R"("after":{"id":)"), std::string::npos) << lines;
}

INSTANTIATE_TEST_SUITE_P(Destinations, MysqlMirrorTest,
                         ::testing::Values(SqlDest::kPostgres, SqlDest::kMysql, SqlDest::kSqlite),
                         [](const auto& info) { return testing::SqlDestName(info.param); });

}  // namespace
}  // namespace faucet
