#include "sources/postgres/postgres_config.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

config::Block MakeBlock(const std::string& yaml) {
  return config::Block(YAML::Load(yaml), std::make_shared<const std::string>("pipe.yaml"),
                       "pipeline.source.config");
}

constexpr const char* kMinimal =
    "connection_url: postgres://u:secret@db:5432/app\n"
    "slot_name: faucet_slot\n"
    "publication_name: faucet_pub\n";

Result<PostgresCdcConfig> CdcWith(const std::string& extra) {
  return ParsePostgresCdcConfig(MakeBlock(std::string(kMinimal) + extra));
}

TEST(PostgresCdcConfig, DefaultsFollowTheIssue) {
  Result<PostgresCdcConfig> c = ParsePostgresCdcConfig(MakeBlock(kMinimal));
  ASSERT_OK(c);
  EXPECT_EQ(c->slot_name, "faucet_slot");
  EXPECT_EQ(c->publication_name, "faucet_pub");
  EXPECT_TRUE(c->create_slot_if_missing);
  EXPECT_FALSE(c->temporary_slot);
  EXPECT_FALSE(c->start_lsn.has_value());
  EXPECT_EQ(c->proto_version, 2);
  EXPECT_EQ(c->idle_timeout, std::chrono::seconds(30));
  EXPECT_EQ(c->max_cycle_duration, std::chrono::seconds(300));
  EXPECT_EQ(c->status_update_interval, std::chrono::seconds(10));
  EXPECT_EQ(c->batch_size, 1000u);
  EXPECT_EQ(c->slot_acquire_retries, 10);
  EXPECT_EQ(c->tls.mode, PostgresTlsMode::kFromUrl);
}

TEST(PostgresCdcConfig, ReadsEveryKey) {
  Result<PostgresCdcConfig> c = ParsePostgresCdcConfig(MakeBlock(
      std::string(kMinimal) +
      "create_slot_if_missing: false\nslot_type: temporary\nstart_lsn: 16/B374D848\n"
      "proto_version: 1\nidle_timeout: 5\nmax_cycle_duration: 60\nstatus_update_interval: 2\n"
      "batch_size: 10\nslot_acquire_retries: 3\ntls: {mode: verify_full, ca_path: /ca.pem}\n"));
  ASSERT_OK(c);
  EXPECT_FALSE(c->create_slot_if_missing);
  EXPECT_TRUE(c->temporary_slot);
  EXPECT_EQ(c->start_lsn->ToString(), "16/B374D848");
  EXPECT_EQ(c->proto_version, 1);
  EXPECT_EQ(c->idle_timeout, std::chrono::seconds(5));
  EXPECT_EQ(c->max_cycle_duration, std::chrono::seconds(60));
  EXPECT_EQ(c->status_update_interval, std::chrono::seconds(2));
  EXPECT_EQ(c->batch_size, 10u);
  EXPECT_EQ(c->slot_acquire_retries, 3);
  EXPECT_EQ(c->tls.mode, PostgresTlsMode::kVerifyFull);
  EXPECT_EQ(*c->tls.ca_path, "/ca.pem");
}

TEST(PostgresCdcConfig, MissingRequiredKeysAreInvalidArguments) {
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"connection_url", "postgres://h/d"}, {"slot_name", "s"}, {"publication_name", "p"}};
  for (const auto& [key, value] : keys) {
    std::string yaml;
    for (const auto& [k, v] : keys) {
      if (k != key) yaml += k + ": " + v + "\n";
    }
    Status s = ParsePostgresCdcConfig(MakeBlock(yaml)).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << key;
    EXPECT_NE(s.message().find(key), std::string::npos) << s.message();
  }
}

