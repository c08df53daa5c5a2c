// The commit-token topic of the kafka sink's exactly-once mode (the atomic watermark).
//
// A compacted topic: each message's key is a scope (a pipeline's state key) and its value the
// scope's commit token at that point. The sink produces a page's token in the Kafka
// transaction of the page's messages, so a read_committed reader sees the token exactly when
// it sees the messages, and the scope's last visible token names the last page a consumer can
// see. Only the producer whose transactional.id belongs to the scope writes its tokens.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "clients/kafka/client.h"

namespace faucet::kafka {

// Creates `topic` through `client` (one partition, the brokers' replication factor,
// cleanup.policy=compact) unless it exists. kUnavailable when the brokers do not answer
// within `timeout`, or refuse for another reason (named).
Status EnsureTokenTopic(rd_kafka_t* client, const std::string& topic,
                        std::chrono::milliseconds timeout, const std::string& who);

// The last token of `scope` on `topic`, or none. `properties` are the client's (brokers,
// auth); the read uses consumers of its own.
//
// Call it after the scope's producer ran init_transactions, which ends that producer's own
// open transaction (a crashed run's). Another producer's open transaction on the topic
// hides the messages after it from a read_committed reader; the read therefore first waits
// until every transaction open when it started has ended (a live one commits within a page, a
// dead one's is aborted by the brokers after its transaction timeout), at most `wait`, then
// reads backwards from the end in growing windows until it meets the scope. kUnavailable when
// a transaction stays open longer than `wait` or the brokers do not answer; kDataLoss when two
// partitions hold tokens of the scope (the topic's partition count was changed).
Result<std::optional<std::string>> ReadLastToken(const Properties& properties,
                                                 const std::string& topic, const std::string& scope,
                                                 std::chrono::milliseconds wait,
                                                 const std::string& who);

}  // namespace faucet::kafka
