#include "sinks/kafka/kafka_test_support.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "testing/services.h"

namespace faucet::kafka::testing {

using namespace std::chrono_literals;

std::vector<Message> ReadTopic(const std::string& brokers, const std::string& topic) {
  Result<Client> consumer = NewReader({{"bootstrap.servers", brokers}}, "read_committed", "reader");
  if (!consumer.ok()) {
    ADD_FAILURE() << consumer.status().ToString();
    return {};
  }
  rd_kafka_t* c = consumer->get();
  const rd_kafka_metadata_t* metadata = nullptr;
  std::unique_ptr<rd_kafka_topic_t, decltype(&rd_kafka_topic_destroy)> handle(
      rd_kafka_topic_new(c, topic.c_str(), nullptr), rd_kafka_topic_destroy);
  if (rd_kafka_metadata(c, 0, handle.get(), &metadata, 10'000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
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
  rd_kafka_assign(c, partitions);
  rd_kafka_topic_partition_list_destroy(partitions);
  std::vector<Message> out;
  int ended = 0;
  const auto deadline = std::chrono::steady_clock::now() + 60s * faucet::testing::TimeScale();
  while (ended < count && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(c, 200);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ++ended;
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      Message& got = out.emplace_back();
      if (m->key != nullptr) got.key.assign(static_cast<const char*>(m->key), m->key_len);
      if (m->payload != nullptr) got.value.assign(static_cast<const char*>(m->payload), m->len);
      got.tombstone = m->payload == nullptr;
      got.partition = m->partition;
      rd_kafka_headers_t* headers = nullptr;
      if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name = nullptr;
        const void* value = nullptr;
        size_t size = 0;
        for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
                           RD_KAFKA_RESP_ERR_NO_ERROR;
             ++i) {
          got.headers[name] = std::string(static_cast<const char*>(value), size);
        }
      }
    } else {
      ADD_FAILURE() << rd_kafka_message_errstr(m);
    }
    rd_kafka_message_destroy(m);
  }
  EXPECT_EQ(ended, count) << "topic " << topic << " not read to its end";
  rd_kafka_consumer_close(c);
  return out;
}

void CreateTopic(const std::string& brokers, const std::string& topic, int partitions) {
  Result<rd_kafka_conf_t*> conf = NewConf({{"bootstrap.servers", brokers}}, "admin");
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  Result<Client> client = NewClient(RD_KAFKA_PRODUCER, *conf, "admin");
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const Status created = kafka::CreateTopic(client->get(), topic, partitions, {}, 30s, topic);
  ASSERT_TRUE(created.ok()) << created.ToString();
}

TransactionalProducer::TransactionalProducer(const std::string& brokers,
                                             const std::string& transactional_id) {
  Result<rd_kafka_conf_t*> conf =
      NewConf({{"bootstrap.servers", brokers}, {"transactional.id", transactional_id}}, "raw");
  EXPECT_TRUE(conf.ok()) << conf.status().ToString();
  if (!conf.ok()) return;
  Result<Client> producer = NewClient(RD_KAFKA_PRODUCER, *conf, "raw");
  EXPECT_TRUE(producer.ok()) << producer.status().ToString();
  if (!producer.ok()) return;
  producer_ = std::move(*producer);
  if (rd_kafka_error_t* e = rd_kafka_init_transactions(producer_.get(), 30'000)) {
    ADD_FAILURE() << rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
  }
}

void TransactionalProducer::ProduceOpen(const std::string& topic, const std::string& key,
                                        const std::string& value) {
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(producer_.get())) {
    ADD_FAILURE() << rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
    return;
  }
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      producer_.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
      RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()), RD_KAFKA_V_END);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  EXPECT_EQ(rd_kafka_flush(producer_.get(), 30'000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

void TransactionalProducer::Commit() {
  if (rd_kafka_error_t* e = rd_kafka_commit_transaction(producer_.get(), 30'000)) {
    ADD_FAILURE() << rd_kafka_error_string(e);
    rd_kafka_error_destroy(e);
  }
}

}  // namespace faucet::kafka::testing
