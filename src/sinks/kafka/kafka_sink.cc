#include "sinks/kafka/kafka_sink.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "core/json_render.h"

namespace faucet {
namespace {

constexpr int kMetadataTimeoutMs = 10'000;

// Replaces every `{name}` of `pattern` with `value`.
void ReplaceAll(std::string& text, const std::string& pattern, const std::string& value) {
  for (size_t at = text.find(pattern); at != std::string::npos;
       at = text.find(pattern, at + value.size())) {
    text.replace(at, pattern.size(), value);
  }
}

// The row a change's key and fields come from: `after`, or `before` for a delete.
const Row* RowOf(const Change& change) {
  if (change.after) return &*change.after;
  return change.before ? &*change.before : nullptr;
}

void DeliveryCallback(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  static_cast<KafkaSink*>(opaque)->OnDelivery(*message);
}

void ErrorCallback(rd_kafka_t*, int error, const char*, void* opaque) {
  static_cast<KafkaSink*>(opaque)->OnError(error);
}

// librdkafka's own log lines (syslog levels) into faucet's log.
void LogCallback(const rd_kafka_t*, int level, const char* facility, const char* line) {
  const auto spd_level = level <= 4   ? spdlog::level::warn
                         : level <= 6 ? spdlog::level::info
                                      : spdlog::level::debug;
  spdlog::log(spd_level, "kafka: {}: {}", facility, line);
}

}  // namespace

Result<KafkaSinkOptions> KafkaSinkOptions::FromConfig(const config::Block& cfg) {
  KafkaSinkOptions o;
  for (const char* key : {"partition_path", "headers_path", "auth", "exactly_once"}) {
    if (cfg.Has(key)) {
      return cfg.KeyError(key, "not available in this build of the kafka sink yet");
    }
  }
  if (cfg.Has("brokers") && cfg.node()["brokers"].IsSequence()) {
    ASSIGN_OR_RETURN(std::vector<std::string> brokers, cfg.StringList("brokers"));
    for (const std::string& b : brokers) o.brokers += (o.brokers.empty() ? "" : ",") + b;
  } else {
    ASSIGN_OR_RETURN(o.brokers, cfg.RequiredString("brokers"));
  }
  if (o.brokers.empty()) return cfg.Error("brokers", "names no broker");

  if (!cfg.Has("topic")) {
    return cfg.Error("topic",
                     "is required: {type: fixed, name: ...} or {type: from_path, path: ...}");
  }
  ASSIGN_OR_RETURN(config::Block topic, cfg.Child("topic"));
  ASSIGN_OR_RETURN(std::string topic_type, topic.Enum("type", "fixed", {"fixed", "from_path"}));
  if (topic_type == "fixed") {
    ASSIGN_OR_RETURN(o.topic, topic.RequiredString("name"));
  } else {
    ASSIGN_OR_RETURN(o.topic_path, topic.RequiredString("path"));
  }
  ASSIGN_OR_RETURN(o.key_path, cfg.String("key_path", ""));
  ASSIGN_OR_RETURN(config::Block format, cfg.Child("value_format"));
  RETURN_IF_ERROR(format.Enum("type", "json", {"json"}).status());

  ASSIGN_OR_RETURN(o.compression,
                   cfg.Enum("compression", "none", {"none", "gzip", "snappy", "lz4", "zstd"}));
  ASSIGN_OR_RETURN(o.acks, cfg.Enum("acks", "all", {"all", "-1", "1", "0"}));
  if (o.acks == "-1") o.acks = "all";
  // The idempotent producer needs every replica's acknowledgement: its default follows acks.
  ASSIGN_OR_RETURN(o.idempotent, cfg.Bool("idempotent", o.acks == "all"));
  if (o.idempotent && o.acks != "all") {
    return cfg.Error("acks",
                     "must be all with idempotent: true (the idempotent producer needs "
                     "every in-sync replica's acknowledgement)");
  }
  ASSIGN_OR_RETURN(int64_t linger, cfg.Int("linger", 5, 0, 900'000));
  o.linger = std::chrono::milliseconds(linger);
  ASSIGN_OR_RETURN(int64_t timeout, cfg.Int("message_timeout", 300'000, 1, 2'147'483'647));
  o.message_timeout = std::chrono::milliseconds(timeout);
  ASSIGN_OR_RETURN(config::Block extra, cfg.Child("extra_client_config"));
  for (const std::string& key : extra.Keys()) {
    ASSIGN_OR_RETURN(o.extra[key], extra.RequiredString(key));
  }
  return o;
}

KafkaSink::KafkaSink(KafkaSinkOptions options)
    : options_(std::move(options)), who_("kafka " + options_.brokers) {}

KafkaSink::~KafkaSink() {
  for (const auto& [name, topic] : topics_) rd_kafka_topic_destroy(topic);
  if (producer_ != nullptr) rd_kafka_destroy(producer_);
}

Status KafkaSink::Open(bool resuming) {
  (void)resuming;  // a topic is only ever appended to
  if (producer_ != nullptr) return Internal(who_ + ": opened twice");
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  std::map<std::string, std::string> properties = {
      {"bootstrap.servers", options_.brokers},
      {"acks", options_.acks},
      {"enable.idempotence", options_.idempotent ? "true" : "false"},
      {"compression.codec", options_.compression},
      {"linger.ms", std::to_string(options_.linger.count())},
      {"message.timeout.ms", std::to_string(options_.message_timeout.count())},
  };
  for (const auto& [key, value] : options_.extra) properties[key] = value;
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      // librdkafka names the property; the value may be a secret and is not repeated.
      return InvalidArgument(who_ + ": client property " + key + ": " + error);
    }
  }
  rd_kafka_conf_set_opaque(conf, this);
  rd_kafka_conf_set_dr_msg_cb(conf, DeliveryCallback);
  rd_kafka_conf_set_error_cb(conf, ErrorCallback);
  rd_kafka_conf_set_log_cb(conf, LogCallback);
  producer_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (producer_ == nullptr) {
    rd_kafka_conf_destroy(conf);
    return InvalidArgument(who_ + ": cannot create a producer: " + error);
  }
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(producer_, 0, nullptr, &metadata, kMetadataTimeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Unavailable(who_ + ": no broker answered within " +
                       std::to_string(kMetadataTimeoutMs / 1000) + " s (" + rd_kafka_err2str(err) +
                       ")");
  }
  rd_kafka_metadata_destroy(metadata);
  return Status::Ok();
}

Result<std::string> KafkaSink::TopicOf(const Change& change) const {
  const Relation& relation = *change.relation;
  if (options_.topic_path.empty()) {
    std::string topic = options_.topic;
    ReplaceAll(topic, "{schema}", relation.schema);
    ReplaceAll(topic, "{table}", relation.name);
    return topic;
  }
  const std::string& path = options_.topic_path;
  const int column = relation.FindColumn(path);
  const Row* row = RowOf(change);
  if (column >= 0 && row != nullptr && static_cast<size_t>(column) < row->size() &&
      (*row)[column].state == CellState::kValue && !(*row)[column].text.empty()) {
    return (*row)[column].text;
  }
  if (column < 0 && change.op != ChangeOp::kRead) {
    if (path == "schema") return relation.schema;
    if (path == "table") return relation.name;
  }
  return InvalidArgument(who_ + ": topic path " + path + " is not a non-empty field of table " +
                         relation.schema + "." + relation.name);
}

KafkaSink::TableShape& KafkaSink::ShapeOf(const RelationPtr& relation) {
  auto it = shapes_.find(relation.get());
  if (it != shapes_.end()) return it->second;
  if (shapes_.size() >= 1024) shapes_.clear();  // relations of many schema changes
  TableShape shape;
  shape.source = relation;
  auto key = std::make_shared<Relation>();
  key->schema = relation->schema;
  key->name = relation->name;
  for (size_t i = 0; i < relation->columns.size(); ++i) {
    const Column& column = relation->columns[i];
    if (options_.key_path.empty() ? column.key : column.name == options_.key_path) {
      key->columns.push_back(column);
      shape.columns.push_back(i);
    }
  }
  shape.key = std::move(key);
  return shapes_.emplace(relation.get(), std::move(shape)).first->second;
}

rd_kafka_topic_t* KafkaSink::TopicHandle(const std::string& name) {
  auto it = topics_.find(name);
  if (it != topics_.end()) return it->second;
  return topics_.emplace(name, rd_kafka_topic_new(producer_, name.c_str(), nullptr)).first->second;
}

void KafkaSink::RenderKey(const Change& change, const TableShape& shape) {
  key_.clear();
  const Row* row = RowOf(change);
  if (shape.columns.empty() || row == nullptr) return;
  if (!options_.key_path.empty()) {
    const Cell& cell = (*row)[shape.columns[0]];
    if (cell.state == CellState::kValue) key_ = cell.text;
    return;
  }
  key_change_.relation = shape.key;
  if (!key_change_.after) key_change_.after.emplace();
  Row& cells = *key_change_.after;
  cells.resize(shape.columns.size());
  for (size_t i = 0; i < shape.columns.size(); ++i) cells[i] = (*row)[shape.columns[i]];
  AppendChangeJson(key_change_, key_);
}

std::string KafkaSink::KeyOf(const Change& change) {
  RenderKey(change, ShapeOf(change.relation));
  return key_;
}

Status KafkaSink::Write(const Page& page) {
  if (producer_ == nullptr) return Internal(who_ + ": written before Open");
  for (const Change& change : page.changes) {
    TableShape& shape = ShapeOf(change.relation);
    rd_kafka_topic_t* topic = shape.topic;
    if (topic == nullptr) {
      ASSIGN_OR_RETURN(std::string name, TopicOf(change));
      topic = TopicHandle(name);
      if (options_.topic_path.empty()) shape.topic = topic;  // the same for every change
    }
    RenderKey(change, shape);
    value_.clear();
    AppendChangeJson(change, value_);
    while (true) {
      const rd_kafka_resp_err_t err = rd_kafka_producev(
          producer_, RD_KAFKA_V_RKT(topic), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_KEY(key_.empty() ? nullptr : key_.data(), key_.size()),
          RD_KAFKA_V_VALUE(value_.data(), value_.size()), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        return Unavailable(who_ + ": cannot produce to topic " + rd_kafka_topic_name(topic) + ": " +
                           rd_kafka_err2str(err));
      }
      rd_kafka_poll(producer_, 100);  // the queue drains as the broker acknowledges
      RETURN_IF_ERROR(Failure());
    }
  }
  rd_kafka_poll(producer_, 0);
  return Failure();
}

Status KafkaSink::Flush() {
  if (producer_ == nullptr) return Status::Ok();
  // Every message ends acknowledged or failed within message_timeout.
  while (rd_kafka_outq_len(producer_) > 0) {
    rd_kafka_flush(producer_, 1000);
    RETURN_IF_ERROR(Failure());
  }
  return Failure();
}

Status KafkaSink::Failure() const {
  if (first_error_.empty()) return Status::Ok();
  const std::string counted =
      failed_ > 0 ? std::to_string(failed_) + " message(s) not acknowledged, the first: " : "";
  return Unavailable(who_ + ": " + counted + first_error_);
}

void KafkaSink::OnDelivery(const rd_kafka_message_t& message) {
  if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  ++failed_;
  if (first_error_.empty()) {
    first_error_ = "topic " + std::string(rd_kafka_topic_name(message.rkt)) + ": " +
                   rd_kafka_err2str(message.err);
  }
}

void KafkaSink::OnError(int error) {
  // Other errors are transient (a broker down, a connection lost): librdkafka logs them and
  // retries until message_timeout.
  if (static_cast<rd_kafka_resp_err_t>(error) != RD_KAFKA_RESP_ERR__FATAL) return;
  char fatal[512];
  rd_kafka_fatal_error(producer_, fatal, sizeof fatal);
  if (first_error_.empty()) first_error_ = std::string("fatal producer error: ") + fatal;
}

Result<std::unique_ptr<Sink>> MakeKafkaSink(const config::Block& cfg) {
  ASSIGN_OR_RETURN(KafkaSinkOptions options, KafkaSinkOptions::FromConfig(cfg));
  return std::unique_ptr<Sink>(std::make_unique<KafkaSink>(std::move(options)));
}

}  // namespace faucet
