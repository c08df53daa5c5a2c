#include "state/state_config.h"

#include <libpq-fe.h>

#include <regex>

#include "core/file_system.h"
#include "core/redact.h"
#include "state/file_state_store.h"
#include "state/memory_state_store.h"
#include "state/postgres_state_store.h"
#include "state/redis_state_store.h"

namespace faucet {
namespace {

Result<StateConfig> ParseFile(const config::Block& block) {
  StateConfig cfg{.type = StateType::kFile};
  ASSIGN_OR_RETURN(cfg.path, block.RequiredString("path"));
  // The reference can seal state files; writing them in the clear instead, or failing later on
  // its sealed files as "corrupt", would both surprise the user.
  if (block.Has("encryption")) {
    block.MarkRead("encryption");
    return block.Error("encryption", "encrypted state files are not supported by this build");
  }
  return cfg;
}

Result<StateConfig> ParsePostgres(const config::Block& block) {
  StateConfig cfg{.type = StateType::kPostgres};
  // The reference's postgres-cdc README shows `connection_url`, but the key is `url`.
  if (!block.Has("url") && block.Has("connection_url")) {
    block.MarkRead("connection_url");
    return block.Error(
        "connection_url",
        "the postgres state store takes `url`, not `connection_url`; rename the key");
  }
  ASSIGN_OR_RETURN(cfg.url, block.RequiredString("url"));
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(cfg.url.c_str(), &error);
  if (options == nullptr) {
    std::string why = error == nullptr ? "out of memory" : error;
    PQfreemem(error);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return block.Error("url", Redact("is not a valid PostgreSQL connection string: " + why));
  }
  PQconninfoFree(options);

  ASSIGN_OR_RETURN(cfg.table, block.String("table", cfg.table));
  static const std::regex kTable("[A-Za-z0-9_]{1,63}");
  if (!std::regex_match(cfg.table, kTable)) {
    return block.Error("table",
                       "expected 1 to 63 characters of A-Z a-z 0-9 _, got '" + cfg.table + "'");
  }
  ASSIGN_OR_RETURN(cfg.ensure_table, block.Bool("ensure_table", cfg.ensure_table));
  ASSIGN_OR_RETURN(cfg.max_connections, block.Int("max_connections", cfg.max_connections, 1));
  return cfg;
}

Result<StateConfig> ParseRedis(const config::Block& block) {
  StateConfig cfg{.type = StateType::kRedis};
  ASSIGN_OR_RETURN(cfg.url, block.RequiredString("url"));
  Result<RedisUrl> url = ParseRedisUrl(cfg.url);
  if (!url.ok()) return block.Error("url", url.status().message());
  ASSIGN_OR_RETURN(cfg.redis_namespace, block.String("namespace", cfg.redis_namespace));
  static const std::regex kNamespace("[A-Za-z0-9_.-]+");
  if (!std::regex_match(cfg.redis_namespace, kNamespace)) {
    return block.Error("namespace", "expected one or more of A-Z a-z 0-9 _ . -, got '" +
                                        cfg.redis_namespace + "'");
  }
  return cfg;
}

}  // namespace

Result<StateConfig> ParseStateConfig(const std::string& type, const config::Block& block) {
  if (type == "file") return ParseFile(block);
  if (type == "postgres") return ParsePostgres(block);
  if (type == "redis") return ParseRedis(block);
  if (type == "memory") return StateConfig{.type = StateType::kMemory};
  return block.Error(
      "", "unknown state store type '" + type + "' (known: file, postgres, redis, memory)");
}

Durability DurabilityOf(StateType type) {
  switch (type) {
    case StateType::kFile:
    case StateType::kPostgres:
      return Durability::kDurable;
    case StateType::kRedis:
      return Durability::kWeak;
    case StateType::kMemory:
      return Durability::kNone;
  }
  return Durability::kNone;
}

Result<std::unique_ptr<StateStore>> OpenStateStore(const StateConfig& cfg) {
  switch (cfg.type) {
    case StateType::kFile: {
      FileSystem& fs = PosixFileSystem();
      RETURN_IF_ERROR(fs.CreateDirs(cfg.path));
      return std::unique_ptr<StateStore>(new FileStateStore(fs, cfg.path));
    }
    case StateType::kPostgres: {
      ASSIGN_OR_RETURN(auto store, PostgresStateStore::Open(cfg.url, cfg.table, cfg.ensure_table));
      return std::unique_ptr<StateStore>(std::move(store));
    }
    case StateType::kRedis: {
      ASSIGN_OR_RETURN(auto store, RedisStateStore::Open(cfg.url, cfg.redis_namespace));
      return std::unique_ptr<StateStore>(std::move(store));
    }
    case StateType::kMemory:
      return std::unique_ptr<StateStore>(new MemoryStateStore());
  }
  return Internal("unknown state store type");
}

}  // namespace faucet
