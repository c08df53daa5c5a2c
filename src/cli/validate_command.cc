#include <nlohmann/json.hpp>

#include <cstdio>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/pipeline_builder.h"
#include "core/redact.h"

namespace faucet::cli {

int ValidateCommand(const std::string& config_path, bool json) {
  Result<BuiltPipeline> built = BuildPipeline(config_path);
  if (json) {
    nlohmann::json out;
    out["config"] = config_path;
    out["valid"] = built.ok();
    if (built.ok()) {
      out["name"] = built->doc.name;
      out["source"] = built->doc.source.type;
      out["sink"] = built->doc.sink.type;
      out["state"] = built->doc.state ? built->doc.state->type : "none";
      out["delivery"] = GuaranteeName(built->guarantee);
      out["warnings"] = built->warnings;
    } else {
      out["error"] = built.status().message();
    }
    std::printf("%s\n", Redact(out.dump(2)).c_str());
    if (!built.ok()) return built.status().code() == StatusCode::kInvalidArgument ? kExitUsage
                                                                                 : kExitFailure;
    return kExitOk;
  }
  if (!built.ok()) return ReportFailure(built.status());
  for (const std::string& w : built->warnings) std::fprintf(stderr, "warning: %s\n", Redact(w).c_str());
  std::printf("%s: valid\n  name: %s\n  source: %s\n  sink: %s\n  state: %s\n  delivery: %s\n",
              config_path.c_str(), built->doc.name.c_str(), built->doc.source.type.c_str(),
              built->doc.sink.type.c_str(),
              built->doc.state ? built->doc.state->type.c_str() : "none",
              GuaranteeName(built->guarantee));
  return kExitOk;
}

}  // namespace faucet::cli
