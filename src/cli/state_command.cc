#include <cstdio>

#include "cli/commands.h"
#include "cli/exit_code.h"
#include "cli/pipeline_builder.h"

namespace faucet::cli {
namespace {

// A bare suffix ("row-0", "cdc") means the config's own pipeline: "{name}::{suffix}".
std::string FullKey(const BuiltPipeline& built, const std::string& key) {
  return key.find("::") == std::string::npos ? built.doc.name + "::" + key : key;
}

Result<std::unique_ptr<StateStore>> OpenConfigState(const BuiltPipeline& built) {
  if (!built.state) {
    return Status(
        InvalidArgument(built.doc.file + ": pipeline.state: the config has no state store"));
  }
  return OpenState(built);
}

}  // namespace

int StateGetCommand(const std::string& config_path, const std::string& key) {
  Result<BuiltPipeline> built = BuildPipeline(config_path);
  if (!built.ok()) return ReportFailure(built.status());
  Result<std::unique_ptr<StateStore>> state = OpenConfigState(*built);
  if (!state.ok()) return ReportFailure(state.status());
  std::string full = FullKey(*built, key);
  if (Status st = ValidateStateKey(full); !st.ok()) return ReportFailure(st);
  Result<std::optional<Json>> value = (*state)->Get(full);
  if (!value.ok()) return ReportRunFailure(value.status());
  if (!*value) return ReportFailure(NotFound("no value under state key '" + full + "'"));
  std::printf("%s\n", (*value)->dump().c_str());
  return kExitOk;
}

int StateDeleteCommand(const std::string& config_path, const std::string& key) {
  Result<BuiltPipeline> built = BuildPipeline(config_path);
  if (!built.ok()) return ReportFailure(built.status());
  Result<std::unique_ptr<StateStore>> state = OpenConfigState(*built);
  if (!state.ok()) return ReportFailure(state.status());
  std::string full = FullKey(*built, key);
  if (Status st = ValidateStateKey(full); !st.ok()) return ReportFailure(st);
  if (Status st = (*state)->Delete(full); !st.ok()) return ReportRunFailure(st);
  std::printf("deleted %s\n", full.c_str());
  return kExitOk;
}

}  // namespace faucet::cli
