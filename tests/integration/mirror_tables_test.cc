// `faucet mirror` of a whole schema (`mirror.tables`) end to end, against real servers: 20
// tables (a partitioned one, one without a key, a uuid-keyed one, a composite key, TOAST-sized
// values) changing under concurrent writes while one mirror snapshots and streams them over
// ONE slot; crashes (SIGKILL) during the snapshots and the stream; tables created and dropped
// while it runs; a destination table that fails and is repaired while the others stream. At
// the end every destination table is compared with its source table by aggregates the
// databases compute themselves.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "core/crash_point.h"
#include "core/pipeline.h"
#include "mirror/table_states.h"
#include "sources/postgres/pg_test_support.h"
#include "state/file_state_store.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/sql_destination.h"
#include "testing/status_matchers.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using postgres::testing::SlotGuard;
using postgres::testing::TestDb;
using testing::SqlDest;
using namespace std::chrono_literals;

// A table of the test schema: its columns and key, and how a row reads as text (the same
// expression on every side; no ',' in it).
struct TableDef {
  std::string name;
  std::string columns;  // for CREATE TABLE at the source
  std::string dest_columns;
  std::string row_text;
};

std::vector<TableDef> Tables() {
  std::vector<TableDef> defs;
  const std::string plain = "id || ':' || coalesce(v, '~') || ':' || n";
  for (int i = 0; i < 15; ++i) {
    char name[8];
    std::snprintf(name, sizeof name, "t%02d", i);
    defs.push_back({name, "id int8 PRIMARY KEY, v text, n int8",
                    "id int8 PRIMARY KEY, v text, n int8", plain});
  }
  defs.push_back({"big", "id int8 PRIMARY KEY, v text, n int8, big text",
                  "id int8 PRIMARY KEY, v text, n int8, big text",
                  plain + " || ':' || coalesce(length(big), -1) || ':' || "
                          "coalesce(substr(big, 1, 40), '~') || ':' || "
                          "coalesce(substr(big, length(big) - 39), '~')"});
  defs.push_back({"pair", "k1 int8, k2 text, v text, n int8, PRIMARY KEY (k2, k1)",
                  "k1 int8, k2 text, v text, n int8, PRIMARY KEY (k2, k1)",
                  "k1 || ':' || k2 || ':' || coalesce(v, '~') || ':' || n"});
  defs.push_back(
      {"uid", "id uuid PRIMARY KEY, v text, n int8", "id text PRIMARY KEY, v text, n int8", plain});
  defs.push_back({"part", "id int8, v text, n int8, PRIMARY KEY (id)",
                  "id int8 PRIMARY KEY, v text, n int8", plain});
  defs.push_back({"nokey", "v text, n int8", "v text, n int8", "coalesce(v, '~') || ':' || n"});
  return defs;
}

class MirrorTablesTest : public ::testing::TestWithParam<SqlDest> {
 protected:
  void SetUp() override {
    schema_ = testing::UniqueName("mt");
    dir_ = testing::TempDir("mirror_tables");
    guard_ = std::make_unique<SlotGuard>(src_.url(), schema_ + "_slot");
    dest_ = std::make_unique<testing::SqlDestination>(GetParam(), schema_, dir_);
    src_.Exec("CREATE SCHEMA " + schema_);
    for (const TableDef& t : Tables()) CreateTable(t);
    src_.Exec("CREATE PUBLICATION " + schema_ + "_pub FOR TABLES IN SCHEMA " + schema_);
  }

  void TearDown() override {
    mirror_.reset();
    StopWriter();
    src_.Exec("DROP PUBLICATION IF EXISTS " + schema_ + "_pub");
    src_.Exec("DROP SCHEMA " + schema_ + " CASCADE");
  }

  void CreateTable(const TableDef& t) {
    if (t.name == "part") {
      src_.Exec("CREATE TABLE " + Src(t.name) + " (" + t.columns + ") PARTITION BY RANGE (id)");
      src_.Exec("CREATE TABLE " + Src("part_1") + " PARTITION OF " + Src("part") +
                " FOR VALUES FROM (MINVALUE) TO (1000)");
      src_.Exec("CREATE TABLE " + Src("part_2") + " PARTITION OF " + Src("part") +
                " FOR VALUES FROM (1000) TO (MAXVALUE)");
    } else {
      src_.Exec("CREATE TABLE " + Src(t.name) + " (" + t.columns + ")");
    }
    dest_->Query("CREATE TABLE " + t.name + " (" + t.dest_columns + ")");
    defs_[t.name] = t;
  }

