#include "sinks/file/stdout_sink.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/json_render.h"

namespace faucet {
namespace {

Status StdoutError(const char* what) {
  return Internal(std::string(what) + " stdout: " + std::strerror(errno));
}

}  // namespace

Status StdoutSink::Open(bool /*resuming*/) { return Status::Ok(); }

Status StdoutSink::Write(const Page& page) {
  for (const Change& change : page.changes) {
    line_.clear();
    AppendChangeJson(change, line_);
    line_.push_back('\n');
    if (std::fwrite(line_.data(), 1, line_.size(), stdout) != line_.size()) {
      return StdoutError("cannot write to");
    }
  }
  return Status::Ok();
}

Status StdoutSink::Flush() {
  if (std::fflush(stdout) != 0) return StdoutError("cannot flush");
  return Status::Ok();
}

Result<std::unique_ptr<Sink>> MakeStdoutSink(const config::Block& /*cfg*/) {
  return std::unique_ptr<Sink>(std::make_unique<StdoutSink>());
}

}  // namespace faucet
