#pragma once

#include "cli/commands.h"
#include "cli/logging.h"
#include "core/status.h"

namespace faucet::cli {

// Prints a failure before the work starts and maps it to an exit code: the user's input (config,
// arguments) is 2, the rest 1.
inline int ExitCodeFor(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
}
inline int ReportFailure(const Status& status) {
  PrintError(status.message());
  return ExitCodeFor(status);
}

// Prints a failure of the work itself (a server, the data): always 1, even when the code is
// kInvalidArgument (a value the destination refused is not a usage error).
inline int ReportRunFailure(const Status& status) {
  PrintError(status.message());
  return kExitFailure;
}

}  // namespace faucet::cli
