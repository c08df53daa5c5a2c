// KafkaSource (type `kafka`): a member of a Kafka consumer group whose messages (written by
// faucet's kafka sink, or by Debezium) become Changes again, so that several `faucet run`
// processes with one `group_id` share a topic's partitions and apply them to one destination.
//
// Pages: up to batch_size messages as they arrive, from one of the partitions this member is
// assigned (the next page takes the next partition's); every message is its own transaction,
// so every page carries a bookmark:
//   {"offsets": {"<topic>": {"<partition>": <next offset to read>, ...}, ...}}
// for each partition this member has read since it was assigned it.
//
// The rule (DESIGN.md §1): offsets are committed to the group only for what Acknowledge
// reported durable (the sink flushed, the state store persisted), from the source thread, at
// the next Next. On a rebalance, before its partitions are released, the member waits until
// every page it handed out is durable (at most `revoke_timeout`), commits those offsets, and
// drops the messages it read but had not handed out: the partition's next owner starts at the
// committed offset, so a partition moving between processes loses nothing (and, when the wait
// timed out, replays the pages that were not durable: at-least-once). Under exactly_once a
// member whose wait timed out, or whose partitions the group took without a revoke (it was
// silent too long), stops the process at once (exit status 75) instead: a queued page written
// after the next owner read its token would be written twice.
//
// Where an assigned partition starts: the group's committed offset; else the offset of the
// bookmark Open was given (what this pipeline persisted, hence durable); else
// auto_offset_reset.
//
// Delivery: at-least-once (a crash replays what was read after the last commit); with a sink
// that writes by key (write_mode upsert), effectively-once; under the atomic watermark, exactly
// once per partition: a page holds one partition, its token goes under the scope part
// ":<topic>:<partition>" (tokens_per_part), and an assigned partition starts after its token's
// offset when that is past the group's (the token commits with the rows, the group's offset
// after them).
//
// The rebalance protocol is the eager one (every partition revoked, then assigned again): a
// cooperative assignor in extra_client_config is refused, since it would keep partitions
// whose unsent messages this member drops.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "clients/kafka/client.h"
#include "config/block.h"
#include "core/mutex.h"
#include "core/source.h"
#include "sources/kafka/message_decoder.h"

