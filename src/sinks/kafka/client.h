// What the kafka sink's producer and its commit-token readers share: a librdkafka client made
// from a map of properties, its log in faucet's log, owning handles, and topic creation.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "core/status.h"

namespace faucet::kafka {

using Properties = std::map<std::string, std::string>;

struct ClientDeleter {
  void operator()(rd_kafka_t* client) const { rd_kafka_destroy(client); }
};
using Client = std::unique_ptr<rd_kafka_t, ClientDeleter>;

// A configuration holding `properties`, logging into spdlog. kInvalidArgument naming the
// property librdkafka refuses (not its value: it may be a secret); `who` starts the message.
Result<rd_kafka_conf_t*> NewConf(const Properties& properties, const std::string& who);

// A client of `type` from `conf` (which it takes, also on failure).
Result<Client> NewClient(rd_kafka_type_t type, rd_kafka_conf_t* conf, const std::string& who);

// Creates `topic` through `client` with `partitions` partitions, the brokers' replication
// factor and `config` (topic properties), unless it exists. kUnavailable when the brokers do
// not answer within `timeout` or refuse (their reason); `who` names the topic in messages.
Status CreateTopic(rd_kafka_t* client, const std::string& topic, int partitions,
                   const Properties& config, std::chrono::milliseconds timeout,
                   const std::string& who);

}  // namespace faucet::kafka
