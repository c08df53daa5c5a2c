#include "cli/signals.h"

#include <signal.h>
#include <unistd.h>

namespace faucet::cli {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int sig) {
  if (g_stop.exchange(true)) _exit(128 + sig);
}

}  // namespace

void InstallStopHandlers() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>& StopFlag() { return g_stop; }

}  // namespace faucet::cli
