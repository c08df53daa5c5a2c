// KafkaSink (type `kafka`): each change becomes one message on a Kafka topic, through
// librdkafka's idempotent producer.
//
// A message's value is the change as core/json_render.h renders it (the envelope of a CDC
// change, the row of a read or of cdc_unwrap's output; or Debezium's envelope with
// value_format debezium_json); its key is the row's key (the relation's key columns as a JSON
// object, {"id":42}, Debezium's key envelope, or the text of the `key_path` column),
// so that a compacted topic keeps each row's last change and one key always goes to one
// partition. Its topic is fixed, a template of the change's table ("{schema}.{table}"), or a
// field of the change (`from_path`).
//
// Delivery, at-least-once: Write hands the messages to the producer; Flush returns once the
// broker has acknowledged every one of them (acks=all by default) or reports the first that
// failed. The pipeline persists a bookmark only after Flush, so a crash replays the pages after
// it and a consumer may see a message twice.
//
// Delivery, exactly-once (the atomic watermark, under `delivery: exactly_once`): CommittedToken
// makes a transactional producer whose transactional.id belongs to the pipeline's scope
// (`<transactional_id_prefix>-<scope>`); starting it fences any older producer with that id and
// aborts its open transaction. WriteIdempotent then puts a page's messages and the page's
// commit token (on the compacted commit-token topic, token_topic.h) in one Kafka transaction,
// committed by Flush (the pipeline flushes every page with a bookmark; chunks of a larger
// source transaction share a Kafka transaction for up to a second), so a read_committed
// consumer sees each page once, and a restart resumes after the last committed token. A
// fenced producer (another process took the id) fails with kFailedPrecondition and never
// retries.
//
// Order: one key goes to one partition, and the idempotent producer keeps the order of a
// partition's messages through retries.
//
// Not thread-safe: one pipeline thread calls it (librdkafka's callbacks run inside its calls).
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clients/kafka/client.h"
#include "config/block.h"
#include "core/sink.h"

