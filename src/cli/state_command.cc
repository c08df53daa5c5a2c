#include <cstdio>

#include "assembly/pipeline_builder.h"
#include "cli/commands.h"
#include "cli/exit_code.h"

namespace faucet::cli {
namespace {

// A bare suffix ("row-0", "cdc") means the config's own pipeline: "{name}::{suffix}".
std::string FullKey(const assembly::BuiltPipeline& built, const std::string& key) {
  return key.find("::") == std::string::npos ? built.doc.name + "::" + key : key;
}

// The config's state store and the full key both commands act on; or the exit code of why
// there are none.
struct KeyedState {
  std::unique_ptr<StateStore> store;
  std::string key;
  int failure = kExitOk;
};

KeyedState OpenKey(const std::string& config_path, const std::string& key) {
  Result<assembly::BuiltPipeline> built = assembly::BuildPipeline(config_path);
  if (!built.ok()) return {nullptr, "", ReportFailure(built.status())};
  if (!built->state) {
    return {nullptr, "",
            ReportFailure(InvalidArgument(built->doc.file +
                                          ": pipeline.state: the config has no state store"))};
  }
  Result<std::unique_ptr<StateStore>> state = assembly::OpenState(*built);
  if (!state.ok()) return {nullptr, "", ReportFailure(state.status())};
  std::string full = FullKey(*built, key);
  if (Status st = ValidateStateKey(full); !st.ok()) return {nullptr, "", ReportFailure(st)};
  return {std::move(*state), std::move(full)};
}

}  // namespace

int StateGetCommand(const std::string& config_path, const std::string& key) {
  KeyedState state = OpenKey(config_path, key);
  if (state.store == nullptr) return state.failure;
  Result<std::optional<Json>> value = state.store->Get(state.key);
  if (!value.ok()) return ReportRunFailure(value.status());
  if (!*value) return ReportFailure(NotFound("no value under state key '" + state.key + "'"));
  std::printf("%s\n", (*value)->dump().c_str());
  return kExitOk;
}

int StateDeleteCommand(const std::string& config_path, const std::string& key) {
  KeyedState state = OpenKey(config_path, key);
  if (state.store == nullptr) return state.failure;
  if (Status st = state.store->Delete(state.key); !st.ok()) return ReportRunFailure(st);
  std::printf("deleted %s\n", state.key.c_str());
  return kExitOk;
}

}  // namespace faucet::cli
