// JsonlSink (type `jsonl`, and `file` as the reference system spells it): one JSON object per
// change and line (core/json_render.h), appended to a local file.
#pragma once

#include <memory>
#include <string>

#include "config/block.h"
#include "core/file_system.h"
#include "core/sink.h"
#include "sinks/file/buffered_file.h"
#include "sinks/file/staged_lines.h"

namespace faucet {

struct JsonlSinkOptions {
  std::string path;
  // Keep what the file holds when a run starts fresh. A resuming run always keeps it.
  bool append = false;

  // Reads `path` (required), `append` (bool) or its reference spelling `mode: append|overwrite`,
  // `pretty` (must be false) and `batch_size` (accepted for compatibility; pages are sized by
  // the pipeline). Errors name the file, line and key. No I/O.
  static Result<JsonlSinkOptions> FromConfig(const config::Block& cfg);
};

// Durability: Write hands lines to the OS in chunks of about 1 MiB and does not sync, so they
// survive a process crash but not a power cut; Flush writes the rest and fdatasyncs (the first
// Flush of a run also fsyncs the directory, which holds the file's entry). Lines after the last
// Flush are replayed by the next run, so a reader may see a line twice (at-least-once) but never
// misses a flushed one. A crash in the middle of a write, or a power cut, may leave the last
// unflushed line torn: the next (resuming) run cuts it off before it writes, and its change is
// among those replayed, so every line parses.
//
// Truncation: only a fresh run (Open(resuming = false)) without `append` empties the file. A
// resuming run never does: the file holds rows whose bookmark is persisted, which the source
// will not deliver again.
//
// Staging (Sink::Stage): a transaction the source hands over before its commit is rendered as
// it arrives into scratch files beside the output (StagedLines), where no reader sees it, and
// copied into the output, with its commit position and time, when it commits; a rollback drops
// it. Open drops whatever an earlier run of this object left staged.
//
// Not thread-safe: one pipeline thread calls it.
class JsonlSink : public Sink {
 public:
  // `fs` must outlive the sink. Staged transactions' scratch files bypass it (nothing of them
  // needs to survive a crash).
  explicit JsonlSink(JsonlSinkOptions options, FileSystem& fs = PosixFileSystem());

  SinkCapabilities Capabilities() const override;
  Status Open(bool resuming) override;
  Status Write(const Page& page) override;
  Status Stage(const Page& page) override;
  Status Flush() override;

 private:
  // Renders changes [begin, end) of `page` as lines, spilling the buffer as it fills.
  Status WriteLines(const Page& page, size_t begin, size_t end);

  const JsonlSinkOptions options_;
  BufferedFile file_;
  StagedLines staged_;
};

// The sink for a `jsonl` or `file` config block, not yet opened (no I/O: `faucet validate`).
Result<std::unique_ptr<Sink>> MakeJsonlSink(const config::Block& cfg);

}  // namespace faucet
