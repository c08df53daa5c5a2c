#include "sources/postgres/stream_buffer.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/file_system.h"

namespace faucet::postgres {
namespace {

// A record is [subxid u32][length u32][message], host byte order: the file never leaves this
// process.
constexpr size_t kHeader = 8;
constexpr size_t kChunkBytes = 1 << 20;
constexpr size_t kSpillBufferBytes = 1 << 20;

void PutHeader(char* out, uint32_t subxid, uint32_t length) {
  std::memcpy(out, &subxid, 4);
  std::memcpy(out + 4, &length, 4);
}

void GetHeader(const char* in, uint32_t* subxid, uint32_t* length) {
  std::memcpy(subxid, in, 4);
  std::memcpy(length, in + 4, 4);
}

// Relation and Type messages survive subtransaction aborts (see BufferedStream::Next).
bool IsSchemaMessage(std::string_view message) {
  return !message.empty() && (message[0] == 'R' || message[0] == 'Y');
}

Result<std::FILE*> CreateSpillFile(const std::string& dir) {
  ASSIGN_OR_RETURN(int fd, CreateScratchFile(dir, "faucet-pg-stream"));
  std::FILE* f = fdopen(fd, "w+b");
  if (f == nullptr) {
    close(fd);
    return Unavailable("cannot open spill file: " + std::string(std::strerror(errno)));
  }
  // Records are small (one row each): a large buffer makes a write or read per MiB, not per
  // 4 KiB. A failure keeps the default buffer. Only the source's thread uses the file, so records
  // go through glibc's *_unlocked calls, which skip the lock the plain ones take per call.
  (void)std::setvbuf(f, nullptr, _IOFBF, kSpillBufferBytes);
  return f;
}

// A failure (disk full) is kUnavailable.
Status WriteSpill(std::FILE* f, std::string_view bytes) {
  if (fwrite_unlocked(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    return Unavailable("cannot write spill file: " + std::string(std::strerror(errno)));
  }
  return Status::Ok();
}

}  // namespace

BufferedStream::~BufferedStream() {
  if (spill_ != nullptr) std::fclose(spill_);
}

Result<bool> BufferedStream::Next(std::string_view& message) {
  while (true) {
    uint32_t subxid = 0;
    uint32_t length = 0;
    if (!reading_file_) {
      if (chunk_ < chunks_.size() && offset_ >= chunks_[chunk_].size()) {
        // Replayed chunks are released as the replay passes them.
        std::string().swap(chunks_[chunk_]);
        ++chunk_;
        offset_ = 0;
        continue;
      }
      if (chunk_ < chunks_.size()) {
        const std::string& c = chunks_[chunk_];
        GetHeader(c.data() + offset_, &subxid, &length);
        message = std::string_view(c).substr(offset_ + kHeader, length);
        offset_ += kHeader + length;
      } else {
        if (spill_ == nullptr) return false;
        if (std::fflush(spill_) != 0 || std::fseek(spill_, 0, SEEK_SET) != 0) {
          return Unavailable("cannot rewind spill file: " + std::string(std::strerror(errno)));
        }
        reading_file_ = true;
        continue;
      }
    } else {
      char header[kHeader];
      size_t got = fread_unlocked(header, 1, kHeader, spill_);
      if (got == 0 && std::feof(spill_)) return false;
      if (got != kHeader) return DataLoss("spill file ends inside a record header");
      GetHeader(header, &subxid, &length);
      read_.resize(length);
      if (fread_unlocked(read_.data(), 1, length, spill_) != length) {
        return DataLoss("spill file ends inside a record");
      }
      message = read_;
    }
    if (aborted_.count(subxid) == 0 || IsSchemaMessage(message)) return true;
  }
}

StreamBuffer::StreamBuffer(size_t memory_budget, std::string spill_dir)
    : memory_budget_(memory_budget), spill_dir_(std::move(spill_dir)) {}

void StreamBuffer::Open(uint32_t xid) { streams_[xid] = std::make_unique<BufferedStream>(); }

Status StreamBuffer::Append(uint32_t xid, uint32_t subxid, std::string_view message) {
  BufferedStream& s = *streams_.at(xid);
  const size_t record = kHeader + message.size();
  if (s.spill_ == nullptr) {
    bool fits =
        !s.chunks_.empty() && s.chunks_.back().capacity() - s.chunks_.back().size() >= record;
    size_t grow = fits ? 0 : std::max(kChunkBytes, record);
    if (memory_bytes_ + grow <= memory_budget_) {
      if (!fits) {
        s.chunks_.emplace_back().reserve(grow);
        s.memory_bytes_ += grow;
        memory_bytes_ += grow;
      }
      std::string& c = s.chunks_.back();
      char header[kHeader];
      PutHeader(header, subxid, static_cast<uint32_t>(message.size()));
      c.append(header, kHeader);
      c.append(message);
      return Status::Ok();
    }
    // Past the budget the whole transaction moves to its file, its earlier messages first:
    // replaying it then holds no more than the file's buffer while its pages fill the pipeline.
    ASSIGN_OR_RETURN(s.spill_, CreateSpillFile(spill_dir_));
    for (const std::string& c : s.chunks_) {
      RETURN_IF_ERROR(WriteSpill(s.spill_, c));
      spilled_bytes_ += c.size();
    }
    std::vector<std::string>().swap(s.chunks_);
    memory_bytes_ -= s.memory_bytes_;
    s.memory_bytes_ = 0;
  }
  char header[kHeader];
  PutHeader(header, subxid, static_cast<uint32_t>(message.size()));
  RETURN_IF_ERROR(WriteSpill(s.spill_, std::string_view(header, kHeader)));
  RETURN_IF_ERROR(WriteSpill(s.spill_, message));
  spilled_bytes_ += record;
  return Status::Ok();
}

void StreamBuffer::Abort(uint32_t xid, uint32_t subxid) {
  auto it = streams_.find(xid);
  if (it == streams_.end()) return;
  if (subxid != xid) {
    it->second->aborted_.insert(subxid);
    return;
  }
  memory_bytes_ -= it->second->memory_bytes_;
  streams_.erase(it);
}

std::unique_ptr<BufferedStream> StreamBuffer::Take(uint32_t xid) {
  auto it = streams_.find(xid);
  std::unique_ptr<BufferedStream> s = std::move(it->second);
  streams_.erase(it);
  memory_bytes_ -= s->memory_bytes_;
  return s;
}

}  // namespace faucet::postgres
