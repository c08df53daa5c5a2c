// SchemaPolicy: what a sink does when the rows it is given no longer match its destination's
// schema (`pipeline.schema:`, or a mirror table's `schema_drift:`). Only sinks with a schema
// (SinkCapabilities::has_schema: the SQL sinks writing columns) see drift; see
// sinks/sql/schema_drift.h for how it is detected and what each policy does.
#pragma once

#include <cstdint>

namespace faucet {

enum class OnDrift : uint8_t {
  kWarn,        // log it once, write what the destination can take
  kEvolve,      // change the destination (add a column, widen a type), then write
  kIgnore,      // write what the destination can take, without a warning
  kQuarantine,  // rows that carry drifting values go to the DLQ, the rest is written
  kFail,        // fail the page: nothing is written, the pipeline stops (a mirror table pauses)
};

enum class OnIncompatible : uint8_t { kFail, kQuarantine };

struct SchemaPolicy {
  OnDrift on_drift = OnDrift::kWarn;
  // kEvolve: widen a destination column whose type cannot hold what the source now sends.
  bool allow_type_widening = true;
  // kEvolve: what happens to drift no DDL can resolve (a narrowing, an unrelated type).
  OnIncompatible on_incompatible = OnIncompatible::kFail;
  // kEvolve: drop NOT NULL from a destination column the source no longer sends.
  bool relax_nullability_on_missing = false;

  bool operator==(const SchemaPolicy&) const = default;
};

// The config spelling of `on_drift`: "warn", "evolve", ...
const char* OnDriftName(OnDrift on_drift);

}  // namespace faucet
