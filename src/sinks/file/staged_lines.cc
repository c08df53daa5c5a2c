#include "sinks/file/staged_lines.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>

#include "core/file_system.h"
#include "core/json_render.h"

namespace faucet {
namespace {

// A record is [part u32][commit_at u32][length u32][line], host byte order (the file never
// leaves this process); the line ends in its newline and its commit fields belong at commit_at.
constexpr size_t kHeader = 12;

void PutHeader(char* out, uint32_t part, uint32_t commit_at, uint32_t length) {
  std::memcpy(out, &part, 4);
  std::memcpy(out + 4, &commit_at, 4);
  std::memcpy(out + 8, &length, 4);
}

void GetHeader(const char* in, uint32_t* part, uint32_t* commit_at, uint32_t* length) {
  std::memcpy(part, in, 4);
  std::memcpy(commit_at, in + 4, 4);
  std::memcpy(length, in + 8, 4);
}

Status ScratchError(const char* what) {
  return Unavailable(std::string(what) +
                     " a staged transaction's scratch file: " + std::strerror(errno));
}

}  // namespace

Status StagedLines::Add(uint32_t txn_id, uint32_t part, const std::vector<Change>& changes) {
  Txn& txn = txns_[txn_id];
  for (const Change& change : changes) {
    const size_t header = txn.buffer.size();
    txn.buffer.append(kHeader, '\0');
    const size_t commit_at = AppendUncommittedChangeJson(change, txn.buffer);
    txn.buffer.push_back('\n');
    PutHeader(txn.buffer.data() + header, part, static_cast<uint32_t>(commit_at),
              static_cast<uint32_t>(txn.buffer.size() - header - kHeader));
    if (txn.buffer.size() >= kSpillBytes) RETURN_IF_ERROR(Spill(txn));
  }
  return Status::Ok();
}

Status StagedLines::Spill(Txn& txn) {
  if (txn.fd < 0) {
    ASSIGN_OR_RETURN(txn.fd, CreateScratchFile(dir_, ".faucet-staged"));
  }
  const char* data = txn.buffer.data();
  size_t left = txn.buffer.size();
  while (left > 0) {
    ssize_t n = write(txn.fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ScratchError("cannot write");
    data += n;
    left -= static_cast<size_t>(n);
  }
  txn.written += txn.buffer.size();
  txn.buffer.clear();
  return Status::Ok();
}

void StagedLines::Abort(uint32_t txn_id, uint32_t part) {
  auto it = txns_.find(txn_id);
  if (it == txns_.end()) return;
  if (part == txn_id) {
    Drop(it);
  } else {
    it->second.aborted.insert(part);
  }
}

size_t StagedLines::CopyRecords(const Txn& txn, std::string_view records, std::string_view commit,
                                std::string& out) {
  size_t pos = 0;
  while (records.size() - pos >= kHeader) {
    uint32_t part = 0;
    uint32_t commit_at = 0;
    uint32_t length = 0;
    GetHeader(records.data() + pos, &part, &commit_at, &length);
    if (records.size() - pos - kHeader < length) break;
    const char* line = records.data() + pos + kHeader;
    pos += kHeader + length;
    if (!txn.aborted.empty() && txn.aborted.count(part) != 0) continue;
    out.append(line, commit_at);
    out.append(commit);
    out.append(line + commit_at, length - commit_at);
  }
  return pos;
}

Status StagedLines::ReadScratch(const Txn& txn, std::string_view commit,
                                BoundedQueue<std::string>& chunks) {
  // The file's records, read back a MiB at a time; a record may straddle two reads.
  std::string in;
  for (uint64_t offset = 0; offset < txn.written;) {
    const size_t kept = in.size();
    in.resize(kept + static_cast<size_t>(std::min<uint64_t>(kSpillBytes, txn.written - offset)));
    ssize_t n = pread(txn.fd, in.data() + kept, in.size() - kept, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) {
      in.resize(kept);
      continue;
    }
    if (n <= 0) {
      return n < 0 ? ScratchError("cannot read")
                   : DataLoss("a staged transaction's scratch file ended early");
    }
    in.resize(kept + static_cast<size_t>(n));
    // The bytes read are not needed again: freeing their page-cache pages now lets the output's
    // writes reuse them. Best effort (a file system without hole punching keeps them).
    (void)fallocate(txn.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                    static_cast<off_t>(n));
    offset += static_cast<uint64_t>(n);
    std::string chunk;
    chunk.reserve(in.size() + in.size() / 4);
    in.erase(0, CopyRecords(txn, in, commit, chunk));
    if (chunk.empty()) continue;  // every line of it rolled back
    if (!chunks.Push(std::move(chunk), kSpillBytes)) return Status::Ok();  // the writer failed
  }
  // Spills write whole records, so the file ends where the buffer's first record starts.
  if (!in.empty()) return DataLoss("a staged transaction's scratch file ends mid-record");
  std::string chunk;
  CopyRecords(txn, txn.buffer, commit, chunk);
  if (!chunk.empty()) chunks.Push(std::move(chunk), kSpillBytes);
  return Status::Ok();
}

Status StagedLines::Publish(uint32_t txn_id, std::string_view commit, BufferedFile& out) {
  auto it = txns_.find(txn_id);
  if (it == txns_.end()) return Status::Ok();
  const Txn& txn = it->second;
  Status st;
  if (txn.fd < 0) {  // all of it in memory
    CopyRecords(txn, txn.buffer, commit, out.buffer());
    st = out.SpillIfFull();
  } else {
    // What is left after the transaction's last change: the two copies overlap. A reader thread
    // reads the scratch file back and inserts the commit fields, a MiB at a time, while this one
    // writes the chunks it has done to the output (two queued at most).
    BoundedQueue<std::string> chunks(2 * kSpillBytes);
    Status read;
    std::thread reader([&] {
      read = ReadScratch(txn, commit, chunks);
      chunks.Close();
    });
    while (std::optional<std::string> chunk = chunks.Pop()) {
      st = out.Write(*chunk);
      if (!st.ok()) {
        chunks.Close();
        break;
      }
    }
    reader.join();
    if (st.ok()) st = read;
  }
  Drop(it);
  return st;
}

void StagedLines::Drop(std::map<uint32_t, Txn>::iterator it) {
  if (it->second.fd >= 0) close(it->second.fd);
  txns_.erase(it);
}

void StagedLines::Clear() {
  while (!txns_.empty()) Drop(txns_.begin());
}

}  // namespace faucet
