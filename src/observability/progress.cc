#include "observability/progress.h"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace faucet::observability {

using namespace std::chrono_literals;

std::string Thousands(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

std::string Duration(double secs) {
  const auto s = static_cast<int64_t>(secs + 0.5);
  if (s < 120) return std::to_string(s) + "s";
  if (s < 7200) return std::to_string(s / 60) + "m" + std::to_string(s % 60) + "s";
  return std::to_string(s / 3600) + "h" + std::to_string(s % 3600 / 60) + "m";
}

}  // namespace

Progress::Progress(std::string label, std::optional<int64_t> estimate, bool terminal)
    : label_(std::move(label)),
      estimate_(estimate),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_),
      last_save_(start_) {}

std::string Progress::Describe(uint64_t rows, double rate, std::optional<int64_t> estimate) {
  std::string out =
      Thousands(rows) + " rows, " + Thousands(static_cast<uint64_t>(rate)) + " rows/s";
  if (estimate && *estimate > 0) {
    const double left = static_cast<double>(*estimate) - static_cast<double>(rows);
    char percent[16];
    std::snprintf(percent, sizeof percent, "%.0f%%",
                  std::min(100.0, 100.0 * static_cast<double>(rows) / *estimate));
    out += std::string(", ") + percent + " of ~" + Thousands(static_cast<uint64_t>(*estimate));
    if (rate > 0 && left > 0) out += ", ETA " + Duration(left / rate);
  }
  return out;
}

std::string Progress::Line(uint64_t rows, const std::string& detail) const {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return label_ + ": " + (detail.empty() ? "" : detail + ": ") +
         Describe(rows, secs > 0 ? static_cast<double>(rows) / secs : 0, estimate_);
}

bool Progress::Tick(uint64_t rows, const std::string& detail) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_print_ >= (terminal_ ? 500ms : 10s)) {
    last_print_ = now;
    const std::string line = Line(rows, detail);
    if (terminal_) {
      std::fprintf(stderr, "\r%s%*s", line.c_str(),
                   static_cast<int>(last_width_ > line.size() ? last_width_ - line.size() : 0), "");
      last_width_ = line.size();
    } else {
      spdlog::info("{}", line);
    }
  }
  if (now - last_save_ >= 2s) {
    last_save_ = now;
    return true;
  }
  return false;
}

void Progress::Finish(uint64_t rows, const std::string& detail) {
  const std::string line = Line(rows, detail);
  if (terminal_) {
    std::fprintf(stderr, "\r%s%*s\n", line.c_str(),
                 static_cast<int>(last_width_ > line.size() ? last_width_ - line.size() : 0), "");
  } else {
    spdlog::info("{}", line);
  }
}

}  // namespace faucet::observability
