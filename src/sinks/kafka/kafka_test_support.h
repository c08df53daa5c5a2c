// Test support for the kafka sink (library faucet_sink_kafka_testing, tests only): reading a
// topic as a consumer would, and a raw transactional producer to leave a transaction open.
#pragma once

#include <librdkafka/rdkafka.h>

#include <map>
#include <string>
#include <vector>

#include "clients/kafka/client.h"

namespace faucet::kafka::testing {

struct Message {
  std::string key;
  std::string value;
  bool tombstone = false;  // no value at all
  int32_t partition = 0;
  std::map<std::string, std::string> headers;
};

// Creates `topic` with `partitions` partitions (a test failure if it cannot).
void CreateTopic(const std::string& brokers, const std::string& topic, int partitions);

// Every message of `topic` now that a read_committed consumer sees, in partition order (the
// tests' topics have one partition), read from the beginning of each partition to its end.
// Empty when the topic does not exist; a failure of the read is a test failure.
std::vector<Message> ReadTopic(const std::string& brokers, const std::string& topic);

// A transactional producer with `transactional_id`, initialised (fencing older ones).
class TransactionalProducer {
 public:
  TransactionalProducer(const std::string& brokers, const std::string& transactional_id);
  // Begins a transaction and produces `value` keyed `key` to `topic`, acknowledged but not
  // committed.
  void ProduceOpen(const std::string& topic, const std::string& key, const std::string& value);
  void Commit();

 private:
  Client producer_;
};

}  // namespace faucet::kafka::testing
