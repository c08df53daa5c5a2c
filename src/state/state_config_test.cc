#include "state/state_config.h"

#include <gtest/gtest.h>

#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet {
namespace {

config::Block BlockOf(const std::string& yaml) {
  return config::Block(YAML::Load(yaml), std::make_shared<const std::string>("pipe.yaml"),
                       "pipeline.state.config");
}

// The error's message, which must name the file, the line and the key.
std::string ErrorOf(const std::string& type, const std::string& yaml) {
  Result<StateConfig> cfg = ParseStateConfig(type, BlockOf(yaml));
  EXPECT_FALSE(cfg.ok()) << yaml;
  if (cfg.ok()) return "";
  EXPECT_EQ(cfg.status().code(), StatusCode::kInvalidArgument);
  return cfg.status().message();
}

TEST(ParseStateConfig, FileNeedsAPath) {
  Result<StateConfig> cfg = ParseStateConfig("file", BlockOf("path: ./state"));
  ASSERT_OK(cfg);
  EXPECT_EQ(cfg->type, StateType::kFile);
  EXPECT_EQ(cfg->path, "./state");

  EXPECT_NE(ErrorOf("file", "other: 1").find("pipeline.state.config.path: is required"),
            std::string::npos);
}

TEST(ParseStateConfig, FileEncryptionIsRefusedNotIgnored) {
  std::string error = ErrorOf("file", "path: ./state\nencryption: {key: k}\n");
  EXPECT_NE(error.find("pipe.yaml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("encryption"), std::string::npos) << error;
}

TEST(ParseStateConfig, PostgresDefaultsAreTheReferenceDefaults) {
  Result<StateConfig> cfg =
      ParseStateConfig("postgres", BlockOf("url: postgres://u:p@db.internal/app"));
  ASSERT_OK(cfg);
  EXPECT_EQ(cfg->type, StateType::kPostgres);
  EXPECT_EQ(cfg->url, "postgres://u:p@db.internal/app");
  EXPECT_EQ(cfg->table, "faucet_state");
  EXPECT_FALSE(cfg->ensure_table);
  EXPECT_EQ(cfg->max_connections, 5);
}

TEST(ParseStateConfig, PostgresReadsEveryKey) {
  config::Block block = BlockOf(
      "url: host=db dbname=app\ntable: Pipeline_State_2\nensure_table: true\n"
      "max_connections: 2\nfoo: 1\n");
  Result<StateConfig> cfg = ParseStateConfig("postgres", block);
  ASSERT_OK(cfg);
  EXPECT_EQ(cfg->table, "Pipeline_State_2");
  EXPECT_TRUE(cfg->ensure_table);
  EXPECT_EQ(cfg->max_connections, 2);
  EXPECT_EQ(block.UnreadKeys(), std::vector<std::string>{"foo"});
}

TEST(ParseStateConfig, PostgresConnectionUrlIsNamedAsTheWrongKey) {
  std::string error = ErrorOf("postgres", "table: t\nconnection_url: postgres://db/app\n");
  EXPECT_NE(error.find("pipe.yaml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("connection_url"), std::string::npos) << error;
  EXPECT_NE(error.find("`url`"), std::string::npos) << error;
}

TEST(ParseStateConfig, PostgresMissingUrlIsRequired) {
  EXPECT_NE(ErrorOf("postgres", "table: t").find("pipeline.state.config.url: is required"),
            std::string::npos);
}

TEST(ParseStateConfig, PostgresMalformedUrlIsRejectedWithoutItsPassword) {
  std::string error = ErrorOf("postgres", "url: postgres://u:hunter2@db/app?bogus=1\n");
  EXPECT_NE(error.find("pipe.yaml:1:"), std::string::npos) << error;
  EXPECT_NE(error.find("pipeline.state.config.url"), std::string::npos) << error;
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
}

TEST(ParseStateConfig, PostgresTableMustBeAPlainIdentifier) {
  for (const std::string& table :
       std::vector<std::string>{"\"a;b\"", "public.state", "''", std::string(64, 'x')}) {
    std::string error = ErrorOf("postgres", "url: postgres://db/app\ntable: " + table);
    EXPECT_NE(error.find("pipe.yaml:2:"), std::string::npos) << error;
    EXPECT_NE(error.find("pipeline.state.config.table"), std::string::npos) << error;
  }
}

TEST(ParseStateConfig, PostgresMaxConnectionsMustBePositive) {
  std::string error = ErrorOf("postgres", "url: postgres://db/app\nmax_connections: 0\n");
  EXPECT_NE(error.find("pipe.yaml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("max_connections"), std::string::npos) << error;
}

TEST(ParseStateConfig, PostgresEnsureTableMustBeABoolean) {
  std::string error = ErrorOf("postgres", "url: postgres://db/app\nensure_table: perhaps\n");
  EXPECT_NE(error.find("pipe.yaml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("ensure_table"), std::string::npos) << error;
}

TEST(ParseStateConfig, RedisDefaultsToTheFaucetNamespace) {
  Result<StateConfig> cfg = ParseStateConfig("redis", BlockOf("url: redis://cache:6379/2"));
  ASSERT_OK(cfg);
  EXPECT_EQ(cfg->type, StateType::kRedis);
  EXPECT_EQ(cfg->redis_namespace, "faucet");

  cfg = ParseStateConfig("redis", BlockOf("url: redis://cache\nnamespace: team-a.prod_1"));
  ASSERT_OK(cfg);
  EXPECT_EQ(cfg->redis_namespace, "team-a.prod_1");
}

TEST(ParseStateConfig, RedisNamespaceMustUseTheReferenceAlphabet) {
  std::string error = ErrorOf("redis", "url: redis://cache\nnamespace: \"a:b\"\n");
  EXPECT_NE(error.find("pipe.yaml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("pipeline.state.config.namespace"), std::string::npos) << error;
}

TEST(ParseStateConfig, RedisMalformedUrlIsRejectedWithoutItsPassword) {
  std::string error = ErrorOf("redis", "namespace: x\nurl: redis://:hunter2@cache:notaport\n");
  EXPECT_NE(error.find("pipe.yaml:2:"), std::string::npos) << error;
  EXPECT_NE(error.find("pipeline.state.config.url"), std::string::npos) << error;
  EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
}

TEST(ParseStateConfig, MemoryTakesNoKeys) {
  Result<StateConfig> cfg = ParseStateConfig("memory", BlockOf(""));
  ASSERT_OK(cfg);
  EXPECT_EQ(cfg->type, StateType::kMemory);
}

TEST(ParseStateConfig, UnknownTypeIsNamedWithTheKnownOnes) {
  std::string error = ErrorOf("etcd", "endpoints: [a]");
  EXPECT_NE(error.find("'etcd'"), std::string::npos) << error;
  EXPECT_NE(error.find("file, postgres, redis, memory"), std::string::npos) << error;
  EXPECT_NE(error.find("pipe.yaml"), std::string::npos) << error;
}

TEST(OpenStateStore, FileCreatesItsDirectory) {
  std::string dir = testing::TempDir("openstate") + "/nested/state";
  StateConfig cfg{.type = StateType::kFile, .path = dir};
  Result<std::unique_ptr<StateStore>> store = OpenStateStore(cfg);
  ASSERT_OK(store);
  EXPECT_EQ((*store)->durability(), Durability::kDurable);
  ASSERT_OK((*store)->Put("p::row-0", Json{{"last_id", 7}}));
  EXPECT_EQ(*(*store)->Get("p::row-0"), (Json{{"last_id", 7}}));
}

// The gates judge a store by its type before opening it: that judgement matches what the
// opened stores report (postgres and redis are checked against their servers in
// tests/integration/state_stores_test.cc).
TEST(DurabilityOf, MatchesWhatTheOpenedStoreReports) {
  StateConfig file{.type = StateType::kFile, .path = testing::TempDir("durability")};
  EXPECT_EQ(DurabilityOf(StateType::kFile), (*OpenStateStore(file))->durability());
  StateConfig memory{.type = StateType::kMemory};
  EXPECT_EQ(DurabilityOf(StateType::kMemory), (*OpenStateStore(memory))->durability());
  EXPECT_EQ(DurabilityOf(StateType::kPostgres), Durability::kDurable);
  EXPECT_EQ(DurabilityOf(StateType::kRedis), Durability::kWeak);
}

TEST(OpenStateStore, UnreachableRedisIsUnavailable) {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  StateConfig cfg{.type = StateType::kRedis, .url = "redis://:hunter2@127.0.0.1:1"};
  Result<std::unique_ptr<StateStore>> store = OpenStateStore(cfg);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store.status().message().find("hunter2"), std::string::npos)
      << store.status().message();
}

TEST(OpenStateStore, UnreachablePostgresIsUnavailable) {
  StateConfig cfg{.type = StateType::kPostgres, .url = "postgres://u:hunter2@127.0.0.1:1/db"};
  Result<std::unique_ptr<StateStore>> store = OpenStateStore(cfg);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store.status().message().find("hunter2"), std::string::npos)
      << store.status().message();
}

}  // namespace
}  // namespace faucet
