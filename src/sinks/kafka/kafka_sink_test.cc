#include "sinks/kafka/kafka_sink.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

Result<KafkaSinkOptions> Parse(const std::string& yaml) {
  return KafkaSinkOptions::FromConfig(config::Block(
      YAML::Load(yaml), std::make_shared<const std::string>("pipe.yaml"), "sink.config"));
}

std::string ErrorOf(const std::string& yaml) {
  Result<KafkaSinkOptions> o = Parse(yaml);
  return o.ok() ? "ok" : o.status().message();
}

TEST(KafkaSinkOptions, ReadsTheReferenceKeys) {
  Result<KafkaSinkOptions> o = Parse(
      "{brokers: [a:9092, b:9092], topic: {type: fixed, name: 'cdc.{schema}.{table}'}, "
      "key_path: id, value_format: {type: json}, compression: zstd, linger: 20, "
      "message_timeout: 60000, extra_client_config: {client.id: faucet, batch.size: 1000}}");
  ASSERT_OK(o);
  EXPECT_EQ(o->connection.brokers, "a:9092,b:9092");
  EXPECT_EQ(o->topic, "cdc.{schema}.{table}");
  EXPECT_EQ(o->key_path, "id");
  EXPECT_EQ(o->compression, "zstd");
  EXPECT_EQ(o->acks, "all");
  EXPECT_TRUE(o->idempotent);
  EXPECT_EQ(o->linger.count(), 20);
  EXPECT_EQ(o->message_timeout.count(), 60000);
  EXPECT_EQ(o->connection.extra.at("batch.size"), "1000");
}

TEST(KafkaSinkOptions, IdempotenceFollowsAcksUnlessWritten) {
  Result<KafkaSinkOptions> o = Parse("{brokers: a:1, topic: {name: t}, acks: 1}");
  ASSERT_OK(o);
  EXPECT_FALSE(o->idempotent);  // the default does not contradict the acks written
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, acks: 1, idempotent: true}")
                .find("must be all with idempotent: true"),
            std::string::npos);
}

TEST(KafkaSinkOptions, ErrorsNameTheFileAndKey) {
  EXPECT_NE(ErrorOf("{brokers: a:1}").find("pipe.yaml"), std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1}").find("sink.config.topic: is required"), std::string::npos);
  EXPECT_NE(ErrorOf("{topic: {name: t}}").find("brokers"), std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {type: round_robin}}").find("topic.type"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, compression: brotli}").find("compression"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, value_format: {type: avro}}")
                .find("value_format.type"),
            std::string::npos);
}

TEST(KafkaSinkOptions, AuthBecomesLibrdkafkasSecurityProperties) {
  Result<KafkaSinkOptions> sasl = Parse(
      "{brokers: a:1, topic: {name: t}, auth: {mechanism: SCRAM-SHA-512, username: u, "
      "password: p, tls: true, ca_location: /ca.pem}}");
  ASSERT_OK(sasl);
  EXPECT_EQ(sasl->connection.auth.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(sasl->connection.auth.at("sasl.mechanisms"), "SCRAM-SHA-512");
  EXPECT_EQ(sasl->connection.auth.at("sasl.username"), "u");
  EXPECT_EQ(sasl->connection.auth.at("ssl.ca.location"), "/ca.pem");
  Result<KafkaSinkOptions> tls = Parse(
      "{brokers: a:1, topic: {name: t}, auth: {type: tls, certificate_location: /c.pem, "
      "key_location: /k.pem}}");
  ASSERT_OK(tls);
  EXPECT_EQ(tls->connection.auth.at("security.protocol"), "SSL");
  EXPECT_EQ(tls->connection.auth.at("ssl.key.location"), "/k.pem");
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, auth: {username: u}}")
                .find("sink.config.auth.password"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, auth: {mechanism: GSSAPI, username: u, "
                    "password: p}}")
                .find("sink.config.auth.mechanism"),
            std::string::npos);
}

TEST(KafkaSinkOptions, DebeziumJsonTurnsTombstonesOnUnlessWritten) {
  Result<KafkaSinkOptions> json = Parse("{brokers: a:1, topic: {name: t}}");
  ASSERT_OK(json);
  EXPECT_FALSE(json->debezium);
  EXPECT_FALSE(json->tombstones);
  Result<KafkaSinkOptions> dbz =
      Parse("{brokers: a:1, topic: {name: t}, value_format: {type: debezium_json}}");
  ASSERT_OK(dbz);
  EXPECT_TRUE(dbz->debezium);
  EXPECT_EQ(dbz->debezium_server, "faucet");
  EXPECT_TRUE(dbz->tombstones);  // as Debezium's tombstones.on.delete
  Result<KafkaSinkOptions> quiet = Parse(
      "{brokers: a:1, topic: {name: t}, tombstone_on_delete: false, "
      "value_format: {type: debezium_json, server_name: pg1}}");
  ASSERT_OK(quiet);
  EXPECT_FALSE(quiet->tombstones);
  EXPECT_EQ(quiet->debezium_server, "pg1");
}

