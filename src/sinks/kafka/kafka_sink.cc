#include "sinks/kafka/kafka_sink.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/crash_point.h"
#include "core/json_render.h"
#include "sinks/kafka/token_topic.h"

namespace faucet {
namespace {

constexpr int kMetadataTimeoutMs = 10'000;
// The producer's queue (messages produced and not yet acknowledged) bounds the sink's memory:
// librdkafka's defaults, 100,000 messages or 1 GiB, let one large transaction hold up to 1 GiB.
// Measured (BENCHMARKS.md): 20,000 messages take the 1,000,000-row transaction from about 100 to
// 62 MiB at no cost in speed.
constexpr int kQueueMessages = 20'000;
constexpr int kQueueKiB = 16 << 10;
// The longest a Kafka transaction stays open across pages without a Flush (chunks of a large
// source transaction): fewer commits, and far from any transaction timeout.
constexpr std::chrono::milliseconds kLongestTransaction{1'000};

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

void ErrorCallback(rd_kafka_t* client, int error, const char* reason, void* opaque) {
  static_cast<KafkaSink*>(opaque)->OnError(client, error, reason);
}

// What a fenced producer's error adds: why it happened.
constexpr const char* kFenced =
    " (another producer with this transactional.id started: a second faucet process runs this "
    "pipeline)";

// A Kafka transactional call's error as text, with what librdkafka says of it.
std::string Describe(const rd_kafka_error_t* error) {
  std::string text = rd_kafka_error_string(error);
  if (rd_kafka_error_code(error) == RD_KAFKA_RESP_ERR__FENCED) text += kFenced;
  return text;
}

}  // namespace

Result<KafkaSinkOptions> KafkaSinkOptions::FromConfig(const config::Block& cfg) {
  KafkaSinkOptions o;
  ASSIGN_OR_RETURN(o.connection, kafka::Connection::FromConfig(cfg));

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
  ASSIGN_OR_RETURN(o.partition_path, cfg.String("partition_path", ""));
  ASSIGN_OR_RETURN(o.headers_path, cfg.String("headers_path", ""));
  ASSIGN_OR_RETURN(config::Block format, cfg.Child("value_format"));
  ASSIGN_OR_RETURN(std::string format_type, format.Enum("type", "json", {"json", "debezium_json"}));
  o.debezium = format_type == "debezium_json";
  ASSIGN_OR_RETURN(o.debezium_server, format.String("server_name", o.debezium_server));
  if (o.debezium_server.empty()) return format.Error("server_name", "is empty");
  // Debezium's consumers expect its tombstones (tombstones.on.delete defaults to true).
  ASSIGN_OR_RETURN(o.tombstones, cfg.Bool("tombstone_on_delete", o.debezium));

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

  o.exactly_once_set = cfg.Has("exactly_once");
  ASSIGN_OR_RETURN(config::Block eo, cfg.Child("exactly_once"));
  ASSIGN_OR_RETURN(o.transactional_id_prefix,
                   eo.String("transactional_id_prefix", o.transactional_id_prefix));
  ASSIGN_OR_RETURN(o.commit_token_topic, eo.String("commit_token_topic", o.commit_token_topic));
  if (o.transactional_id_prefix.empty()) return eo.Error("transactional_id_prefix", "is empty");
  if (o.commit_token_topic.empty()) return eo.Error("commit_token_topic", "is empty");
  // A transaction's messages must be delivered before the brokers abort it: a written
  // message_timeout raises the default transaction timeout (up to the brokers' usual 15 min
  // maximum), and may not exceed a written one.
  const bool message_timeout_set = cfg.Has("message_timeout");
  const int64_t txn_default =
      message_timeout_set ? std::clamp<int64_t>(timeout, 60'000, 900'000) : 60'000;
  ASSIGN_OR_RETURN(int64_t txn_timeout, eo.Int("transaction_timeout", txn_default, 1'000, 900'000));
  o.transaction_timeout = std::chrono::milliseconds(txn_timeout);
  if (message_timeout_set && eo.Has("transaction_timeout") && timeout > txn_timeout) {
    return cfg.Error("message_timeout", "must not exceed exactly_once.transaction_timeout (" +
                                            std::to_string(txn_timeout) + " ms)");
  }
  return o;
}

KafkaSink::KafkaSink(KafkaSinkOptions options)
    : options_(std::move(options)), who_("kafka " + options_.connection.brokers) {}

KafkaSink::~KafkaSink() {
  for (const auto& [name, topic] : topics_) rd_kafka_topic_destroy(topic);
  if (producer_ != nullptr) rd_kafka_destroy(producer_);
}

SinkCapabilities KafkaSink::Capabilities() const {
  SinkCapabilities c;
  c.atomic_watermark = true;
  c.watermark_configured = options_.exactly_once_set;
  return c;
}

kafka::Properties KafkaSink::ClientProperties() const {
  kafka::Properties properties = options_.connection.ClientProperties();
  for (const auto& [key, value] : options_.connection.extra) properties[key] = value;
  return properties;
}

Status KafkaSink::Connect(const std::string& transactional_id) {
  kafka::Properties properties = {
      {"acks", options_.acks},
      {"enable.idempotence", options_.idempotent ? "true" : "false"},
      {"compression.codec", options_.compression},
      {"linger.ms", std::to_string(options_.linger.count())},
      {"message.timeout.ms", std::to_string(options_.message_timeout.count())},
      {"queue.buffering.max.messages", std::to_string(kQueueMessages)},
      {"queue.buffering.max.kbytes", std::to_string(kQueueKiB)},
  };
  // Without idempotence a retried batch could overtake the next one: one request in flight
  // per broker keeps each partition's (so each key's) order.
  if (!options_.idempotent) properties["max.in.flight.requests.per.connection"] = "1";
  if (!transactional_id.empty()) {
    const auto timeout = options_.transaction_timeout;
    properties["transactional.id"] = transactional_id;
    properties["transaction.timeout.ms"] = std::to_string(timeout.count());
    properties["message.timeout.ms"] =
        std::to_string(std::min(options_.message_timeout, timeout).count());
  }
  for (const auto& [key, value] : ClientProperties()) properties[key] = value;
  ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, kafka::NewConf(properties, who_));
  rd_kafka_conf_set_opaque(conf, this);
  rd_kafka_conf_set_dr_msg_cb(conf, DeliveryCallback);
  rd_kafka_conf_set_error_cb(conf, ErrorCallback);
  ASSIGN_OR_RETURN(kafka::Client producer, kafka::NewClient(RD_KAFKA_PRODUCER, conf, who_));
  RETURN_IF_ERROR(kafka::AwaitBrokers(producer.get(), std::chrono::milliseconds(kMetadataTimeoutMs),
                                      who_, &last_transient_));
  producer_ = producer.release();
  transactional_id_ = transactional_id;
  return Status::Ok();
}

Status KafkaSink::Open(bool resuming) {
  (void)resuming;                                 // a topic is only ever appended to
  if (producer_ != nullptr) return Status::Ok();  // CommittedToken made it
  if (!bulk_.scope.empty()) return StartTransactions(bulk_.scope);
  return Connect("");
}

Status KafkaSink::Finish(bool completed) {
  if (completed || !in_transaction_) return Status::Ok();
  in_transaction_ = false;
  if (rd_kafka_error_t* error = rd_kafka_abort_transaction(
          producer_, static_cast<int>(options_.transaction_timeout.count()))) {
    const std::string why = Describe(error);
    rd_kafka_error_destroy(error);
    return Unavailable(who_ + ": aborting the load's transaction: " + why +
                       " (the brokers abort it after transaction_timeout)");
  }
  return Status::Ok();
}

Status KafkaSink::StartTransactions(const std::string& scope) {
  const std::string id = options_.transactional_id_prefix + "-" + scope;
  if (producer_ != nullptr) {
    if (transactional_id_ == id) return Status::Ok();
    return Internal(who_ + ": the producer of transactional.id '" + transactional_id_ +
                    "' asked to write scope '" + scope + "'");
  }
  RETURN_IF_ERROR(Connect(id));
  Status started = kafka::EnsureTokenTopic(producer_, options_.commit_token_topic,
                                           std::chrono::milliseconds(kMetadataTimeoutMs), who_);
  if (started.ok()) {
    // Fences older producers of the id and waits until their open transaction is aborted.
    if (rd_kafka_error_t* error = rd_kafka_init_transactions(
            producer_, static_cast<int>(options_.transaction_timeout.count()))) {
      started = TransactionError(error, "starting transactional.id " + id);
    }
  }
  if (!started.ok()) {  // the next call starts over
    rd_kafka_destroy(producer_);
    producer_ = nullptr;
    transactional_id_.clear();
  }
  return started;
}

Result<std::optional<std::string>> KafkaSink::CommittedToken(const std::string& scope) {
  RETURN_IF_ERROR(StartTransactions(scope));
  return kafka::ReadLastToken(ClientProperties(), options_.commit_token_topic, scope,
                              options_.transaction_timeout, who_);
}

Status KafkaSink::WriteIdempotent(const Page& page, const std::string& scope,
                                  const std::string& token) {
  RETURN_IF_ERROR(StartTransactions(scope));
  return Transact(page, &scope, &token);
}

Status KafkaSink::Transact(const Page& page, const std::string* scope, const std::string* token) {
  if (!in_transaction_) {
    if (rd_kafka_error_t* error = rd_kafka_begin_transaction(producer_)) {
      return TransactionError(error, "beginning a transaction");
    }
    in_transaction_ = true;
    began_ = std::chrono::steady_clock::now();
  }
  RETURN_IF_ERROR(ProduceAll(page));
  if (token != nullptr) {
    RETURN_IF_ERROR(Produce(TopicHandle(options_.commit_token_topic), *scope, token));
  }
  // Chunks of a large source transaction share a Kafka transaction until Flush, but not for
  // long: the brokers abort one older than transaction_timeout. A bulk load is one transaction.
  if (bulk_.scope.empty() && std::chrono::steady_clock::now() - began_ >=
                                 std::min<std::chrono::milliseconds>(
                                     kLongestTransaction, options_.transaction_timeout / 4)) {
    return Commit();
  }
  return Status::Ok();
}

Status KafkaSink::Commit() {
  CrashPoint("sink.kafka.before_commit");
  // A broker that does not answer makes the commit time out, retriably: it goes on where it
  // stopped once the broker is back.
  const auto deadline = std::chrono::steady_clock::now() + options_.message_timeout;
  while (true) {
    rd_kafka_error_t* error = rd_kafka_commit_transaction(producer_, kMetadataTimeoutMs);
    if (error == nullptr) break;
    if (!rd_kafka_error_is_retriable(error) || std::chrono::steady_clock::now() > deadline) {
      return TransactionError(error, "committing a transaction");
    }
    spdlog::warn("{}: committing a transaction: {}; retrying", who_, Describe(error));
    rd_kafka_error_destroy(error);
  }
  in_transaction_ = false;
  return Failure();
}

Status KafkaSink::TransactionError(rd_kafka_error_t* error, const std::string& what) {
  const std::string text = who_ + ": " + what + ": " + Describe(error);
  const bool fatal = rd_kafka_error_is_fatal(error);
  const bool abort = rd_kafka_error_txn_requires_abort(error);
  rd_kafka_error_destroy(error);
  if (fatal) return FailedPrecondition(text);
  if (!abort) return Unavailable(text);
  in_transaction_ = false;
  // Nothing of the transaction becomes visible; the next one starts clean.
  first_error_.clear();
  failed_ = 0;
  if (rd_kafka_error_t* aborted = rd_kafka_abort_transaction(
          producer_, static_cast<int>(options_.transaction_timeout.count()))) {
    const std::string why = Describe(aborted);
    rd_kafka_error_destroy(aborted);
    return Unavailable(text + "; aborting it failed too: " + why);
  }
  return Unavailable(text + " (the transaction was aborted: none of it is visible)");
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
  if (!options_.partition_path.empty()) {
    shape.partition_column = relation->FindColumn(options_.partition_path);
  }
  if (!options_.headers_path.empty()) {
    shape.headers_column = relation->FindColumn(options_.headers_path);
  }
  return shapes_.emplace(relation.get(), std::move(shape)).first->second;
}

rd_kafka_topic_t* KafkaSink::TopicHandle(const std::string& name) {
  auto it = topics_.find(name);
  if (it != topics_.end()) return it->second;
  rd_kafka_topic_t* topic = rd_kafka_topic_new(producer_, name.c_str(), nullptr);
  // Asking for the topic's metadata now saves the first message librdkafka's wait for its
  // next topic scan (about 1 s); an error shows again, named, when a message fails.
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(producer_, 0, topic, &metadata, kMetadataTimeoutMs) ==
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(metadata);
  }
  return topics_.emplace(name, topic).first->second;
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
  if (options_.debezium) {
    AppendDebeziumKeyJson(shape.key, cells, options_.debezium_server, key_);
  } else {
    AppendChangeJson(key_change_, key_);
  }
}

