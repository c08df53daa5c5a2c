#include "sinks/kafka/token_topic.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace faucet::kafka {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kRequestTimeoutMs = 10'000;

struct MessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
using Message = std::unique_ptr<rd_kafka_message_t, MessageDeleter>;

std::string Where(const std::string& topic, int32_t partition) {
  return "commit token topic " + topic + " partition " + std::to_string(partition);
}

Result<std::vector<int32_t>> PartitionsOf(rd_kafka_t* client, const std::string& topic,
                                          const std::string& who) {
  rd_kafka_topic_t* handle = rd_kafka_topic_new(client, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(client, 0, handle, &metadata, kRequestTimeoutMs);
  rd_kafka_topic_destroy(handle);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable(who + ": commit token topic " + topic + ": " + rd_kafka_err2str(err));
  }
  std::vector<int32_t> partitions;
  rd_kafka_resp_err_t topic_err = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
  if (metadata->topic_cnt == 1) {
    topic_err = metadata->topics[0].err;
    for (int i = 0; i < metadata->topics[0].partition_cnt; ++i) {
      partitions.push_back(metadata->topics[0].partitions[i].id);
    }
  }
  rd_kafka_metadata_destroy(metadata);
  if (topic_err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable(who + ": commit token topic " + topic + ": " + rd_kafka_err2str(topic_err));
  }
  return partitions;
}

Result<std::pair<int64_t, int64_t>> Watermarks(rd_kafka_t* client, const std::string& topic,
                                               int32_t partition, const std::string& who) {
  int64_t low = 0, high = 0;
  const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(client, topic.c_str(), partition,
                                                                   &low, &high, kRequestTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable(who + ": " + Where(topic, partition) + ": " + rd_kafka_err2str(err));
  }
  return std::make_pair(low, high);
}

// The last message keyed `scope` among the committed messages of `partition` in [start, end)
// (outer none: there is none; inner none: it is a tombstone). Every transaction before `end`
// has ended, so the read reaches `end`.
using Last = std::optional<std::optional<std::string>>;
Result<Last> LastInRange(rd_kafka_t* reader, const std::string& topic, int32_t partition,
                         int64_t start, int64_t end, const std::string& scope,
                         Clock::time_point deadline, const std::string& who) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, topic.c_str(), partition)->offset = start;
  const rd_kafka_resp_err_t assigned = rd_kafka_assign(reader, list);
  rd_kafka_topic_partition_list_destroy(list);
  if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable(who + ": " + Where(topic, partition) + ": " + rd_kafka_err2str(assigned));
  }
  Last last;
  Status status;
  while (true) {
    if (Clock::now() > deadline) {
      status = Unavailable(who + ": " + Where(topic, partition) + ": not read to offset " +
                           std::to_string(end) + " in time");
      break;
    }
    Message m(rd_kafka_consumer_poll(reader, 200));
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) break;
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = Unavailable(who + ": " + Where(topic, partition) + ": " +
                           rd_kafka_message_errstr(m.get()));
      break;
    }
    if (m->offset >= end) break;
    if (m->key_len == scope.size() &&
        scope.compare(0, scope.size(), static_cast<const char*>(m->key), m->key_len) == 0) {
      // A message without a value (a tombstone someone wrote) removes the token.
      last.emplace();
      if (m->payload != nullptr) last->emplace(static_cast<const char*>(m->payload), m->len);
    }
    if (m->offset + 1 >= end) break;
  }
  rd_kafka_assign(reader, nullptr);
  RETURN_IF_ERROR(status);
  return last;
}

}  // namespace

Status EnsureTokenTopic(rd_kafka_t* client, const std::string& topic,
                        std::chrono::milliseconds timeout, const std::string& who) {
  return CreateTopic(client, topic, 1, {{"cleanup.policy", "compact"}}, timeout,
                     who + ": commit token topic " + topic);
}

Result<std::optional<std::string>> ReadLastToken(const Properties& properties,
                                                 const std::string& topic, const std::string& scope,
                                                 std::chrono::milliseconds wait,
                                                 const std::string& who) {
  ASSIGN_OR_RETURN(Client committed, NewReader(properties, "read_committed", who));
  ASSIGN_OR_RETURN(Client everything, NewReader(properties, "read_uncommitted", who));
  ASSIGN_OR_RETURN(std::vector<int32_t> partitions, PartitionsOf(committed.get(), topic, who));
  const Clock::time_point open_deadline = Clock::now() + wait;
  const Clock::time_point deadline = open_deadline + std::chrono::milliseconds(kRequestTimeoutMs);
  std::optional<std::string> found;
  int32_t found_in = -1;  // the partition the scope's last message is in
  for (int32_t partition : partitions) {
    // `end`: the log's end now. The last stable offset (what read_committed reaches) passes it
    // once every transaction open now has ended.
    ASSIGN_OR_RETURN(auto log, Watermarks(everything.get(), topic, partition, who));
    const auto [low, end] = log;
    while (true) {
      ASSIGN_OR_RETURN(auto stable, Watermarks(committed.get(), topic, partition, who));
      if (stable.second >= end) break;
      if (Clock::now() > open_deadline) {
        return Unavailable(who + ": " + Where(topic, partition) +
                           ": a transaction stays open at offset " + std::to_string(stable.second) +
                           " for longer than " + std::to_string(wait.count() / 1000) +
                           " s, so the last commit token cannot be known (is a producer of "
                           "another pipeline stuck?)");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    for (int64_t window = 1024; end > low; window *= 16) {
      const int64_t start = std::max(low, end - window);
      ASSIGN_OR_RETURN(Last token, LastInRange(committed.get(), topic, partition, start, end, scope,
                                               deadline, who));
      if (token) {
        if (found_in >= 0) {
          return DataLoss(who + ": commit token topic " + topic + " holds tokens of '" + scope +
                          "' in partitions " + std::to_string(found_in) + " and " +
                          std::to_string(partition) +
                          ": its partition count was changed, so the last token is unknown");
        }
        found = std::move(*token);
        found_in = partition;
        break;
      }
      if (start == low) break;
    }
  }
  return found;
}

}  // namespace faucet::kafka
