// `faucet mirror` from MariaDB, as a user runs it: a source table changing (inserts, updates,
// deletes, key changes, multi-row transactions) while the mirror snapshots it inside a
// consistent snapshot and then streams its binlog from exactly that snapshot's position, with
// SIGKILLs during the snapshot and during the stream; then a database's tables over one stream
// (mirror.tables). At the end each destination (Postgres, MariaDB, SQLite) equals the source
// by aggregates the databases compute themselves.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "clients/mysql/connection.h"
#include "core/crash_point.h"
#include "mirror/table_states.h"
#include "state/file_state_store.h"
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
    prefix_ = testing::UniqueName("mymirror");
    dir_ = testing::TempDir("mymirror");
    Result<mysql::ConnPtr> conn = mysql::Connect(endpoint_, "test");
    ASSERT_OK(conn);
    src_ = std::move(*conn);
    dest_ = std::make_unique<testing::SqlDestination>(GetParam(), prefix_, dir_);
  }
  void TearDown() override {
    mirror_.reset();
    StopWriter();
    for (const std::string& table : tables_) {
      Exec("DROP TABLE IF EXISTS " + table);
      if (GetParam() == SqlDest::kMysql) dest_->Query("DROP TABLE IF EXISTS " + table + "_d");
    }
  }

  void Exec(const std::string& sql) { EXPECT_OK(mysql::Exec(src_.get(), sql, sql)); }

  // A source table `table` of `rows` rows with primary key `key`, and its empty destination
  // table `table`_d. Changed by the writer when `written`.
  void CreateTable(const std::string& table, int rows, const std::string& key = "id",
                   bool written = true) {
    const std::string columns = "id BIGINT, v VARCHAR(100), n BIGINT NOT NULL, PRIMARY KEY (";
    Exec("CREATE TABLE " + table + " (" + columns + key + "))");
    Exec("INSERT INTO " + table + " SELECT seq, CONCAT('v', seq), seq FROM seq_1_to_" +
         std::to_string(rows));
    dest_->Query("CREATE TABLE " + table + "_d (" + columns + key + "))");
    tables_.push_back(table);
    if (written) written_.push_back(table);
    next_id_ = std::max<int64_t>(next_id_, rows + 1);
  }

  std::string ServerId() {
    return std::to_string(1000 + std::hash<std::string>()(testing::UniqueName("server_id")) %
                                     4'000'000'000u);
  }

  // The pipeline, streaming `streamed` (db.table names) and ending in `sink`, and its state.
  std::string PipelineYaml(const std::vector<std::string>& streamed, const std::string& sink) {
    std::string include;
    for (const std::string& t : streamed) {
      include += (include.empty() ? "" : ", ") + endpoint_.parts.database + "." + t;
    }
    return "version: 1\nname: " + prefix_ + "\npipeline:\n" +
           "  source: {type: mysql-cdc, config: {connection_url: '" + url_ +
           "', server_id: " + ServerId() + ", include_tables: [" + include +
           "], idle_timeout: 2}}\n" + "  transforms: [{type: cdc_unwrap}]\n" + "  sink: " + sink +
           "\n" + "  state: {type: file, config: {path: '" + dir_ + "/state'}}\n" +
           "  schema: {on_drift: " + on_drift_ + "}\n";
  }

  // One table (the first).
  void WriteConfig() {
    const std::string& table = tables_.front();
    config_ = dir_ + "/mirror.yaml";
    std::ofstream(config_) << PipelineYaml({table},
                                           dest_->SinkYaml(table + "_d",
                                                           ", column_mapping: auto_map, "
                                                           "write_mode: upsert, key: [id], "
                                                           "delete_marker: {field: __op, values: "
                                                           "[d]}"))
                           << "mirror: {mode: snapshot_then_cdc, continuous: true, snapshot: "
                              "{source: {type: mysql, config: {connection_url: '"
                           << url_ << "', query: 'SELECT * FROM " << table << "'}}}}\n";
  }

  // Every table (mirror.tables), each into its `_d` table; the stream carries `streamed`.
  void WriteTablesConfig(const std::vector<std::string>& streamed) {
    std::string include;
    for (const std::string& t : tables_) {
      include += (include.empty() ? "" : ", ") + endpoint_.parts.database + "." + t;
    }
    config_ = dir_ + "/mirror.yaml";
    std::ofstream(config_) << PipelineYaml(streamed,
                                           dest_->SinkYaml("unused",
                                                           ", column_mapping: auto_map, "
                                                           "delete_marker: {field: __op, values: "
                                                           "[d]}"))
                           << "mirror:\n  mode: snapshot_then_cdc\n  continuous: true\n"
                           << "  snapshot: {concurrency: 2, source: {type: mysql, config: "
                              "{connection_url: '"
                           << url_ << "', query: 'SELECT 1'}}}\n"
                           << "  tables: {include: [" << include
                           << "], destination: {table_name: '{table_name}_d'}}\n";
  }

  void StartMirror(const std::string& crash_at = "") {
    mirror_ = std::make_unique<testing::Process>(
        std::vector<std::string>{FAUCET_BINARY, "mirror", config_},
        std::map<std::string, std::string>{{"FAUCET_CRASH_AT", crash_at}});
  }
  testing::ProcessResult StopMirror(int sig) {
    mirror_->Kill(sig);
    testing::ProcessResult r = mirror_->Wait();
    mirror_.reset();
    return r;
  }

  // Once the writer made 100 more changes: SIGKILL, and start again.
  void KillAfterMoreChanges() {
    const int64_t before = changes_;
    ASSERT_TRUE(testing::WaitFor([&] { return changes_ > before + 100; }, 30s, "more changes"));
    StopMirror(SIGKILL);
    StartMirror();
  }

  // Changes the written tables until told to stop, on its own connection.
  void StartWriter() {
    writer_ = std::thread([this] {
      Result<mysql::ConnPtr> conn = mysql::Connect(endpoint_, "writer");
      ASSERT_OK(conn);
      MYSQL* c = conn->get();
      auto exec = [&](const std::string& sql) { EXPECT_OK(mysql::Exec(c, sql, sql)); };
      std::mt19937 rng(7);
      while (!writer_stop_) {
        const int64_t id = 1 + rng() % (next_id_ - 1);
        const std::string& t = written_[rng() % written_.size()];
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
  std::string SourceSummary(const std::string& table) {
    Result<mysql::Rows> rows = mysql::Fetch(src_.get(), SummarySql(table, true), "summary");
    EXPECT_OK(rows);
    return rows.ok() && !rows->empty() ? (*rows)[0][0].value_or("") : "";
  }
  std::string DestSummary(const std::string& table) {
    return dest_->Query(SummarySql(table + "_d", GetParam() == SqlDest::kMysql));
  }
  int64_t DestCount(const std::string& table) {
    const std::string n = dest_->Query("SELECT count(*) FROM " + table + "_d");
    return n.empty() ? 0 : std::stoll(n);
  }
  // Each table's destination equals its source, once the stream caught up.
  void ExpectConverges(const std::vector<std::string>& tables) {
    for (const std::string& table : tables) {
      const std::string want = SourceSummary(table);
      std::string got;
      EXPECT_TRUE(testing::WaitFor([&] { return (got = DestSummary(table)) == want; }, 60s,
                                   "the destination to equal the source", 500ms))
          << table << ": source " << want << ", destination " << got
          << " (count/sum id/sum n/sum id*len)";
    }
  }

  // The multi-table mirror's marker, by "db.table".
  std::map<std::string, mirror::TableState> MarkerTables() {
    FileStateStore state(PosixFileSystem(), dir_ + "/state");
    Result<std::optional<Json>> stored = state.Get(prefix_ + "::__replication__");
    if (!stored.ok() || !*stored) return {};
    Result<mirror::Marker> marker = mirror::Marker::FromJson(**stored, "marker");
    return marker.ok() ? marker->tables : std::map<std::string, mirror::TableState>{};
  }
  std::string Qualified(const std::string& table) const {
    return endpoint_.parts.database + "." + table;
  }

  std::string url_, prefix_, dir_, config_;
  // The destination tables are made like the source's, so a drift would be a false one: it
  // fails the pipeline.
  std::string on_drift_ = "fail";
  mysql::Endpoint endpoint_;
  mysql::ConnPtr src_;
  std::vector<std::string> tables_;   // created (and dropped at the end)
  std::vector<std::string> written_;  // changed by the writer
  std::unique_ptr<testing::SqlDestination> dest_;
  std::unique_ptr<testing::Process> mirror_;
  std::thread writer_;
  std::atomic<bool> writer_stop_{false};
  std::atomic<int64_t> next_id_{1};
  std::atomic<int64_t> changes_{0};
};

TEST_P(MysqlMirrorTest, SigkillsDuringTheSnapshotAndTheStreamLoseNothing) {
  const std::string table = prefix_;
  CreateTable(table, kRows);
  WriteConfig();
  StartWriter();
  StartMirror();
  // During the snapshot (SQLite and MariaDB show rows as they load; a Postgres COPY does not
  // until it commits, so there the kill may land before or after it).
  ASSERT_TRUE(
      testing::WaitFor([&] { return DestCount(table) > 0 || GetParam() == SqlDest::kPostgres; },
                       60s, "the snapshot to write rows"))
      << mirror_->Output();
  std::this_thread::sleep_for(200ms);
  StopMirror(SIGKILL);
  StartMirror();
  ASSERT_TRUE(testing::WaitFor([&] { return DestCount(table) >= kRows / 2; }, 60s,
                               "the snapshot to be written"))
      << mirror_->Output();
  // Then during the stream, twice.
  for (int i = 0; i < 2; ++i) ASSERT_NO_FATAL_FAILURE(KillAfterMoreChanges());
  std::this_thread::sleep_for(1s);
  StopWriter();
  ExpectConverges({table});
  EXPECT_GT(changes_.load(), 200);
}

// A database's tables over one binlog stream (mirror.tables): three tables (one keyed by two
// columns, so the writer's updates of n change keys) read one after another inside the one
// consistent snapshot while they change, a crash at a snapshot page, a SIGKILL mid-stream; a
// fourth table the mysql-cdc source does not stream is refused with the reason. Every
// destination table equals its source.
TEST_P(MysqlMirrorTest, ManyTablesOverOneStream) {
  const std::vector<std::string> streamed = {prefix_ + "_a", prefix_ + "_b", prefix_ + "_c"};
  CreateTable(streamed[0], 5000);
  CreateTable(streamed[1], 4000, "id, n");
  CreateTable(streamed[2], 3000);
  CreateTable(prefix_ + "_x", 10, "id", /*written=*/false);
  WriteTablesConfig(streamed);
  StartWriter();
  // 12 pages of 1000 rows in all: dies in the middle of the snapshots.
  StartMirror("mirror.table_snapshot_page:6");
  testing::ProcessResult crashed = mirror_->Wait();
  mirror_.reset();
  ASSERT_EQ(crashed.exit_code, kCrashExitCode) << crashed.output;

  StartMirror();
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        auto tables = MarkerTables();
        for (const std::string& t : streamed) {
          auto it = tables.find(Qualified(t));
          if (it == tables.end() || it->second.phase != mirror::TablePhase::kActive) return false;
        }
        return true;
      },
      90s, "every streamed table to be active"))
      << mirror_->Output();
  ASSERT_NO_FATAL_FAILURE(KillAfterMoreChanges());
  std::this_thread::sleep_for(1s);
  StopWriter();
  ExpectConverges(streamed);

  const mirror::TableState refused = MarkerTables()[Qualified(prefix_ + "_x")];
  EXPECT_EQ(refused.phase, mirror::TablePhase::kRefused);
  EXPECT_NE(refused.last_error.find("include_tables"), std::string::npos) << refused.last_error;
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A column added at the source while the mirror streams (on_drift: evolve) is added to the
// destination with a type that holds its values: BIGINT UNSIGNED's largest exactly, a
// VARCHAR(3)'s three characters (an emoji is one).
TEST_P(MysqlMirrorTest, AColumnAddedAtTheSourceIsAddedWhereItsValuesFit) {
  const std::string table = prefix_;
  CreateTable(table, 100, "id", /*written=*/false);
  on_drift_ = "evolve";
  WriteConfig();
  StartMirror();
  ASSERT_TRUE(testing::WaitFor([&] { return DestCount(table) == 100; }, 60s, "the snapshot"))
      << mirror_->Output();
  Exec("ALTER TABLE " + table + " ADD COLUMN big BIGINT UNSIGNED, ADD COLUMN code VARCHAR(3)");
  Exec("INSERT INTO " + table + " VALUES (101, 'v', 101, 18446744073709551615, 'é🙂x')");
  ASSERT_TRUE(testing::WaitFor([&] { return DestCount(table) == 101; }, 60s, "the new row"))
      << mirror_->Output();
  EXPECT_EQ(dest_->Query("SELECT big FROM " + table + "_d WHERE id = 101"), "18446744073709551615");
  EXPECT_EQ(dest_->Query("SELECT code FROM " + table + "_d WHERE id = 101"), "é🙂x");
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
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
