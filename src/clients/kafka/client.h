// What every librdkafka client of faucet shares (the kafka sink's producer and its commit-token
// readers, the kafka source's consumer): the connection keys of their configs, a client made
// from a map of properties, its log in faucet's log, owning handles, and topic creation.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "config/block.h"
#include "core/status.h"

namespace faucet::kafka {

using Properties = std::map<std::string, std::string>;

struct ClientDeleter {
  void operator()(rd_kafka_t* client) const { rd_kafka_destroy(client); }
};
using Client = std::unique_ptr<rd_kafka_t, ClientDeleter>;

// The connection keys the kafka sink and source share, as librdkafka properties:
//   brokers               a string "host:port,host:port" or a list (bootstrap.servers);
//   auth                  {type: sasl, mechanism: PLAIN|SCRAM-SHA-256|SCRAM-SHA-512, username,
//                         password, tls: false, ca_location} or {type: tls, ca_location,
//                         certificate_location, key_location, key_password} (security.protocol,
//                         sasl.*, ssl.*);
//   extra_client_config   librdkafka properties, applied last by the caller (`extra`).
// No I/O.
struct Connection {
  std::string brokers;
  Properties auth;   // empty: PLAINTEXT
  Properties extra;  // extra_client_config

  static Result<Connection> FromConfig(const config::Block& cfg);
  // bootstrap.servers and the auth properties.
  Properties ClientProperties() const;
};

// A configuration holding `properties`, logging into spdlog. kInvalidArgument naming the
// property librdkafka refuses (not its value: it may be a secret); `who` starts the message.
Result<rd_kafka_conf_t*> NewConf(const Properties& properties, const std::string& who);

// A client of `type` from `conf` (which it takes, also on failure).
Result<Client> NewClient(rd_kafka_type_t type, rd_kafka_conf_t* conf, const std::string& who);

// A consumer of `base` (bootstrap.servers, auth) that is only ever assigned partitions: it joins
// no group and commits nothing, reads with `isolation` ("read_committed" or "read_uncommitted")
// and reports each partition's end (RD_KAFKA_RESP_ERR__PARTITION_EOF).
Result<Client> NewReader(const Properties& base, const char* isolation, const std::string& who);

// Asks the brokers for their metadata, as a check that they answer: kUnavailable naming `who`
// when none does within `timeout`, with librdkafka's error and, when not empty, `*last_error`:
// what the client's error callback reported meanwhile (a refused login says why there). Serves
// the client's queued callbacks first (rd_kafka_poll), so that `*last_error` is current:
// REQUIRES a client whose events are not redirected to a consumer queue yet.
Status AwaitBrokers(rd_kafka_t* client, std::chrono::milliseconds timeout, const std::string& who,
                    const std::string* last_error);

// Creates `topic` through `client` with `partitions` partitions, the brokers' replication
// factor and `config` (topic properties), unless it exists. kUnavailable when the brokers do
// not answer within `timeout` or refuse (their reason); `who` names the topic in messages.
Status CreateTopic(rd_kafka_t* client, const std::string& topic, int partitions,
                   const Properties& config, std::chrono::milliseconds timeout,
                   const std::string& who);

}  // namespace faucet::kafka
