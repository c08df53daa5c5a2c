#include <spdlog/spdlog.h>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/pipeline_builder.h"
#include "cli/signals.h"
#include "core/pipeline.h"

namespace faucet::cli {

int RunCommand(const std::string& config_path) {
  Result<BuiltPipeline> built = BuildPipeline(config_path);
  if (!built.ok()) return ReportFailure(built.status());
  for (const std::string& w : built->warnings) spdlog::warn("{}", w);

  Result<std::unique_ptr<StateStore>> state = OpenState(*built);
  if (!state.ok()) return ReportFailure(state.status());

  PipelineParts& parts = built->parts;
  PipelineOptions options;
  options.state_key = built->StateKey();
  options.delivery = PipelineDelivery(built->guarantee);
  options.stop = &StopFlag();
  options.dlq = DlqOptionsFor(built->doc, parts.dlq_sink.get());
  Pipeline pipeline(*parts.source, parts.TransformPtrs(), *parts.sink, **state, options);

  spdlog::info("running {} ({} -> {}, {})", built->doc.name, built->doc.source.type,
               built->doc.sink.type, GuaranteeName(built->guarantee));
  Result<PipelineStats> stats = pipeline.Run();
  if (!stats.ok()) return ReportRunFailure(stats.status().WithContext("run failed"));
  spdlog::info("{}: {} pages, {} changes, {} checkpoints, {} to the DLQ, last bookmark {}",
               stats->stopped ? "stopped" : "finished", stats->pages, stats->changes,
               stats->checkpoints, stats->dead_lettered,
               stats->last_bookmark ? stats->last_bookmark->ToString() : "none");
  return kExitOk;
}

}  // namespace faucet::cli