  std::string Src(const std::string& table) const { return schema_ + "." + table; }

  // `rows` rows in every table; some of `big`'s values are TOAST-sized.
  void Fill(int rows) {
    for (const auto& [name, t] : defs_) Insert(name, 1, rows);
  }

  void Insert(const std::string& table, int64_t from, int64_t count) {
    TestDb db(src_.url());
    InsertWith(db, table, from, count);
  }

  void InsertWith(TestDb& db, const std::string& table, int64_t from, int64_t count) {
    const std::string range =
        "generate_series(" + std::to_string(from) + ", " + std::to_string(from + count - 1) + ") g";
    std::string sql;
    if (table == "big") {
      sql = "INSERT INTO " + Src(table) +
            " SELECT g, 'v' || g, g, CASE WHEN g % 50 = 0 THEN (SELECT string_agg(md5(g::text "
            "|| x::text), '') FROM generate_series(1, 400) x) END FROM " +
            range;
    } else if (table == "pair") {
      sql = "INSERT INTO " + Src(table) + " SELECT g % 7, 'k' || g, 'v' || g, g FROM " + range;
    } else if (table == "uid") {
      sql = "INSERT INTO " + Src(table) + " SELECT gen_random_uuid(), 'v' || g, g FROM " + range;
    } else if (table == "nokey") {
      sql = "INSERT INTO " + Src(table) + " SELECT 'v' || g, g FROM " + range;
    } else {
      sql = "INSERT INTO " + Src(table) + " SELECT g, 'v' || g, g FROM " + range;
    }
    db.Exec(sql);
  }

