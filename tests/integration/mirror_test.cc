// `faucet mirror` end to end, as a user runs it: a real source table changing while the mirror
// snapshots and streams it, crashes and outages along the way, and at the end the destination
// compared with the source by aggregates the databases compute themselves.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "sources/postgres/pg_test_support.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using postgres::testing::SlotGuard;
using postgres::testing::TestDb;
using namespace std::chrono_literals;

// The mirror's marker (phase, snapshot_done, position) of the mirror of `config`.
std::string Marker(const std::string& config) {
  return testing::RunProcess({FAUCET_BINARY, "state", "get", config, "__replication__"}).output;
}

// Waits (at most 60 s) until the marker of the mirror of `config` says the snapshot is done.
::testing::AssertionResult WaitForSnapshotDone(const std::string& config) {
  ::testing::AssertionResult done = testing::WaitFor(
      [&] { return Marker(config).find("\"snapshot_done\":true") != std::string::npos; }, 60s,
      "the snapshot to finish");
  if (!done) done << "; the marker: " << Marker(config);
  return done;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// One row as text, computed by the database: the same expression on every side.
constexpr const char* kRowText =
    "id || ':' || coalesce(v, '~') || ':' || n || ':' || coalesce(length(big), -1) || ':' || "
    "coalesce(substr(big, 1, 40), '~') || ':' || coalesce(substr(big, length(big) - 39), '~')";

enum class Dest { kPostgres, kSqlite };

std::string DestName(Dest d) { return d == Dest::kPostgres ? "postgres" : "sqlite"; }

std::string SqliteAggregate(const std::string& path, const std::string& table) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "unreadable";
  }
  sqlite3_busy_timeout(db, 5000);
  std::string sql = "SELECT count(*) || '/' || coalesce(group_concat(r, ','), '') FROM (SELECT " +
                    std::string(kRowText) + " AS r FROM " + table + " ORDER BY id)";
  sqlite3_stmt* stmt = nullptr;
  std::string out = "error";
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class MirrorTest : public ::testing::TestWithParam<Dest> {
 protected:
  void SetUp() override {
    table_ = testing::UniqueName("mirror");
    dir_ = testing::TempDir("mirror");
    src_.Exec("CREATE TABLE " + table_ +
              " (id int8 PRIMARY KEY, v text, n int8 NOT NULL, big text)");
    src_.Exec("CREATE PUBLICATION " + table_ + "_pub FOR TABLE " + table_);
    slot_guard_ = std::make_unique<SlotGuard>(src_.url(), table_ + "_slot");
    std::string ddl = "CREATE TABLE " + table_ + " (id int8 PRIMARY KEY, v text, n int8, big text)";
    if (GetParam() == Dest::kPostgres) {
      src_.Exec("CREATE DATABASE " + table_);
      dest_url_ = src_.url().substr(0, src_.url().rfind('/') + 1) + table_;
      dest_ = std::make_unique<TestDb>(dest_url_);
      dest_->Exec(ddl);
    } else {
      sqlite_path_ = dir_ + "/dest.db";
      sqlite3* db = nullptr;
      sqlite3_open(sqlite_path_.c_str(), &db);
      sqlite3_exec(db, ddl.c_str(), nullptr, nullptr, nullptr);
      sqlite3_close(db);
    }
  }

  void TearDown() override {
    mirror_.reset();
    writer_stop_ = true;
    if (writer_.joinable()) writer_.join();
  }

  void Fill(int rows) {
    src_.Exec("INSERT INTO " + table_ +
              " SELECT g, 'v' || g, g, CASE WHEN g % 500 = 0 THEN "
              "(SELECT string_agg(md5(g::text || x::text), '') FROM generate_series(1, 400) x) "
              "END FROM generate_series(1, " +
              std::to_string(rows) + ") g");
    next_id_ = rows + 1;
  }

  std::string WriteConfig(bool continuous) {
    std::string sink;
    if (GetParam() == Dest::kPostgres) {
      sink = "{type: postgres, config: {connection_url: '" + dest_url_ +
             "', table_name: " + table_ +
             ", column_mapping: auto_map, write_mode: upsert, key: [id], " +
             "delete_marker: {field: __op, values: [d]}}}";
    } else {
      sink = "{type: sqlite, config: {database_url: '" + sqlite_path_ + "', table_name: " + table_ +
             ", column_mapping: auto_map, write_mode: upsert, key: [id], " +
             "delete_marker: {field: __op, values: [d]}}}";
    }
    config_ = dir_ + "/mirror.yaml";
    std::ofstream(config_) << "version: 1\nname: " << table_ << "\npipeline:\n"
                           << "  source: {type: postgres-cdc, config: {connection_url: '"
                           << src_.url() << "', slot_name: " << table_
                           << "_slot, publication_name: " << table_
                           << "_pub, idle_timeout: 2, status_update_interval: 1}}\n"
                           << "  transforms: [{type: cdc_unwrap}]\n"
                           << "  sink: " << sink << "\n"
                           << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n"
                           << "mirror:\n  mode: snapshot_then_cdc\n  continuous: "
                           << (continuous ? "true" : "false")
                           << "\n  snapshot: {source: {type: postgres, config: {connection_url: '"
                           << src_.url() << "', query: 'SELECT * FROM " << table_ << "'}}}\n";
    return config_;
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

  // Changes the source until told to stop: inserts (some in 100-row transactions), updates of
  // the small columns only (the TOAST value stays unchanged), updates that rewrite the TOAST
  // value, deletes, and primary-key changes.
  void StartWriter() {
    writer_ = std::thread([this] {
      TestDb db;
      std::mt19937 rng(42);
      while (!writer_stop_) {
        int64_t id = 1 + rng() % (next_id_ - 1);
        std::string t = table_;
        switch (rng() % 6) {
          case 0:
            db.Exec("INSERT INTO " + t + " SELECT g, 'new', g, NULL FROM generate_series(" +
                    std::to_string(next_id_) + ", " + std::to_string(next_id_ + 99) + ") g");
            next_id_ += 100;
            break;
          case 1:
            db.Exec("UPDATE " + t +
                    " SET n = n + 1, v = 'upd' WHERE id % 97 = " + std::to_string(id % 97));
            break;
          case 2:
            db.Exec("UPDATE " + t +
                    " SET big = (SELECT string_agg(md5(random()::text), '') "
                    "FROM generate_series(1, 400)) WHERE id = " +
                    std::to_string(id));
            break;
          case 3:
            db.Exec("DELETE FROM " + t + " WHERE id = " + std::to_string(id));
            break;
          case 4:
            db.Exec("UPDATE " + t + " SET id = " + std::to_string(next_id_++) +
                    " WHERE id = " + std::to_string(id));
            break;
          case 5:
            db.Exec("INSERT INTO " + t + " VALUES (" + std::to_string(next_id_++) +
                    ", 'single', 1, NULL)");
            break;
        }
        ++changes_;
        std::this_thread::sleep_for(5ms);  // paces the load
      }
    });
  }

  void StopWriter() {
    writer_stop_ = true;
    writer_.join();
  }

  std::string SourceAggregate() {
    return *src_.Scalar(
        "SELECT count(*) || '/' || coalesce(string_agg(r, ',' ORDER BY id), '') "
        "FROM (SELECT id, " +
        std::string(kRowText) + " AS r FROM " + table_ + ") s");
  }

  int64_t DestCount() {
    if (GetParam() == Dest::kPostgres) {
      return std::stoll(dest_->Scalar("SELECT count(*) FROM " + table_).value_or("0"));
    }
    sqlite3* db = nullptr;
    int64_t n = 0;
    if (sqlite3_open_v2(sqlite_path_.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* stmt = nullptr;
      std::string sql = "SELECT count(*) FROM " + table_;
      if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
          sqlite3_step(stmt) == SQLITE_ROW) {
        n = sqlite3_column_int64(stmt, 0);
      }
      sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return n;
  }

  // True once the snapshot's rows are reaching the destination: for Postgres, its COPY
  // (one transaction, invisible until it commits) has taken rows.
  bool SnapshotWriting() {
    if (GetParam() == Dest::kSqlite) return DestCount() > 0;
    return dest_->Scalar("SELECT count(*) FROM pg_stat_progress_copy WHERE datname = '" + table_ +
                         "' AND tuples_processed > 0") != "0";
  }

  std::string DestAggregate() {
    if (GetParam() == Dest::kSqlite) return SqliteAggregate(sqlite_path_, table_);
    return *dest_->Scalar(
        "SELECT count(*) || '/' || coalesce(string_agg(r, ',' ORDER BY id), '') "
        "FROM (SELECT id, " +
        std::string(kRowText) + " AS r FROM " + table_ + ") s");
  }

  // Waits until the destination equals the source; returns the seconds it took.
  double ExpectConverges(std::chrono::seconds limit = 60s) {
    auto start = std::chrono::steady_clock::now();
    std::string want = SourceAggregate();
    std::string got;
    // Every 500 ms: each comparison aggregates both whole tables.
    ::testing::AssertionResult converged =
        testing::WaitFor([&] { return (got = DestAggregate()) == want; }, limit,
                         "the " + DestName(GetParam()) + " destination to equal the source", 500ms);
    if (converged) {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    // Rows have no ',' in them: show the first one that differs.
    std::string first_diff;
    for (size_t i = 0, j = 0; i < want.size() && j < got.size();) {
      size_t wi = want.find(',', i), gj = got.find(',', j);
      std::string w = want.substr(i, wi - i), g = got.substr(j, gj - j);
      if (w != g) {
        first_diff = "source row '" + w + "' vs destination row '" + g + "'";
        break;
      }
      if (wi == std::string::npos || gj == std::string::npos) break;
      i = wi + 1;
      j = gj + 1;
    }
    ADD_FAILURE() << converged.message() << "; source " << want.substr(0, want.find('/'))
                  << " rows, destination " << got.substr(0, got.find('/')) << " rows; "
                  << first_diff;
    return -1;
  }

  // The slot's confirmed_flush_lsn: the last position the mirror's stream persisted and
  // acknowledged.
  Lsn SlotPosition() { return src_.ConfirmedFlush(table_ + "_slot").value_or(Lsn()); }

  // Waits until the running mirror's stream has persisted and acknowledged a page past where
  // the slot is now: it is streaming (again), under whatever load the writer makes.
  ::testing::AssertionResult WaitForStreamProgress() {
    const Lsn from = SlotPosition();
    return testing::WaitFor([&] { return SlotPosition() > from; }, 30s,
                            "the mirror's stream to move the slot past " + from.ToString());
  }

  // Waits until the running mirror has logged `n` more retries than it has now.
  ::testing::AssertionResult WaitForRetries(size_t n) {
    const size_t before = Count(mirror_->Output(), "retrying in");
    return testing::WaitFor([&] { return Count(mirror_->Output(), "retrying in") >= before + n; },
                            30s, std::to_string(n) + " more retries of the mirror");
  }

  testing::ProcessResult RunStatus() {
    return testing::RunProcess({FAUCET_BINARY, "mirror", "status", "--json", config_});
  }

  TestDb src_;
  std::unique_ptr<TestDb> dest_;
  std::unique_ptr<SlotGuard> slot_guard_;
  std::string table_, dir_, dest_url_, sqlite_path_, config_;
  std::unique_ptr<testing::Process> mirror_;
  std::thread writer_;
  std::atomic<bool> writer_stop_{false};
  std::atomic<int64_t> next_id_{1};
  std::atomic<int64_t> changes_{0};
};

TEST_P(MirrorTest, ConcurrentChangesDuringAndAfterTheSnapshotConverge) {
  Fill(40000);
  WriteConfig(/*continuous=*/true);
  StartWriter();
  StartMirror();
  ASSERT_TRUE(WaitForSnapshotDone(config_));
  ASSERT_TRUE(WaitForStreamProgress());
  StopWriter();
  double secs = ExpectConverges();
  std::printf("mirror(%s): %lld concurrent changes, converged %.1f s after the writer stopped\n",
              DestName(GetParam()).c_str(), static_cast<long long>(changes_.load()), secs);
  testing::ProcessResult status = RunStatus();
  EXPECT_NE(status.output.find("\"phase\": \"cdc\""), std::string::npos) << status.output;
  EXPECT_NE(status.output.find("\"snapshot_done\": true"), std::string::npos) << status.output;
  // SIGTERM flushes the in-flight page and exits 0.
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST_P(MirrorTest, SigkillDuringTheSnapshotAndDuringCdcLosesNothing) {
  Fill(300000);
  WriteConfig(/*continuous=*/true);
  StartWriter();
  StartMirror();
  // Inside the snapshot: the first pages have reached the destination, not all of them.
  ASSERT_TRUE(testing::WaitFor([&] { return SnapshotWriting(); }, 15s,
                               "the snapshot's rows to reach the destination"));
  if (GetParam() == Dest::kPostgres) {
    // One bulk load: its rows are not visible until the whole snapshot commits.
    EXPECT_EQ(DestCount(), 0);
  }
  StopMirror(SIGKILL);
  std::string marker = Marker(config_);
  EXPECT_NE(marker.find("\"snapshot_done\":false"), std::string::npos)
      << "killed after the snapshot, not during it: " << marker;
  StartMirror();  // redoes the snapshot from the same position
  // Once the redone snapshot is done and the stream has persisted a page under the writer's
  // load, the kill; then the restarted mirror streams again before the writer stops.
  ASSERT_TRUE(WaitForSnapshotDone(config_));
  ASSERT_TRUE(WaitForStreamProgress());
  StopMirror(SIGKILL);
  StartMirror();
  ASSERT_TRUE(WaitForStreamProgress());
  StopWriter();
  ExpectConverges();
  EXPECT_EQ(StopMirror(SIGTERM).exit_code, 0);
}

TEST_P(MirrorTest, OneShotMirrorDrainsAndExitsThenResumesWithoutSnapshot) {
  Fill(1000);
  WriteConfig(/*continuous=*/false);
  testing::ProcessResult first = testing::RunProcess({FAUCET_BINARY, "mirror", config_});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ExpectConverges(5s);
  src_.Exec("UPDATE " + table_ + " SET v = 'second run' WHERE id <= 10");
  src_.Exec("DELETE FROM " + table_ + " WHERE id BETWEEN 11 AND 20");
  testing::ProcessResult second = testing::RunProcess({FAUCET_BINARY, "mirror", config_});
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("snapshot done"), std::string::npos) << second.output;
  ExpectConverges(5s);
}

// A destination that refuses connections when the mirror starts fails the snapshot; under
// continuous: true the snapshot is retried with backoff and the mirror converges by itself.
// Instantiated for Postgres only: an embedded SQLite file has no server that could be down.
class MirrorToServerTest : public MirrorTest {};

TEST_P(MirrorToServerTest, SnapshotIsRetriedWhileTheDestinationIsDown) {
  Fill(5000);
  WriteConfig(/*continuous=*/true);
  src_.Exec("ALTER DATABASE " + table_ + " ALLOW_CONNECTIONS false");
  StartMirror();
  ASSERT_TRUE(WaitForRetries(1));  // the snapshot failed on the refused destination
  src_.Exec("ALTER DATABASE " + table_ + " ALLOW_CONNECTIONS true");
  ExpectConverges(60s);
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mirror snapshot phase failed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("retrying"), std::string::npos) << r.output;
}

TEST_P(MirrorTest, RecoversOnItsOwnFromReplicationAndDestinationOutages) {
  Fill(5000);
  WriteConfig(/*continuous=*/true);
  StartWriter();
  StartMirror();
  ASSERT_TRUE(WaitForSnapshotDone(config_));
  // The replication connection is killed twice, each time once it is streaming again.
  const std::string kill =
      "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
      "WHERE slot_name = '" +
      table_ + "_slot' AND active_pid IS NOT NULL";
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(testing::WaitFor([&] { return src_.Scalar(kill) == "t"; }, 60s,
                                 "the mirror's replication connection to be active"));
    ASSERT_TRUE(WaitForStreamProgress());
  }
  if (GetParam() == Dest::kPostgres) {
    // The destination refuses connections until the mirror has failed on it and retried.
    src_.Exec("ALTER DATABASE " + table_ + " ALLOW_CONNECTIONS false");
    src_.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + table_ +
              "' AND pid <> pg_backend_pid()");
    ASSERT_TRUE(WaitForRetries(2));
    src_.Exec("ALTER DATABASE " + table_ + " ALLOW_CONNECTIONS true");
    dest_ = std::make_unique<TestDb>(dest_url_);  // ours was terminated too
    ASSERT_TRUE(WaitForStreamProgress());
  }
  StopWriter();
  double secs = ExpectConverges(60s);
  std::printf("mirror(%s): recovered and converged %.1f s after the writer stopped\n",
              DestName(GetParam()).c_str(), secs);
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("retrying"), std::string::npos) << r.output;
}

