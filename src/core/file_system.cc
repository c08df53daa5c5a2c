#include "core/file_system.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace faucet {
namespace {

Status IoError(const std::string& what, const std::string& path) {
  int err = errno;
  std::string msg = what + " '" + path + "': " + std::strerror(err);
  // Out of space or a vanished mount may clear up; other errors need a person.
  if (err == ENOSPC || err == EIO || err == EAGAIN || err == EINTR) return Unavailable(msg);
  return Internal(msg);
}

class PosixWritableFile : public WritableFile {
 public:
  PosixWritableFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return IoError("cannot write", path_);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }

  Status Sync() override {
    if (::fdatasync(fd_) != 0) return IoError("cannot fsync", path_);
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) return IoError("cannot truncate", path_);
    return Status::Ok();
  }

  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return IoError("cannot close", path_);
    return Status::Ok();
  }

 private:
  int fd_;
  std::string path_;
};

class RealFileSystem : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path,
                                                      bool truncate) override {
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
    int fd = ::open(path.c_str(), flags, 0644);
    if (fd < 0) return IoError("cannot open", path);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(fd, path));
  }

  Result<std::string> ReadFile(const std::string& path) override {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (errno == ENOENT) return NotFound("no such file '" + path + "'");
      return IoError("cannot read", path);
    }
    std::ostringstream out;
    out << in.rdbuf();
    if (in.bad()) return IoError("cannot read", path);
    return out.str();
  }

  bool Exists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return IoError("cannot rename to", to);
    return Status::Ok();
  }

  Status Remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return IoError("cannot remove", path);
    return Status::Ok();
  }

  Status CreateDirs(const std::string& path) override {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return Internal("cannot create directory '" + path + "': " + ec.message());
    return Status::Ok();
  }

  Status SyncDir(const std::string& path) override {
    int fd = ::open(path.empty() ? "." : path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return IoError("cannot open directory", path);
    int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) return IoError("cannot fsync directory", path);
    return Status::Ok();
  }
};

}  // namespace

FileSystem& PosixFileSystem() {
  static RealFileSystem fs;
  return fs;
}

Result<int> CreateScratchFile(const std::string& dir, const std::string& prefix) {
  std::string base = dir;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string path = base + "/" + prefix + "-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0) {
    return Unavailable("cannot create a scratch file in " + base + ": " + std::strerror(errno));
  }
  // Unlinked at once: the file lives as long as the descriptor.
  unlink(path.c_str());
  return fd;
}

}  // namespace faucet
