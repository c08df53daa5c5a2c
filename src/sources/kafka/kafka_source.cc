#include "sources/kafka/kafka_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <set>

#include "core/pipeline.h"

namespace faucet {
namespace {

using Clock = std::chrono::steady_clock;

// The exit status of a member that stops at once because it lost partitions it still had
// pages of (exactly_once): EX_TEMPFAIL, a rerun resumes.
constexpr int kLostPartitionsExitCode = 75;

// How long Open waits for a broker to answer.
constexpr std::chrono::milliseconds kBrokerTimeout{10'000};
// How long a member without partitions may wait for the group's assignment before idle_timeout
// can end the run (a group forms in a few seconds; a rebalance waits for every member).
constexpr std::chrono::milliseconds kJoinAllowance{20'000};

void RebalanceCallback(rd_kafka_t* consumer, rd_kafka_resp_err_t err,
                       rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  static_cast<KafkaSource*>(opaque)->OnRebalance(consumer, err, partitions);
}

void ErrorCallback(rd_kafka_t*, int error, const char* reason, void* opaque) {
  static_cast<KafkaSource*>(opaque)->OnError(error, reason);
}

void CommitCallback(rd_kafka_t*, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t*, void*) {
  // A refused commit loses nothing: the partition's next owner replays from the last one.
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
    spdlog::warn(
        "kafka: an offset commit failed: {} (the pages after the last commit are "
        "read again by the partition's next owner)",
        rd_kafka_err2str(err));
  }
}

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
using PartitionList = std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter>;

std::string Describe(const rd_kafka_topic_partition_list_t* partitions) {
  std::string text;
  for (int i = 0; i < partitions->cnt; ++i) {
    text += (text.empty() ? "" : ", ") + std::string(partitions->elems[i].topic) + "[" +
            std::to_string(partitions->elems[i].partition) + "]";
  }
  return text.empty() ? "none" : text;
}

}  // namespace

Result<KafkaSourceOptions> KafkaSourceOptions::FromConfig(const config::Block& cfg) {
  KafkaSourceOptions o;
  ASSIGN_OR_RETURN(o.connection, kafka::Connection::FromConfig(cfg));
  if (cfg.Has("topics") && cfg.node()["topics"].IsSequence()) {
    ASSIGN_OR_RETURN(o.topics, cfg.StringList("topics"));
  } else {
    ASSIGN_OR_RETURN(std::string topic, cfg.RequiredString("topics"));
    o.topics.push_back(topic);
  }
  if (o.topics.empty()) return cfg.Error("topics", "names no topic");
  for (const std::string& t : o.topics) {
    if (t.empty()) return cfg.Error("topics", "holds an empty name");
  }
  ASSIGN_OR_RETURN(o.group_id, cfg.RequiredString("group_id"));
  if (o.group_id.empty()) return cfg.Error("group_id", "is empty");
  ASSIGN_OR_RETURN(o.auto_offset_reset,
                   cfg.Enum("auto_offset_reset", "earliest", {"earliest", "latest"}));
  ASSIGN_OR_RETURN(config::Block format, cfg.Child("value_format"));
  ASSIGN_OR_RETURN(std::string format_type, format.Enum("type", "json", {"json", "debezium_json"}));
  o.value_format =
      format_type == "json" ? kafka::ValueFormat::kJson : kafka::ValueFormat::kDebeziumJson;
  constexpr int64_t kMaxMs = 2'147'483'647;
  ASSIGN_OR_RETURN(int64_t idle, cfg.Int("idle_timeout", 30, 1, kMaxMs / 1000));
  o.idle_timeout = std::chrono::seconds(idle);
  ASSIGN_OR_RETURN(o.batch_size, cfg.Int("batch_size", o.batch_size, 1, 1'000'000));
  ASSIGN_OR_RETURN(int64_t session, cfg.Int("session_timeout", 45'000, 1'000, kMaxMs));
  o.session_timeout = std::chrono::milliseconds(session);
  ASSIGN_OR_RETURN(int64_t revoke, cfg.Int("revoke_timeout", 60'000, 1'000, kMaxMs));
  o.revoke_timeout = std::chrono::milliseconds(revoke);
  ASSIGN_OR_RETURN(std::string on_error, cfg.Enum("on_decode_error", "fail", {"fail", "skip"}));
  o.skip_undecodable = on_error == "skip";
  auto strategy = o.connection.extra.find("partition.assignment.strategy");
  if (strategy != o.connection.extra.end() &&
      strategy->second.find("cooperative") != std::string::npos) {
    return cfg.Error("extra_client_config",
                     "partition.assignment.strategy: a cooperative assignor is not supported: "
                     "the kafka source hands its partitions over with the eager protocol");
  }
  for (const char* owned : {"enable.auto.commit", "enable.auto.offset.store", "group.id",
                            "group.protocol", "group.instance.id", "isolation.level"}) {
    if (o.connection.extra.count(owned) > 0) {
      return cfg.Error("extra_client_config",
                       std::string(owned) +
                           ": set by the kafka source itself (its offsets are committed only "
                           "once durable, its partitions handed over by the eager protocol, "
                           "and it reads only committed messages)");
    }
  }
  return o;
}

KafkaSource::KafkaSource(KafkaSourceOptions options)
    : options_(std::move(options)),
      who_("kafka " + options_.connection.brokers + " group " + options_.group_id),
      decoder_(options_.value_format) {}

KafkaSource::~KafkaSource() {
  if (consumer_ == nullptr) return;
  closing_ = true;
  // Commits what is durable (OnRevoke) and leaves the group.
  rd_kafka_consumer_close(consumer_.get());
}

Bookmark KafkaSource::BookmarkOf(const Offsets& offsets) {
  Json topics = Json::object();
  for (const auto& [partition, offset] : offsets) {
    topics[partition.first][std::to_string(partition.second)] = offset;
  }
  return Bookmark{Json{{"offsets", std::move(topics)}}};
}

Result<KafkaSource::Offsets> KafkaSource::OffsetsOf(const Bookmark& bookmark) {
  const Json& v = bookmark.value;
  auto bad = [&] {
    return InvalidArgument(
        "not a bookmark of the kafka source (want {\"offsets\": {topic: "
        "{partition: offset}}}): " +
        bookmark.ToString());
  };
  if (!v.is_object() || !v.contains("offsets") || !v["offsets"].is_object()) return bad();
  Offsets offsets;
  for (const auto& [topic, partitions] : v["offsets"].items()) {
    if (!partitions.is_object()) return bad();
    for (const auto& [partition, offset] : partitions.items()) {
      int32_t number = -1;
      auto [end, ec] =
          std::from_chars(partition.data(), partition.data() + partition.size(), number);
      if (ec != std::errc() || end != partition.data() + partition.size() || number < 0 ||
          !offset.is_number_integer() || offset.get<int64_t>() < 0) {
        return bad();
      }
      offsets[{topic, number}] = offset.get<int64_t>();
    }
  }
  return offsets;
}

Status KafkaSource::Open(const std::optional<Bookmark>& start) {
  if (start) {
    ASSIGN_OR_RETURN(start_, OffsetsOf(*start));
  }
  kafka::Properties properties = options_.connection.ClientProperties();
  properties["group.id"] = options_.group_id;
  properties["client.id"] = "faucet";
  properties["enable.auto.commit"] = "false";
  properties["enable.auto.offset.store"] = "false";
  properties["auto.offset.reset"] = options_.auto_offset_reset;
  properties["session.timeout.ms"] = std::to_string(options_.session_timeout.count());
  // Only what producers committed (faucet's exactly-once sink writes in transactions).
  properties["isolation.level"] = "read_committed";
  // A topic that appears after the subscription is found within seconds, not minutes.
  properties["topic.metadata.refresh.interval.ms"] = "5000";
  for (const auto& [key, value] : options_.connection.extra) properties[key] = value;
  ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, kafka::NewConf(properties, who_));
  rd_kafka_conf_set_opaque(conf, this);
  rd_kafka_conf_set_rebalance_cb(conf, RebalanceCallback);
  rd_kafka_conf_set_offset_commit_cb(conf, CommitCallback);
  rd_kafka_conf_set_error_cb(conf, ErrorCallback);
  ASSIGN_OR_RETURN(kafka::Client consumer, kafka::NewClient(RD_KAFKA_CONSUMER, conf, who_));
  RETURN_IF_ERROR(kafka::AwaitBrokers(consumer.get(), kBrokerTimeout, who_, &last_error_));
  consumer_ = std::move(consumer);
  rd_kafka_poll_set_consumer(consumer_.get());

