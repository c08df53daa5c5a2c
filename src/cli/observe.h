// The observability listener of `faucet run` and `faucet mirror`, when the config has an
// `observability:` block (docs/observability.md).
#pragma once

#include <functional>
#include <memory>

#include "assembly/pipeline_builder.h"
#include "observability/exporter.h"
#include "observability/server.h"

namespace faucet::cli {

// An exporter for `built`'s change stream, or null when the config has no observability block.
std::unique_ptr<observability::Exporter> MakeExporter(const assembly::BuiltPipeline& built);

// `status` called at most once a second: a caller within a second of the last call gets its
// answer (scrapes, the status API and open status pages share one read of the state and the
// source). Thread-safe.
std::function<Result<Json>()> AtMostOncePerSecond(std::function<Result<Json>()> status);

// Starts serving `exporter` on the configured address; null (and ok) when `exporter` is null.
// Declare the result after everything `status` refers to, so that it stops serving first.
Result<std::unique_ptr<observability::Server>> Serve(const assembly::BuiltPipeline& built,
                                                     observability::Exporter* exporter,
                                                     observability::StatusSource status);

}  // namespace faucet::cli
