#include <spdlog/spdlog.h>
#include <unistd.h>

#include "assembly/bulk_read.h"
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
  assembly::ApplyGuarantee(built->guarantee, options);
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
  spdlog::info("running {} ({} -> {}, {})", built->doc.name, built->doc.source.type,
               built->doc.sink.type, assembly::GuaranteeName(built->guarantee));
  auto run = [&](assembly::PipelineParts& with) {
    Pipeline pipeline(*with.source, with.TransformPtrs(), *with.sink, **state, options);
    return pipeline.Run();
  };
  // A one-shot read is one bulk load when the sink can (all or nothing, at COPY speed); a
  // refused row redoes it page by page on parts built anew.
  auto read_once = [&](assembly::ReadAttempt a) -> Result<PipelineStats> {
    options.bulk_load = a.bulk;
    if (!a.redo) return run(parts);
    parts = assembly::PipelineParts{};  // the first attempt's query and session end here
    std::vector<std::string> warnings;  // reported already
    ASSIGN_OR_RETURN(assembly::PipelineParts fresh,
                     assembly::MakeParts(built->doc, built->doc.source, false, warnings));
    return run(fresh);
  };
  Result<PipelineStats> stats =
      parts.source->Capabilities().one_shot
          ? assembly::RunBulkRead(built->doc, "run " + built->doc.name, read_once)
          : run(parts);
  // The terminal's line ends (a log gets the summary below).
  if (stats.ok() && stats->changes > 0 && isatty(STDERR_FILENO)) progress.Finish(stats->changes);
  if (!stats.ok()) return ReportRunFailure(stats.status().WithContext("run failed"));
  if (stats->stopped && options.bulk_load) {
    spdlog::info("stopped: {} rows read, none written (the copy is one transaction)",
                 stats->changes);
    return kExitOk;
  }
  spdlog::info("{}: {} pages, {} changes, {} checkpoints, {} to the DLQ, last bookmark {}",
               stats->stopped ? "stopped" : "finished", stats->pages, stats->changes,
               stats->checkpoints, stats->dead_lettered,
               stats->last_bookmark ? stats->last_bookmark->ToString() : "none");
  return kExitOk;
}

}  // namespace faucet::cli
