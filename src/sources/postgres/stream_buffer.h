// StreamBuffer: the raw pgoutput messages of streamed transactions (protocol 2) that are still
// open, kept until the server says Stream Commit or Stream Abort.
//
// With `streaming 'on'` the server sends a large transaction in chunks while it is still
// running, interleaved with other transactions, and decides its fate only at the end (docs:
// "Logical Streaming Replication Protocol"). Nothing of it may be emitted before the commit, so
// its messages wait here: in memory up to a budget shared by all open transactions. The one
// whose message would pass the budget moves whole to its own unlinked temp file (a crash leaves
// nothing behind), so replaying a large transaction holds no more than the file's buffer.
// Messages are kept as the bytes the server sent, length-prefixed, and decoded again at replay.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace faucet::postgres {

// One transaction's messages, in arrival order: in memory, or all in its file once spilled.
class BufferedStream {
 public:
  BufferedStream() = default;
  ~BufferedStream();
  BufferedStream(const BufferedStream&) = delete;
  BufferedStream& operator=(const BufferedStream&) = delete;

  // The next message that survives the subtransaction aborts, or false at the end; `message`
  // stays valid until the next call. Relation and Type messages always survive: the server
  // sends a relation's schema once per streamed transaction, whichever subtransaction touched it
  // first, and later messages rely on it.
  Result<bool> Next(std::string_view& message);

 private:
  friend class StreamBuffer;

  std::vector<std::string> chunks_;  // records never span chunks
  size_t memory_bytes_ = 0;          // capacity of chunks_
  std::FILE* spill_ = nullptr;       // unlinked temp file; null until the budget is exceeded
  std::set<uint32_t> aborted_;       // aborted subtransactions

  // Replay cursor.
  size_t chunk_ = 0;
  size_t offset_ = 0;
  bool reading_file_ = false;
  std::string read_;  // the message last read from the file
};

class StreamBuffer {
 public:
  // `memory_budget` bounds the bytes held in memory over all open transactions; spill files
  // are created in `spill_dir` ("" means $TMPDIR, else /tmp).
  StreamBuffer(size_t memory_budget, std::string spill_dir);

  bool Contains(uint32_t xid) const { return streams_.count(xid) != 0; }
  size_t open_count() const { return streams_.size(); }
  size_t memory_bytes() const { return memory_bytes_; }
  // Bytes written to spill files since construction (for tests and logs).
  uint64_t spilled_bytes() const { return spilled_bytes_; }

  // Opens an empty stream for top-level transaction `xid`. REQUIRES: !Contains(xid).
  void Open(uint32_t xid);

  // Appends a message of (sub)transaction `subxid` to open stream `xid`. A spill-file failure
  // (disk full) is kUnavailable.
  Status Append(uint32_t xid, uint32_t subxid, std::string_view message);

  // Drops the messages of subtransaction `subxid` of `xid`, or the whole stream when
  // subxid == xid. An unknown xid is ignored: there is nothing of it to drop.
  void Abort(uint32_t xid, uint32_t subxid);

  // Removes the committed stream `xid` and returns it for replay, positioned at its first
  // message. Its memory leaves the budget: the caller replays it before appending more.
  // REQUIRES: Contains(xid).
  std::unique_ptr<BufferedStream> Take(uint32_t xid);

 private:
  size_t memory_budget_;
  std::string spill_dir_;
  std::map<uint32_t, std::unique_ptr<BufferedStream>> streams_;
  size_t memory_bytes_ = 0;
  uint64_t spilled_bytes_ = 0;
};

}  // namespace faucet::postgres
