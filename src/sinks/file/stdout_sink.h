// StdoutSink (type `stdout`): JSON lines (core/json_render.h) on standard output, for demos and
// for piping into other tools.
#pragma once

#include <memory>
#include <string>

#include "config/block.h"
#include "core/sink.h"

namespace faucet {

// Durability is the reader's: Flush hands every line to the pipe or file behind stdout
// (fflush) and promises nothing beyond it. Logs must therefore go to stderr.
// Not thread-safe: one pipeline thread calls it.
class StdoutSink : public Sink {
 public:
  Status Open(bool resuming) override;
  Status Write(const Page& page) override;
  Status Flush() override;

 private:
  std::string line_;  // reused, so that a line allocates only when it outgrows the last
};

// The sink for a `stdout` config block, which has no keys.
Result<std::unique_ptr<Sink>> MakeStdoutSink(const config::Block& cfg);

}  // namespace faucet
