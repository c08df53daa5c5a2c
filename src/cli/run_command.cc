#include <spdlog/spdlog.h>
#include <unistd.h>

#include "assembly/pipeline_builder.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/observe.h"
#include "cli/signals.h"
#include "core/pipeline.h"
#include "observability/progress.h"

namespace faucet::cli {

int RunCommand(const std::string& config_path) {
  Result<assembly::BuiltPipeline> built = assembly::BuildPipeline(config_path);
  if (!built.ok()) return ReportFailure(built.status());
  for (const std::string& w : built->warnings) spdlog::warn("{}", w);

  Result<std::unique_ptr<StateStore>> state = assembly::OpenState(*built);
  if (!state.ok()) return ReportFailure(state.status());

  assembly::PipelineParts& parts = built->parts;
  PipelineOptions options;
  options.state_key = built->StateKey();
  options.delivery = assembly::PipelineDelivery(built->guarantee);
  options.stop = &StopFlag();
  options.dlq = assembly::DlqOptionsFor(built->doc, parts.dlq_sink.get());
  std::unique_ptr<observability::Exporter> exporter = MakeExporter(*built);
  observability::StatusSource status;
  if (exporter) {
    observability::PipelineMetrics* metrics = &exporter->Pipeline();
    options.observer = metrics;
    status.ready = [metrics] { return metrics->running(); };
  }
  Result<std::unique_ptr<observability::Server>> server = Serve(*built, exporter.get(), status);
  if (!server.ok()) return ReportFailure(server.status());
  // Progress on a terminal (a log line every 10 s otherwise), with the source's row estimate.
  observability::Progress progress("run", parts.source->EstimateRows(), isatty(STDERR_FILENO) != 0);
  options.on_page = [&progress](const Page&, const PipelineStats& stats) {
    progress.Tick(stats.changes);
  };
  Pipeline pipeline(*parts.source, parts.TransformPtrs(), *parts.sink, **state, options);

  spdlog::info("running {} ({} -> {}, {})", built->doc.name, built->doc.source.type,
               built->doc.sink.type, assembly::GuaranteeName(built->guarantee));
  Result<PipelineStats> stats = pipeline.Run();
  // The terminal's line ends (a log gets the summary below).
  if (stats.ok() && stats->changes > 0 && isatty(STDERR_FILENO)) progress.Finish(stats->changes);
  if (!stats.ok()) return ReportRunFailure(stats.status().WithContext("run failed"));
  spdlog::info("{}: {} pages, {} changes, {} checkpoints, {} to the DLQ, last bookmark {}",
               stats->stopped ? "stopped" : "finished", stats->pages, stats->changes,
               stats->checkpoints, stats->dead_lettered,
               stats->last_bookmark ? stats->last_bookmark->ToString() : "none");
  return kExitOk;
}

}  // namespace faucet::cli
