#include "mirror/mirror_metrics.h"

#include "mirror/table_states.h"

namespace faucet::mirror {
namespace {

constexpr TablePhase kPhases[] = {TablePhase::kPending, TablePhase::kSnapshotting,
                                  TablePhase::kActive,  TablePhase::kPaused,
                                  TablePhase::kDropped, TablePhase::kRefused};

void SetIfNumber(observability::Gauge& gauge, const Json& value) {
  if (value.is_number()) gauge.Set(value.get<double>());
}

}  // namespace

void SetTableGauges(observability::Registry& registry, const std::string& pipeline,
                    const Json& status) {
  using observability::Labels;
  const Json& by_phase = status["summary"]["by_phase"];
  for (TablePhase phase : kPhases) {
    const std::string name = PhaseName(phase);
    registry
        .GetGauge("faucet_tables", "Tables of the mirror in each phase",
                  {{"pipeline", pipeline}, {"phase", name}})
        .Set(by_phase.value(name, 0));
  }
  for (const Json& row : status["tables"]) {
    const Labels labels{{"pipeline", pipeline}, {"table", row["table"].get<std::string>()}};
    for (TablePhase phase : kPhases) {
      Labels with = labels;
      with.emplace_back("phase", PhaseName(phase));
      registry.GetGauge("faucet_table_phase", "1 for the table's phase, 0 for the others", with)
          .Set(row["phase"] == PhaseName(phase) ? 1 : 0);
    }
    const Json& snapshot = row["snapshot"];
    SetIfNumber(
        registry.GetGauge("faucet_snapshot_rows", "Rows the table's snapshot has read", labels),
        snapshot["rows"]);
    if (snapshot["estimated_rows"].is_number()) {
      registry
          .GetGauge("faucet_snapshot_estimated_rows", "The catalog's estimate of the table's rows",
                    labels)
          .Set(snapshot["estimated_rows"].get<double>());
    }
    registry
        .GetGauge("faucet_table_lag_seconds",
                  "Seconds since the source committed the oldest change routed to the table "
                  "that its sink has not committed (0 when it has everything)",
                  labels)
        .Set(row["lag_secs"].is_number() ? row["lag_secs"].get<double>() : 0);
    if (row["lag_bytes"].is_number()) {
      registry
          .GetGauge("faucet_table_lag_bytes",
                    "Bytes of the source's log ahead of the table's committed position", labels)
          .Set(row["lag_bytes"].get<double>());
    }
    SetIfNumber(registry.GetGauge("faucet_table_consecutive_failures",
                                  "The table's failures in a row (it pauses at "
                                  "max_table_failures)",
                                  labels),
                row["consecutive_failures"]);
  }
}

void SetMirrorGauges(observability::Registry& registry, const std::string& pipeline,
                     const Json& status) {
  const observability::Labels labels{{"pipeline", pipeline}};
  const Json& snapshot = status["snapshot"];
  SetIfNumber(
      registry.GetGauge("faucet_snapshot_rows", "Rows the table's snapshot has read", labels),
      snapshot["rows"]);
  if (snapshot["estimate"].is_number()) {
    registry
        .GetGauge("faucet_snapshot_estimated_rows", "The catalog's estimate of the table's rows",
                  labels)
        .Set(snapshot["estimate"].get<double>());
  }
  for (const char* phase : {"snapshot", "cdc", "stopped", "failed"}) {
    registry
        .GetGauge("faucet_mirror_phase", "1 for the single-table mirror's phase, 0 for the others",
                  {{"pipeline", pipeline}, {"phase", phase}})
        .Set(status["phase"] == phase ? 1 : 0);
  }
}

}  // namespace faucet::mirror
