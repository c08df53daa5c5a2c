// Turns a config file into the parts of a pipeline, without I/O beyond reading the file:
// `faucet validate` is exactly this, and `faucet run` opens what it built.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/delivery.h"
#include "config/document.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/transform.h"
#include "state/state_config.h"

namespace faucet::cli {

struct BuiltPipeline {
  config::Document doc;
  std::unique_ptr<Source> source;
  std::unique_ptr<Sink> sink;
  std::vector<std::unique_ptr<Transform>> transforms;
  std::optional<StateConfig> state;  // absent: nothing is persisted, every run starts afresh
  Guarantee guarantee = Guarantee::kAtLeastOnce;
  // Unknown connector keys and weak choices (redis state, no state), as "file:line: ..." text.
  std::vector<std::string> warnings;

  // The state key of the pipeline's bookmark: "{name}::row-0", as the reference's CLI uses.
  std::string StateKey() const { return doc.name + "::row-0"; }
};

// Loads and validates `path`. Errors are kInvalidArgument naming file, line and key.
Result<BuiltPipeline> BuildPipeline(const std::string& path);

// Builds the config's state store (memory when the config has none).
Result<std::unique_ptr<StateStore>> OpenState(const BuiltPipeline& built);

}  // namespace faucet::cli
