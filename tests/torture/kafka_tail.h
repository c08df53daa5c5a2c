// A read_committed consumer of one partition of a topic, for the torture's kafka destination:
// each call appends what was committed since the previous one.
#pragma once

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <ostream>
#include <string>

#include "clients/kafka/client.h"

namespace faucet::torture {

class KafkaTail {
 public:
  // Reads partition 0 of `topic` from its beginning. Throws TortureError when it cannot.
  KafkaTail(const std::string& brokers, const std::string& topic);

  // Appends the value of every message committed since the last call to `out`, one per line,
  // until the consumer reaches the partition's end (its last stable offset) or nothing comes
  // for a second. True when the end was reached with nothing after it.
  bool AppendNew(std::ostream& out);

  int64_t messages() const { return messages_; }

 private:
  std::string topic_;
  kafka::Client consumer_;
  bool at_end_ = false;  // the last event was the partition's end
  int64_t messages_ = 0;
};

}  // namespace faucet::torture