TEST(PostgresCdcConfig, InvalidValuesAreLocatedErrors) {
  struct Case {
    const char* yaml;
    const char* key;
  };
  for (const Case& c : {
           Case{"slot_name: Bad-Slot\n", "slot_name"},
           Case{"slot_type: forever\n", "slot_type"},
           Case{"start_lsn: nope\n", "start_lsn"},
           Case{"proto_version: 3\n", "proto_version"},
           Case{"idle_timeout: 0\n", "idle_timeout"},
           Case{"max_cycle_duration: -1\n", "max_cycle_duration"},
           Case{"status_update_interval: 0\n", "status_update_interval"},
           Case{"batch_size: 0\n", "batch_size"},
           Case{"create_slot_if_missing: maybe\n", "create_slot_if_missing"},
           Case{"tls: {mode: sometimes}\n", "mode"},
           Case{"tls: {ca_path: /x}\n", "mode"},
           Case{"tls: {mode: require, ca_path: /x}\n", "ca_path"},
       }) {
    // A YAML mapping cannot repeat slot_name: drop the valid one for that case.
    std::string yaml = kMinimal;
    if (std::string(c.key) == "slot_name") {
      yaml = "connection_url: postgres://h/d\npublication_name: p\n";
    }
    Status s = ParsePostgresCdcConfig(MakeBlock(yaml + c.yaml)).status();
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_NE(s.message().find(c.key), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("pipe.yaml:"), std::string::npos) << s.message();
  }
}

// The status interval stays below the idle timeout: when only one of them is written, the
// other's default follows it where the plain default (30 s, 10 s) would contradict it; a
// consistent pair is kept as written.
TEST(PostgresCdcConfig, IdleTimeoutAndStatusIntervalDefaultsFollowTheWrittenValue) {
  using namespace std::chrono_literals;
  struct Case {
    const char* yaml;
    std::chrono::milliseconds idle;
    std::chrono::milliseconds status;
  };
  for (const Case& c : {
           Case{"idle_timeout: 3\n", 3s, 1500ms},  // status: idle / 2
           Case{"idle_timeout: 1\n", 1s, 500ms},
           Case{"idle_timeout: 10\n", 10s, 5s},
           Case{"idle_timeout: 11\n", 11s, 10s},            // the plain default fits
           Case{"status_update_interval: 40\n", 80s, 40s},  // idle: 2 x status
           Case{"status_update_interval: 30\n", 60s, 30s},
           Case{"status_update_interval: 29\n", 30s, 29s},  // the plain default fits
           Case{"idle_timeout: 5\nstatus_update_interval: 4\n", 5s, 4s},
       }) {
    Result<PostgresCdcConfig> config = CdcWith(c.yaml);
    ASSERT_OK(config) << c.yaml << config.status().ToString();
    EXPECT_EQ(config->idle_timeout, c.idle) << c.yaml;
    EXPECT_EQ(config->status_update_interval, c.status) << c.yaml;
  }
}

TEST(PostgresCdcConfig, ContradictoryIdleTimeoutAndStatusIntervalAreALocatedError) {
  Status s = CdcWith("idle_timeout: 5\nstatus_update_interval: 5\n").status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("pipe.yaml:5:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("status_update_interval: must be less than idle_timeout (5 s)"),
            std::string::npos)
      << s.message();
}

// libpq's message for this URL quotes the whole URI, password included.
TEST(PostgresCdcConfig, BadUrlIsAnErrorThatHidesThePassword) {
  Status s = ParsePostgresCdcConfig(MakeBlock("connection_url: postgres://u:hunter2@[::1/d\n"
                                              "slot_name: s\npublication_name: p\n"))
                 .status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("connection_url"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("hunter2"), std::string::npos) << s.message();
}

TEST(PostgresQueryConfig, ReadsQueryAndBatchSize) {
  Result<PostgresQueryConfig> c = ParsePostgresQueryConfig(
      MakeBlock("connection_url: postgres://h/d\nquery: SELECT 1\nbatch_size: 7\n"));
  ASSERT_OK(c);
  EXPECT_EQ(c->query, "SELECT 1");
  EXPECT_EQ(c->batch_size, 7u);
  EXPECT_FALSE(ParsePostgresQueryConfig(MakeBlock("connection_url: postgres://h/d\n")).ok());
}

}  // namespace
}  // namespace faucet
