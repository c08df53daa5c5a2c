// The `state:` block of a pipeline: which store keeps the bookmarks, and where. Keys and defaults
// are the reference system's (spec/reference-faucet-stream.md §1.8), so its configs load
// unchanged:
//
//   state: { type: file,     config: { path: ./state } }
//   state: { type: postgres, config: { url: postgres://..., table: faucet_state,
//                                      ensure_table: false, max_connections: 5 } }
//   state: { type: redis,    config: { url: redis://..., namespace: faucet } }
//   state: { type: memory }
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "config/block.h"
#include "core/state_store.h"

namespace faucet {

enum class StateType { kFile, kPostgres, kRedis, kMemory };

// Only the fields of `type` are meaningful.
struct StateConfig {
  StateType type = StateType::kMemory;
  std::string path;                        // file: the directory of the state files
  std::string url;                         // postgres (libpq URI or key=value), redis
  std::string table = "faucet_state";      // postgres: [A-Za-z0-9_]{1,63}
  bool ensure_table = false;               // postgres: CREATE TABLE IF NOT EXISTS on open
  int64_t max_connections = 5;             // postgres: accepted for compatibility; one is used
  std::string redis_namespace = "faucet";  // redis: [A-Za-z0-9_.-]+, keys are "{namespace}:{key}"
};

// Parses the `config:` block of a `state:` of type `type`. Does no I/O (`faucet validate` calls
// it). Errors are kInvalidArgument from `block.Error`, naming the file, line and key. Reads every
// key it knows through `block`'s getters, so the caller can warn about the rest
// (Block::UnreadKeys).
Result<StateConfig> ParseStateConfig(const std::string& type, const config::Block& block);

// What a store of `type` promises (StateStore::durability), known without opening it: the gates
// of `faucet validate` use it.
Durability DurabilityOf(StateType type);

// Opens the store: creates the file store's directory, connects to postgres or redis (and
// creates the postgres table when ensure_table). kUnavailable when a server cannot be reached.
Result<std::unique_ptr<StateStore>> OpenStateStore(const StateConfig& cfg);

}  // namespace faucet
