// MemoryStateStore: state that lives and dies with the process. For tests and previews only:
// the exactly-once and mirror gates refuse it because its durability is kNone (DurabilityOf).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/mutex.h"
#include "core/state_store.h"

namespace faucet {

// Thread-safe. Keys follow the same grammar as the durable stores (ValidateStateKey), so that
// code tested against this store behaves the same against the others.
class MemoryStateStore : public StateStore {
 public:
  Result<std::optional<Json>> Get(const std::string& key) override;
  Status Put(const std::string& key, const Json& value) override;
  Status Delete(const std::string& key) override;
  Durability durability() const override { return Durability::kNone; }

 private:
  Mutex mu_;
  std::map<std::string, Json> values_ GUARDED_BY(mu_);
};

}  // namespace faucet