namespace faucet {

struct KafkaSinkOptions {
  kafka::Connection connection;  // brokers, auth, extra_client_config
  // The topic: `topic` (fixed) with {schema} and {table} replaced by the change's, or, when
  // `topic_path` is set, the text of that field of the change (from_path).
  std::string topic;
  std::string topic_path;
  std::string key_path;  // a column whose text is the key; "" for the key columns as JSON
  // A column whose value is the message's partition number (null: the key decides), and one
  // holding a JSON object whose members become the message's headers (strings as they are,
  // other values as their JSON); "" for none.
  std::string partition_path;
  std::string headers_path;
  // value_format {type: debezium_json, server_name}: Debezium's JSON envelope for keys and
  // values (core/json_render.h), server_name its topic.prefix.
  bool debezium = false;
  std::string debezium_server = "faucet";
  // After a delete's message, one with the same key and no value (a tombstone), so that a
  // compacted topic drops the key. Default: on with debezium_json (as Debezium), else off.
  bool tombstones = false;
  std::string acks = "all";
  bool idempotent = true;
  std::string compression = "none";
  std::chrono::milliseconds linger{5};
  std::chrono::milliseconds message_timeout{300'000};
  // exactly_once: the transactional producer's id prefix, the commit-token topic, and
  // transaction.timeout.ms (also how long a restart waits for a crashed producer's transaction
  // on the token topic to be aborted). `exactly_once_set`: the block was written, so a
  // pipeline that does not use it is an error (SinkCapabilities::watermark_configured).
  std::string transactional_id_prefix = "faucet";
  std::string commit_token_topic = "faucet_commit_tokens";
  std::chrono::milliseconds transaction_timeout{60'000};
  bool exactly_once_set = false;

  // Reads the connection keys (kafka::Connection: `brokers`, `auth`, `extra_client_config`),
  // `topic` ({type: fixed, name} or {type: from_path, path}), `key_path`, `value_format`
  // ({type: json} or {type: debezium_json, server_name}), `tombstone_on_delete`,
  // `partition_path`, `headers_path`, `compression`, `acks`, `idempotent` (default: true unless
  // `acks` is not all), `linger` and `message_timeout` (milliseconds), `exactly_once`
  // ({transactional_id_prefix, commit_token_topic, transaction_timeout}). No I/O.
  static Result<KafkaSinkOptions> FromConfig(const config::Block& cfg);
};

class KafkaSink : public Sink {
 public:
  explicit KafkaSink(KafkaSinkOptions options);
  ~KafkaSink() override;
  KafkaSink(const KafkaSink&) = delete;
  KafkaSink& operator=(const KafkaSink&) = delete;

  // Can commit tokens (the atomic watermark) whatever the config says.
  SinkCapabilities Capabilities() const override;
  // Creates the producer (unless CommittedToken made the transactional one) and asks the
  // brokers for their metadata: unreachable brokers are kUnavailable naming them, a property
  // librdkafka refuses kInvalidArgument naming it.
  Status Open(bool resuming) override;
  // With an atomic scope (a mirror's snapshot under exactly_once), Open makes the transactional
  // producer of that scope and the whole load is one Kafka transaction, committed with the
  // load's token (keyed by the scope on the commit-token topic) by the Flush that ends it, even
  // when no row was written, and aborted by Finish(false); a crash leaves it open until the next
  // producer of the scope, or the brokers after transaction_timeout, abort it.
  void BeginBulkLoad(const AtomicLoad& atomic) override { bulk_ = atomic; }
  Status Finish(bool completed) override;
  // Queues the page's messages (waiting while the producer's queue is full); with the
  // transactional producer, in the open transaction (Flush commits it).
  Status Write(const Page& page) override;
  // Waits until every queued message is acknowledged; kUnavailable naming the topic and the
  // broker's error when one was not (the page is then replayed by the next run).
  Status Flush() override;
  // The page's messages and `token` (keyed `scope` on the commit-token topic) in one Kafka
  // transaction, committed by Flush (or sooner): durable, like Write's, only after Flush. A
  // broker that does not answer is retried until message_timeout; a transaction the brokers
  // refuse is aborted (kUnavailable: none of it is visible); a fenced producer is
  // kFailedPrecondition.
  Status WriteIdempotent(const Page& page, const std::string& scope,
                         const std::string& token) override;
  // Starts the transactional producer of `scope` (fencing older ones), then reads the scope's
  // last token from the commit-token topic (made if missing).
  Result<std::optional<std::string>> CommittedToken(const std::string& scope) override;

  // The topic and key of `change` (for tests; Write uses them).
  Result<std::string> TopicOf(const Change& change) const;
  std::string KeyOf(const Change& change);
  // Messages produced and not yet acknowledged (for tests): at most 20,000 (or 16 MiB), unless
  // extra_client_config sets queue.buffering.max.messages or .kbytes; Write waits for room.
  size_t Unacknowledged() const;

  // librdkafka's callbacks: a message acknowledged or not; an error (only a fatal one, which
  // ends the producer, matters: librdkafka retries the others itself).
  void OnDelivery(const rd_kafka_message_t& message);
  void OnError(rd_kafka_t* client, int error, const char* reason);

 private:
  // What a source relation's messages share, made once per relation: the relation of its key
  // columns and their places, and (a fixed topic) its topic's handle.
  struct TableShape {
    RelationPtr source;  // kept alive: the map is keyed by its address
    RelationPtr key;
    std::vector<size_t> columns;
    rd_kafka_topic_t* topic = nullptr;  // owned by topics_; null until Write needs it
    int partition_column = -1;          // of partition_path, headers_path (-1: none)
    int headers_column = -1;
  };
  TableShape& ShapeOf(const RelationPtr& relation);
  // The librdkafka properties of the config (brokers, acks, ..., extra_client_config last).
  kafka::Properties ClientProperties() const;
  // Makes the producer (transactional when `transactional_id` is not empty) and checks that the
  // brokers answer.
  Status Connect(const std::string& transactional_id);
  // The transactional producer of `scope`, made and initialised once.
  Status StartTransactions(const std::string& scope);
  // Produces one message (waiting while the producer's queue is full); a null `value` is a
  // tombstone; `partition` RD_KAFKA_PARTITION_UA lets the key choose; the message takes
  // `headers` (null for none).
  Status Produce(rd_kafka_topic_t* topic, const std::string& key, const std::string* value,
                 int32_t partition = RD_KAFKA_PARTITION_UA, rd_kafka_headers_t* headers = nullptr);
  // The cell of `change`'s row at `column`, the column named `path` by config key `key`.
  Result<const Cell*> CellOf(const Change& change, int column, const std::string& path,
                             const char* key) const;
  // kInvalidArgument naming the table, the row's key, column `path` (config key `key`), `what`.
  Status RowError(const Change& change, const std::string& path, const char* key,
                  const std::string& what) const;
  // The partition partition_path names (UA when unset or null; an error naming the table and
  // value when it is not a partition number).
  Result<int32_t> PartitionOf(const Change& change, const TableShape& shape) const;
  // The headers of headers_path's JSON object (null when unset or null; an error naming the
  // table when it is not an object); the caller owns them.
  Result<rd_kafka_headers_t*> HeadersOf(const Change& change, const TableShape& shape) const;
  // Queues the messages of `page`.
  Status ProduceAll(const Page& page);
  // Produces `page` (and `token` keyed `scope`) in the open transaction, beginning one if
  // none is open; commits it once it has been open for a while (else Flush does).
  Status Transact(const Page& page, const std::string* scope, const std::string* token);
  // Commits the open transaction, retrying while the brokers do not answer.
  Status Commit();
  // The status of a failed transactional call `what` (taking `error`), aborting the
  // transaction when the brokers require it.
  Status TransactionError(rd_kafka_error_t* error, const std::string& what);
  // The producer's handle of topic `name` (made once: librdkafka would look it up per message).
  rd_kafka_topic_t* TopicHandle(const std::string& name);
  // The key of `change` into key_ ("" for none).
  void RenderKey(const Change& change, const TableShape& shape);
  Status Failure() const;

  const KafkaSinkOptions options_;
  const std::string who_;  // "kafka <brokers>", for messages
  rd_kafka_t* producer_ = nullptr;
  std::string transactional_id_;  // of producer_; "" when it is not transactional
  bool in_transaction_ = false;   // a Kafka transaction is open (since began_)
  AtomicLoad bulk_;               // BeginBulkLoad's: with a scope, the load is one transaction
  bool bulk_ended_ = false;       // a Flush committed the load with its token
  std::chrono::steady_clock::time_point began_;
  std::map<const Relation*, TableShape> shapes_;
  std::map<std::string, rd_kafka_topic_t*> topics_;
  std::string value_;  // the message being produced (reused)
  std::string key_;
  Change key_change_;           // the key columns of the change being produced, as a row (reused)
  std::string first_error_;     // the first delivery or fatal error since Open
  uint64_t failed_ = 0;         // messages the broker did not take
  bool fatal_ = false;          // the producer had a fatal error (first_error_ says which)
  std::string last_transient_;  // the last error librdkafka retries by itself
};

// The sink for a `kafka` config block, not yet opened (no I/O: `faucet validate`).
Result<std::unique_ptr<Sink>> MakeKafkaSink(const config::Block& cfg);

}  // namespace faucet
