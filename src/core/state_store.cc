#include "core/state_store.h"

namespace faucet {

Status ValidateStateKey(const std::string& key) {
  if (key.empty() || key.size() > 256) {
    return InvalidArgument("state key '" + key + "' must be 1 to 256 characters long");
  }
  if (key[0] == '.') return InvalidArgument("state key '" + key + "' must not start with '.'");
  for (char c : key) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ':' || c == '.' || c == '-';
    if (!ok) {
      return InvalidArgument("state key '" + key + "' may only contain A-Z a-z 0-9 _ : . - (found '" +
                             std::string(1, c) + "')");
    }
  }
  return Status::Ok();
}

}  // namespace faucet