std::string KafkaSink::KeyOf(const Change& change) {
  RenderKey(change, ShapeOf(change.relation));
  return key_;
}

size_t KafkaSink::Unacknowledged() const {
  return producer_ == nullptr ? 0 : static_cast<size_t>(rd_kafka_outq_len(producer_));
}

Status KafkaSink::Write(const Page& page) {
  if (producer_ == nullptr) return Internal(who_ + ": written before Open");
  if (!transactional_id_.empty()) return Transact(page, nullptr, nullptr);
  return ProduceAll(page);
}

Status KafkaSink::ProduceAll(const Page& page) {
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
    if (options_.debezium) {
      AppendDebeziumJson(change, options_.debezium_server, value_);
    } else {
      AppendChangeJson(change, value_);
    }
    ASSIGN_OR_RETURN(const int32_t partition, PartitionOf(change, shape));
    ASSIGN_OR_RETURN(rd_kafka_headers_t * headers, HeadersOf(change, shape));
    RETURN_IF_ERROR(Produce(topic, key_, &value_, partition, headers));
    // A compacted topic then forgets the deleted row's key.
    if (options_.tombstones && change.op == ChangeOp::kDelete && !key_.empty()) {
      RETURN_IF_ERROR(Produce(topic, key_, nullptr, partition, nullptr));
    }
  }
  rd_kafka_poll(producer_, 0);
  return Failure();
}

