// `faucet mirror status`: what the persisted state says about a mirror, plus the source's
// current lag. Reads only; never disturbs a running mirror.
#pragma once

#include "assembly/pipeline_builder.h"
#include "core/state_store.h"

namespace faucet::mirror {

// {"name", "phase", "snapshot": {...}, "position", "lag_bytes", "lag_seconds", "last_error",
//  "last_error_at_ms", "updated_at_ms"}. Lag needs the source: null when it is unreachable.
Result<Json> ReadMirrorStatus(const assembly::BuiltPipeline& built, StateStore& state);

// The same as text for a terminal.
std::string FormatMirrorStatus(const Json& status);

}  // namespace faucet::mirror
