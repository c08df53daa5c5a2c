// Delivery derivation: which guarantee a config gets, decided at load time so that `faucet
// validate` reports it, and never a silent downgrade (reference §1.9, DESIGN.md §4).
#pragma once

#include <string>

#include "config/document.h"
#include "core/pipeline.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/status.h"

namespace faucet::assembly {

enum class Guarantee {
  kAtLeastOnce,
  kAtomicWatermark,  // effectively-once: the sink commits rows and a token together
  kKeyedUpsert,      // effectively-once: the sink overwrites by key, so a replay is harmless
};

// "at-least-once", "effectively-once (atomic watermark)", "effectively-once (keyed upsert)".
const char* GuaranteeName(Guarantee g);

// The guarantee `doc` runs with, derived from what its built source and sink declare (their
// Capabilities()), never from the YAML: a sink that cannot upsert never earns "keyed upsert",
// whatever keys the config has. When exactly_once is requested and no mechanism
// applies, a kInvalidArgument naming the limiting side, checked in the reference's order:
// source, sink, state store, DLQ. `state` is what the state store promises (Durability::kNone
// without one).
Result<Guarantee> DeriveDelivery(const config::Document& doc, const SourceCapabilities& source,
                                 const SinkCapabilities& sink, Durability state);

// The pipeline write path for a guarantee: only the atomic watermark changes it.
Delivery PipelineDelivery(Guarantee g);

// Sets the pipeline's write path for a guarantee (PipelineDelivery), and group commit
// (PipelineOptions::group_bytes) where a replayed write overwrites itself, under keyed upsert:
// elsewhere a crash replays at most one page, not a group.
void ApplyGuarantee(Guarantee g, PipelineOptions& options);

}  // namespace faucet::assembly
