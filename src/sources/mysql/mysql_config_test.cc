#include "sources/mysql/mysql_config.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

config::Block MakeBlock(const std::string& yaml) {
  return config::Block(YAML::Load(yaml), std::make_shared<const std::string>("pipe.yaml"),
                       "pipeline.source.config");
}

constexpr const char* kReference =  // the reference system's mysql_cdc_to_jsonl.yaml
    "connection_url: mysql://repl:secret@localhost:3306\n"
    "server_id: 1001\n"
    "start_position:\n"
    "  type: current\n"
    "include_columns: true\n"
    "idle_timeout: 30\n"
    "batch_size: 1000\n";

Result<MysqlCdcConfig> CdcWith(const std::string& extra) {
  return ParseMysqlCdcConfig(
      MakeBlock("connection_url: mysql://repl:secret@localhost:3306\nserver_id: 9\n" + extra));
}

TEST(MysqlCdcConfig, TheReferenceExampleReads) {
  Result<MysqlCdcConfig> c = ParseMysqlCdcConfig(MakeBlock(kReference));
  ASSERT_OK(c);
  EXPECT_EQ(c->endpoint.parts.user, "repl");
  EXPECT_EQ(c->endpoint.parts.database, "");
  EXPECT_EQ(c->server_id, 1001u);
  EXPECT_EQ(c->start_position.kind, MysqlStartPosition::Kind::kCurrent);
  EXPECT_TRUE(c->include_columns);
  EXPECT_EQ(c->idle_timeout, std::chrono::seconds(30));
  EXPECT_EQ(c->batch_size, 1000u);
  EXPECT_TRUE(c->Streams("shop", "orders"));
}

TEST(MysqlCdcConfig, StartPositions) {
  Result<MysqlCdcConfig> fp =
      ParseMysqlCdcConfig(MakeBlock("connection_url: mysql://u@h\nserver_id: 7\n"
                                    "start_position: {type: file_pos, file: binlog.000003, "
                                    "pos: 1234}\n"));
  ASSERT_OK(fp);
  EXPECT_EQ(fp->start_position.kind, MysqlStartPosition::Kind::kFilePos);
  EXPECT_EQ(fp->start_position.file, "binlog.000003");
  EXPECT_EQ(fp->start_position.pos, 1234u);
  Result<MysqlCdcConfig> gtid =
      ParseMysqlCdcConfig(MakeBlock("connection_url: mysql://u@h\nserver_id: 7\n"
                                    "start_position: {type: gtid_set, value: '0-1-100'}\n"));
  ASSERT_OK(gtid);
  EXPECT_EQ(gtid->start_position.gtid_set, "0-1-100");
  Result<MysqlCdcConfig> earliest = ParseMysqlCdcConfig(
      MakeBlock("connection_url: mysql://u@h\nserver_id: 7\nstart_position: {type: earliest}\n"));
  ASSERT_OK(earliest);
  EXPECT_EQ(earliest->start_position.kind, MysqlStartPosition::Kind::kEarliest);
}

TEST(MysqlCdcConfig, TableFiltersIncludeWins) {
  Result<MysqlCdcConfig> c = CdcWith("include_tables: [shop.orders]\nexclude_tables: [shop.x]\n");
  ASSERT_OK(c);
  EXPECT_TRUE(c->Streams("shop", "orders"));
  EXPECT_FALSE(c->Streams("shop", "x"));
  EXPECT_FALSE(c->Streams("shop", "other"));
  Result<MysqlCdcConfig> ex = CdcWith("exclude_tables: [shop.x]\n");
  ASSERT_OK(ex);
  EXPECT_FALSE(ex->Streams("shop", "x"));
  EXPECT_TRUE(ex->Streams("shop", "other"));
}

TEST(MysqlCdcConfig, BadValuesAreLocatedAtTheirKey) {
  auto message = [](const Result<MysqlCdcConfig>& r) { return r.status().message(); };
  Result<MysqlCdcConfig> no_id =
      ParseMysqlCdcConfig(MakeBlock("connection_url: mysql://u:secret@h\n"));
  ASSERT_FALSE(no_id.ok());
  EXPECT_NE(message(no_id).find("server_id"), std::string::npos) << message(no_id);
  EXPECT_NE(message(no_id).find("pipe.yaml"), std::string::npos) << message(no_id);
  for (const char* bad :
       {"include_tables: [orders]\n", "start_position: {type: file_pos, file: a/b}\n",
        "start_position: {type: gtid_set}\n", "start_position: {type: later}\n",
        "emit_schema_changes: true\n", "batch_size: 0\n", "idle_timeout: 0\n"}) {
    Result<MysqlCdcConfig> r = CdcWith(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(message(r).find("secret"), std::string::npos) << message(r);
  }
  Result<MysqlCdcConfig> zero =
      ParseMysqlCdcConfig(MakeBlock("connection_url: mysql://u@h\nserver_id: 0\n"));
  EXPECT_FALSE(zero.ok());
  Result<MysqlCdcConfig> url =
      ParseMysqlCdcConfig(MakeBlock("connection_url: postgres://u:secret@h/db\nserver_id: 3\n"));
  ASSERT_FALSE(url.ok());
  EXPECT_EQ(message(url).find("secret"), std::string::npos) << message(url);
}

}  // namespace
}  // namespace faucet
