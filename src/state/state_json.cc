#include "state/state_json.h"

namespace faucet {

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
  return value;
}

}  // namespace faucet
