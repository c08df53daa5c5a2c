// What `faucet mirror status` shows, persisted by the running mirror under
// {name}::__mirror_status__ (docs/state-format.md). Times are Unix milliseconds.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/bookmark.h"
#include "core/state_store.h"
#include "core/status.h"

namespace faucet::mirror {

struct MirrorStatus {
  std::string phase = "starting";  // snapshot, cdc, stopped, failed
  uint64_t snapshot_rows = 0;
  std::optional<int64_t> snapshot_estimate;  // the planner's row estimate
  int64_t snapshot_started_ms = 0;
  int64_t snapshot_finished_ms = 0;
  int64_t last_commit_ms = 0;  // commit time of the last change written in the CDC phase
  std::string last_error;
  int64_t last_error_ms = 0;
  int64_t updated_ms = 0;

  Json ToJson() const;
  static MirrorStatus FromJson(const Json& j);
};

int64_t NowMs();

std::string StatusKey(const std::string& name);
std::string MarkerKey(const std::string& name);
std::string CdcKey(const std::string& name);
std::string LeaseKey(const std::string& name);  // a lease, not a stored value

// One process per mirror: takes the lease LeaseKey(name), held until the result is destroyed
// (it dies with the process, however it ends); kFailedPrecondition when another process holds
// it. A store that cannot hold a lease gives nullptr, with a warning.
Result<std::unique_ptr<StateLease>> TakeMirrorLease(StateStore& state, const std::string& name);

}  // namespace faucet::mirror
