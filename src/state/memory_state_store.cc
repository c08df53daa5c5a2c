#include "state/memory_state_store.h"

#include "state/state_json.h"

namespace faucet {

Result<std::optional<Json>> MemoryStateStore::Get(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  MutexLock lock(mu_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::optional<Json>();
  return std::optional<Json>(it->second);
}

Status MemoryStateStore::Put(const std::string& key, const Json& value) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  // Rejects what the durable stores cannot store either.
  RETURN_IF_ERROR(DumpStateValue(value).status());
  MutexLock lock(mu_);
  values_[key] = value;
  return Status::Ok();
}

Status MemoryStateStore::Delete(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  MutexLock lock(mu_);
  values_.erase(key);
  return Status::Ok();
}

}  // namespace faucet
