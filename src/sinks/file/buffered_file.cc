#include "sinks/file/buffered_file.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

namespace faucet {
namespace {

std::string DirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// The last byte of `path`, or nothing when it is empty. FileSystem has no size query nor
// positioned read; reading the same path directly answers it.
std::optional<char> LastByte(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || in.tellg() <= 0) return std::nullopt;
  char c = 0;
  if (!in.seekg(-1, std::ios::end) || !in.get(c)) return std::nullopt;
  return c;
}

}  // namespace

BufferedFile::BufferedFile(std::string path, FileSystem& fs) : path_(std::move(path)), fs_(fs) {}

std::string BufferedFile::Directory() const { return DirectoryOf(path_); }

Status BufferedFile::NamePath(const Status& st) const {
  if (st.ok() || st.message().find(path_) != std::string::npos) return st;
  return st.WithContext(path_);
}

Status BufferedFile::Open(bool truncate) {
  RETURN_IF_ERROR(NamePath(fs_.CreateDirs(DirectoryOf(path_))));
  Result<std::unique_ptr<WritableFile>> file = fs_.OpenForAppend(path_, truncate);
  if (!file.ok()) return NamePath(file.status());
  file_ = std::move(file).value();
  buffer_.clear();
  const std::optional<char> last = truncate ? std::nullopt : LastByte(path_);
  opened_empty_ = !last.has_value();
  // A power cut during an unflushed write can leave a torn last line. Ending it keeps it from
  // swallowing the first line of this run: only the torn line fails to parse.
  if (last && *last != '\n') buffer_.push_back('\n');
  dir_entry_synced_ = false;
  return Status::Ok();
}

Status BufferedFile::Spill() {
  if (buffer_.empty()) return Status::Ok();
  Status st = file_->Append(buffer_);
  buffer_.clear();
  return NamePath(st);
}

Status BufferedFile::Write(std::string_view lines) {
  RETURN_IF_ERROR(Spill());
  return NamePath(file_->Append(lines));
}

Status BufferedFile::Flush() {
  RETURN_IF_ERROR(Spill());
  RETURN_IF_ERROR(NamePath(file_->Sync()));
  if (!dir_entry_synced_) {
    RETURN_IF_ERROR(NamePath(fs_.SyncDir(DirectoryOf(path_))));
    dir_entry_synced_ = true;
  }
  return Status::Ok();
}

}  // namespace faucet
