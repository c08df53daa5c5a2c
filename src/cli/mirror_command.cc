#include <spdlog/spdlog.h>

#include <cstdio>

#include "assembly/pipeline_builder.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/observe.h"
#include "cli/signals.h"
#include "core/redact.h"
#include "mirror/mirror.h"
#include "mirror/mirror_metrics.h"
#include "mirror/multi_mirror.h"
#include "mirror/multi_status.h"
#include "mirror/status_report.h"

namespace faucet::cli {

int MirrorCommand(const std::string& config_path) {
  Result<assembly::BuiltPipeline> built = mirror::BuildMirrorPipeline(config_path);
  if (!built.ok()) return ReportFailure(built.status());
  std::vector<std::string> warnings = built->warnings;
  Result<mirror::MirrorConfig> config = mirror::ParseMirrorConfig(*built, warnings);
  if (!config.ok()) return ReportFailure(config.status());
  for (const std::string& w : warnings) spdlog::warn("{}", w);
  Result<std::unique_ptr<StateStore>> state = assembly::OpenState(*built);
  if (!state.ok()) return ReportFailure(state.status());

  std::unique_ptr<observability::Exporter> exporter = MakeExporter(*built);
  StateStore& store = **state;
  Status st;
  if (config->tables) {
    mirror::MultiMirror m(*built, std::move(*config), store, StopFlag());
    observability::StatusSource status;
    if (exporter) {
      m.Observe(exporter.get());
      auto live = AtMostOncePerSecond([&m] { return m.LiveStatus(); });
      exporter->registry().OnCollect([live, registry = &exporter->registry(), &built] {
        if (Result<Json> s = live(); s.ok()) mirror::SetTableGauges(*registry, built->doc.name, *s);
      });
      status.mirror_status = live;
      status.ready = [&m] { return m.streaming(); };
    }
    Result<std::unique_ptr<observability::Server>> server = Serve(*built, exporter.get(), status);
    if (!server.ok()) return ReportFailure(server.status());
    st = m.Run();
  } else {
    mirror::Mirror m(*built, std::move(*config), store, StopFlag());
    observability::StatusSource status;
    if (exporter) {
      observability::PipelineMetrics* metrics = &exporter->Pipeline();
      m.Observe(exporter.get());
      auto live = AtMostOncePerSecond([&m, &built, &store] {
        const mirror::MirrorStatus now = m.LiveStatus();
        return mirror::ReadMirrorStatus(*built, store, &now);
      });
      exporter->registry().OnCollect([registry = &exporter->registry(), &built, live] {
        if (Result<Json> s = live(); s.ok())
          mirror::SetMirrorGauges(*registry, built->doc.name, *s);
      });
      status.mirror_status = live;
      status.ready = [metrics] { return metrics->running(); };
    }
    Result<std::unique_ptr<observability::Server>> server = Serve(*built, exporter.get(), status);
    if (!server.ok()) return ReportFailure(server.status());
    st = m.Run();
  }
  if (!st.ok()) return ReportRunFailure(st);
  spdlog::info("mirror {}: finished", built->doc.name);
  return kExitOk;
}

int MirrorStatusCommand(const std::string& config_path, bool json) {
  Result<assembly::BuiltPipeline> built = mirror::BuildMirrorPipeline(config_path);
  if (!built.ok()) return ReportFailure(built.status());
  Result<std::unique_ptr<StateStore>> state = assembly::OpenState(*built);
  if (!state.ok()) return ReportFailure(state.status());
  std::vector<std::string> warnings;
  Result<mirror::MirrorConfig> config = mirror::ParseMirrorConfig(*built, warnings);
  if (!config.ok()) return ReportFailure(config.status());
  const bool multi = config->tables.has_value();
  Result<Json> status = multi ? mirror::ReadMultiStatus(*built, *config->tables, **state)
                              : mirror::ReadMirrorStatus(*built, **state);
  if (!status.ok()) return ReportFailure(status.status());
  std::string out = json    ? status->dump(2) + "\n"
                    : multi ? mirror::FormatMultiStatus(*status)
                            : mirror::FormatMirrorStatus(*status);
  std::fputs(Redact(out).c_str(), stdout);
  return kExitOk;
}

}  // namespace faucet::cli