// Table `t` (id int8 PRIMARY KEY, v text) in its own publication "<t>_pub", filled by `rows`.
void PublishTable(TestDb& src, const std::string& t, const std::string& rows) {
  src.Exec("CREATE TABLE " + t + " (id int8 PRIMARY KEY, v text)");
  src.Exec("CREATE PUBLICATION " + t + "_pub FOR TABLE " + t);
  src.Exec("INSERT INTO " + t + " " + rows);
}

// The config of a one-shot (continuous: false) mirror of table `t` of `src_url` through
// cdc_unwrap into `sink` (a flow mapping), its state under `dir`; returns its path.
std::string OneShotMirrorConfig(const std::string& src_url, const std::string& t,
                                const std::string& dir, const std::string& sink,
                                const std::string& query) {
  std::string config = dir + "/" + t + ".yaml";
  std::ofstream(config)
      << "name: " << t << "\npipeline:\n"
      << "  source: {type: postgres-cdc, config: {connection_url: '" << src_url
      << "', slot_name: " << t << "_slot, publication_name: " << t
      << "_pub, idle_timeout: 2, status_update_interval: 1}}\n"
      << "  transforms: [{type: cdc_unwrap}]\n"
      << "  sink: " << sink << "\n"
      << "  state: {type: file, config: {path: '" << dir << "/state'}}\n"
      << "mirror: {mode: snapshot_then_cdc, continuous: false, snapshot: {source: {type: "
      << "postgres, config: {connection_url: '" << src_url << "', query: '" << query << "'}}}}\n";
  return config;
}

