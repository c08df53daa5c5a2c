// Progress on long work (a snapshot, a batch run), for people: on a terminal a live line
// rewritten in place at most twice a second; otherwise a log line every 10 s. Nothing goes to
// stdout, so JSON output is never mixed with it.
//   snapshot: 1,234,567 rows, 50,000 rows/s, 45% of ~2,700,000, ETA 29s
// (percent and ETA only with an estimate). Owned by one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace faucet::observability {

class Progress {
 public:
  // `label` starts the line ("snapshot", "run"); `terminal`: stderr is a TTY.
  Progress(std::string label, std::optional<int64_t> estimate, bool terminal);

  // Reports `rows` done so far (of `estimate`, which may grow as work is added), with
  // `detail` after the label ("2 of 20 tables; reading a 45%, b 3%"). True about every 2 s:
  // time to save a persisted status.
  bool Tick(uint64_t rows, const std::string& detail = "");
  void SetEstimate(std::optional<int64_t> estimate) { estimate_ = estimate; }
  // Prints the final line.
  void Finish(uint64_t rows, const std::string& detail = "");

  // "1,234,567 rows, 50,000 rows/s, 45% of ~2,700,000, ETA 29s".
  static std::string Describe(uint64_t rows, double rate, std::optional<int64_t> estimate);

 private:
  std::string Line(uint64_t rows, const std::string& detail) const;

  const std::string label_;
  std::optional<int64_t> estimate_;
  const bool terminal_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
  std::chrono::steady_clock::time_point last_save_;
  size_t last_width_ = 0;  // of the line on the terminal, to blank what a shorter one leaves
};

// 1234567 -> "1,234,567".
std::string Thousands(uint64_t n);

}  // namespace faucet::observability
