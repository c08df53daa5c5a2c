#include "sources/kafka/kafka_source.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

Result<KafkaSourceOptions> Parse(const std::string& yaml) {
  return KafkaSourceOptions::FromConfig(config::Block(
      YAML::Load(yaml), std::make_shared<const std::string>("pipe.yaml"), "source.config"));
}

std::string ErrorOf(const std::string& yaml) {
  Result<KafkaSourceOptions> o = Parse(yaml);
  return o.ok() ? "ok" : o.status().message();
}

TEST(KafkaSourceOptions, ReadsTheReferenceKeys) {
  Result<KafkaSourceOptions> o = Parse(
      "{brokers: [a:9092, b:9092], topics: [orders, items], group_id: g, "
      "auto_offset_reset: latest, value_format: {type: debezium_json}, idle_timeout: 5, "
      "batch_size: 50, session_timeout: 10000, on_decode_error: skip, "
      "extra_client_config: {fetch.min.bytes: 1000}}");
  ASSERT_OK(o);
  EXPECT_EQ(o->connection.brokers, "a:9092,b:9092");
  EXPECT_EQ(o->topics, (std::vector<std::string>{"orders", "items"}));
  EXPECT_EQ(o->group_id, "g");
  EXPECT_EQ(o->auto_offset_reset, "latest");
  EXPECT_EQ(o->value_format, kafka::ValueFormat::kDebeziumJson);
  EXPECT_EQ(o->idle_timeout.count(), 5000);
  EXPECT_EQ(o->batch_size, 50);
  EXPECT_EQ(o->session_timeout.count(), 10000);
  EXPECT_TRUE(o->skip_undecodable);
  EXPECT_EQ(o->connection.extra.at("fetch.min.bytes"), "1000");

  Result<KafkaSourceOptions> d = Parse("{brokers: a:1, topics: t, group_id: g}");
  ASSERT_OK(d);
  EXPECT_EQ(d->topics, std::vector<std::string>{"t"});
  EXPECT_EQ(d->auto_offset_reset, "earliest");
  EXPECT_EQ(d->value_format, kafka::ValueFormat::kJson);
  EXPECT_FALSE(d->skip_undecodable);
}

TEST(KafkaSourceOptions, ErrorsNameTheKey) {
  EXPECT_NE(ErrorOf("{brokers: a:1, topics: t}").find("source.config.group_id"), std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, group_id: g}").find("source.config.topics"), std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topics: t, group_id: g, auto_offset_reset: smallest}")
                .find("source.config.auto_offset_reset"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topics: t, group_id: g, on_decode_error: dlq}")
                .find("source.config.on_decode_error"),
            std::string::npos);
  // The offsets are the source's to commit, and its hand-over is the eager protocol's.
  EXPECT_NE(ErrorOf("{brokers: a:1, topics: t, group_id: g, extra_client_config: "
                    "{enable.auto.commit: 'true'}}")
                .find("enable.auto.commit"),
            std::string::npos);
  EXPECT_NE(ErrorOf("{brokers: a:1, topics: t, group_id: g, extra_client_config: "
                    "{partition.assignment.strategy: cooperative-sticky}}")
                .find("cooperative"),
            std::string::npos);
}

TEST(KafkaSource, AnAcknowledgedBookmarkMustBeItsOwn) {
  Result<KafkaSourceOptions> o = Parse("{brokers: a:1, topics: t, group_id: g}");
  ASSERT_OK(o);
  KafkaSource source(*o);
  EXPECT_OK(source.Acknowledge(Bookmark{Json::parse(R"({"offsets":{"t":{"0":5,"3":7}}})")}));
  for (const char* bad : {R"({"last_lsn":"0/1"})", R"({"offsets":{"t":{"x":5}}})",
                          R"({"offsets":{"t":{"0":-1}}})", R"({"offsets":{"t":[1]}})"}) {
    Status s = source.Acknowledge(Bookmark{Json::parse(bad)});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find(bad), std::string::npos) << s.message();
  }
  EXPECT_EQ(source.Open(Bookmark{Json::parse(R"({"file":"b.1","pos":4})")}).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace faucet