// The cell of `change`'s row in `column` (-1: not a column of its table), or an error naming
// the config key `what` and the table.
Result<const Cell*> KafkaSink::CellOf(const Change& change, int column, const std::string& path,
                                      const char* key) const {
  const Relation& relation = *change.relation;
  const Row* row = RowOf(change);
  if (column < 0 || row == nullptr || static_cast<size_t>(column) >= row->size()) {
    return InvalidArgument(who_ + ": " + key + " " + path + " is not a column of table " +
                           relation.schema + "." + relation.name);
  }
  return &(*row)[column];
}

Status KafkaSink::RowError(const Change& change, const std::string& path, const char* key,
                           const std::string& what) const {
  return InvalidArgument(who_ + ": table " + change.relation->schema + "." + change.relation->name +
                         ", row key " + key_ + ", column " + path + " (" + key + "): " + what);
}

Result<int32_t> KafkaSink::PartitionOf(const Change& change, const TableShape& shape) const {
  const std::string& path = options_.partition_path;
  if (path.empty()) return RD_KAFKA_PARTITION_UA;
  ASSIGN_OR_RETURN(const Cell* cell,
                   CellOf(change, shape.partition_column, path, "partition_path"));
  if (cell->state != CellState::kValue) return RD_KAFKA_PARTITION_UA;  // the key decides
  int32_t partition = -1;
  const char* end = cell->text.data() + cell->text.size();
  const auto [stop, ec] = std::from_chars(cell->text.data(), end, partition);
  if (ec != std::errc() || stop != end || partition < 0) {
    return RowError(change, path, "partition_path",
                    "'" + cell->text + "' is not a partition number");
  }
  return partition;
}

