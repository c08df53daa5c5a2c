#include "testing/fault_injection_fs.h"

#include <filesystem>

#include "testing/services.h"

namespace faucet::testing {
namespace {

// One spelling per path, so that "dir//x.json" and "dir/x.json" are the same entry of "dir".
std::string Normal(const std::string& path) {
  std::string s = std::filesystem::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string DirOf(const std::string& normal_path) {
  return std::filesystem::path(normal_path).parent_path().string();
}

std::string NameOf(const std::string& normal_path) {
  return std::filesystem::path(normal_path).filename().string();
}

}  // namespace

class FaultInjectionFileSystem::File : public WritableFile {
 public:
  File(FaultInjectionFileSystem& fs, FileId id, std::unique_ptr<WritableFile> real)
      : fs_(fs), id_(id), real_(std::move(real)) {}

  Status Append(std::string_view data) override {
    RETURN_IF_ERROR(fs_.Step());
    RETURN_IF_ERROR(real_->Append(data));
    fs_.Append(id_, data);
    return Status::Ok();
  }

  Status Sync() override {
    RETURN_IF_ERROR(fs_.Step());
    RETURN_IF_ERROR(real_->Sync());
    fs_.Sync(id_);
    return Status::Ok();
  }

  Status Truncate(uint64_t size) override {
    RETURN_IF_ERROR(fs_.Step());
    RETURN_IF_ERROR(real_->Truncate(size));
    fs_.Truncate(id_, size);
    return Status::Ok();
  }

  Status Close() override {
    RETURN_IF_ERROR(fs_.Step());
    return real_->Close();
  }

 private:
  FaultInjectionFileSystem& fs_;
  const FileId id_;
  std::unique_ptr<WritableFile> real_;
};

FaultInjectionFileSystem::FaultInjectionFileSystem()
    : real_(PosixFileSystem()), root_(Normal(TempDir("faultfs"))) {}

Status FaultInjectionFileSystem::Step() {
  MutexLock lock(mu_);
  if (ops_left_ == 0) return Unavailable("simulated crash: the process is gone");
  if (ops_left_ > 0) --ops_left_;
  return Status::Ok();
}

void FaultInjectionFileSystem::FailAfter(int ops) {
  MutexLock lock(mu_);
  ops_left_ = ops;
}

void FaultInjectionFileSystem::Append(FileId id, std::string_view data) {
  MutexLock lock(mu_);
  contents_[id].current += data;
}

void FaultInjectionFileSystem::Truncate(FileId id, uint64_t size) {
  MutexLock lock(mu_);
  std::string& current = contents_[id].current;
  if (size < current.size()) current.resize(size);
}

void FaultInjectionFileSystem::Sync(FileId id) {
  MutexLock lock(mu_);
  contents_[id].synced = contents_[id].current;
}

Result<std::unique_ptr<WritableFile>> FaultInjectionFileSystem::OpenForAppend(
    const std::string& path, bool truncate) {
  RETURN_IF_ERROR(Step());
  std::string p = Normal(path);
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> real, real_.OpenForAppend(p, truncate));
  MutexLock lock(mu_);
  auto it = live_.find(p);
  FileId id;
  if (it == live_.end()) {
    // A new inode: its (empty) content is durable, its name is not until SyncDir.
    id = next_id_++;
    contents_[id] = Content{};
    live_[p] = id;
  } else {
    id = it->second;
    if (truncate) contents_[id].current.clear();
  }
  return std::unique_ptr<WritableFile>(new File(*this, id, std::move(real)));
}

Result<std::string> FaultInjectionFileSystem::ReadFile(const std::string& path) {
  return real_.ReadFile(path);
}

bool FaultInjectionFileSystem::Exists(const std::string& path) { return real_.Exists(path); }

Status FaultInjectionFileSystem::Rename(const std::string& from, const std::string& to) {
  RETURN_IF_ERROR(Step());
  RETURN_IF_ERROR(real_.Rename(from, to));
  std::string f = Normal(from);
  std::string t = Normal(to);
  if (f == t) return Status::Ok();
  MutexLock lock(mu_);
  auto it = live_.find(f);
  if (it == live_.end()) return Status::Ok();
  live_[t] = it->second;
  live_.erase(f);
  return Status::Ok();
}

Status FaultInjectionFileSystem::Remove(const std::string& path) {
  RETURN_IF_ERROR(Step());
  RETURN_IF_ERROR(real_.Remove(path));
  MutexLock lock(mu_);
  live_.erase(Normal(path));
  return Status::Ok();
}

Status FaultInjectionFileSystem::CreateDirs(const std::string& path) {
  RETURN_IF_ERROR(Step());
  return real_.CreateDirs(path);
}

Status FaultInjectionFileSystem::SyncDir(const std::string& path) {
  RETURN_IF_ERROR(Step());
  RETURN_IF_ERROR(real_.SyncDir(path));
  std::string dir = Normal(path);
  MutexLock lock(mu_);
  std::map<std::string, FileId>& entries = synced_dirs_[dir];
  entries.clear();
  for (const auto& [p, id] : live_) {
    if (DirOf(p) == dir) entries[NameOf(p)] = id;
  }
  return Status::Ok();
}

Status FaultInjectionFileSystem::DropUnsyncedData() {
  MutexLock lock(mu_);
  for (const auto& [p, id] : live_) RETURN_IF_ERROR(real_.Remove(p));
  live_.clear();
  for (const auto& [dir, entries] : synced_dirs_) {
    for (const auto& [name, id] : entries) {
      std::string p = (std::filesystem::path(dir) / name).string();
      ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, real_.OpenForAppend(p, true));
      RETURN_IF_ERROR(file->Append(contents_[id].synced));
      RETURN_IF_ERROR(file->Close());
      live_[p] = id;
    }
  }
  for (auto& [id, content] : contents_) content.current = content.synced;
  ops_left_ = -1;
  return Status::Ok();
}

}  // namespace faucet::testing
