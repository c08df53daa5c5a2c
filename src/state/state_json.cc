#include "state/state_json.h"

namespace faucet {
namespace {

constexpr const char* kEnvelopeVersion = "faucet_state";

}  // namespace

Result<std::string> DumpStateValue(const Json& value) {
  try {
    return value.dump();
  } catch (const Json::exception& e) {
    return InvalidArgument(std::string("state value cannot be stored as JSON: ") + e.what());
  }
}

Result<Json> ParseStateValue(std::string_view text, const std::string& where) {
  Json value = Json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return DataLoss(where + " does not hold valid JSON (" + std::to_string(text.size()) +
                    " bytes); the stored bookmark is unreadable: restore it, or delete it to "
                    "start over");
  }
  if (!value.is_object() || !value.contains(kEnvelopeVersion)) return value;
  const Json& version = value[kEnvelopeVersion];
  if (!version.is_number_integer() || version != 1) {
    return DataLoss(where + " holds a state envelope of version " + version.dump() +
                    "; this build reads version 1 only (written by a newer engine?)");
  }
  if (!value.contains("data")) {
    return DataLoss(where +
                    " holds a state envelope without \"data\"; the stored bookmark is "
                    "unreadable: restore it, or delete it to start over");
  }
  return std::move(value["data"]);
}

}  // namespace faucet