  PartitionList topics(rd_kafka_topic_partition_list_new(static_cast<int>(options_.topics.size())));
  for (const std::string& topic : options_.topics) {
    rd_kafka_topic_partition_list_add(topics.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  const rd_kafka_resp_err_t err = rd_kafka_subscribe(consumer_.get(), topics.get());
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable(who_ + ": cannot subscribe: " + rd_kafka_err2str(err));
  }
  last_message_ = Clock::now();
  return Status::Ok();
}

Result<SourceEvent> KafkaSource::Next(std::chrono::milliseconds wait) {
  if (!failed_.ok()) return failed_;
  CommitDurable(false);
  const Clock::time_point deadline = Clock::now() + wait;
  Page page;
  // A page holds the messages of one partition: the first's. `read` counts them (tombstones and
  // skipped ones too, so that batch_size bounds the wait for a page), `next` is the offset
  // after the last.
  const rd_kafka_topic_t* topic_handle = nullptr;
  int32_t partition = -1;
  int64_t read = 0;
  int64_t next = 0;
  while (read < options_.batch_size) {
    // Waits for the first message only; then takes what has already arrived.
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const int timeout = read > 0 ? 0 : static_cast<int>(std::max<int64_t>(0, left.count()));
    Message m = carried_ != nullptr ? std::move(carried_)
                                    : Message(rd_kafka_consumer_poll(consumer_.get(), timeout));
    if (revoked_) {
      // Its partitions went back to the group: what was read of them goes back unsent.
      revoked_ = false;
      page.changes.clear();
      read = 0;
    }
    if (!failed_.ok()) return failed_;  // an assignment without its commit tokens
    if (m == nullptr) {
      if (read > 0 || Clock::now() >= deadline) break;
      continue;
    }
    const std::string_view topic = m->rkt != nullptr ? rd_kafka_topic_name(m->rkt) : "";
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) continue;
      char reason[512];
      if (rd_kafka_fatal_error(consumer_.get(), reason, sizeof reason) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        return Unavailable(who_ + ": the consumer failed: " + reason);
      }
      spdlog::warn("{}: {}{}", who_, topic.empty() ? "" : std::string(topic) + ": ",
                   rd_kafka_message_errstr(m.get()));
      continue;
    }
    if (read == 0) {
      topic_handle = m->rkt;
      partition = m->partition;
    } else if (m->rkt != topic_handle || m->partition != partition) {
      carried_ = std::move(m);  // the next page's: a page's token is its partition's
      break;
    }
    std::optional<std::string_view> key, value;
    if (m->key != nullptr) key = std::string_view(static_cast<const char*>(m->key), m->key_len);
    if (m->payload != nullptr) {
      value = std::string_view(static_cast<const char*>(m->payload), m->len);
    }
    Result<std::optional<Change>> change = decoder_.Decode(topic, key, value);
    if (!change.ok()) {
      const std::string where = std::string(topic) + "[" + std::to_string(m->partition) +
                                "] offset " + std::to_string(m->offset);
      if (!options_.skip_undecodable) {
        // The messages before it are handed out first, so that they are committed.
        failed_ = InvalidArgument(who_ + ": " + where + ": " + change.status().message());
        if (read == 0) return failed_;
        break;
      }
      spdlog::warn("{}: {}: skipped (on_decode_error: skip): {}", who_, where,
                   change.status().message());
    } else if (change->has_value()) {
      page.changes.push_back(std::move(**change));
    }
    next = m->offset + 1;
    ++read;
  }
  if (read > 0) {
    // Even a page of tombstones and skipped messages moves the offsets forward.
    last_message_ = Clock::now();
    const Partition part{rd_kafka_topic_name(topic_handle), partition};
    emitted_[part] = next;
    page.bookmark = BookmarkOf(emitted_);
    page.token_scope = PartScope(part);
    return SourceEvent{SourceEvent::Kind::kPage, std::move(page)};
  }
  // Without an assignment, the group is still forming: it gets at least kJoinAllowance.
  const auto idle =
      joined_ ? options_.idle_timeout
              : std::max<std::chrono::milliseconds>(options_.idle_timeout, kJoinAllowance);
  if (Clock::now() - last_message_ >= idle) {
    if (!joined_) {
      spdlog::warn("{}: no partition was assigned within {} s: do the topics exist?", who_,
                   idle.count() / 1000);
    }
    spdlog::info("{}: cycle ends (idle_timeout without a message)", who_);
    return SourceEvent{SourceEvent::Kind::kEnd, {}};
  }
  return SourceEvent{SourceEvent::Kind::kIdle, {}};
}

