#include "testing/crash_schedule.h"

#include <gtest/gtest.h>

#include "core/crash_point.h"

namespace faucet::testing {

int CrashAroundEveryCommitThenAfterEveryPage(
    const std::function<ProcessResult(const std::string& crash_at)>& run) {
  for (const char* point :
       {"pipeline.after_flush", "pipeline.after_persist", "state.file.after_temp_write",
        "state.file.before_rename", "state.file.after_rename"}) {
    const ProcessResult r = run(std::string(point) + ":1");
    EXPECT_EQ(r.exit_code, kCrashExitCode) << point << "\n" << r.output;
  }
  int crashes = 0;
  for (; crashes < 60; ++crashes) {
    const ProcessResult r = run("pipeline.after_write:1");
    if (r.exit_code == 0) break;
    EXPECT_EQ(r.exit_code, kCrashExitCode) << r.output;
    if (r.exit_code != kCrashExitCode) break;
  }
  return crashes;
}

}  // namespace faucet::testing
