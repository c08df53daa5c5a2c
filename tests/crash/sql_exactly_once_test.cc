// Effectively-once through each SQL sink, for transactions larger than a page. The source
// holds a transaction of 2,500 or 100,000 rows and further multi-page transactions; faucet
// reads them with batch_size 1000 (pages of at most 1000 changes), so each transaction reaches
// the sink as chunks. The process is killed at every named crash point and after chunks (every
// chunk of the 2,500-row transaction, every 9th of the 100,000-row one, every page after
// them), then resumed: the destination must equal the source, compared
// by aggregates the databases compute, with no row written twice and none missing. One resume
// cuts pages at 700 changes, so the replay's pages do not line up with the committed ones.
// Append mode has no key, so a duplicate shows; upsert mode adds multi-page updates and
// deletes. The at-least-once control shows the same crash does duplicate without the
// watermark.
#include <gtest/gtest.h>

#include <fstream>

#include "sources/postgres/pg_test_support.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/sql_destination.h"

namespace faucet {
namespace {

using postgres::testing::CdcTable;
using postgres::testing::TestDb;
using testing::SqlDest;

enum class Mode { kAppend, kUpsert };

struct Param {
  SqlDest dest;
  Mode mode;
  int rows;  // of the first transaction
};

std::string ParamName(const Param& p) {
  return testing::SqlDestName(p.dest) + (p.mode == Mode::kAppend ? "_append_" : "_upsert_") +
         std::to_string(p.rows);
}

void PrintTo(const Param& p, std::ostream* os) { *os << ParamName(p); }

constexpr int kCrashExit = 86;
constexpr int kMediumTxns = 6;     // transactions of 1,500 rows after the large one
constexpr int kMediumRows = 1500;  // a chunk and a page with the bookmark each

class SqlExactlyOnce : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    const Param& p = GetParam();
    name_ = testing::UniqueName("eo");
    dir_ = testing::TempDir("eo");
    cdc_ = std::make_unique<CdcTable>(src_, name_, "id int PRIMARY KEY, name text");
    // The slot exists before the data, so the stream carries all of it.
    src_.Exec("SELECT pg_create_logical_replication_slot('" + cdc_->slot() + "', 'pgoutput')");
    Insert(1, p.rows);
    for (int t = 0; t < kMediumTxns; ++t) {
      Insert(p.rows + t * kMediumRows + 1, p.rows + (t + 1) * kMediumRows);
    }
    if (p.mode == Mode::kUpsert) {  // one multi-page update and one multi-page delete
      src_.Exec("UPDATE " + name_ + " SET name = name || '+' WHERE id % 2 = 0");
      src_.Exec("DELETE FROM " + name_ + " WHERE id % 3 = 0");
    }

    // Append: no key, so a row written twice shows.
    const std::string ddl =
        "CREATE TABLE " + name_ +
        (p.mode == Mode::kAppend ? " (id int, name text)" : " (id int PRIMARY KEY, name text)");
    dest_ = std::make_unique<testing::SqlDestination>(p.dest, name_, dir_);
    dest_->Query(ddl);
    sink_ = dest_->SinkYaml(
        name_, std::string(", column_mapping: auto_map") +
                   (p.mode == Mode::kUpsert ? ", write_mode: upsert, key: [id], "
                                              "delete_marker: {field: __op, values: [d]}"
                                            : ""));
  }

  void TearDown() override {
    if (GetParam().dest == SqlDest::kMysql) dest_->Query("DROP TABLE IF EXISTS " + name_);
  }

  void Insert(int from, int to) {
    src_.Exec("INSERT INTO " + name_ + " SELECT g, 'row ' || g FROM generate_series(" +
              std::to_string(from) + ", " + std::to_string(to) + ") g");
  }

  // rows/distinct ids/sum of ids/sum of id*length(name), computed by the database holding
  // `table`: any lost, doubled or stale row changes it.
  static std::string SummarySql(const std::string& table, bool mysql) {
    const std::string parts[] = {"count(*)", "count(DISTINCT id)", "coalesce(sum(id), 0)",
                                 "coalesce(sum(id * length(name)), 0)"};
    std::string sql;
    for (const std::string& part : parts) {
      if (!sql.empty()) sql += mysql ? ", '/', " : " || '/' || ";
      sql += part;
    }
    return "SELECT " + (mysql ? "CONCAT(" + sql + ")" : sql) + " FROM " + table;
  }
  std::string SourceSummary() { return src_.Scalar(SummarySql(name_, false)).value_or(""); }
  std::string DestSummary() {
    return dest_->Query(SummarySql(name_, GetParam().dest == SqlDest::kMysql));
  }

