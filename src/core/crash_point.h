// Named crash points: FAUCET_CRASH_AT=name[:nth] makes the process exit with kCrashExitCode the
// nth time (default 1st) execution reaches CrashPoint("name"), with no flush, no destructor, no
// atexit handler and no sanitizer epilogue (the exit_group system call itself): what a SIGKILL
// or power cut at that instruction would leave behind, other threads still running.
//
// Every name is declared once in the registry in crash_point.cc (listed by `faucet debug
// crash-points`) so that the crash tests can iterate over all of them.
#pragma once

#include <string>
#include <vector>

namespace faucet {

inline constexpr int kCrashExitCode = 86;

struct CrashPointInfo {
  const char* name;
  const char* description;
};

// All registered crash points.
const std::vector<CrashPointInfo>& RegisteredCrashPoints();

// Exits the process if FAUCET_CRASH_AT names this point and this is the nth hit. `name` must be
// registered (a typo aborts, so a test can never silently arm a point that does not exist).
void CrashPoint(const char* name);

// True when FAUCET_CRASH_AT names `name`: for a point whose setup costs work on a hot path
// (e.g. writing half a page first), so that the work is done only when the point is armed.
bool CrashPointArmed(const char* name);

}  // namespace faucet
