// StateStore: a small durable key/value store for bookmarks and markers.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/bookmark.h"
#include "core/status.h"

namespace faucet {

enum class Durability {
  kDurable,  // Put survives a crash of this process and of the machine (file, postgres)
  kWeak,     // as durable as the server's own persistence settings (redis)
  kNone,     // gone with the process (memory)
};

// Proof that this process alone runs under a name (a mirror): held until destroyed or until
// the process dies, however it dies (SIGKILL included).
class StateLease {
 public:
  virtual ~StateLease() = default;
};

class StateStore {
 public:
  virtual ~StateStore() = default;

  // Takes the lease named `key` (ValidateStateKey grammar; not a stored value). Another
  // holder, in this process or any other, makes it kFailedPrecondition saying so. A store
  // that cannot hold one beyond its process's death returns nullptr (redis, memory): the
  // caller warns that two runs would not be kept apart.
  virtual Result<std::unique_ptr<StateLease>> Lease(const std::string& key) {
    (void)key;
    return std::unique_ptr<StateLease>();
  }

  // The value under `key`, or nullopt when there is none. A value that exists but cannot be
  // read (corrupt file) is kDataLoss, never "no value": resuming from nothing would replay or
  // skip silently.
  virtual Result<std::optional<Json>> Get(const std::string& key) = 0;

  // Stores `value` under `key`. When it returns ok the value is durable to the degree given by
  // durability(); on error the previous value is still there, intact.
  virtual Status Put(const std::string& key, const Json& value) = 0;

  // Removes `key`. A missing key is ok.
  virtual Status Delete(const std::string& key) = 0;

  virtual Durability durability() const = 0;
};

// Checks the reference system's key grammar: 1-256 characters of [A-Za-z0-9_:.-], not starting
// with '.'.
Status ValidateStateKey(const std::string& key);

}  // namespace faucet
