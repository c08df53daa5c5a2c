// The per-table gauges of a multi-table mirror, set from its status (MultiMirror::LiveStatus,
// the JSON of `faucet mirror status --json`) at each scrape, labels {pipeline, table}:
//   faucet_table_phase{phase}            1 for the table's phase, 0 for the others
//   faucet_snapshot_rows                 rows its snapshot has read
//   faucet_snapshot_estimated_rows       the catalog's estimate (absent when unknown)
//   faucet_table_lag_seconds             its status lag_secs (active tables)
//   faucet_table_lag_bytes               its status lag_bytes (when the source can tell)
//   faucet_table_consecutive_failures
// and per mirror faucet_tables{phase} (how many tables are in each phase; paused among them).
#pragma once

#include <string>

#include "core/bookmark.h"
#include "observability/metrics.h"

namespace faucet::mirror {

void SetTableGauges(observability::Registry& registry, const std::string& pipeline,
                    const Json& status);

// The same for a single-table mirror, from its status (ReadMirrorStatus), labels {pipeline}:
// faucet_snapshot_rows, faucet_snapshot_estimated_rows and faucet_mirror_phase{phase} (1 for
// its phase: snapshot, cdc, stopped, failed).
void SetMirrorGauges(observability::Registry& registry, const std::string& pipeline,
                     const Json& status);

}  // namespace faucet::mirror
