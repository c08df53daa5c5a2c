#include "sinks/kafka/client.h"

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

}  // namespace

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

}  // namespace faucet::kafka