  std::string Config(const std::string& delivery, int batch_size) {
    std::string path = dir_ + "/" + delivery + std::to_string(batch_size) + ".yaml";
    std::ofstream(path) << "version: 1\nname: " << name_ << "\ndelivery: " << delivery << "\n"
                        << "pipeline:\n  source: "
                        << cdc_->SourceYaml(", batch_size: " + std::to_string(batch_size)) << "\n"
                        << "  transforms: [{type: cdc_unwrap}]\n"
                        << "  sink: " << sink_ << "\n"
                        << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n";
    return path;
  }

  // One run of faucet that must die at `crash_at` ("" for a run to the end).
  void RunOnce(const std::string& delivery, const std::string& crash_at, int batch_size = 1000) {
    std::map<std::string, std::string> env;
    if (!crash_at.empty()) env["FAUCET_CRASH_AT"] = crash_at;
    testing::ProcessResult r =
        testing::RunProcess({FAUCET_BINARY, "run", Config(delivery, batch_size)}, env);
    EXPECT_EQ(r.exit_code, crash_at.empty() ? 0 : kCrashExit)
        << (crash_at.empty() ? "the final run" : crash_at) << "\n"
        << r.output;
  }

  TestDb src_;
  std::unique_ptr<CdcTable> cdc_;
  std::unique_ptr<testing::SqlDestination> dest_;
  std::string name_, dir_, sink_;
};

TEST_P(SqlExactlyOnce, CrashesAtEveryPointAndAfterChunksLeaveNoDuplicateAndNoGap) {
  // While nothing of the large transaction is committed, then between two of its chunks with
  // the replay cut into pages of 700.
  RunOnce("exactly_once", "source.after_page:2");
  RunOnce("exactly_once", "pipeline.after_write:2", 700);
  // Every 9th chunk of the 100,000-row transaction.
  for (int i = 0; GetParam().rows > 10000 && i < 10; ++i) {
    RunOnce("exactly_once", "pipeline.after_write:9");
  }
  // Around the commit of a page with a bookmark, and inside the persist of the state file.
  for (const char* point :
       {"pipeline.after_flush", "pipeline.after_persist", "state.file.after_temp_write",
        "state.file.before_rename", "state.file.after_rename"}) {
    RunOnce("exactly_once", std::string(point) + ":1");
  }
  // Then after every page until the run ends by itself.
  int crashes = 0;
  for (; crashes < 60; ++crashes) {
    testing::ProcessResult r =
        testing::RunProcess({FAUCET_BINARY, "run", Config("exactly_once", 1000)},
                            {{"FAUCET_CRASH_AT", "pipeline.after_write:1"}});
    if (r.exit_code == 0) break;
    ASSERT_EQ(r.exit_code, kCrashExit) << r.output;
  }
  EXPECT_GE(crashes, 3);  // the medium transactions left give a chunk and a page each
  RunOnce("exactly_once", "");
  EXPECT_EQ(DestSummary(), SourceSummary());
}

// Run for append mode and the 2,500-row transaction only.
class SqlAtLeastOnceControl : public SqlExactlyOnce {};

TEST_P(SqlAtLeastOnceControl, TheSameCrashDuplicatesChunksWithoutTheWatermark) {
  RunOnce("at_least_once", "pipeline.after_write:2");
  RunOnce("at_least_once", "");
  // The two chunks committed before the crash are written again: 2,000 duplicates.
  std::string summary = DestSummary();
  const int total = 2500 + kMediumTxns * kMediumRows;
  EXPECT_EQ(summary.substr(0, summary.find('/', summary.find('/') + 1)),
            std::to_string(total + 2000) + "/" + std::to_string(total));
}

std::vector<Param> Params() {
  std::vector<Param> out;
  for (SqlDest d : {SqlDest::kPostgres, SqlDest::kSqlite, SqlDest::kMysql}) {
    for (Mode m : {Mode::kAppend, Mode::kUpsert}) {
      for (int rows : {2500, 100000}) out.push_back({d, m, rows});
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sinks, SqlExactlyOnce, ::testing::ValuesIn(Params()),
                         [](const auto& info) { return ParamName(info.param); });
INSTANTIATE_TEST_SUITE_P(Sinks, SqlAtLeastOnceControl,
                         ::testing::Values(Param{SqlDest::kPostgres, Mode::kAppend, 2500},
                                           Param{SqlDest::kSqlite, Mode::kAppend, 2500},
                                           Param{SqlDest::kMysql, Mode::kAppend, 2500}),
                         [](const auto& info) { return ParamName(info.param); });

}  // namespace
}  // namespace faucet
