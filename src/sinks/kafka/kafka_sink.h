// KafkaSink (type `kafka`): each change becomes one message on a Kafka topic, through
// librdkafka's idempotent producer.
//
// A message's value is the change as core/json_render.h renders it (the envelope of a CDC
// change, the row of a read or of cdc_unwrap's output); its key is the row's key (the
// relation's key columns as a JSON object, {"id":42}, or the text of the `key_path` column),
// so that a compacted topic keeps each row's last change and one key always goes to one
// partition. Its topic is fixed, a template of the change's table ("{schema}.{table}"), or a
// field of the change (`from_path`).
//
// Delivery: Write hands the messages to the producer; Flush returns once the broker has
// acknowledged every one of them (acks=all by default) or reports the first that failed.
// The pipeline persists a bookmark only after Flush, so a crash replays the pages after it:
// at-least-once, and a consumer may see a message twice. Order: one key goes to one partition,
// and the idempotent producer keeps the order of a partition's messages through retries.
//
// Not thread-safe: one pipeline thread calls it (librdkafka's callbacks run inside its calls).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/block.h"
#include "core/sink.h"

namespace faucet {

struct KafkaSinkOptions {
  std::string brokers;  // bootstrap.servers: "host:port,host:port"
  // The topic: `topic` (fixed) with {schema} and {table} replaced by the change's, or, when
  // `topic_path` is set, the text of that field of the change (from_path).
  std::string topic;
  std::string topic_path;
  std::string key_path;  // a column whose text is the key; "" for the key columns as JSON
  std::string acks = "all";
  bool idempotent = true;
  std::string compression = "none";
  std::chrono::milliseconds linger{5};
  std::chrono::milliseconds message_timeout{300'000};
  std::map<std::string, std::string> extra;  // extra_client_config: librdkafka properties

  // Reads `brokers` (a string or a list), `topic` ({type: fixed, name} or {type: from_path,
  // path}), `key_path`, `value_format` ({type: json}), `compression`, `acks`, `idempotent`
  // (default: true unless `acks` is not all), `linger` and `message_timeout` (milliseconds),
  // `extra_client_config`; keys of the reference this build does not implement yet
  // (`partition_path`, `headers_path`, `auth`, `exactly_once`) are errors naming them. No I/O.
  static Result<KafkaSinkOptions> FromConfig(const config::Block& cfg);
};

class KafkaSink : public Sink {
 public:
  explicit KafkaSink(KafkaSinkOptions options);
  ~KafkaSink() override;
  KafkaSink(const KafkaSink&) = delete;
  KafkaSink& operator=(const KafkaSink&) = delete;

  // Creates the producer and asks the brokers for their metadata: unreachable brokers are
  // kUnavailable naming them, a property librdkafka refuses kInvalidArgument naming it.
  Status Open(bool resuming) override;
  // Queues the page's messages (waiting while the producer's queue is full).
  Status Write(const Page& page) override;
  // Waits until every queued message is acknowledged; kUnavailable naming the topic and the
  // broker's error when one was not (the page is then replayed by the next run).
  Status Flush() override;

  // The topic and key of `change` (for tests; Write uses them).
  Result<std::string> TopicOf(const Change& change) const;
  std::string KeyOf(const Change& change);

  // librdkafka's callbacks: a message acknowledged or not; an error (only a fatal one, which
  // ends the producer, matters: librdkafka retries the others itself).
  void OnDelivery(const rd_kafka_message_t& message);
  void OnError(int error);

 private:
  // What a source relation's messages share, made once per relation: the relation of its key
  // columns and their places, and (a fixed topic) its topic's handle.
  struct TableShape {
    RelationPtr source;  // kept alive: the map is keyed by its address
    RelationPtr key;
    std::vector<size_t> columns;
    rd_kafka_topic_t* topic = nullptr;  // owned by topics_; null until Write needs it
  };
  TableShape& ShapeOf(const RelationPtr& relation);
  // The producer's handle of topic `name` (made once: librdkafka would look it up per message).
  rd_kafka_topic_t* TopicHandle(const std::string& name);
  // The key of `change` into key_ ("" for none).
  void RenderKey(const Change& change, const TableShape& shape);
  Status Failure() const;

  const KafkaSinkOptions options_;
  const std::string who_;  // "kafka <brokers>", for messages
  rd_kafka_t* producer_ = nullptr;
  std::map<const Relation*, TableShape> shapes_;
  std::map<std::string, rd_kafka_topic_t*> topics_;
  std::string value_;  // the message being produced (reused)
  std::string key_;
  Change key_change_;        // the key columns of the change being produced, as a row (reused)
  std::string first_error_;  // the first delivery or fatal error since Open
  uint64_t failed_ = 0;      // messages the broker did not take
};

// The sink for a `kafka` config block, not yet opened (no I/O: `faucet validate`).
Result<std::unique_ptr<Sink>> MakeKafkaSink(const config::Block& cfg);

}  // namespace faucet
