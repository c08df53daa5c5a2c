// kafka_message: a Kafka message (key and value) read back into a Change by the kafka source's
// decoder, in both value formats. The first byte chooses the format (its high bit: Debezium's
// JSON) and where the rest splits into key and value. Bad input must be a kInvalidArgument
// error, never an exception or a crash.
#include <cstdlib>
#include <string_view>

#include "fuzz_target.h"
#include "sources/kafka/message_decoder.h"

FAUCET_FUZZ_TARGET(kafka_message) {
  using faucet::kafka::MessageDecoder;
  using faucet::kafka::ValueFormat;
  // Kept across inputs, as the source keeps one: its relation cache sees many shapes.
  static MessageDecoder json(ValueFormat::kJson);
  static MessageDecoder debezium(ValueFormat::kDebeziumJson);
  if (size < 1) return;
  MessageDecoder& decoder = (data[0] & 0x80) != 0 ? debezium : json;
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const size_t split = rest.empty() ? 0 : (data[0] & 0x7f) % (rest.size() + 1);
  for (const auto& [key, value] :
       {std::pair{std::optional(rest.substr(0, split)), rest.substr(split)},
        std::pair{std::optional<std::string_view>(), rest}}) {
    faucet::Result<std::optional<faucet::Change>> change = decoder.Decode("topic", key, value);
    if (!change.ok() && change.status().code() != faucet::StatusCode::kInvalidArgument) {
      std::abort();
    }
  }
}