void KafkaSource::OnError(int error, const char* reason) {
  // librdkafka retries these itself (a broker down, a connection lost, refused credentials);
  // the last one explains an Open that found no broker, and a fatal one fails Next.
  last_error_ =
      reason != nullptr ? reason : rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(error));
  spdlog::warn("{}: {}", who_, last_error_);
}

Status KafkaSource::Acknowledge(const Bookmark& durable) {
  ASSIGN_OR_RETURN(Offsets offsets, OffsetsOf(durable));
  MutexLock lock(mu_);
  for (const auto& [partition, offset] : offsets) durable_[partition] = offset;
  ++durable_seq_;
  durable_changed_.NotifyAll();
  return Status::Ok();
}

void KafkaSource::CommitDurable(bool wait) {
  PartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(assigned_.size())));
  {
    MutexLock lock(mu_);
    if (durable_seq_ == committed_seq_ && !wait) return;
    committed_seq_ = durable_seq_;
    for (const auto& [partition, offset] : durable_) {
      // Only partitions this member owns, and only past where it got them: an acknowledgement
      // from before a partition came back must not move the group's offset backwards.
      auto owned = assigned_.find(partition);
      if (owned == assigned_.end() || offset <= owned->second) continue;
      rd_kafka_topic_partition_list_add(list.get(), partition.first.c_str(), partition.second)
          ->offset = offset;
    }
  }
  if (list->cnt == 0) return;
  const rd_kafka_resp_err_t err = rd_kafka_commit(consumer_.get(), list.get(), wait ? 0 : 1);
  if (wait) CommitCallback(consumer_.get(), err, list.get(), nullptr);
}

