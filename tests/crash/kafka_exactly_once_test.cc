// Effectively-once through the kafka sink (Kafka transactions with a commit token), for
// transactions larger than a page. The source holds a transaction of 2,500 rows, six of 1,500
// and a 1,250-row update; faucet reads them with batch_size 1000, so each reaches the sink as
// chunks, which go in Kafka transactions with their tokens. The process is killed at every crash
// point on the way (one in the middle of a Kafka transaction whose messages are already in the log)
// and after every page, then resumed: a read_committed consumer must see every insert and every
// update exactly once, in order per key. The at-least-once control shows that the same crash
// duplicates messages without the transactions.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "sinks/kafka/kafka_test_support.h"
#include "sources/postgres/pg_test_support.h"
#include "testing/crash_schedule.h"
#include "testing/process.h"
#include "testing/services.h"

namespace faucet {
namespace {

using Json = nlohmann::json;
using postgres::testing::CdcTable;
using postgres::testing::TestDb;

constexpr int kCrashExit = 86;
constexpr int kLargeRows = 2500;
constexpr int kMediumTxns = 6;
constexpr int kMediumRows = 1500;
constexpr int kRows = kLargeRows + kMediumTxns * kMediumRows;
constexpr int kUpdates = kRows / 2;  // one multi-page update of the even ids

class KafkaExactlyOnce : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = testing::UniqueName("keo");
    dir_ = testing::TempDir("keo");
    cdc_ = std::make_unique<CdcTable>(db_, name_, "id int PRIMARY KEY, name text");
    db_.Exec("SELECT pg_create_logical_replication_slot('" + cdc_->slot() + "', 'pgoutput')");
    Insert(1, kLargeRows);
    for (int t = 0; t < kMediumTxns; ++t) {
      Insert(kLargeRows + t * kMediumRows + 1, kLargeRows + (t + 1) * kMediumRows);
    }
    db_.Exec("UPDATE " + name_ + " SET name = name || '+' WHERE id % 2 = 0");
  }

  void Insert(int from, int to) {
    db_.Exec("INSERT INTO " + name_ + " SELECT g, 'row ' || g FROM generate_series(" +
             std::to_string(from) + ", " + std::to_string(to) + ") g");
  }

  std::string Config(const std::string& delivery) {
    std::string path = dir_ + "/" + delivery + ".yaml";
    std::ofstream(path) << "version: 1\nname: " << name_ << "\ndelivery: " << delivery << "\n"
                        << "pipeline:\n  source: " << cdc_->SourceYaml(", batch_size: 1000")
                        << "\n  sink: {type: kafka, config: {brokers: '" << brokers_
                        << "', topic: {name: '" << name_ << "'}, linger: 2"
                        << (delivery == "exactly_once"
                                ? ", exactly_once: {commit_token_topic: '" + name_ +
                                      ".tokens', transaction_timeout: 10000}"
                                : "")
                        << "}}\n"
                        << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n";
    return path;
  }

  // One run of faucet that must die at `crash_at` ("" for a run to the end).
  void RunOnce(const std::string& delivery, const std::string& crash_at) {
    std::map<std::string, std::string> env;
    if (!crash_at.empty()) env["FAUCET_CRASH_AT"] = crash_at;
    testing::ProcessResult r = testing::RunProcess({FAUCET_BINARY, "run", Config(delivery)}, env);
    EXPECT_EQ(r.exit_code, crash_at.empty() ? 0 : kCrashExit)
        << (crash_at.empty() ? "the final run" : crash_at) << "\n"
        << r.output;
  }

  // Per id, the names its messages carry, in the order a read_committed consumer reads them.
  std::map<int, std::vector<std::string>> History() {
    std::map<int, std::vector<std::string>> out;
    for (const kafka::testing::Message& m : kafka::testing::ReadTopic(brokers_, name_)) {
      const Json after = Json::parse(m.value)["after"];
      out[after["id"].get<int>()].push_back(after["name"].get<std::string>());
    }
    return out;
  }

  const std::string brokers_ = testing::RequireEnv("FAUCET_TEST_KAFKA_BROKERS");
  TestDb db_;
  std::unique_ptr<CdcTable> cdc_;
  std::string name_, dir_;
};

TEST_F(KafkaExactlyOnce, CrashesAtEveryPointAndAfterChunksLeaveNoDuplicateAndNoGap) {
  // Before anything is committed; between chunks of the large transaction; inside a Kafka
  // transaction (its messages in the log, uncommitted) at its first and a later chunk.
  for (const char* point : {"source.after_page:2", "pipeline.after_write:2",
                            "sink.kafka.before_commit:1", "sink.kafka.before_commit:3"}) {
    RunOnce("exactly_once", point);
  }
  // Around the commit of a page with a bookmark, inside the persist of the state file, then
  // after every page until the run ends by itself.
  const int crashes = testing::CrashAroundEveryCommitThenAfterEveryPage([&](const std::string& at) {
    return testing::RunProcess({FAUCET_BINARY, "run", Config("exactly_once")},
                               {{"FAUCET_CRASH_AT", at}});
  });
  EXPECT_GE(crashes, 3);
  RunOnce("exactly_once", "");

  const std::map<int, std::vector<std::string>> history = History();
  ASSERT_EQ(history.size(), static_cast<size_t>(kRows));
  size_t wrong = 0;
  for (const auto& [id, names] : history) {
    std::vector<std::string> want = {"row " + std::to_string(id)};
    if (id % 2 == 0) want.push_back(want.front() + "+");
    if (names != want && ++wrong <= 5) {
      ADD_FAILURE() << "id " << id << ": " << ::testing::PrintToString(names) << ", want "
                    << ::testing::PrintToString(want);
    }
  }
  EXPECT_EQ(wrong, 0u);
}

TEST_F(KafkaExactlyOnce, TheSameCrashDuplicatesWithoutTheTransactions) {
  // The second page with a bookmark (the first medium transaction's) is acknowledged by the
  // brokers, its bookmark not persisted: the resumed run sends its 1,500 messages again.
  RunOnce("at_least_once", "pipeline.after_flush:2");
  RunOnce("at_least_once", "");
  size_t messages = 0;
  for (const auto& [id, names] : History()) messages += names.size();
  EXPECT_EQ(messages, static_cast<size_t>(kRows + kUpdates + kMediumRows));
}

}  // namespace
}  // namespace faucet
