// The kafka sink when its broker dies: a broker of the test's own (scripts/services.sh, so the
// other tests' broker is left alone) is killed with SIGKILL while `faucet run` streams
// postgres-cdc -> kafka under writes. Restarted within message_timeout, the run carries on by
// itself and a read_committed consumer then sees every change exactly once (exactly_once);
// left down, the run fails within message_timeout with an error naming the broker, and the
// next run, once the broker is back, delivers everything (at-least-once: nothing lost).
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "sinks/kafka/kafka_test_support.h"
#include "sources/postgres/pg_test_support.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

const std::string kServices = std::string(FAUCET_SOURCE_DIR) + "/scripts/services.sh";
const std::string kBroker = std::string(FAUCET_SOURCE_DIR) + "/scripts/kafka/broker.sh";

class KafkaBrokerCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    services_dir_ = testing::TempDir("kbroker");
    testing::ProcessResult r = testing::RunProcess({"/bin/bash", kServices, "start", "kafka"},
                                                   {{"FAUCET_SERVICES_DIR", services_dir_}});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      for (const char* var : {"FAUCET_TEST_KAFKA_BROKERS=", "FAUCET_SERVICES_RUN_DIR="}) {
        const size_t at = line.find(var);
        if (line.rfind("export ", 0) != 0 || at == std::string::npos) continue;
        const bool brokers = std::strcmp(var, "FAUCET_TEST_KAFKA_BROKERS=") == 0;
        (brokers ? brokers_ : run_dir_) = line.substr(at + std::strlen(var));
      }
    }
    ASSERT_FALSE(brokers_.empty()) << r.output;
    ASSERT_FALSE(run_dir_.empty()) << r.output;
  }
  void TearDown() override {
    testing::RunProcess({"/bin/bash", kServices, "stop", "--all"},
                        {{"FAUCET_SERVICES_DIR", services_dir_}});
  }

  void Broker(const std::string& action) {
    testing::ProcessResult r =
        testing::RunProcess({"/bin/bash", kBroker, action, run_dir_ + "/kafka"});
    ASSERT_EQ(r.exit_code, 0) << action << "\n" << r.output;
  }

  std::string Config(const std::string& delivery, const std::string& source_yaml,
                     const std::string& topic, const std::string& sink_extra) {
    std::string path = dir_ + "/" + delivery + ".yaml";
    std::ofstream(path) << "version: 1\nname: " << prefix_ << "\ndelivery: " << delivery
                        << "\npipeline:\n  source: " << source_yaml
                        << "\n  sink: {type: kafka, config: {brokers: '" << brokers_
                        << "', topic: {name: '" << topic << "'}, linger: 2" << sink_extra << "}}\n"
                        << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n";
    return path;
  }

  // Per id, the values of `v` its messages carry, as a read_committed consumer reads them.
  std::map<int64_t, std::vector<std::string>> History(const std::string& topic) {
    std::map<int64_t, std::vector<std::string>> out;
    for (const kafka::testing::Message& m : kafka::testing::ReadTopic(brokers_, topic)) {
      const Json after = Json::parse(m.value)["after"];
      out[after["id"].get<int64_t>()].push_back(after["v"].get<std::string>());
    }
    return out;
  }

  std::string services_dir_, run_dir_, brokers_;
  const std::string prefix_ = testing::UniqueName("kcrash");
  const std::string dir_ = testing::TempDir("kcrash");
  postgres::testing::TestDb db_;
};

TEST_F(KafkaBrokerCrashTest, ABrokerKilledAndRestartedMidStreamLosesAndDoublesNothing) {
  postgres::testing::CdcTable table(db_, prefix_, "id int8 PRIMARY KEY, v text");
  const std::string topic = prefix_ + ".t";
  // The slot exists before the writes; an idle_timeout that outlives the broker's absence.
  db_.Exec("SELECT pg_create_logical_replication_slot('" + table.slot() + "', 'pgoutput')");
  std::string source = table.SourceYaml();
  source.replace(source.find("idle_timeout: 2"), 15, "idle_timeout: 20");
  const std::string config =
      Config("exactly_once", source, topic,
             ", exactly_once: {commit_token_topic: '" + prefix_ + ".tokens'}");
  std::atomic<bool> stop{false};
  std::atomic<int64_t> rows{0};
  std::thread writer([&] {
    postgres::testing::TestDb w(db_.url());
    for (int64_t id = 1; !stop; ++id) {
      w.Exec("INSERT INTO " + prefix_ + " VALUES (" + std::to_string(id) + ", 'v')");
      rows = id;
      std::this_thread::sleep_for(2ms);
    }
  });
  testing::Process run({FAUCET_BINARY, "run", config}, {});
  ASSERT_TRUE(testing::WaitFor([&] { return rows > 300; }, 60s, "rows before the kill"));
  Broker("kill");
  const int64_t at_kill = rows;
  ASSERT_TRUE(testing::WaitFor([&] { return rows > at_kill + 300; }, 60s, "rows while down"));
  Broker("restart");
  const int64_t at_restart = rows;
  ASSERT_TRUE(testing::WaitFor([&] { return rows > at_restart + 300; }, 60s, "rows after"));
  stop = true;
  writer.join();
  testing::ProcessResult r = run.Wait();  // ends after idle_timeout
  ASSERT_EQ(r.exit_code, 0) << r.output;

  const auto history = History(topic);
  EXPECT_EQ(history.size(), static_cast<size_t>(rows.load()));
  size_t wrong = 0;
  for (const auto& [id, values] : history) {
    if (values.size() != 1 && ++wrong <= 5) ADD_FAILURE() << "id " << id << ": " << values.size();
  }
  EXPECT_EQ(wrong, 0u);
}

TEST_F(KafkaBrokerCrashTest, ABrokerThatStaysDownFailsTheRunAndTheNextRunDeliversEverything) {
  postgres::testing::CdcTable table(db_, prefix_, "id int8 PRIMARY KEY, v text");
  const std::string topic = prefix_ + ".t";
  const std::string config =
      Config("at_least_once", table.SourceYaml(), topic, ", message_timeout: 5000");
  ASSERT_EQ(testing::RunProcess({FAUCET_BINARY, "run", config}).exit_code, 0);  // the slot
  db_.Exec("INSERT INTO " + prefix_ + " SELECT g, 'v' FROM generate_series(1, 1000) g");
  ASSERT_EQ(testing::RunProcess({FAUCET_BINARY, "run", config}).exit_code, 0);

  Broker("kill");
  db_.Exec("INSERT INTO " + prefix_ + " SELECT g, 'v' FROM generate_series(1001, 2000) g");
  const auto began = std::chrono::steady_clock::now();
  testing::ProcessResult failed = testing::RunProcess({FAUCET_BINARY, "run", config});
  EXPECT_NE(failed.exit_code, 0) << failed.output;
  EXPECT_NE(failed.output.find("kafka " + brokers_), std::string::npos) << failed.output;
  EXPECT_LT(std::chrono::steady_clock::now() - began, 60s) << "failed within message_timeout";

  Broker("restart");
  testing::ProcessResult resumed = testing::RunProcess({FAUCET_BINARY, "run", config});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  const auto history = History(topic);
  EXPECT_EQ(history.size(), 2000u);  // at-least-once: each id at least once
}

}  // namespace
}  // namespace faucet
