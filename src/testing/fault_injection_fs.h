// FaultInjectionFileSystem: a real file system in a temp directory that remembers what was made
// durable, so that a test can simulate a power cut and check what survives (leveldb's
// FaultInjectionTestEnv is the model).
//
// The model is the POSIX worst case: file data is durable only up to the last Sync of that file;
// a directory entry (a creation, a rename into or out of it, a removal) only once SyncDir was
// called on its directory. DropUnsyncedData() rewrites the real files to exactly that durable
// state. Directories made with CreateDirs count as durable at once.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/file_system.h"
#include "core/mutex.h"

namespace faucet::testing {

class FaultInjectionFileSystem : public FileSystem {
 public:
  // Works in a fresh empty directory, root().
  FaultInjectionFileSystem();

  const std::string& root() const { return root_; }

  // Simulates a power cut and a reboot: every file is cut back to the content it had at its
  // last Sync, and every directory to the entries it had at its last SyncDir (a file renamed
  // over another reverts to the old one, a file created since disappears, a removed one comes
  // back). Also lifts FailAfter. REQUIRES: no WritableFile opened before is used again, and
  // every file under root() was created through this file system.
  Status DropUnsyncedData();

  // The next `ops` mutating operations (open, append, sync, truncate, close, rename, remove,
  // create directories, sync directory) run; every later one fails with kUnavailable and does
  // nothing, as if the process had died right after the `ops`th. Reads keep working.
  void FailAfter(int ops);

  Result<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path,
                                                      bool truncate) override;
  Result<std::string> ReadFile(const std::string& path) override;
  bool Exists(const std::string& path) override;
  Status Rename(const std::string& from, const std::string& to) override;
  Status Remove(const std::string& path) override;
  Status CreateDirs(const std::string& path) override;
  Status SyncDir(const std::string& path) override;

 private:
  class File;
  using FileId = int;
  struct Content {
    std::string current;
    std::string synced;
  };

  // kUnavailable once the FailAfter budget is spent; otherwise counts the operation.
  Status Step();
  void Append(FileId id, std::string_view data);
  void Sync(FileId id);
  void Truncate(FileId id, uint64_t size);

  FileSystem& real_;
  const std::string root_;
  Mutex mu_;
  int ops_left_ GUARDED_BY(mu_) = -1;  // < 0: no failures
  FileId next_id_ GUARDED_BY(mu_) = 0;
  std::map<FileId, Content> contents_ GUARDED_BY(mu_);
  // Normalised path -> file, as the live file system has it.
  std::map<std::string, FileId> live_ GUARDED_BY(mu_);
  // Directory -> (name -> file) as of its last SyncDir.
  std::map<std::string, std::map<std::string, FileId>> synced_dirs_ GUARDED_BY(mu_);
};

}  // namespace faucet::testing