void KafkaSource::OnRebalance(rd_kafka_t* consumer, rd_kafka_resp_err_t err,
                              rd_kafka_topic_partition_list_t* partitions) {
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    OnAssign(consumer, partitions);
  } else {
    OnRevoke(consumer, partitions);
  }
}

std::string KafkaSource::PartScope(const Partition& partition) {
  return ":" + partition.first + ":" + std::to_string(partition.second);
}

SourceCapabilities KafkaSource::Capabilities() const {
  SourceCapabilities c;
  // A partition's messages are fixed by their offsets: its token's offset replays nothing.
  c.deterministic_replay = true;
  c.tokens_per_part = true;
  return c;
}

void KafkaSource::UseCommittedTokens(CommittedTokenReader read) { read_tokens_ = std::move(read); }

Result<std::optional<int64_t>> KafkaSource::TokenOffset(const Partition& partition) const {
  ASSIGN_OR_RETURN(std::optional<std::string> token, read_tokens_(PartScope(partition)));
  if (!token) return std::optional<int64_t>();
  ASSIGN_OR_RETURN(CommitToken parsed, ParseCommitToken(*token));
  if (!parsed.bookmark) return std::optional<int64_t>();
  ASSIGN_OR_RETURN(Offsets offsets, OffsetsOf(*parsed.bookmark));
  auto it = offsets.find(partition);
  if (it == offsets.end()) {
    return DataLoss(who_ + ": the commit token of " + PartScope(partition) +
                    " names no offset of it: " + *token);
  }
  return std::optional<int64_t>(it->second);
}

