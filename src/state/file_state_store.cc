#include "state/file_state_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/crash_point.h"
#include "state/state_json.h"

namespace faucet {
namespace {

// ':' is legal in keys but not in file names on every platform the reference supports; keys
// cannot contain '%', so the mapping stays one-to-one.
std::string FileStem(const std::string& key) {
  std::string stem;
  for (char c : key) {
    if (c == ':') {
      stem += "%3A";
    } else {
      stem += c;
    }
  }
  return stem;
}

// "{pid}-{random}.{counter}": unique across processes (the pid is read on every call so that a
// forked child differs from its parent; a pid can be reused by a later process whose
// predecessor left a temp file behind, hence the random part) and across stores and threads of
// this process.
std::string TempSuffix() {
  static const std::string random_tag = [] {
    std::random_device rd;
    char buf[17];
    std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
    return std::string(buf);
  }();
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "-" + random_tag + "." + std::to_string(counter++);
}

}  // namespace

FileStateStore::FileStateStore(FileSystem& fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {}

namespace {

class FileLease final : public StateLease {
 public:
  explicit FileLease(int fd) : fd_(fd) {}
  ~FileLease() override { ::close(fd_); }  // closing the last descriptor releases the flock
  FileLease(const FileLease&) = delete;
  FileLease& operator=(const FileLease&) = delete;

 private:
  const int fd_;
};

}  // namespace

Result<std::unique_ptr<StateLease>> FileStateStore::Lease(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  std::string path = PathOf(key);
  path.replace(path.size() - 5, 5, ".lock");  // "{key}.json" -> "{key}.lock"
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable("cannot open lock file " + path + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return FailedPrecondition(key + " is held by another process (flock on " + path + ")");
    }
    return Unavailable("cannot lock " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<StateLease>(new FileLease(fd));
}

std::string FileStateStore::PathOf(const std::string& key) const {
  return (std::filesystem::path(dir_) / (FileStem(key) + ".json")).string();
}

Result<std::optional<Json>> FileStateStore::Get(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  std::string path = PathOf(key);
  Result<std::string> text = fs_.ReadFile(path);
  if (!text.ok()) {
    if (text.status().code() == StatusCode::kNotFound) return std::optional<Json>();
    return text.status();
  }
  ASSIGN_OR_RETURN(Json value, ParseStateValue(*text, "state file '" + path + "'"));
  return std::optional<Json>(std::move(value));
}

Result<std::string> FileStateStore::WriteTemp(const std::string& key, const std::string& data) {
  std::string tmp =
      (std::filesystem::path(dir_) / (FileStem(key) + "." + TempSuffix() + ".json.tmp")).string();
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs_.OpenForAppend(tmp, /*truncate=*/true));
  Status st = file->Append(data);
  if (st.ok()) {
    CrashPoint("state.file.after_temp_write");
    // Without this fsync the rename could reach the disk before the data, and a power cut would
    // leave an empty final file (the classic zero-length-file-after-rename loss).
    st = file->Sync();
  }
  Status closed = file->Close();
  if (st.ok()) st = closed;
  if (!st.ok()) {
    // Best effort: a leftover temp file is never read.
    (void)fs_.Remove(tmp);
    return st;
  }
  return tmp;
}

Status FileStateStore::Put(const std::string& key, const Json& value) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  ASSIGN_OR_RETURN(std::string data, DumpStateValue(value));
  MutexLock lock(mu_);
  ASSIGN_OR_RETURN(std::string tmp, WriteTemp(key, data));
  CrashPoint("state.file.before_rename");
  Status st = fs_.Rename(tmp, PathOf(key));
  if (!st.ok()) {
    (void)fs_.Remove(tmp);
    return st.WithContext("cannot publish state for '" + key + "'");
  }
  CrashPoint("state.file.after_rename");
  // Until the directory is fsync'ed the rename itself may be undone by a power cut, and the
  // caller would acknowledge a position the disk no longer holds.
  return fs_.SyncDir(dir_);
}

Status FileStateStore::Delete(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  MutexLock lock(mu_);
  RETURN_IF_ERROR(fs_.Remove(PathOf(key)));
  return fs_.SyncDir(dir_);
}

}  // namespace faucet