namespace faucet {

struct KafkaSourceOptions {
  kafka::Connection connection;  // brokers, auth, extra_client_config
  std::vector<std::string> topics;
  std::string group_id;
  std::string auto_offset_reset = "earliest";  // where a partition without offsets starts
  kafka::ValueFormat value_format = kafka::ValueFormat::kJson;
  // A cycle ends after this long without a message (counted from the last assignment).
  std::chrono::milliseconds idle_timeout{30'000};
  int64_t batch_size = 1000;  // most messages per page
  std::chrono::milliseconds session_timeout{45'000};
  // How long a rebalance waits for the pages of revoked partitions to become durable.
  std::chrono::milliseconds revoke_timeout{60'000};
  bool skip_undecodable = false;  // on_decode_error: skip (warn) instead of fail

  // Reads the connection keys (kafka::Connection), `topics` (a name or a list), `group_id`,
  // `auto_offset_reset` (earliest | latest, default earliest), `value_format` ({type: json} or
  // {type: debezium_json}), `idle_timeout` (seconds, default 30), `batch_size` (default 1000),
  // `session_timeout` (milliseconds, default 45000), `revoke_timeout` (milliseconds, default
  // 60000), `on_decode_error` (fail | skip, default fail). Errors name the file, line and key.
  // No I/O.
  static Result<KafkaSourceOptions> FromConfig(const config::Block& cfg);
};

class KafkaSource : public Source {
 public:
  explicit KafkaSource(KafkaSourceOptions options);
  // Its pages hold one partition each (Page::token_scope ":<topic>:<partition>").
  SourceCapabilities Capabilities() const override;
  // Under the atomic watermark: a partition assigned starts after its commit token's offset
  // when that is past the group's.
  void UseCommittedTokens(CommittedTokenReader read) override;

  // Leaves the group (committing what is durable), so that its partitions move at once.
  ~KafkaSource() override;
  KafkaSource(const KafkaSource&) = delete;
  KafkaSource& operator=(const KafkaSource&) = delete;

  // Joins the group and subscribes. `start` (a bookmark of this source) gives the offsets of
  // partitions the group has none for; kInvalidArgument when it is not one. kUnavailable naming
  // the brokers when none answers within 10 s (with the reason, e.g. refused credentials).
  Status Open(const std::optional<Bookmark>& start) override;
  // A page of the messages that arrive within `wait`; kIdle when none did; kEnd after
  // idle_timeout without a message. A message that does not decode fails the run naming its
  // topic, partition and offset (on_decode_error: fail; the page of the messages before it is
  // handed out first, so they are applied and committed) or is skipped with a warning. A
  // fatal consumer error ends the run; librdkafka retries the others itself (logged).
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override;
  // Publishes `durable` for the next commit; kInvalidArgument when it is not this source's.
  Status Acknowledge(const Bookmark& durable) override;

  // librdkafka's error callback (inside a poll, on the source thread).
  void OnError(int error, const char* reason);
  // librdkafka's rebalance callback (inside a poll, on the source thread).
  void OnRebalance(rd_kafka_t* consumer, rd_kafka_resp_err_t err,
                   rd_kafka_topic_partition_list_t* partitions);

 private:
  using Partition = std::pair<std::string, int32_t>;  // topic, partition
  using Offsets = std::map<Partition, int64_t>;       // next offset to read

  struct MessageDeleter {
    void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
  };
  using Message = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

  static Bookmark BookmarkOf(const Offsets& offsets);
  static std::string PartScope(const Partition& partition);
  // The offset the sink's commit token of `partition` holds; nullopt without a token.
  Result<std::optional<int64_t>> TokenOffset(const Partition& partition) const;
  static Result<Offsets> OffsetsOf(const Bookmark& bookmark);
  // Commits the durable offsets of assigned partitions if they moved since the last commit.
  void CommitDurable(bool wait);
  void OnAssign(rd_kafka_t* consumer, rd_kafka_topic_partition_list_t* partitions);
  void OnRevoke(rd_kafka_t* consumer, rd_kafka_topic_partition_list_t* partitions);

  const KafkaSourceOptions options_;
  const std::string who_;
  kafka::MessageDecoder decoder_;
  kafka::Client consumer_;
  Offsets start_;  // from Open's bookmark
  // The partitions assigned, with the offset each was assigned at (negative: librdkafka's to
  // resolve, the group's or auto_offset_reset's).
  std::map<Partition, int64_t> assigned_;
  Offsets emitted_;  // the bookmark of the last page handed out
  Message carried_;  // read, but of another partition than the page's: the next page's first
  CommittedTokenReader read_tokens_;  // set under the atomic watermark
  bool joined_ = false;               // an assignment came: idle_timeout counts
  bool revoked_ = false;              // a revoke happened during the current poll
  bool closing_ = false;              // the destructor leaves the group: do not wait
  Status failed_;                     // a message that did not decode, after the page before it
  std::string last_error_;            // the last error librdkafka reported
  std::chrono::steady_clock::time_point last_message_;

  // Everything above is the source thread's (librdkafka's callbacks run inside its polls);
  // what Acknowledge publishes from the sink thread is guarded.
  Mutex mu_;
  CondVar durable_changed_;
  Offsets durable_ GUARDED_BY(mu_);
  uint64_t durable_seq_ GUARDED_BY(mu_) = 0;  // bumped by each Acknowledge
  uint64_t committed_seq_ = 0;                // durable_seq_ at the last commit
};

Result<std::unique_ptr<Source>> MakeKafkaSource(const config::Block& cfg);

}  // namespace faucet
