// `faucet mirror status`: what the persisted state says about a mirror, plus the source's
// current lag. Reads only; never disturbs a running mirror.
#pragma once

#include "assembly/pipeline_builder.h"
#include "core/state_store.h"
#include "mirror/mirror_status.h"

namespace faucet::mirror {

// {"name", "phase", "snapshot": {...}, "position", "lag_bytes", "lag_seconds", "last_error",
//  "last_error_at_ms", "updated_at_ms"}. Lag needs the source: null when it is unreachable.
// With `live` (a running mirror's MirrorStatus, Mirror::LiveStatus), that instead of the
// saved one.
Result<Json> ReadMirrorStatus(const assembly::BuiltPipeline& built, StateStore& state,
                              const MirrorStatus* live = nullptr);

// The same as text for a terminal.
std::string FormatMirrorStatus(const Json& status);

}  // namespace faucet::mirror
