#include "kafka_tail.h"

#include "pg_client.h"

namespace faucet::torture {

KafkaTail::KafkaTail(const std::string& brokers, const std::string& topic) : topic_(topic) {
  Result<kafka::Client> consumer =
      kafka::NewReader({{"bootstrap.servers", brokers}}, "read_committed", "torture reader");
  if (!consumer.ok()) throw TortureError(consumer.status().ToString());
  consumer_ = std::move(*consumer);
  rd_kafka_topic_partition_list_t* partitions = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(partitions, topic.c_str(), 0)->offset =
      RD_KAFKA_OFFSET_BEGINNING;
  const rd_kafka_resp_err_t err = rd_kafka_assign(consumer_.get(), partitions);
  rd_kafka_topic_partition_list_destroy(partitions);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw TortureError("cannot read topic " + topic + ": " + rd_kafka_err2str(err));
  }
}

bool KafkaTail::AppendNew(std::ostream& out) {
  while (true) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), 1000);
    if (m == nullptr) return at_end_;
    const rd_kafka_resp_err_t err = m->err;
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      at_end_ = false;
      ++messages_;
      if (m->payload != nullptr) out.write(static_cast<const char*>(m->payload), m->len);
      out << '\n';
    } else if (err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end_ = true;
    }
    const std::string why =
        err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__PARTITION_EOF
            ? ""
            : rd_kafka_message_errstr(m);
    rd_kafka_message_destroy(m);
    if (!why.empty()) throw TortureError("reading topic " + topic_ + ": " + why);
    if (at_end_) return true;
  }
}

}  // namespace faucet::torture
