#include "mirror/snapshot_progress.h"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace faucet::mirror {

using namespace std::chrono_literals;

SnapshotProgress::SnapshotProgress(std::optional<int64_t> estimate, bool terminal)
    : estimate_(estimate),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_),
      last_save_(start_) {}

std::string SnapshotProgress::Line(uint64_t rows) const {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = secs > 0 ? rows / secs : 0;
  char buf[160];
  if (estimate_ && *estimate_ > 0) {
    std::snprintf(buf, sizeof buf, "snapshot: %llu rows, %.0f rows/s, %.0f%% of ~%lld",
                  static_cast<unsigned long long>(rows), rate, 100.0 * rows / *estimate_,
                  static_cast<long long>(*estimate_));
  } else {
    std::snprintf(buf, sizeof buf, "snapshot: %llu rows, %.0f rows/s",
                  static_cast<unsigned long long>(rows), rate);
  }
  return buf;
}

bool SnapshotProgress::Tick(uint64_t rows) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_print_ >= (terminal_ ? 500ms : 10s)) {
    last_print_ = now;
    if (terminal_) {
      std::fprintf(stderr, "\r%s   ", Line(rows).c_str());
    } else {
      spdlog::info("{}", Line(rows));
    }
  }
  if (now - last_save_ >= 2s) {
    last_save_ = now;
    return true;
  }
  return false;
}

void SnapshotProgress::Finish(uint64_t rows) {
  if (terminal_) {
    std::fprintf(stderr, "\r%s   \n", Line(rows).c_str());
  } else {
    spdlog::info("{}", Line(rows));
  }
}

}  // namespace faucet::mirror
