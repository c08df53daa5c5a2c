// `faucet mirror status` for a multi-table mirror: the marker and each table's committed
// position, in the reference system's JSON and text shapes
// (../shared/spec/reference-multitable.md §4.1). Reads only the state store, so it works
// whether the mirror runs here, elsewhere, or not at all.
#pragma once

#include "assembly/pipeline_builder.h"
#include "core/state_store.h"
#include "mirror/table_plan.h"
#include "mirror/table_states.h"

namespace faucet::mirror {

// {"name", "mode": "tables", "updated_at", "discovered_at", "summary": {"tables", "by_phase",
//  "lagging", "resync_required"}, "tables": [{"table", "phase", "since", "snapshot": {...,
//  "percent"}, "changes", "position", "lag_secs", "lag_bytes", "lagging", "last_commit_at",
//  "consecutive_failures", "last_error", "key", "write_mode"[, "resync_required"]}]}.
// Lag of an active table, from what its sink committed: lag_secs is how long ago the source
// committed the oldest change routed to the table that its sink had not committed at the
// marker's last save (0 when it had everything: an idle table is not lagging); lag_bytes is
// how far the source's log is ahead of the table's committed position (null when the source
// cannot tell or is unreachable).
// kNotFound when the mirror has not started.
Result<Json> ReadMultiStatus(const assembly::BuiltPipeline& built, const TablesConfig& tables,
                             StateStore& state);
// The same from `marker` (a running mirror's, in memory) and the tables' stored positions.
Result<Json> MultiStatus(const assembly::BuiltPipeline& built, const TablesConfig& tables,
                         const Marker& marker, StateStore& state);

// The same as a table for a terminal:
//   mirror shop (3 tables: 2 active, 1 refused)
//     TABLE        PHASE          SNAPSHOT     CHANGES     LAG  NOTE
//     public.a     active             100%       1,204      0s
std::string FormatMultiStatus(const Json& status);

}  // namespace faucet::mirror