// A snapshot row the destination refuses fails the fast bulk load; the snapshot is then redone
// page by page, which names the row's key and column, and nothing is committed past it.
TEST(MirrorBulk, ARefusedSnapshotRowIsNamedByKeyAndColumn) {
  TestDb src;
  std::string t = testing::UniqueName("refuse");
  std::string dir = testing::TempDir("refuse");
  PublishTable(src, t,
               "SELECT g, CASE WHEN g = 4321 THEN repeat('x', 20) ELSE 'ok' END "
               "FROM generate_series(1, 10000) g");
  SlotGuard guard(src.url(), t + "_slot");
  src.Exec("CREATE DATABASE " + t);
  std::string dest_url = src.url().substr(0, src.url().rfind('/') + 1) + t;
  TestDb dest(dest_url);
  dest.Exec("CREATE TABLE " + t + " (id int8 PRIMARY KEY, v varchar(10))");
  std::string config = OneShotMirrorConfig(
      src.url(), t, dir,
      "{type: postgres, config: {connection_url: '" + dest_url + "', table_name: " + t +
          ", column_mapping: auto_map, write_mode: upsert, key: [id]}}",
      "SELECT * FROM " + t + " ORDER BY id");
  testing::ProcessResult r = testing::RunProcess({FAUCET_BINARY, "mirror", config});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("redoing it page by page"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("key (id)=(4321)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("column v"), std::string::npos) << r.output;
  // Pages before the refused row's page were committed by the redo; none after it.
  EXPECT_EQ(dest.Scalar("SELECT count(*) FROM " + t + " WHERE id > 5000"), "0");
}

// A fresh bootstrap reads the table inside the snapshot the slot was exported with, so the
// snapshot and the stream do not overlap: with an append sink (jsonl) every row inserted while
// the snapshot runs is written exactly once. A slot that already exists has no such snapshot:
// the overlap is then real, and only an upsert sink hides it.
TEST(MirrorExactCut, RowsInsertedDuringTheSnapshotAppearExactlyOnceInAnAppendSink) {
  TestDb src;
  std::string t = testing::UniqueName("cut");
  std::string dir = testing::TempDir("cut");
  PublishTable(src, t, "SELECT g, repeat('x', 200) FROM generate_series(1, 300000) g");
  SlotGuard guard(src.url(), t + "_slot");
  std::string config = OneShotMirrorConfig(src.url(), t, dir,
                                           "{type: jsonl, config: {path: '" + dir + "/out.jsonl'}}",
                                           "SELECT * FROM " + t);
  std::atomic<bool> stop{false};
  std::atomic<int> inserted{0};
  std::thread writer([&] {
    TestDb db;
    for (int id = 300001; !stop; ++id) {
      db.Exec("INSERT INTO " + t + " VALUES (" + std::to_string(id) + ", 'during')");
      ++inserted;
    }
  });
  testing::ProcessResult r;
  {
    testing::Process mirror({FAUCET_BINARY, "mirror", config}, {});
    EXPECT_TRUE(WaitForSnapshotDone(config));  // the writer inserted all through it
    stop = true;
    writer.join();
    r = mirror.Wait();
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("reading inside snapshot"), std::string::npos) << r.output;
  std::map<int64_t, int> seen;
  std::ifstream in(dir + "/out.jsonl");
  std::string line;
  size_t lines = 0;
  while (std::getline(in, line)) {
    size_t p = line.find("\"id\":");
    ASSERT_NE(p, std::string::npos) << line;
    ++seen[std::stoll(line.substr(p + 5))];
    ++lines;
  }
  EXPECT_EQ(seen.size(), 300000u + inserted.load());
  EXPECT_EQ(lines, seen.size()) << "rows written twice: the snapshot overlapped the stream";
  std::printf("exact cut: %d rows inserted during the snapshot, each written once\n",
              inserted.load());
}

INSTANTIATE_TEST_SUITE_P(Dest, MirrorTest, ::testing::Values(Dest::kPostgres, Dest::kSqlite),
                         [](const auto& info) { return DestName(info.param); });
INSTANTIATE_TEST_SUITE_P(Dest, MirrorToServerTest, ::testing::Values(Dest::kPostgres),
                         [](const auto& info) { return DestName(info.param); });

}  // namespace
}  // namespace faucet
