// SIGINT and SIGTERM ask the running pipeline to stop at the next page boundary, after
// flushing; a second signal exits at once (what was persisted stays persisted).
#pragma once

#include <atomic>

namespace faucet::cli {

void InstallStopHandlers();
// Set by the first SIGINT/SIGTERM.
const std::atomic<bool>& StopFlag();

}  // namespace faucet::cli
