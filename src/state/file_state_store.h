// FileStateStore: one JSON file per key in a directory, published atomically. The layout is the
// reference system's, so either engine resumes the other's pipelines (docs/state-format.md):
//
//   {dir}/{key with every ':' replaced by "%3A"}.json     compact JSON, no envelope
//
// Put writes the value to a temp file in the same directory, fsyncs it, renames it over the
// final name and fsyncs the directory (leveldb's SetCurrentFile). A crash at any instant
// therefore leaves either the old file or the new one, each complete; at worst a stray
// "*.json.tmp" file, which Get never reads.
#pragma once

#include <optional>
#include <string>

#include "core/file_system.h"
#include "core/mutex.h"
#include "core/state_store.h"

namespace faucet {

// Thread-safe: puts and deletes are serialised by a mutex; gets need none, since a reader sees
// either the old or the new file (rename is atomic). One directory must have one writer
// process at a time (two pipelines with the same name would overwrite each other's bookmark).
class FileStateStore : public StateStore {
 public:
  // `fs` must outlive the store. REQUIRES: `dir` exists (OpenStateStore creates it).
  FileStateStore(FileSystem& fs, std::string dir);

  // kDataLoss naming the file when it exists but is not valid JSON.
  Result<std::optional<Json>> Get(const std::string& key) override;
  // Durable when it returns ok (file and directory fsync'ed). On error, the key holds the old
  // value or, if only the final directory fsync failed, possibly the new one; never a mix.
  Status Put(const std::string& key, const Json& value) override;
  // Durable when it returns ok (directory fsync'ed).
  Status Delete(const std::string& key) override;
  Durability durability() const override { return Durability::kDurable; }
  // An exclusive flock(2) on "{key}.lock" in the directory: released when the lease is
  // destroyed or the process dies. POSIX directly, not the FileSystem: a lock is not data.
  Result<std::unique_ptr<StateLease>> Lease(const std::string& key) override;

  // The file that holds `key`. REQUIRES: ValidateStateKey(key) is ok.
  std::string PathOf(const std::string& key) const;

 private:
  // Writes `data` to a new temp file and makes it durable; returns its path.
  Result<std::string> WriteTemp(const std::string& key, const std::string& data);

  FileSystem& fs_;
  const std::string dir_;
  Mutex mu_;  // serialises Put and Delete
};

}  // namespace faucet