Result<rd_kafka_headers_t*> KafkaSink::HeadersOf(const Change& change,
                                                 const TableShape& shape) const {
  const std::string& path = options_.headers_path;
  if (path.empty()) return nullptr;
  ASSIGN_OR_RETURN(const Cell* cell, CellOf(change, shape.headers_column, path, "headers_path"));
  if (cell->state != CellState::kValue) return nullptr;
  const nlohmann::json object = nlohmann::json::parse(cell->text, nullptr, false);
  if (!object.is_object()) {
    return RowError(change, path, "headers_path",
                    "not a JSON object: " + cell->text.substr(0, 100));
  }
  rd_kafka_headers_t* headers = rd_kafka_headers_new(object.size());
  for (const auto& [name, value] : object.items()) {
    const std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()), text.data(),
                        static_cast<ssize_t>(text.size()));
  }
  return headers;
}

Status KafkaSink::Produce(rd_kafka_topic_t* topic, const std::string& key, const std::string* value,
                          int32_t partition, rd_kafka_headers_t* headers) {
  // Ours until a message takes them.
  std::unique_ptr<rd_kafka_headers_t, decltype(&rd_kafka_headers_destroy)> owned(
      headers, rd_kafka_headers_destroy);
  // Copied (F_COPY): librdkafka's macros only lack the const.
  char* key_data = key.empty() ? nullptr : const_cast<char*>(key.data());
  char* value_data = value != nullptr ? const_cast<char*>(value->data()) : nullptr;
  const size_t value_size = value != nullptr ? value->size() : 0;
  while (true) {
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        producer_, RD_KAFKA_V_RKT(topic), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key_data, key.size()),
        RD_KAFKA_V_VALUE(value_data, value_size), RD_KAFKA_V_HEADERS(owned.get()), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      (void)owned.release();  // the message has them
      return Status::Ok();
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      RETURN_IF_ERROR(Failure());  // a fatal error says why
      return Unavailable(who_ + ": cannot produce to topic " + rd_kafka_topic_name(topic) + ": " +
                         rd_kafka_err2str(err));
    }
    rd_kafka_poll(producer_, 100);  // the queue drains as the broker acknowledges
    RETURN_IF_ERROR(Failure());
  }
}

