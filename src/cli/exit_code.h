#pragma once

#include "cli/commands.h"
#include "cli/logging.h"
#include "core/status.h"

namespace faucet::cli {

// Prints a failed status and maps it to an exit code: the user's input is 2, the rest 1.
inline int ReportFailure(const Status& status) {
  PrintError(status.message());
  return status.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
}

}  // namespace faucet::cli
