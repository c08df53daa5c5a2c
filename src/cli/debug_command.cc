#include <cstdio>

#include "cli/commands.h"
#include "core/crash_point.h"

namespace faucet::cli {

int CrashPointsCommand() {
  for (const CrashPointInfo& p : RegisteredCrashPoints()) {
    std::printf("%-32s %s\n", p.name, p.description);
  }
  return kExitOk;
}

}  // namespace faucet::cli
