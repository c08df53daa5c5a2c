// Snapshot progress for people: a live line on a terminal (rows, rows/s, percent of the
// planner's estimate), a log line every 10 s otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace faucet::mirror {

class SnapshotProgress {
 public:
  SnapshotProgress(std::optional<int64_t> estimate, bool terminal);

  // Reports `rows` copied so far. True about every 2 s: time to save the persisted status.
  bool Tick(uint64_t rows);
  // Prints the final line.
  void Finish(uint64_t rows);

 private:
  std::string Line(uint64_t rows) const;

  std::optional<int64_t> estimate_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
  std::chrono::steady_clock::time_point last_save_;
};

}  // namespace faucet::mirror
