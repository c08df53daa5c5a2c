// For every registered crash point: run generator -> jsonl with a file state store, crash the
// process there, restart it, and check that every record is present and that duplicates come
// only from the one page that was replayed.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/crash_point.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using testing::ProcessResult;
using testing::RunProcess;

constexpr int kRows = 3000;
constexpr int kBatch = 100;

// Crash points a generator -> jsonl pipeline with a file state store passes through.
const std::set<std::string> kOnThisPath = {
    "source.after_page",        "pipeline.after_write",    "pipeline.after_flush",
    "pipeline.after_persist",   "sink.jsonl.mid_page",     "state.file.after_temp_write",
    "state.file.before_rename", "state.file.after_rename",
};

struct Scenario {
  std::string dir = testing::TempDir("crash");
  std::string config = dir + "/pipe.yaml";
  std::string output = dir + "/out.jsonl";

  explicit Scenario(const std::string& extra_source_config = "") {
    std::ofstream(config) << "version: 1\n"
                             "name: crashy\n"
                             "pipeline:\n"
                             "  source:\n"
                             "    type: generator\n"
                             "    config: {count: "
                          << kRows << ", batch_size: " << kBatch << extra_source_config
                          << "}\n"
                             "  sink:\n"
                             "    type: jsonl\n"
                             "    config: {path: "
                          << output
                          << "}\n"
                             "  state:\n"
                             "    type: file\n"
                             "    config: {path: "
                          << dir << "/state}\n";
  }

  ProcessResult Run(const std::string& crash_at = "") {
    return RunProcess({FAUCET_BINARY, "run", config}, {{"FAUCET_CRASH_AT", crash_at}});
  }

  // id -> number of times it is in the output.
  std::map<int64_t, int> Counts() {
    std::map<int64_t, int> counts;
    std::ifstream in(output);
    std::string line;
    while (std::getline(in, line)) {
      counts[nlohmann::json::parse(line)["id"].get<int64_t>()]++;
    }
    return counts;
  }
};

// Every id present; duplicates at most one page per crash (a page written but not yet
// persisted when the process died is replayed; repeated crashes may replay the same page).
void ExpectComplete(const std::map<int64_t, int>& counts, int max_replayed_pages) {
  ASSERT_EQ(counts.size(), static_cast<size_t>(kRows)) << "records lost";
  EXPECT_EQ(counts.begin()->first, 1);
  EXPECT_EQ(counts.rbegin()->first, kRows);
  int duplicates = 0;
  for (const auto& [id, n] : counts) {
    EXPECT_LE(n, 1 + max_replayed_pages) << "id " << id;
    duplicates += n - 1;
  }
  EXPECT_LE(duplicates, max_replayed_pages * kBatch);
}

TEST(CrashPoints, EveryRegisteredPointIsCoveredByACrashTest) {
  // Points outside this pipeline's path are exercised by their own connector's crash tests.
  const std::set<std::string> kElsewhere = {
      "mirror.snapshot_committed",   // tests/integration/kafka_sink_test.cc
      "mirror.table_snapshot_page",  // tests/integration/mirror_tables_test.cc
      "sink.kafka.before_commit",    // tests/crash/kafka_exactly_once_test.cc
  };
  for (const CrashPointInfo& p : RegisteredCrashPoints()) {
    EXPECT_TRUE(kOnThisPath.count(p.name) || kElsewhere.count(p.name))
        << p.name << " has no crash test";
  }
}

class CrashAt : public ::testing::TestWithParam<std::string> {};

TEST_P(CrashAt, RestartLosesNothingAndReplaysAtMostOnePage) {
  Scenario s;
  // The 5th hit: some pages are already checkpointed when the process dies.
  ProcessResult crashed = s.Run(GetParam() + ":5");
  ASSERT_EQ(crashed.exit_code, kCrashExitCode) << crashed.output;
  ProcessResult resumed = s.Run();
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  ExpectComplete(s.Counts(), 1);
}

TEST_P(CrashAt, RepeatedCrashesLoseNothing) {
  Scenario s;
  for (int nth : {2, 7, 3}) {
    ProcessResult crashed = s.Run(GetParam() + ":" + std::to_string(nth));
    ASSERT_EQ(crashed.exit_code, kCrashExitCode) << crashed.output;
  }
  ProcessResult resumed = s.Run();
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  ExpectComplete(s.Counts(), 3);
}

INSTANTIATE_TEST_SUITE_P(AllPoints, CrashAt,
                         ::testing::ValuesIn(std::vector<std::string>(kOnThisPath.begin(),
                                                                      kOnThisPath.end())),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

TEST(Sigkill, KilledMidRunThenResumedLosesNothing) {
  // 3000 rows at 2000 rows/s: 1.5 s of work, killed three times, each time once the run has
  // written something (so every kill lands mid-run, however slow the start).
  Scenario s(", rate: 2000");
  auto lines = [&] {
    std::ifstream in(s.output);
    return std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n');
  };
  for (int run = 0; run < 3; ++run) {
    const auto before = lines();
    testing::Process p({FAUCET_BINARY, "run", s.config}, {});
    ASSERT_TRUE(testing::WaitFor([&] { return lines() != before; }, std::chrono::seconds(10),
                                 "run " + std::to_string(run) + " to write something"));
    p.Kill(SIGKILL);
    ASSERT_EQ(p.Wait().signal, SIGKILL) << "run " << run << " ended before it was killed";
  }
  ASSERT_LT(lines(), kRows) << "the kills came after the end";
  ProcessResult resumed = s.Run();
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  ExpectComplete(s.Counts(), 3);
}

}  // namespace
}  // namespace faucet
