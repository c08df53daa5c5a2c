// Configuration of the Postgres sources (`type: postgres-cdc` and `type: postgres`), parsed
// from a config block without any I/O, so that `faucet validate` finds every invalid value
// before a connection is attempted. Keys and defaults follow the reference system
// (spec/reference-faucet-stream.md §1.3, §1.4), except that proto_version 2 is the default.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "clients/postgres/connection.h"
#include "config/block.h"
#include "core/lsn.h"
#include "core/status.h"

namespace faucet {

struct PostgresCdcConfig {
  std::string connection_url;
  std::string slot_name;         // [a-z0-9_]{1,63}
  std::string publication_name;  // must exist; never created
  bool create_slot_if_missing = true;
  bool temporary_slot = false;   // `slot_type: temporary`: dies with the replication session
  std::optional<Lsn> start_lsn;  // used only when no bookmark is persisted
  int proto_version = 2;         // 2 streams large in-progress transactions (server >= 14)
  // Written values are whole seconds >= 1. The status interval is always below the idle
  // timeout: when only one of the two is written and the other's default would not be, that
  // default becomes idle timeout = 2 x status interval, or status interval = idle timeout / 2
  // (500 ms for an idle timeout of 1 s); both written and contradictory is an error.
  std::chrono::milliseconds idle_timeout{30'000};
  std::chrono::milliseconds max_cycle_duration{300'000};
  std::chrono::milliseconds status_update_interval{10'000};
  size_t batch_size = 1000;  // rows per page target
  int slot_acquire_retries = 10;
  PostgresTls tls;

  // Tuning without a config key (tests lower them).
  size_t page_bytes = 16 << 20;           // byte budget of one page
  // How long a page waits for more transactions while the stream flows (one with changes
  // leaves once the stream has been quiet for a nap, kBurstNap).
  std::chrono::milliseconds linger{50};
  size_t stream_memory_bytes = 16 << 20;  // streamed transactions kept in memory, in total
  std::string spill_dir;                  // where streamed transactions spill; "" = $TMPDIR
};

struct PostgresQueryConfig {
  std::string connection_url;
  std::string query;
  size_t batch_size = 1000;  // rows per page
  PostgresTls tls;           // as postgres-cdc's
};

// Reads a `postgres-cdc` config block. Every invalid value is kInvalidArgument located at its
// key (file:line:col).
Result<PostgresCdcConfig> ParsePostgresCdcConfig(const config::Block& block);

// Reads a `postgres` (query) config block.
Result<PostgresQueryConfig> ParsePostgresQueryConfig(const config::Block& block);

}  // namespace faucet
