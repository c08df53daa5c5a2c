#include "sinks/file/buffered_file.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string_view>
#include <utility>

namespace faucet {
namespace {

std::string DirectoryOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// The length of the file at `path`, and the length up to and including its last line break (0
// when it has none). FileSystem has no size query nor positioned read; reading the same path
// directly answers them, backwards from the end in bounded chunks.
struct FileEnd {
  uint64_t size = 0;
  uint64_t whole_lines = 0;
};

Result<FileEnd> EndOf(const std::string& path) {
  FileEnd end;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return Internal("cannot read '" + path + "'");
  const std::streamoff size = in.tellg();
  if (size <= 0) return end;
  end.size = static_cast<uint64_t>(size);
  std::string chunk(size_t{64} << 10, '\0');
  for (std::streamoff stop = size; stop > 0;) {
    const std::streamoff start = std::max<std::streamoff>(0, stop - std::ssize(chunk));
    if (!in.seekg(start) || !in.read(chunk.data(), stop - start)) {
      return Internal("cannot read the end of '" + path + "'");
    }
    const size_t newline = std::string_view(chunk.data(), stop - start).rfind('\n');
    if (newline != std::string_view::npos) {
      end.whole_lines = static_cast<uint64_t>(start) + newline + 1;
      return end;
    }
    stop = start;
  }
  return end;
}

}  // namespace

BufferedFile::BufferedFile(std::string path, FileSystem& fs) : path_(std::move(path)), fs_(fs) {}

std::string BufferedFile::Directory() const { return DirectoryOf(path_); }

Status BufferedFile::NamePath(const Status& st) const {
  if (st.ok() || st.message().find(path_) != std::string::npos) return st;
  return st.WithContext(path_);
}

Status BufferedFile::Open(bool append, bool resuming) {
  RETURN_IF_ERROR(NamePath(fs_.CreateDirs(DirectoryOf(path_))));
  const bool truncate = !append && !resuming;
  Result<std::unique_ptr<WritableFile>> file = fs_.OpenForAppend(path_, truncate);
  if (!file.ok()) return NamePath(file.status());
  file_ = std::move(file).value();
  buffer_.clear();
  dir_entry_synced_ = false;
  FileEnd end;
  if (!truncate) {
    ASSIGN_OR_RETURN(end, EndOf(path_));
  }
  opened_empty_ = end.size == 0;
  if (end.whole_lines == end.size) return Status::Ok();
  if (resuming) {
    spdlog::warn("{}: cut off {} bytes of a line torn by a crash; its changes are sent again",
                 path_, end.size - end.whole_lines);
    opened_empty_ = end.whole_lines == 0;
    return NamePath(file_->Truncate(end.whole_lines));
  }
  RETURN_IF_ERROR(NamePath(file_->Append("\n")));
  return NamePath(file_->Sync());
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
