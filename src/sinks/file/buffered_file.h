// BufferedFile: the append-only local file behind the jsonl and csv sinks, and their common
// durability rules.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "core/file_system.h"
#include "core/status.h"

namespace faucet {

// Callers append whole lines to buffer(); the buffer goes to the file (OS buffers, not synced)
// whenever it reaches kSpillBytes, so memory stays bounded whatever the page size, and Flush
// writes the rest and fsyncs. Not thread-safe.
class BufferedFile {
 public:
  static constexpr size_t kSpillBytes = size_t{1} << 20;

  // `fs` must outlive this object.
  BufferedFile(std::string path, FileSystem& fs);

  // Creates the parent directories and opens the file for appending. A fresh run (not
  // `resuming`) empties it unless `append`. A kept file whose last line has no line break:
  //  - when `resuming`, it is a write of an earlier run that a crash or power cut tore; it was
  //    never flushed, so the source sends its changes again, and Open cuts it off (with a
  //    warning) rather than leave a line no reader can parse;
  //  - when appending in a fresh run, it is the user's own line: Open ends it with a line break
  //    and syncs that at once, so that a later resuming run never takes it for a torn write.
  // Errors name the path.
  Status Open(bool append, bool resuming);

  // True when the file held nothing once opened: it was new, emptied, of length zero, or only
  // a torn line that Open cut off.
  // REQUIRES: Open succeeded.
  bool opened_empty() const { return opened_empty_; }

  // The directory that holds the file ("." for a bare file name).
  std::string Directory() const;

  // Where callers append lines. REQUIRES: Open succeeded.
  std::string& buffer() { return buffer_; }

  // Spill() once the buffer holds kSpillBytes or more.
  Status SpillIfFull() { return buffer_.size() >= kSpillBytes ? Spill() : Status::Ok(); }

  // Writes the buffer to the file, without syncing: the lines survive a process crash but not
  // a power cut. The buffer is empty afterwards, also on error.
  Status Spill();

  // Spill(), then writes `lines` (whole lines) straight to the file: for a caller that has
  // built a large block of them elsewhere, without copying it into the buffer.
  Status Write(std::string_view lines);

  // Spills and fdatasyncs the file. The first Flush after Open also fsyncs the directory: the
  // file's entry may be new, or left unsynced by an earlier run that crashed, and without it the
  // whole file can vanish in a power cut. When it returns ok everything appended so far is
  // durable.
  Status Flush();

 private:
  // `st`, with the path as context unless its message names it already.
  Status NamePath(const Status& st) const;

  const std::string path_;
  FileSystem& fs_;
  std::unique_ptr<WritableFile> file_;
  std::string buffer_;
  bool opened_empty_ = false;
  bool dir_entry_synced_ = false;
};

}  // namespace faucet
