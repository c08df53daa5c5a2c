#include "mirror/mirror_metrics.h"

#include "mirror/table_states.h"

namespace faucet::mirror {
namespace {

constexpr TablePhase kPhases[] = {TablePhase::kPending, TablePhase::kSnapshotting,
                                  TablePhase::kActive,  TablePhase::kPaused,
                                  TablePhase::kDropped, TablePhase::kRefused};

// Sets the gauge to `value` when it is a number; leaves it absent (or as it was) otherwise.
void SetIfNumber(observability::Registry& registry, const std::string& name,
                 const std::string& help, const observability::Labels& labels, const Json& value) {
  if (value.is_number()) registry.GetGauge(name, help, labels).Set(value.get<double>());
}

void SetSnapshotGauges(observability::Registry& registry, const observability::Labels& labels,
                       const Json& rows, const Json& estimate) {
  SetIfNumber(registry, "faucet_snapshot_rows", "Rows the table's snapshot has read", labels, rows);
  SetIfNumber(registry, "faucet_snapshot_estimated_rows",
              "The catalog's estimate of the table's rows", labels, estimate);
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
    SetSnapshotGauges(registry, labels, row["snapshot"]["rows"], row["snapshot"]["estimated_rows"]);
    registry
        .GetGauge("faucet_table_lag_seconds",
                  "Seconds since the source committed the oldest change routed to the table "
                  "that its sink has not committed (0 when it has everything)",
                  labels)
        .Set(row["lag_secs"].is_number() ? row["lag_secs"].get<double>() : 0);
    SetIfNumber(registry, "faucet_table_lag_bytes",
                "Bytes of the source's log ahead of the table's committed position", labels,
                row["lag_bytes"]);
    SetIfNumber(registry, "faucet_table_consecutive_failures",
                "The table's failures in a row (it pauses at max_table_failures)", labels,
                row["consecutive_failures"]);
  }
}

void SetMirrorGauges(observability::Registry& registry, const std::string& pipeline,
                     const Json& status) {
  const observability::Labels labels{{"pipeline", pipeline}};
  SetSnapshotGauges(registry, labels, status["snapshot"]["rows"], status["snapshot"]["estimate"]);
  for (const char* phase : {"snapshot", "cdc", "stopped", "failed"}) {
    registry
        .GetGauge("faucet_mirror_phase", "1 for the single-table mirror's phase, 0 for the others",
                  {{"pipeline", pipeline}, {"phase", phase}})
        .Set(status["phase"] == phase ? 1 : 0);
  }
}

}  // namespace faucet::mirror
