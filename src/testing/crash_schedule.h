// The crash schedule the exactly-once crash tests share (tests/crash/*_exactly_once_test.cc).
#pragma once

#include <functional>
#include <string>

#include "testing/process.h"

namespace faucet::testing {

// Runs faucet through `run` (one run with FAUCET_CRASH_AT set to its argument) dying once at
// each point around the commit of a page with a bookmark and inside the file state store's
// persist (pipeline.after_flush, pipeline.after_persist, state.file.*), then dying after the
// first page it writes, run after run, until a run ends by itself (at most 60). Every run that
// should die must die at its point (kCrashExitCode); that is a test failure otherwise. Returns
// how many runs died after a page.
int CrashAroundEveryCommitThenAfterEveryPage(
    const std::function<ProcessResult(const std::string& crash_at)>& run);

}  // namespace faucet::testing