TEST(KafkaSinkOptions, ExactlyOnceSettingsHaveDefaultsAndBounds) {
  Result<KafkaSinkOptions> plain = Parse("{brokers: a:1, topic: {name: t}}");
  ASSERT_OK(plain);
  EXPECT_FALSE(plain->exactly_once_set);
  EXPECT_EQ(plain->transactional_id_prefix, "faucet");
  EXPECT_EQ(plain->commit_token_topic, "faucet_commit_tokens");
  EXPECT_EQ(plain->transaction_timeout.count(), 60000);
  // A sink that can commit tokens says so whatever its config; the block is what a pipeline
  // without delivery: exactly_once is refused for.
  EXPECT_TRUE(KafkaSink(*plain).Capabilities().atomic_watermark);
  EXPECT_FALSE(KafkaSink(*plain).Capabilities().watermark_configured);

  Result<KafkaSinkOptions> eo = Parse(
      "{brokers: a:1, topic: {name: t}, exactly_once: {transactional_id_prefix: shop, "
      "commit_token_topic: shop_tokens, transaction_timeout: 30000}}");
  ASSERT_OK(eo);
  EXPECT_TRUE(eo->exactly_once_set);
  EXPECT_EQ(eo->transactional_id_prefix, "shop");
  EXPECT_EQ(eo->commit_token_topic, "shop_tokens");
  EXPECT_EQ(eo->transaction_timeout.count(), 30000);
  EXPECT_TRUE(KafkaSink(*eo).Capabilities().watermark_configured);

  // A transaction's messages must be delivered before the brokers abort it: a written
  // message_timeout raises the default transaction timeout, and may not exceed a written one.
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, message_timeout: 90000, "
                    "exactly_once: {transaction_timeout: 30000}}")
                .find("sink.config.message_timeout: must not exceed"),
            std::string::npos);
  Result<KafkaSinkOptions> longer =
      Parse("{brokers: a:1, topic: {name: t}, message_timeout: 90000}");
  ASSERT_OK(longer);
  EXPECT_EQ(longer->transaction_timeout.count(), 90000);
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, exactly_once: {commit_token_topic: ''}}")
                .find("sink.config.exactly_once.commit_token_topic"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topic: {name: t}, exactly_once: {transaction_timeout: 5}}")
                .find("transaction_timeout"),
            std::string::npos);
}

class KafkaSinkShapes : public ::testing::Test {
 protected:
  Change Orders(ChangeOp op, const std::string& id, const std::string& shop) {
    static const RelationPtr relation = [] {
      auto r = std::make_shared<Relation>();
      r->schema = "public";
      r->name = "orders";
      r->columns = {{"id", ValueType::kInt, 20, -1, true},
                    {"shop", ValueType::kText, 25, -1, false}};
      return r;
    }();
    Change c;
    c.op = op;
    c.relation = relation;
    Row row = {Cell::Value(id), Cell::Value(shop)};
    if (op == ChangeOp::kDelete) {
      c.before = row;
    } else {
      c.after = row;
    }
    return c;
  }
  KafkaSink Sink(const std::string& extra) {
    Result<KafkaSinkOptions> o = Parse("{brokers: a:1, " + extra + "}");
    EXPECT_OK(o);
    return KafkaSink(o.ok() ? *o : KafkaSinkOptions{});
  }
};

TEST_F(KafkaSinkShapes, TheKeyIsTheRowsKeyColumnsAsJsonOrTheKeyPathsText) {
  KafkaSink by_key = Sink("topic: {name: t}");
  EXPECT_EQ(by_key.KeyOf(Orders(ChangeOp::kInsert, "42", "x")), R"({"id":42})");
  // A delete's key is its before image's: a compacted topic drops the row.
  EXPECT_EQ(by_key.KeyOf(Orders(ChangeOp::kDelete, "42", "x")), R"({"id":42})");
  KafkaSink by_path = Sink("topic: {name: t}, key_path: shop");
  EXPECT_EQ(by_path.KeyOf(Orders(ChangeOp::kUpdate, "42", "north")), "north");
}

TEST_F(KafkaSinkShapes, TheTopicIsATemplateOfTheTableOrAField) {
  KafkaSink fixed = Sink("topic: {name: 'cdc.{schema}.{table}'}");
  Result<std::string> topic = fixed.TopicOf(Orders(ChangeOp::kInsert, "1", "x"));
  ASSERT_OK(topic);
  EXPECT_EQ(*topic, "cdc.public.orders");

  KafkaSink by_field = Sink("topic: {type: from_path, path: shop}");
  topic = by_field.TopicOf(Orders(ChangeOp::kInsert, "1", "north"));
  ASSERT_OK(topic);
  EXPECT_EQ(*topic, "north");
  KafkaSink by_table = Sink("topic: {type: from_path, path: table}");
  topic = by_table.TopicOf(Orders(ChangeOp::kInsert, "1", "north"));
  ASSERT_OK(topic);
  EXPECT_EQ(*topic, "orders");
  // An empty field names no topic: an error naming the path and the table.
  topic = by_field.TopicOf(Orders(ChangeOp::kInsert, "1", ""));
  ASSERT_FALSE(topic.ok());
  EXPECT_NE(topic.status().message().find("shop"), std::string::npos);
  EXPECT_NE(topic.status().message().find("public.orders"), std::string::npos);
}

}  // namespace
}  // namespace faucet
