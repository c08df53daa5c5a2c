// Turns a config file into the parts of a pipeline, without I/O beyond reading the file:
// `faucet validate` is exactly this, and `faucet run` opens what it built.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "assembly/delivery.h"
#include "config/document.h"
#include "core/pipeline.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/transform.h"
#include "state/state_config.h"

namespace faucet::assembly {

// The connectors of one pipeline run. Built fresh for every run (the mirror builds one per
// cycle), so a failed connection is never reused.
struct PipelineParts {
  std::unique_ptr<Source> source;
  std::vector<std::unique_ptr<Transform>> transforms;
  std::unique_ptr<Sink> sink;
  std::unique_ptr<Sink> dlq_sink;  // when the config has a dlq: block

  std::vector<Transform*> TransformPtrs() const;
};

// Builds the parts of `doc` with `source` as the source (pipeline.source, or the mirror's
// snapshot source). `snapshot` leaves cdc_unwrap out: snapshot rows are already flat. The sink
// gets doc.schema's policy. Unknown connector keys are appended to `warnings`.
Result<PipelineParts> MakeParts(const config::Document& doc, const config::ConnectorSpec& source,
                                bool snapshot, std::vector<std::string>& warnings);

// The gates of a schema policy (doc.schema: pipeline.schema, or a mirror table's schema_drift):
// on_drift evolve needs a sink that evolves its destination's schema; quarantine (on_drift, or
// on_incompatible under evolve) needs a dlq:. A policy for a sink without a schema is accepted
// with a warning: its rows never drift. Errors are kInvalidArgument at the policy's key.
Status CheckSchemaPolicy(const config::Document& doc, const SinkCapabilities& sink,
                         std::vector<std::string>& warnings);

// The pipeline's DLQ options for `doc`, writing to `dlq_sink`; nullopt without a dlq: block.
std::optional<DlqOptions> DlqOptionsFor(const config::Document& doc, Sink* dlq_sink);

struct BuiltPipeline {
  config::Document doc;
  PipelineParts parts;
  std::optional<StateConfig> state;  // absent: nothing is persisted, every run starts afresh
  Guarantee guarantee = Guarantee::kAtLeastOnce;
  // Unknown connector keys and weak choices (redis state, no state), as "file:line: ..." text.
  std::vector<std::string> warnings;

  // The state key of the pipeline's bookmark: "{name}::row-0", as the reference's CLI uses.
  std::string StateKey() const { return doc.name + "::row-0"; }
};

// Loads and validates `path`. Errors are kInvalidArgument naming file, line and key.
Result<BuiltPipeline> BuildPipeline(const std::string& path);
// The same for a document already loaded (config::LoadDocument).
Result<BuiltPipeline> BuildPipeline(config::Document doc);

// Builds the config's state store (memory when the config has none).
Result<std::unique_ptr<StateStore>> OpenState(const BuiltPipeline& built);

}  // namespace faucet::assembly
