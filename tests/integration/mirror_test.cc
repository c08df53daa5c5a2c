// `faucet mirror` end to end, as a user runs it: a real source table changing while the mirror
// snapshots and streams it, crashes and outages along the way, and at the end the destination
// compared with the source by aggregates the databases compute themselves.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "sources/postgres/pg_test_support.h"
#include "state/file_state_store.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/sql_destination.h"
#include "testing/status_matchers.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using postgres::testing::CdcTable;
using postgres::testing::TestDb;
using testing::SqlDest;
using namespace std::chrono_literals;

// The phase marker (phase, snapshot_done, position) of mirror `name`, whose config MirrorConfig
// wrote under `dir`, as compact JSON ("" before there is one), read from its state files.
std::string Marker(const std::string& dir, const std::string& name) {
  FileStateStore state(PosixFileSystem(), dir + "/state");
  Result<std::optional<Json>> marker = state.Get(name + "::__replication__");
  EXPECT_OK(marker);
  return marker.ok() && *marker ? (*marker)->dump() : "";
}

// Waits (at most 60 s) until the marker of mirror `name` under `dir` says the snapshot is done.
::testing::AssertionResult WaitForSnapshotDone(const std::string& dir, const std::string& name) {
  ::testing::AssertionResult done = testing::WaitFor(
      [&] { return Marker(dir, name).find("\"snapshot_done\":true") != std::string::npos; }, 60s,
      "the snapshot to finish");
  if (!done) done << "; the marker: " << Marker(dir, name);
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

// The config of a mirror of `table` of `src_url` (its snapshot read by `query`) through
// cdc_unwrap into `sink` (a flow mapping), its state under `dir`; returns its path.
std::string MirrorConfig(const std::string& src_url, const CdcTable& table, const std::string& dir,
                         const std::string& sink, const std::string& query, bool continuous) {
  std::string config = dir + "/" + table.name() + ".yaml";
  std::ofstream(config) << "version: 1\nname: " << table.name() << "\npipeline:\n"
                        << "  source: " << table.SourceYaml() << "\n"
                        << "  transforms: [{type: cdc_unwrap}]\n"
                        << "  sink: " << sink << "\n"
                        << "  state: {type: file, config: {path: '" << dir << "/state'}}\n"
                        << "mirror: {mode: snapshot_then_cdc, continuous: "
                        << (continuous ? "true" : "false")
                        << ", snapshot: {source: {type: postgres, config: {connection_url: '"
                        << src_url << "', query: '" << query << "'}}}}\n";
  return config;
}

class MirrorTest : public ::testing::TestWithParam<SqlDest> {
 protected:
  void SetUp() override {
    table_ = testing::UniqueName("mirror");
    dir_ = testing::TempDir("mirror");
    cdc_ = std::make_unique<CdcTable>(src_, table_,
                                      "id int8 PRIMARY KEY, v text, n int8 NOT NULL, big text");
    dest_ = std::make_unique<testing::SqlDestination>(GetParam(), table_, dir_);
    dest_->Query("CREATE TABLE " + table_ + " (id int8 PRIMARY KEY, v text, n int8, big text)");
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
    config_ = MirrorConfig(src_.url(), *cdc_, dir_,
                           dest_->SinkYaml(table_,
                                           ", column_mapping: auto_map, write_mode: upsert, "
                                           "key: [id], delete_marker: {field: __op, values: [d]}"),
                           "SELECT * FROM " + table_, continuous);
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
        // Paces the load, slower for an instrumented build: it applies several times slower,
        // and a backlog it cannot work off before the deadline proves nothing.
        std::this_thread::sleep_for(5ms * testing::TimeScale());
      }
    });
  }

  void StopWriter() {
    writer_stop_ = true;
    writer_.join();
  }

  // "<count>/<row>,<row>,..." of the table, ordered by id, computed by the database holding it.
  std::string AggregateSql(SqlDest dest) const {
    if (dest == SqlDest::kSqlite) {
      return "SELECT count(*) || '/' || coalesce(group_concat(r, ','), '') FROM (SELECT " +
             std::string(kRowText) + " AS r FROM " + table_ + " ORDER BY id)";
    }
    return "SELECT count(*) || '/' || coalesce(string_agg(r, ',' ORDER BY id), '') "
           "FROM (SELECT id, " +
           std::string(kRowText) + " AS r FROM " + table_ + ") s";
  }
  std::string SourceAggregate() { return *src_.Scalar(AggregateSql(SqlDest::kPostgres)); }
  std::string DestAggregate() { return dest_->Query(AggregateSql(GetParam())); }

  int64_t DestCount() { return std::stoll(dest_->Query("SELECT count(*) FROM " + table_)); }

  // True once the snapshot's rows are reaching the destination: for Postgres, its COPY
  // (one transaction, invisible until it commits) has taken rows.
  bool SnapshotWriting() {
    if (GetParam() == SqlDest::kSqlite) {
      // When the mirror holds one connection to the file, the snapshot is one bulk transaction
      // whose rows show only at its end: there, its WAL past 1 MiB while the marker says the
      // snapshot is not done.
      std::error_code error;
      const uintmax_t wal = std::filesystem::file_size(dest_->url() + "-wal", error);
      return DestCount() > 0 ||
             (!error && wal > (1u << 20) &&
              Marker(dir_, table_).find("\"snapshot_done\":false") != std::string::npos);
    }
    return dest_->Query("SELECT count(*) FROM pg_stat_progress_copy WHERE datname = '" + table_ +
                        "' AND tuples_processed > 0") != "0";
  }

  // Waits until the destination equals the source; returns the seconds it took.
  double ExpectConverges(std::chrono::seconds limit = 60s) {
    auto start = std::chrono::steady_clock::now();
    std::string want = SourceAggregate();
    std::string got;
    // Every 500 ms: each comparison aggregates both whole tables.
    ::testing::AssertionResult converged = testing::WaitFor(
        [&] { return (got = DestAggregate()) == want; }, limit,
        "the " + testing::SqlDestName(GetParam()) + " destination to equal the source", 500ms);
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
  Lsn SlotPosition() { return src_.ConfirmedFlush(cdc_->slot()).value_or(Lsn()); }

  // Waits until the running mirror's stream has persisted and acknowledged everything written
  // to the source until now: it is streaming (again), under whatever load the writer makes.
  ::testing::AssertionResult WaitForStreamCatchUp() {
    const Lsn now = src_.CurrentWal();
    return testing::WaitFor([&] { return SlotPosition() >= now; }, 30s,
                            "the mirror's stream to move the slot to " + now.ToString());
  }

  // Waits until the running mirror's stream has persisted and acknowledged a position beyond
  // the slot's position now: it is streaming (again), not necessarily caught up. For a mirror
  // started afresh or after a SIGKILL (a failed cycle's final status update also moves the
  // slot: after an outage, WaitForStreamCatchUp).
  ::testing::AssertionResult WaitForStreamProgress() {
    const Lsn before = SlotPosition();
    return testing::WaitFor([&] { return SlotPosition() > before; }, 30s,
                            "the mirror's stream to move the slot past " + before.ToString());
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
  std::unique_ptr<CdcTable> cdc_;
  std::unique_ptr<testing::SqlDestination> dest_;
  std::string table_, dir_, config_;
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
  ASSERT_TRUE(WaitForSnapshotDone(dir_, table_));
  ASSERT_TRUE(WaitForStreamCatchUp());
  StopWriter();
  double secs = ExpectConverges();
  std::printf("mirror(%s): %lld concurrent changes, converged %.1f s after the writer stopped\n",
              testing::SqlDestName(GetParam()).c_str(), static_cast<long long>(changes_.load()),
              secs);
  testing::ProcessResult status = RunStatus();
  EXPECT_NE(status.output.find("\"phase\": \"cdc\""), std::string::npos) << status.output;
  // A second process running the same mirror is refused while this one runs.
  testing::ProcessResult second = testing::RunProcess({FAUCET_BINARY, "mirror", config_});
  EXPECT_NE(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("::__lease__ is held by another process"), std::string::npos)
      << second.output;
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
  if (GetParam() == SqlDest::kPostgres) {
    // One bulk load: its rows are not visible until the whole snapshot commits.
    EXPECT_EQ(DestCount(), 0);
  }
  StopMirror(SIGKILL);
  std::string marker = Marker(dir_, table_);
  EXPECT_NE(marker.find("\"snapshot_done\":false"), std::string::npos)
      << "killed after the snapshot, not during it: " << marker;
  StartMirror();  // redoes the snapshot from the same position
  // Once the redone snapshot is done and the stream has persisted a page under the writers'
  // load, the kill; then the restarted mirror streams again before the writers stop. Progress,
  // not catching up: under two unthrottled writers an instrumented build may stay behind until
  // they stop (ExpectConverges then waits for it).
  ASSERT_TRUE(WaitForSnapshotDone(dir_, table_));
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

  // A CDC bookmark moved behind the captured position (by hand) is refused, not streamed from.
  FileStateStore state(PosixFileSystem(), dir_ + "/state");
  ASSERT_OK(state.Put(table_ + "::cdc", Json{{"last_lsn", "0/1"}}));
  testing::ProcessResult third = testing::RunProcess({FAUCET_BINARY, "mirror", config_});
  EXPECT_NE(third.exit_code, 0) << third.output;
  EXPECT_NE(third.output.find("is before the position the mirror captured"), std::string::npos)
      << third.output;
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
  ASSERT_TRUE(WaitForSnapshotDone(dir_, table_));
  // The replication connection is killed twice, each time once it is streaming again.
  const std::string kill =
      "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
      "WHERE slot_name = '" +
      cdc_->slot() + "' AND active_pid IS NOT NULL";
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(testing::WaitFor([&] { return src_.Scalar(kill) == "t"; }, 60s,
                                 "the mirror's replication connection to be active"));
    ASSERT_TRUE(WaitForStreamCatchUp());
  }
  if (GetParam() == SqlDest::kPostgres) {
    // The destination refuses connections until the mirror has failed on it and retried.
    src_.Exec("ALTER DATABASE " + table_ + " ALLOW_CONNECTIONS false");
    src_.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + table_ +
              "' AND pid <> pg_backend_pid()");
    ASSERT_TRUE(WaitForRetries(2));
    src_.Exec("ALTER DATABASE " + table_ + " ALLOW_CONNECTIONS true");
    ASSERT_TRUE(WaitForStreamCatchUp());
  }
  StopWriter();
  double secs = ExpectConverges(60s);
  std::printf("mirror(%s): recovered and converged %.1f s after the writer stopped\n",
              testing::SqlDestName(GetParam()).c_str(), secs);
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("retrying"), std::string::npos) << r.output;
}