void KafkaSource::OnAssign(rd_kafka_t* consumer, rd_kafka_topic_partition_list_t* partitions) {
  // The group's committed offsets first; the persisted bookmark where the group has none.
  const rd_kafka_resp_err_t err =
      rd_kafka_committed(consumer, partitions, static_cast<int>(options_.session_timeout.count()));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    spdlog::warn(
        "{}: cannot read the group's offsets ({}): partitions start at the persisted "
        "bookmark or auto_offset_reset",
        who_, rd_kafka_err2str(err));
  }
  for (int i = 0; i < partitions->cnt; ++i) {
    rd_kafka_topic_partition_t& p = partitions->elems[i];
    const Partition key{p.topic, p.partition};
    // Unread (an error): left to librdkafka, which reads the group's offset itself.
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && p.err == RD_KAFKA_RESP_ERR_NO_ERROR && p.offset < 0) {
      auto it = start_.find(key);
      if (it != start_.end()) p.offset = it->second;
    }
    if (read_tokens_ && !closing_) {
      // The destination's token is the truth: it commits with the rows, the group's offset
      // only after them.
      Result<std::optional<int64_t>> token = TokenOffset(key);
      if (!token.ok()) {
        failed_ = token.status();
      } else if (*token && **token > p.offset) {
        spdlog::info(
            "{}: {}[{}] resumes at offset {}, after the last page the destination "
            "committed",
            who_, p.topic, p.partition, **token);
        p.offset = **token;
      }
    }
    assigned_[key] = p.offset;
  }
  spdlog::info("{}: assigned {}", who_, Describe(partitions));
  // idle_timeout counts from here: nothing could come before (a member given no partition is
  // assigned none, and ends too).
  joined_ = true;
  last_message_ = Clock::now();
  if (const rd_kafka_resp_err_t assigned = rd_kafka_assign(consumer, partitions);
      assigned != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failed_ =
        Unavailable(who_ + ": cannot take the partitions assigned: " + rd_kafka_err2str(assigned));
  }
}

void KafkaSource::OnRevoke(rd_kafka_t* consumer, rd_kafka_topic_partition_list_t* partitions) {
  revoked_ = true;
  std::set<Partition> revoked;
  for (int i = 0; i < partitions->cnt; ++i) {
    revoked.insert({partitions->elems[i].topic, partitions->elems[i].partition});
  }
  // Every page handed out for these partitions becomes durable before they are released.
  const Clock::time_point deadline = Clock::now() + options_.revoke_timeout;
  const bool lost = rd_kafka_assignment_lost(consumer) != 0;  // already someone else's
  bool durable = true;
  {
    MutexLock lock(mu_);
    while (true) {
      durable = true;
      for (const auto& [part, offset] : emitted_) {
        if (revoked.count(part) == 0) continue;
        auto it = durable_.find(part);
        durable = durable && it != durable_.end() && it->second >= offset;
      }
      if (durable || closing_ || lost || !durable_changed_.WaitUntil(mu_, deadline)) break;
    }
  }
  if (!durable && read_tokens_ && !closing_) {
    // Exactly-once: a page of these partitions written after their next owner read its token
    // would be written twice. Stop at once, as a crash would: the queued pages die with the
    // process, and the next run resumes from the committed tokens.
    spdlog::critical(
        "{}: {} before the pages read from {} were durable: stopping at once so that none is "
        "written after another member takes them (exactly_once; the next run resumes from the "
        "destination's commit tokens)",
        who_, lost ? "the group took the partitions" : "revoke_timeout passed",
        Describe(partitions));
    spdlog::default_logger()->flush();
    std::_Exit(kLostPartitionsExitCode);
  }
  if (!durable && !closing_) {
    spdlog::warn("{}: {} before the pages of {} were durable: their next owner reads them again",
                 who_, lost ? "the group took the partitions" : "revoke_timeout passed",
                 Describe(partitions));
  }
  CommitDurable(true);
  for (const Partition& p : revoked) {
    assigned_.erase(p);
    emitted_.erase(p);
  }
  carried_.reset();
  {
    MutexLock lock(mu_);
    for (const Partition& p : revoked) durable_.erase(p);
  }
  spdlog::info("{}: released {}", who_, Describe(partitions));
  rd_kafka_assign(consumer, nullptr);
  joined_ = false;  // until the next assignment, the wait is the group's, not idleness
  last_message_ = Clock::now();
}

Result<std::unique_ptr<Source>> MakeKafkaSource(const config::Block& cfg) {
  ASSIGN_OR_RETURN(KafkaSourceOptions options, KafkaSourceOptions::FromConfig(cfg));
  return std::unique_ptr<Source>(std::make_unique<KafkaSource>(std::move(options)));
}

}  // namespace faucet