Status KafkaSink::Flush() {
  if (producer_ == nullptr) return Status::Ok();
  if (!bulk_.scope.empty() && !bulk_ended_) {
    // The load's end, in its transaction: a redo that finds the token knows it committed.
    RETURN_IF_ERROR(Transact(Page{}, &bulk_.scope, &bulk_.token));
    RETURN_IF_ERROR(Commit());
    bulk_ended_ = true;
    return Status::Ok();
  }
  if (in_transaction_) return Commit();
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
  // A fatal error ends the producer: retrying the run cannot help while its cause stays.
  return Status(fatal_ ? StatusCode::kFailedPrecondition : StatusCode::kUnavailable,
                who_ + ": " + counted + first_error_);
}

void KafkaSink::OnDelivery(const rd_kafka_message_t& message) {
  if (message.err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  ++failed_;
  if (first_error_.empty()) {
    first_error_ = "topic " + std::string(rd_kafka_topic_name(message.rkt)) + ": " +
                   rd_kafka_err2str(message.err);
  }
}

void KafkaSink::OnError(rd_kafka_t* client, int error, const char* reason) {
  // Other errors are transient (a broker down, a connection lost, refused credentials):
  // librdkafka logs them and retries until message_timeout; the last one explains a failure.
  if (static_cast<rd_kafka_resp_err_t>(error) != RD_KAFKA_RESP_ERR__FATAL) {
    last_transient_ =
        reason != nullptr ? reason : rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(error));
    return;
  }
  char fatal[512];
  const rd_kafka_resp_err_t code = rd_kafka_fatal_error(client, fatal, sizeof fatal);
  fatal_ = true;
  first_error_ = std::string("fatal producer error: ") + fatal;
  if (code == RD_KAFKA_RESP_ERR__FENCED) first_error_ += kFenced;
}

Result<std::unique_ptr<Sink>> MakeKafkaSink(const config::Block& cfg) {
  ASSIGN_OR_RETURN(KafkaSinkOptions options, KafkaSinkOptions::FromConfig(cfg));
  return std::unique_ptr<Sink>(std::make_unique<KafkaSink>(std::move(options)));
}

}  // namespace faucet
