// FileSystem: the few file operations whose durability the file state store and the file sinks
// depend on, behind an interface so that a fault-injecting implementation (src/testing) can
// drop everything that was not synced and show what survives a crash.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace faucet {

class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends to the file; the data may sit in OS buffers until Sync.
  virtual Status Append(std::string_view data) = 0;
  // Makes everything appended so far durable (fsync).
  virtual Status Sync() = 0;
  // Cuts the file to its first `size` bytes (at most its length); later appends follow them.
  // Durable, like an append, only after the next Sync.
  virtual Status Truncate(uint64_t size) = 0;
  virtual Status Close() = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // Opens `path` for appending, creating it if missing; truncates it first when `truncate`.
  virtual Result<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path,
                                                              bool truncate) = 0;
  // The whole content of `path`; kNotFound if it does not exist.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  virtual bool Exists(const std::string& path) = 0;
  // Atomically replaces `to` with `from`. Durable only after SyncDir of the directory.
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  // Removes `path`; a missing file is ok. Durable only after SyncDir.
  virtual Status Remove(const std::string& path) = 0;
  // Creates `path` and its parents if missing.
  virtual Status CreateDirs(const std::string& path) = 0;
  // Makes the directory's entries (creations, renames, removals) durable.
  virtual Status SyncDir(const std::string& path) = 0;
};

// The real file system. Returns a process-wide instance.
FileSystem& PosixFileSystem();

// Creates a scratch file in `dir` ("" means $TMPDIR, else /tmp) that no path names: it lives as
// long as the returned descriptor (open for reading and writing), and a crash leaves nothing
// behind. Not through FileSystem: nothing of it needs to survive. `prefix` starts its
// short-lived name; a failure (kUnavailable) names the directory.
Result<int> CreateScratchFile(const std::string& dir, const std::string& prefix);

}  // namespace faucet
