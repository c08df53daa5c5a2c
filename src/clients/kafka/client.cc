#include "clients/kafka/client.h"

#include <spdlog/spdlog.h>

namespace faucet::kafka {
namespace {

// librdkafka's own log lines (syslog levels) into faucet's log.
void LogCallback(const rd_kafka_t*, int level, const char* facility, const char* line) {
  const auto spd_level = level <= 4   ? spdlog::level::warn
                         : level <= 6 ? spdlog::level::info
                                      : spdlog::level::debug;
  spdlog::log(spd_level, "kafka: {}: {}", facility, line);
}

// `auth`: {type: sasl, mechanism, username, password, tls, ca_location} or {type: tls,
// ca_location, certificate_location, key_location, key_password} as librdkafka properties.
Result<Properties> ParseAuth(const config::Block& cfg) {
  Properties p;
  if (!cfg.Has("auth")) return p;
  ASSIGN_OR_RETURN(config::Block auth, cfg.Child("auth"));
  ASSIGN_OR_RETURN(std::string type, auth.Enum("type", "sasl", {"sasl", "tls"}));
  auto optional = [&](const char* key, const char* property) -> Status {
    ASSIGN_OR_RETURN(std::optional<std::string> value, auth.OptionalString(key));
    if (value) p[property] = *value;
    return Status::Ok();
  };
  RETURN_IF_ERROR(optional("ca_location", "ssl.ca.location"));
  if (type == "tls") {
    p["security.protocol"] = "SSL";
    RETURN_IF_ERROR(optional("certificate_location", "ssl.certificate.location"));
    RETURN_IF_ERROR(optional("key_location", "ssl.key.location"));
    RETURN_IF_ERROR(optional("key_password", "ssl.key.password"));
    return p;
  }
  ASSIGN_OR_RETURN(p["sasl.mechanisms"],
                   auth.Enum("mechanism", "PLAIN", {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}));
  ASSIGN_OR_RETURN(p["sasl.username"], auth.RequiredString("username"));
  ASSIGN_OR_RETURN(p["sasl.password"], auth.RequiredString("password"));
  ASSIGN_OR_RETURN(bool tls, auth.Bool("tls", false));
  p["security.protocol"] = tls ? "SASL_SSL" : "SASL_PLAINTEXT";
  return p;
}

}  // namespace

Result<Connection> Connection::FromConfig(const config::Block& cfg) {
  Connection c;
  if (cfg.Has("brokers") && cfg.node()["brokers"].IsSequence()) {
    ASSIGN_OR_RETURN(std::vector<std::string> brokers, cfg.StringList("brokers"));
    for (const std::string& b : brokers) c.brokers += (c.brokers.empty() ? "" : ",") + b;
  } else {
    ASSIGN_OR_RETURN(c.brokers, cfg.RequiredString("brokers"));
  }
  if (c.brokers.empty()) return cfg.Error("brokers", "names no broker");
  ASSIGN_OR_RETURN(c.auth, ParseAuth(cfg));
  ASSIGN_OR_RETURN(config::Block extra, cfg.Child("extra_client_config"));
  for (const std::string& key : extra.Keys()) {
    ASSIGN_OR_RETURN(c.extra[key], extra.RequiredString(key));
  }
  return c;
}

Properties Connection::ClientProperties() const {
  Properties properties = auth;
  properties["bootstrap.servers"] = brokers;
  return properties;
}

Result<rd_kafka_conf_t*> NewConf(const Properties& properties, const std::string& who) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return InvalidArgument(who + ": client property " + key + ": " + error);
    }
  }
  rd_kafka_conf_set_log_cb(conf, LogCallback);
  return conf;
}

Result<Client> NewClient(rd_kafka_type_t type, rd_kafka_conf_t* conf, const std::string& who) {
  char error[512];
  rd_kafka_t* client = rd_kafka_new(type, conf, error, sizeof error);
  if (client == nullptr) {
    rd_kafka_conf_destroy(conf);
    return InvalidArgument(who + ": cannot create a " +
                           (type == RD_KAFKA_PRODUCER ? "producer" : "consumer") + ": " + error);
  }
  return Client(client);
}

Status AwaitBrokers(rd_kafka_t* client, std::chrono::milliseconds timeout, const std::string& who,
                    const std::string* last_error) {
  const rd_kafka_metadata_t* metadata = nullptr;
  const rd_kafka_resp_err_t err =
      rd_kafka_metadata(client, 0, nullptr, &metadata, static_cast<int>(timeout.count()));
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_metadata_destroy(metadata);
    return Status::Ok();
  }
  rd_kafka_poll(client, 0);  // serves the errors queued meanwhile
  const bool explained = last_error != nullptr && !last_error->empty();
  return Unavailable(who + ": no broker answered within " + std::to_string(timeout.count() / 1000) +
                     " s (" + rd_kafka_err2str(err) +
                     (explained ? "; last error: " + *last_error : "") + ")");
}

Result<Client> NewReader(const Properties& base, const char* isolation, const std::string& who) {
  Properties p = base;
  p["group.id"] = "faucet-reader";  // required by librdkafka; never joined
  p["enable.auto.commit"] = "false";
  p["enable.partition.eof"] = "true";
  p["isolation.level"] = isolation;
  ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, NewConf(p, who));
  return NewClient(RD_KAFKA_CONSUMER, conf, who);
}

Status CreateTopic(rd_kafka_t* client, const std::string& topic, int partitions,
                   const Properties& config, std::chrono::milliseconds timeout,
                   const std::string& who) {
  char error[512];
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.c_str(), partitions, -1, error, sizeof error);
  if (new_topic == nullptr) {
    return InvalidArgument(who + ": " + error);
  }
  for (const auto& [name, value] : config) {
    rd_kafka_NewTopic_set_config(new_topic, name.c_str(), value.c_str());
  }
  rd_kafka_queue_t* queue = rd_kafka_queue_new(client);
  rd_kafka_AdminOptions_t* options =
      rd_kafka_AdminOptions_new(client, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_request_timeout(options, static_cast<int>(timeout.count()), error,
                                            sizeof error);
  rd_kafka_CreateTopics(client, &new_topic, 1, options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, static_cast<int>(timeout.count()) + 1000);
  Status status;
  if (event == nullptr) {
    status = Unavailable(who + ": the brokers did not answer");
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    status = Unavailable(who + ": " + rd_kafka_event_error_string(event));
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    const rd_kafka_resp_err_t err =
        count == 1 ? rd_kafka_topic_result_error(results[0]) : RD_KAFKA_RESP_ERR__FAIL;
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      const char* message = count == 1 ? rd_kafka_topic_result_error_string(results[0]) : nullptr;
      status = Unavailable(
          who + ": cannot create it: " + (message != nullptr ? message : rd_kafka_err2str(err)));
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_AdminOptions_destroy(options);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(new_topic);
  return status;
}

}  // namespace faucet::kafka