// A snapshot row the destination refuses fails the fast bulk load; the snapshot is then redone
// page by page, which names the row's key and column, and nothing is committed past it.
TEST(MirrorBulk, ARefusedSnapshotRowIsNamedByKeyAndColumn) {
  TestDb src;
  std::string t = testing::UniqueName("refuse");
  std::string dir = testing::TempDir("refuse");
  CdcTable table(src, t, "id int8 PRIMARY KEY, v text");
  src.Exec("INSERT INTO " + t +
           " SELECT g, CASE WHEN g = 4321 THEN repeat('x', 20) ELSE 'ok' END "
           "FROM generate_series(1, 10000) g");
  testing::SqlDestination dest(SqlDest::kPostgres, t, dir);
  dest.Query("CREATE TABLE " + t + " (id int8 PRIMARY KEY, v varchar(10))");
  std::string config =
      MirrorConfig(src.url(), table, dir,
                   dest.SinkYaml(t, ", column_mapping: auto_map, write_mode: upsert, key: [id]"),
                   "SELECT * FROM " + t + " ORDER BY id", /*continuous=*/false);
  testing::ProcessResult r = testing::RunProcess({FAUCET_BINARY, "mirror", config});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("redoing it page by page"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("key (id)=(4321)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("column v"), std::string::npos) << r.output;
  // Pages before the refused row's page were committed by the redo; none after it.
  EXPECT_EQ(dest.Query("SELECT count(*) FROM " + t + " WHERE id > 5000"), "0");
}

// A fresh bootstrap reads the table inside the snapshot the slot was exported with, so the
// snapshot and the stream do not overlap: with an append sink (jsonl) every row inserted while
// the snapshot runs is written exactly once. A slot that already exists has no such snapshot:
// the overlap is then real, and only an upsert sink hides it.
TEST(MirrorExactCut, RowsInsertedDuringTheSnapshotAppearExactlyOnceInAnAppendSink) {
  TestDb src;
  std::string t = testing::UniqueName("cut");
  std::string dir = testing::TempDir("cut");
  CdcTable table(src, t, "id int8 PRIMARY KEY, v text");
  src.Exec("INSERT INTO " + t + " SELECT g, repeat('x', 200) FROM generate_series(1, 300000) g");
  std::string config =
      MirrorConfig(src.url(), table, dir, "{type: jsonl, config: {path: '" + dir + "/out.jsonl'}}",
                   "SELECT * FROM " + t, /*continuous=*/false);
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
    EXPECT_TRUE(WaitForSnapshotDone(dir, t));  // the writer inserted all through it
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

INSTANTIATE_TEST_SUITE_P(Dest, MirrorTest, ::testing::Values(SqlDest::kPostgres, SqlDest::kSqlite),
                         [](const auto& info) { return testing::SqlDestName(info.param); });
INSTANTIATE_TEST_SUITE_P(Dest, MirrorToServerTest, ::testing::Values(SqlDest::kPostgres),
                         [](const auto& info) { return testing::SqlDestName(info.param); });

}  // namespace
}  // namespace faucet
