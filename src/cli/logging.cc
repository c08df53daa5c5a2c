#include "cli/logging.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>

#include "core/redact.h"

namespace faucet::cli {
namespace {

// On a terminal a progress line (observability/progress.h) may stand unterminated at the
// bottom: what is printed next replaces it (carriage return, clear to the end of the line), and
// the next progress tick draws it again below.
std::string ClearProgress() {
  static const bool terminal = isatty(STDERR_FILENO) != 0;
  return terminal ? "\r\x1b[K" : "";
}

class RedactingStderrSink : public spdlog::sinks::base_sink<std::mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string line =
        ClearProgress() + Redact(std::string_view(formatted.data(), formatted.size()));
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

void SetUpLogging(const std::string& level) {
  auto logger = std::make_shared<spdlog::logger>("faucet", std::make_shared<RedactingStderrSink>());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void PrintError(const std::string& message) {
  std::string line = ClearProgress() + "error: " + Redact(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace faucet::cli
