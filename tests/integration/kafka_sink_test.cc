// The kafka sink on the real broker scripts/services.sh starts: what one message carries (its
// topic, key and value), an unreachable broker, and postgres-cdc -> kafka through `faucet run`
// killed with SIGKILL while a writer changes the table: a consumer then finds every committed
// change (at-least-once) and each key's last message carries the source's last value.
#include "sinks/kafka/kafka_sink.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "sources/postgres/pg_test_support.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/status_matchers.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

struct Message {
  std::string key;
  std::string value;
};

// Every message of `topic` now, in partition order (the tests' topics have one partition):
// read from the beginning of each partition to its end. Empty when the topic does not exist.
std::vector<Message> ReadTopic(const std::string& brokers, const std::string& topic) {
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [k, v] :
       std::map<std::string, std::string>{{"bootstrap.servers", brokers},
                                          {"group.id", testing::UniqueName("reader")},
                                          {"enable.partition.eof", "true"},
                                          {"enable.auto.commit", "false"},
                                          {"isolation.level", "read_committed"}}) {
    EXPECT_EQ(rd_kafka_conf_set(conf, k.c_str(), v.c_str(), error, sizeof error), RD_KAFKA_CONF_OK)
        << error;
  }
  std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)> consumer(
      rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error), rd_kafka_destroy);
  if (!consumer) {
    ADD_FAILURE() << error;
    return {};
  }
  const rd_kafka_metadata_t* metadata = nullptr;
  std::unique_ptr<rd_kafka_topic_t, decltype(&rd_kafka_topic_destroy)> handle(
      rd_kafka_topic_new(consumer.get(), topic.c_str(), nullptr), rd_kafka_topic_destroy);
  if (rd_kafka_metadata(consumer.get(), 0, handle.get(), &metadata, 10'000) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return {};
  }
  rd_kafka_topic_partition_list_t* partitions = rd_kafka_topic_partition_list_new(1);
  if (metadata->topic_cnt == 1 && metadata->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    for (int i = 0; i < metadata->topics[0].partition_cnt; ++i) {
      rd_kafka_topic_partition_list_add(partitions, topic.c_str(),
                                        metadata->topics[0].partitions[i].id)
          ->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
  }
  rd_kafka_metadata_destroy(metadata);
  const int count = partitions->cnt;
  rd_kafka_assign(consumer.get(), partitions);
  rd_kafka_topic_partition_list_destroy(partitions);
  std::vector<Message> out;
  int ended = 0;
  const auto deadline = std::chrono::steady_clock::now() + 30s * testing::TimeScale();
  while (ended < count && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ++ended;
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      out.push_back({std::string(static_cast<const char*>(m->key), m->key_len),
                     std::string(static_cast<const char*>(m->payload), m->len)});
    } else {
      ADD_FAILURE() << rd_kafka_message_errstr(m);
    }
    rd_kafka_message_destroy(m);
  }
  EXPECT_EQ(ended, count) << "topic " << topic << " not read to its end";
  rd_kafka_consumer_close(consumer.get());
  return out;
}

class KafkaSinkTest : public ::testing::Test {
 protected:
  const std::string brokers_ = testing::RequireEnv("FAUCET_TEST_KAFKA_BROKERS");
  const std::string prefix_ = testing::UniqueName("kafka");
};

TEST_F(KafkaSinkTest, EachChangeIsAMessageOnItsTablesTopicKeyedByItsRow) {
  auto orders = std::make_shared<Relation>();
  orders->schema = "shop";
  orders->name = "orders";
  orders->columns = {{"id", ValueType::kInt, 20, -1, true}, {"v", ValueType::kText, 25, -1}};
  auto change = [&](ChangeOp op, const char* id, const char* v) {
    Change c;
    c.op = op;
    c.relation = orders;
    c.commit_position = 0x1000;
    (op == ChangeOp::kDelete ? c.before : c.after) = Row{Cell::Value(id), Cell::Value(v)};
    return c;
  };
  Result<KafkaSinkOptions> options = KafkaSinkOptions::FromConfig(
      config::Block(YAML::Load("{brokers: '" + brokers_ + "', topic: {name: '" + prefix_ +
                               ".{schema}.{table}'}}"),
                    std::make_shared<const std::string>("pipe.yaml"), "sink.config"));
  ASSERT_OK(options);
  KafkaSink sink(*options);
  ASSERT_OK(sink.Open(false));
  Page page;
  page.changes.push_back(change(ChangeOp::kInsert, "1", "a"));
  page.changes.push_back(change(ChangeOp::kInsert, "2", "b"));
  page.changes.push_back(change(ChangeOp::kUpdate, "1", "a2"));
  page.changes.push_back(change(ChangeOp::kDelete, "2", "b"));
  ASSERT_OK(sink.Write(page));
  ASSERT_OK(sink.Flush());

  // Flushed means acknowledged: every message is there at once, in order.
  const std::vector<Message> got = ReadTopic(brokers_, prefix_ + ".shop.orders");
  ASSERT_EQ(got.size(), 4u);
  const char* keys[] = {R"({"id":1})", R"({"id":2})", R"({"id":1})", R"({"id":2})"};
  const char* ops[] = {"c", "c", "u", "d"};
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].key, keys[i]);
    const Json value = Json::parse(got[i].value);
    EXPECT_EQ(value["op"], ops[i]) << got[i].value;
    EXPECT_EQ(value["table"], "orders") << got[i].value;
  }
  EXPECT_EQ(Json::parse(got[2].value)["after"]["v"], "a2");
  EXPECT_EQ(Json::parse(got[3].value)["before"]["id"], 2);
}