  // `tables_extra`: more mirror.tables entries (", max_table_failures: 2"); `include`: the
  // tables' glob (default: the whole schema).
  std::string WriteConfig(const std::string& tables_extra = "", bool continuous = true,
                          std::string include = "", const std::string& delivery = "") {
    if (include.empty()) include = schema_ + ".*";
    config_ = dir_ + "/" + schema_ + ".yaml";
    std::ofstream(config_) << "version: 1\nname: " << schema_ << "\n"
                           << (delivery.empty() ? "" : "delivery: " + delivery + "\n")
                           << "pipeline:\n"
                           << "  source: {type: postgres-cdc, config: {connection_url: '"
                           << src_.url() << "', slot_name: " << schema_
                           << "_slot, publication_name: " << schema_
                           << "_pub, idle_timeout: 2, status_update_interval: 1}}\n"
                           << "  transforms: [{type: cdc_unwrap}]\n"
                           << "  sink: "
                           << dest_->SinkYaml("unused",
                                              ", column_mapping: auto_map, "
                                              "delete_marker: {field: __op, values: [d]}" +
                                                  sink_extra_)
                           << "\n"
                           << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n"
                           << "mirror:\n  mode: snapshot_then_cdc\n  continuous: "
                           << (continuous ? "true" : "false") << "\n  snapshot: {concurrency: 2"
                           << snapshot_extra_
                           << ", source: {type: postgres, config: {connection_url: '" << src_.url()
                           << "', query: 'SELECT 1'}}}\n"
                           << "  tables: {include: ['" << include << "'], discover_interval_secs: 2"
                           << tables_extra << "}\n"
                           << per_table_;
    return config_;
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

  // Random inserts, updates (also of the TOAST value and of keys) and deletes spread over
  // every keyed table, until StopWriter.
  // With `append_only`, `nokey` gets inserts too (an append destination mirrors inserts).
  void StartWriter(bool append_only = false) {
    writer_stop_ = false;
    writer_ = std::thread([this, append_only] {
      TestDb db(src_.url());
      std::mt19937 rng(7);
      std::vector<std::string> names;
      for (const auto& [name, t] : defs_) {
        if (name != "nokey") names.push_back(name);
      }
      int64_t next = 100'000;
      while (!writer_stop_) {
        if (append_only && rng() % 3 == 0) {
          InsertWith(db, "nokey", next, 1 + rng() % 5);
          next += 5;
          continue;
        }
        const std::string& table = names[rng() % names.size()];
        const std::string t = Src(table);
        const int64_t id = 1 + rng() % 200;
        switch (rng() % 4) {
          case 0:
            InsertWith(db, table, next, 3);
            next += 3;
            break;
          case 1:
            db.Exec("UPDATE " + t +
                    " SET v = 'u' || n, n = n + 1 WHERE n % 13 = " + std::to_string(id % 13));
            break;
          case 2:
            db.Exec("DELETE FROM " + t + " WHERE n = " + std::to_string(id));
            break;
          case 3:
            if (table == "big") {
              db.Exec("UPDATE " + t + " SET big = repeat(md5(random()::text), 100) WHERE id = " +
                      std::to_string(id));
            } else if (table == "part") {
              // Moves the row to the other partition.
              db.Exec("UPDATE " + t + " SET id = id + 5000 WHERE id = " + std::to_string(id));
            } else {
              db.Exec("UPDATE " + t + " SET n = n + 1 WHERE n < " + std::to_string(id % 20));
            }
            break;
        }
        std::this_thread::sleep_for(2ms);
      }
    });
  }

  void StopWriter() {
    writer_stop_ = true;
    if (writer_.joinable()) writer_.join();
  }

  std::string AggregateSql(const std::string& from, const TableDef& t, bool sqlite) const {
    if (sqlite) {
      return "SELECT count(*) || '/' || coalesce(group_concat(r, ','), '') FROM (SELECT " +
             t.row_text + " AS r FROM " + from + " ORDER BY r)";
    }
    return "SELECT count(*) || '/' || coalesce(string_agg(r, ',' ORDER BY r COLLATE \"C\"), "
           "'') FROM (SELECT " +
           t.row_text + " AS r FROM " + from + ") s";
  }
  std::string SourceAggregate(const std::string& table) {
    return src_.Scalar(AggregateSql(Src(table), defs_.at(table), false)).value_or("");
  }
  std::string DestAggregate(const std::string& table) {
    return dest_->Query(AggregateSql(table, defs_.at(table), GetParam() == SqlDest::kSqlite));
  }

  // The first rows only one side of two aggregates has ("count/row,row,...").
  static std::string RowDifference(const std::string& want, const std::string& got) {
    auto rows = [](const std::string& aggregate) {
      std::set<std::string> out;
      std::stringstream list(aggregate.substr(aggregate.find('/') + 1));
      for (std::string row; std::getline(list, row, ',');) out.insert(row);
      return out;
    };
    const std::set<std::string> source = rows(want);
    const std::set<std::string> dest = rows(got);
    std::string text;
    int shown = 0;
    for (const auto& [side, from, other] :
         {std::tuple{"only at the source: ", &source, &dest},
          std::tuple{"only at the destination: ", &dest, &source}}) {
      for (const std::string& row : *from) {
        if (other->count(row) == 0 && shown++ < 8) text += side + row.substr(0, 120) + "; ";
      }
    }
    return text;
  }

  // Waits until each of `tables` at the destination equals its source table.
  void ExpectConverges(const std::vector<std::string>& tables) {
    for (const std::string& table : tables) {
      const std::string want = SourceAggregate(table);
      std::string got;
      EXPECT_TRUE(testing::WaitFor([&] { return (got = DestAggregate(table)) == want; }, 60s,
                                   "destination table " + table + " to equal the source", 500ms))
          << "source " << want.substr(0, want.find('/')) << " rows, destination "
          << got.substr(0, got.find('/')) << " rows; " << RowDifference(want, got) << "\n"
          << (mirror_ ? mirror_->Output() : "");
    }
  }

  std::vector<std::string> Keyed() const {
    std::vector<std::string> names;
    for (const auto& [name, t] : defs_) {
      if (name != "nokey") names.push_back(name);
    }
    return names;
  }

  // The marker's tables, from the state files.
  std::map<std::string, mirror::TableState> MarkerTables() {
    FileStateStore state(PosixFileSystem(), dir_ + "/state");
    Result<std::optional<Json>> stored = state.Get(schema_ + "::__replication__");
    if (!stored.ok() || !*stored) return {};
    Result<mirror::Marker> marker = mirror::Marker::FromJson(**stored, "marker");
    return marker.ok() ? marker->tables : std::map<std::string, mirror::TableState>{};
  }

  std::string Phase(const std::string& table) {
    auto tables = MarkerTables();
    auto it = tables.find(Src(table));
    return it == tables.end() ? "absent" : mirror::PhaseName(it->second.phase);
  }

  ::testing::AssertionResult WaitForPhase(const std::vector<std::string>& tables,
                                          const std::string& phase,
                                          std::chrono::seconds limit = 90s) {
    return testing::WaitFor(
        [&] {
          for (const std::string& t : tables) {
            if (Phase(t) != phase) return false;
          }
          return true;
        },
        limit, "tables to be " + phase);
  }

  // The slot's confirmed position never passes what any streaming table persisted.
  // The slot never confirms beyond a table's persisted position. Under exactly-once a table
  // restarts from its sink's commit token, which may be ahead of its state until its first
  // checkpoint (about a second later): the check waits for that, not for anything else.
  void ExpectSlotNotAheadOfTables() {
    std::string ahead;
    EXPECT_TRUE(testing::WaitFor(
        [&] {
          ahead.clear();
          std::optional<Lsn> confirmed = src_.ConfirmedFlush(schema_ + "_slot");
          if (!confirmed) {
            ahead = "no slot";
            return false;
          }
          FileStateStore state(PosixFileSystem(), dir_ + "/state");
          for (const auto& [name, t] : MarkerTables()) {
            if (t.phase != mirror::TablePhase::kActive) continue;
            Result<std::optional<Json>> value = state.Get(schema_ + "::" + t.id);
            std::optional<Bookmark> bookmark =
                value.ok() && *value ? StateBookmark(**value) : std::nullopt;  // also under EO
            Result<Lsn> lsn = bookmark ? Lsn::Parse(bookmark->value["last_lsn"].get<std::string>())
                                       : Result<Lsn>(NotFound("no position"));
            if (!lsn.ok() || confirmed->value() > lsn->value()) {
              ahead += name + " persisted " + (lsn.ok() ? lsn->ToString() : "nothing") +
                       ", slot at " + confirmed->ToString() + "; ";
            }
          }
          return ahead.empty();
        },
        15s, "the slot not to be ahead of any table", 200ms))
        << ahead;
  }

  bool DestHasColumn(const std::string& table, const std::string& column) {
    return dest_->Query(GetParam() == SqlDest::kSqlite
                            ? "SELECT count(*) FROM pragma_table_info('" + table +
                                  "') WHERE name = '" + column + "'"
                            : "SELECT count(*) FROM information_schema.columns WHERE "
                              "table_schema = 'public' AND table_name = '" +
                                  table + "' AND column_name = '" + column + "'") == "1";
  }

  // `faucet mirror status --json`'s rows by table name ({"error": output} when it fails).
  Json StatusRows() {
    testing::ProcessResult r = Status(true);
    if (r.exit_code != 0) return Json{{"error", r.output}};
    const Json status = Json::parse(r.output);
    Json rows = Json::object();
    for (const Json& row : status["tables"]) rows[row["table"].get<std::string>()] = row;
    return rows;
  }

  testing::ProcessResult Status(bool json) {
    std::vector<std::string> argv{FAUCET_BINARY, "mirror", "status", config_};
    if (json) argv.push_back("--json");
    return testing::RunProcess(argv);
  }

  TestDb src_;
  std::string schema_, dir_, config_;
  std::string snapshot_extra_;  // more mirror.snapshot entries (", shards: 4")
  std::string sink_extra_;      // more sink config entries (", max_connections: 2")
  std::string per_table_;       // a mirror.per_table block ("  per_table: {...}\n")
  std::unique_ptr<SlotGuard> guard_;
  std::unique_ptr<testing::SqlDestination> dest_;
  std::map<std::string, TableDef> defs_;
  std::unique_ptr<testing::Process> mirror_;
  std::thread writer_;
  std::atomic<bool> writer_stop_{true};
};

// One process, one slot, every table: snapshot under concurrent writes, a table created and
// one dropped while it runs, the keyless table refused with the reason, and every destination
// table equal to its source.
TEST_P(MirrorTablesTest, MirrorsEveryTableOverOneStream) {
  Fill(300);
  sink_extra_ = ", max_connections: 2";
  WriteConfig();
  // The destination's sessions are one pool for all tables (Postgres shows them).
  const bool sampled = GetParam() == SqlDest::kPostgres;
  std::atomic<int> most_sessions{0};
  std::jthread sampler([&](const std::stop_token& stop) {
    if (!sampled) return;
    TestDb dest(dest_->url());
    while (!stop.stop_requested()) {
      const int now = std::stoi(
          dest.Scalar("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                      " AND application_name = 'faucet' AND pid <> pg_backend_pid()")
              .value_or("0"));
      if (now > most_sessions) most_sessions = now;
      std::this_thread::sleep_for(20ms);
    }
  });
  StartWriter();
  StartMirror();
  ASSERT_TRUE(WaitForPhase(Keyed(), "active")) << mirror_->Output();
  EXPECT_EQ(Phase("nokey"), "refused");

  // A table created while it runs is discovered, snapshotted and streamed; a dropped one
  // stops being routed and its destination stays.
  CreateTable({"later", "id int8 PRIMARY KEY, v text, n int8",
               "id int8 PRIMARY KEY, v text, n int8", "id || ':' || coalesce(v, '~') || ':' || n"});
  Insert("later", 1, 50);
  ASSERT_TRUE(WaitForPhase({"later"}, "active")) << mirror_->Output();
  Insert("later", 51, 50);
  StopWriter();
  src_.Exec("DROP TABLE " + Src("t14"));
  defs_.erase("t14");
  ASSERT_TRUE(WaitForPhase({"t14"}, "dropped")) << mirror_->Output();
  EXPECT_NE(dest_->Query("SELECT count(*) FROM t14"), "0") << "a dropped table's destination stays";

  ExpectConverges(Keyed());
  ExpectSlotNotAheadOfTables();
  EXPECT_EQ(src_.Scalar("SELECT count(*) FROM pg_replication_slots WHERE slot_name LIKE '" +
                        schema_ + "%'"),
            "1");
  sampler.request_stop();
  sampler.join();
  if (sampled) {
    EXPECT_GE(most_sessions, 1);
    EXPECT_LE(most_sessions, 2) << "20 tables, max_connections: 2\n" << mirror_->Output();
  }

  testing::ProcessResult text = Status(false);
  EXPECT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("(21 tables: 19 active, 1 dropped, 1 refused)"), std::string::npos)
      << text.output;
  EXPECT_NE(text.output.find("has no primary key"), std::string::npos) << text.output;
  testing::ProcessResult json = Status(true);
  ASSERT_EQ(json.exit_code, 0) << json.output;
  Json status = Json::parse(json.output);
  EXPECT_EQ(status["mode"], "tables");
  EXPECT_EQ(status["summary"]["by_phase"]["active"], 19);
  for (const Json& row : status["tables"]) {
    if (row["phase"] != "active") continue;
    EXPECT_EQ(row["snapshot"]["percent"], 100.0) << row.dump();
    EXPECT_TRUE(row["position"].contains("last_lsn")) << row.dump();
  }
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// SIGKILL during the snapshots redoes only the tables not finished; SIGKILL during the stream
// resumes every table from its own position. Nothing is lost.
TEST_P(MirrorTablesTest, SigkillDuringSnapshotsAndStreamLosesNothing) {
  Fill(300);
  Insert("big", 301, 30'000);
  WriteConfig();
  // Dies at the 20th snapshot page: `big` (31 pages, read first) is still being read.
  StartMirror("mirror.table_snapshot_page:20");
  testing::ProcessResult crashed = mirror_->Wait();
  mirror_.reset();
  ASSERT_EQ(crashed.exit_code, kCrashExitCode) << crashed.output;
  const auto before = MarkerTables();
  ASSERT_EQ(before.at(Src("big")).phase, mirror::TablePhase::kSnapshotting);

  StartWriter();
  StartMirror();
  ASSERT_TRUE(WaitForPhase(Keyed(), "active")) << mirror_->Output();
  for (const auto& [name, t] : MarkerTables()) {
    if (t.phase != mirror::TablePhase::kActive) continue;
    const bool interrupted =
        before.count(name) && before.at(name).phase == mirror::TablePhase::kSnapshotting;
    // Only a table whose snapshot the crash interrupted is read again.
    EXPECT_EQ(t.snapshot.attempts, interrupted ? 2 : 1) << name;
  }
  std::this_thread::sleep_for(2s);
  StopMirror(SIGKILL);
  StartMirror();
  std::this_thread::sleep_for(2s);
  StopWriter();
  ExpectConverges(Keyed());
  ExpectSlotNotAheadOfTables();
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// delivery: exactly_once composes per table: each table's sink commits its pages with its own
// token, so SIGKILLs mid-stream leave no gap and no duplicate even in an append destination
// (the keyless table, under without_primary_key: append).
TEST_P(MirrorTablesTest, ExactlyOncePerTableAcrossKills) {
  Fill(200);
  WriteConfig(", without_primary_key: append", true, "", "exactly_once");
  StartMirror();
  std::vector<std::string> all = Keyed();
  all.push_back("nokey");
  ASSERT_TRUE(WaitForPhase(all, "active")) << mirror_->Output();
  StartWriter(/*append_only=*/true);
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(1500ms);
    StopMirror(SIGKILL);
    StartMirror();
  }
  StopWriter();
  ExpectConverges(all);
  ExpectSlotNotAheadOfTables();
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// mirror.snapshot.shards splits each table's read in parts (block ranges: any key), all in one
// snapshot. A crash loses that snapshot: every part is read again, from the same join point,
// while a writer updates rows (moving them between blocks, and keeping TOAST values
// unchanged), and nothing is lost or nulled.
TEST_P(MirrorTablesTest, ASplitSnapshotACrashInterruptedIsReadAgainFromItsJoinPoint) {
  Fill(50);
  Insert("big", 51, 30'000);
  src_.Exec("ANALYZE " + Src("big"));
  snapshot_extra_ = ", shards: 4";
  WriteConfig();
  // `big` is read first, two parts at a time, about 8 pages each: at the 20th page two parts
  // are done and two are under way.
  StartMirror("mirror.table_snapshot_page:20");
  testing::ProcessResult crashed = mirror_->Wait();
  mirror_.reset();
  ASSERT_EQ(crashed.exit_code, kCrashExitCode) << crashed.output;
  const mirror::TableState before = MarkerTables()[Src("big")];
  ASSERT_EQ(before.phase, mirror::TablePhase::kSnapshotting);
  ASSERT_EQ(before.snapshot.shards_total, 4) << crashed.output;
  ASSERT_GT(before.snapshot.shards_done, 0) << crashed.output;
  ASSERT_LT(before.snapshot.shards_done, 4) << crashed.output;

  StartWriter();
  StartMirror();
  ASSERT_TRUE(WaitForPhase(Keyed(), "active")) << mirror_->Output();
  const mirror::TableState after = MarkerTables()[Src("big")];
  EXPECT_EQ(after.snapshot.attempts, 1) << "the same attempt, from the same join point";
  EXPECT_EQ(after.position->value, before.position->value);
  EXPECT_EQ(after.resync_required, "");
  EXPECT_NE(mirror_->Output().find("reads its split snapshot again from its join point"),
            std::string::npos)
      << mirror_->Output();
  StopWriter();
  ExpectConverges(Keyed());
  ExpectSlotNotAheadOfTables();
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A destination table that fails pauses its table (after max_table_failures) while every
// other table keeps streaming; once repaired it is re-snapshotted, replacing its destination
// (rows deleted at the source meanwhile are gone), and streams again.
TEST_P(MirrorTablesTest, AFailingTablePausesWhileTheOthersStream) {
  const bool postgres = GetParam() == SqlDest::kPostgres;
  Fill(100);
  WriteConfig(", max_table_failures: 2, retry_paused_secs: 3");
  StartMirror();
  ASSERT_TRUE(WaitForPhase(Keyed(), "active")) << mirror_->Output();
  // Postgres: the destination refuses the new rows (its other rows stay); SQLite: it is gone.
  dest_->Query(postgres ? "ALTER TABLE t03 ADD CONSTRAINT small CHECK (n < 1000)"
                        : "DROP TABLE t03");
  Insert("t03", 1000, 10);
  ASSERT_TRUE(WaitForPhase({"t03"}, "paused", 60s)) << mirror_->Output();
  EXPECT_NE(MarkerTables()[Src("t03")].last_error.find("t03"), std::string::npos)
      << MarkerTables()[Src("t03")].last_error;
  // The others stream meanwhile; rows deleted at the source while t03 is paused.
  src_.Exec("DELETE FROM " + Src("t03") + " WHERE id <= 5");
  Insert("t04", 1000, 10);
  ExpectConverges({"t04"});

  dest_->Query(postgres ? "ALTER TABLE t03 DROP CONSTRAINT small"
                        : "CREATE TABLE t03 (" + defs_.at("t03").dest_columns + ")");
  ASSERT_TRUE(WaitForPhase({"t03"}, "active", 60s)) << mirror_->Output();
  Insert("t03", 2000, 10);
  ExpectConverges({"t03", "t04", "t05"});
  const mirror::TableState t03 = MarkerTables()[Src("t03")];
  EXPECT_GE(t03.snapshot.attempts, 2);
  EXPECT_EQ(t03.resync_required, "") << "the re-snapshot replaced the destination";
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// DDL on a source table goes through that table's drift policy: evolve adds the column at the
// destination and its values arrive; fail pauses the table with the difference named, while
// the others stream; once the destination is repaired the table re-snapshots and converges.
TEST_P(MirrorTablesTest, SourceDdlGoesThroughEachTablesDriftPolicy) {
  Fill(20);
  per_table_ = "  per_table: {" + Src("t01") + ": {schema_drift: {on_drift: evolve}}, " +
               Src("t02") + ": {schema_drift: {on_drift: fail}}}\n";
  WriteConfig(", max_table_failures: 1, retry_paused_secs: 3");
  StartMirror();
  ASSERT_TRUE(WaitForPhase(Keyed(), "active")) << mirror_->Output();

  src_.Exec("ALTER TABLE " + Src("t01") + " ADD COLUMN note text");
  src_.Exec("UPDATE " + Src("t01") + " SET note = 'note ' || id WHERE id <= 5");
  Insert("t01", 1000, 10);
  EXPECT_TRUE(testing::WaitFor([&] { return DestHasColumn("t01", "note"); }, 60s,
                               "the destination to gain column note"))
      << mirror_->Output();
  defs_["t01"].row_text += " || ':' || coalesce(note, '~')";
  ExpectConverges({"t01"});

  src_.Exec("ALTER TABLE " + Src("t02") + " ADD COLUMN extra int8");
  src_.Exec("UPDATE " + Src("t02") + " SET extra = id * 10 WHERE id <= 3");
  ASSERT_TRUE(WaitForPhase({"t02"}, "paused", 60s)) << mirror_->Output();
  const std::string error = MarkerTables()[Src("t02")].last_error;
  EXPECT_NE(error.find("the source's column extra"), std::string::npos) << error;
  EXPECT_NE(error.find("(on_drift: fail)"), std::string::npos) << error;
  Insert("t04", 1000, 10);
  ExpectConverges({"t04"});

  dest_->Query("ALTER TABLE t02 ADD COLUMN extra int8");
  // `extra || ''` is text in both databases, NULL when extra is.
  defs_["t02"].row_text += " || ':' || coalesce(extra || '', '~')";
  ASSERT_TRUE(WaitForPhase({"t02"}, "active", 60s)) << mirror_->Output();
  ExpectConverges({"t01", "t02", "t04"});
  testing::ProcessResult r = StopMirror(SIGTERM);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A table the publication does not carry is refused with how to fix it, never shown active
// while it silently receives nothing. A one-shot run (continuous: false) loads the others,
// streams once and exits 0.
TEST_P(MirrorTablesTest, ATableOutsideThePublicationIsRefused) {
  src_.Exec("ALTER PUBLICATION " + schema_ + "_pub SET TABLE " + Src("t00") + ", " + Src("t01"));
  Fill(20);
  WriteConfig("", false, schema_ + ".t0?");
  testing::ProcessResult r = testing::RunProcess({FAUCET_BINARY, "mirror", config_});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto tables = MarkerTables();
  EXPECT_EQ(Phase("t00"), "active");
  EXPECT_EQ(Phase("t01"), "active");
  EXPECT_EQ(Phase("t02"), "refused");
  EXPECT_NE(tables[Src("t02")].last_error.find("not in publication"), std::string::npos)
      << tables[Src("t02")].last_error;
  EXPECT_NE(tables[Src("t02")].last_error.find("ALTER PUBLICATION"), std::string::npos)
      << tables[Src("t02")].last_error;
  ExpectConverges({"t00", "t01"});
}

// A table whose destination blocks (a lock held on it) is detached after detach_after; the
// others keep streaming meanwhile, and it catches up once unblocked.
// Postgres only: a lock held on one destination table blocks its sink (SQLite locks the whole
// file, which would block every table).
class MirrorTablesPostgresTest : public MirrorTablesTest {};

TEST_P(MirrorTablesPostgresTest, ABlockedTableDoesNotStallTheOthers) {
  Fill(10);
  WriteConfig();
  StartMirror();
  ASSERT_TRUE(WaitForPhase(Keyed(), "active")) << mirror_->Output();
  TestDb locker(dest_->url());
  locker.Exec("BEGIN");
  locker.Exec("LOCK TABLE t05 IN ACCESS EXCLUSIVE MODE");
  // More than the table's buffers hold (about 12 MiB).
  for (int i = 0; i < 4; ++i) {
    src_.Exec(
        "INSERT INTO " + Src("t05") + " SELECT g, repeat('x', 2000), g FROM generate_series(" +
        std::to_string(1000 + i * 5000) + ", " + std::to_string(999 + (i + 1) * 5000) + ") g");
  }
  Insert("t06", 1000, 100);
  ExpectConverges({"t06"});
  EXPECT_NE(mirror_->Output().find("'" + Src("t05") + "' fell behind"), std::string::npos)
      << mirror_->Output();
  // The blocked table lags, in seconds and in WAL bytes; one that has everything does not.
  Json last;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        last = StatusRows();
        return last[Src("t05")]["lag_secs"].is_number() &&
               last[Src("t05")]["lag_secs"].get<int64_t>() >= 3 &&
               last[Src("t05")]["lag_bytes"].is_number() &&
               last[Src("t05")]["lag_bytes"].get<int64_t>() > 0 &&
               last[Src("t06")]["lag_secs"] == 0;
      },
      60s, "t05 to show lag and t06 none"))
      << last.dump(1);
  locker.Exec("COMMIT");
  const std::string count = "SELECT count(*) || '/' || sum(n) || '/' || sum(length(v)) FROM ";
  const std::string want = *src_.Scalar(count + Src("t05"));
  EXPECT_TRUE(
      testing::WaitFor([&] { return dest_->Query(count + "t05") == want; }, 60s, "t05 to catch up"))
      << mirror_->Output();
  EXPECT_TRUE(testing::WaitFor([&] { return (last = StatusRows())[Src("t05")]["lag_secs"] == 0; },
                               60s, "t05 to lag no more"))
      << last.dump(1);
  ExpectSlotNotAheadOfTables();
}

INSTANTIATE_TEST_SUITE_P(Destinations, MirrorTablesPostgresTest,
                         ::testing::Values(SqlDest::kPostgres),
                         [](const auto& info) { return testing::SqlDestName(info.param); });
INSTANTIATE_TEST_SUITE_P(Destinations, MirrorTablesTest,
                         ::testing::Values(SqlDest::kPostgres, SqlDest::kSqlite),
                         [](const auto& info) { return testing::SqlDestName(info.param); });

}  // namespace
}  // namespace faucet