TEST_F(KafkaSinkTest, ABrokerThatDoesNotAnswerIsAnErrorNamingIt) {
  Result<KafkaSinkOptions> options = KafkaSinkOptions::FromConfig(
      config::Block(YAML::Load("{brokers: '127.0.0.1:1', topic: {name: t}}"),
                    std::make_shared<const std::string>("pipe.yaml"), "sink.config"));
  ASSERT_OK(options);
  KafkaSink sink(*options);
  const Status opened = sink.Open(false);
  EXPECT_EQ(opened.code(), StatusCode::kUnavailable) << opened.ToString();
  EXPECT_NE(opened.message().find("127.0.0.1:1"), std::string::npos) << opened.ToString();
}

// postgres-cdc -> kafka with `faucet run`, SIGKILLed twice while a writer inserts and updates:
// every row reaches the topic, and each key's last message is its last change.
TEST_F(KafkaSinkTest, PostgresChangesSurviveSigkillsAtLeastOnce) {
  postgres::testing::TestDb db;
  postgres::testing::CdcTable table(db, prefix_, "id int8 PRIMARY KEY, v text");
  const std::string topic = prefix_ + ".topic";
  const std::string dir = testing::TempDir("kafka");
  const std::string config = dir + "/pipe.yaml";
  std::ofstream(config) << "version: 1\nname: " << prefix_ << "\npipeline:\n"
                        << "  source: " << table.SourceYaml() << "\n"
                        << "  sink: {type: kafka, config: {brokers: '" << brokers_
                        << "', topic: {type: fixed, name: '" << topic << "'}, linger: 2}}\n"
                        << "  state: {type: file, config: {path: '" << dir << "/state'}}\n";
  // The slot exists from here: every change after it is streamed.
  ASSERT_EQ(testing::RunProcess({FAUCET_BINARY, "run", config}).exit_code, 0);

  std::atomic<bool> stop{false};
  std::atomic<int64_t> rows{0};
  std::thread writer([&] {
    postgres::testing::TestDb w(db.url());
    for (int64_t id = 1; !stop; ++id) {
      w.Exec("INSERT INTO " + prefix_ + " VALUES (" + std::to_string(id) + ", 'v')");
      if (id % 3 == 0) {
        w.Exec("UPDATE " + prefix_ + " SET v = v || 'x' WHERE id = " + std::to_string(id / 2));
      }
      rows = id;
    }
  });
  auto run = std::make_unique<testing::Process>(
      std::vector<std::string>{FAUCET_BINARY, "run", config}, std::map<std::string, std::string>{});
  for (int kill = 0; kill < 2; ++kill) {
    const int64_t before = rows;
    ASSERT_TRUE(testing::WaitFor([&] { return rows > before + 300; }, 60s, "more rows"));
    run->Kill(SIGKILL);
    run->Wait();
    run = std::make_unique<testing::Process>(std::vector<std::string>{FAUCET_BINARY, "run", config},
                                             std::map<std::string, std::string>{});
  }
  const int64_t last = rows + 200;
  ASSERT_TRUE(testing::WaitFor([&] { return rows > last; }, 60s, "more rows"));
  stop = true;
  writer.join();
  testing::ProcessResult r = run->Wait();  // ends after idle_timeout
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::map<int64_t, std::string> want;
  for (const auto& row : db.Column("SELECT id || '=' || v FROM " + prefix_ + " ORDER BY id")) {
    const size_t eq = row->find('=');
    want[std::stoll(row->substr(0, eq))] = row->substr(eq + 1);
  }
  std::map<int64_t, std::string> last_value;
  size_t messages = 0;
  for (const Message& m : ReadTopic(brokers_, topic)) {
    const Json after = Json::parse(m.value)["after"];
    last_value[after["id"].get<int64_t>()] = after["v"].get<std::string>();
    EXPECT_EQ(m.key, R"({"id":)" + std::to_string(after["id"].get<int64_t>()) + "}");
    ++messages;
  }
  EXPECT_GE(messages, want.size());
  EXPECT_EQ(last_value.size(), want.size());
  size_t differ = 0;
  for (const auto& [id, v] : want) {
    if (last_value[id] != v && ++differ <= 5) {
      ADD_FAILURE() << "id " << id << ": source " << v << ", last message " << last_value[id];
    }
  }
  EXPECT_EQ(differ, 0u);
}

}  // namespace
}  // namespace faucet
