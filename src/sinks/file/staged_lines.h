// StagedLines: the jsonl lines of transactions whose outcome is not known yet (Sink::Stage),
// rendered as their changes arrive so that little is left to do at the commit.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/bounded_queue.h"
#include "core/change.h"
#include "core/status.h"
#include "sinks/file/buffered_file.h"

namespace faucet {

// Each transaction's lines are rendered without their commit fields (AppendUncommittedChangeJson)
// into a buffer that goes, once it holds kSpillBytes, to a scratch file of that transaction
// (core/file_system.h: no path names it, a crash leaves nothing) in `dir`, so memory stays
// bounded whatever the transaction's size and the disk space is taken where the output goes.
// Publish copies the lines of the parts that were not rolled back into the output, the commit
// fields inserted (reading a scratch file back on a thread of its own while the caller writes).
// Not thread-safe.
class StagedLines {
 public:
  static constexpr size_t kSpillBytes = size_t{1} << 20;

  explicit StagedLines(std::string dir) : dir_(std::move(dir)) {}
  ~StagedLines() { Clear(); }
  StagedLines(const StagedLines&) = delete;
  StagedLines& operator=(const StagedLines&) = delete;

  // Renders `changes` of subtransaction `part` of transaction `txn` (part == txn: its top
  // level). REQUIRES: the changes are Postgres changes, not kRead (AppendUncommittedChangeJson).
  Status Add(uint32_t txn, uint32_t part, const std::vector<Change>& changes);

  // Subtransaction `part` of `txn` rolled back; part == txn: all of `txn`, which is dropped.
  // An unknown transaction is ignored: nothing of it was staged.
  void Abort(uint32_t txn, uint32_t part);

  // Appends the lines of `txn` that were not rolled back to `out`, in the order they were added,
  // each with `commit` (AppendCommitJson's fields) inserted, spilling `out` as it fills; then
  // drops `txn`. A transaction with nothing staged appends nothing.
  Status Publish(uint32_t txn, std::string_view commit, BufferedFile& out);

  // Drops every transaction.
  void Clear();

 private:
  struct Txn {
    std::string buffer;    // records not written to the file yet
    int fd = -1;           // the scratch file, once the buffer first filled
    uint64_t written = 0;  // bytes in the file
    std::set<uint32_t> aborted;
  };

  // Writes txn.buffer to its file (creating it) and empties the buffer.
  Status Spill(Txn& txn);
  // Appends the lines of the complete records at the front of `records` to `out`, `commit`
  // inserted, skipping rolled-back parts; returns the bytes of `records` used.
  static size_t CopyRecords(const Txn& txn, std::string_view records, std::string_view commit,
                            std::string& out);
  // Reads `txn`'s scratch file, then its buffer, into chunks of lines (CopyRecords) pushed to
  // `chunks`, punching each read range out of the file; stops early, with ok, when `chunks` is
  // closed.
  static Status ReadScratch(const Txn& txn, std::string_view commit,
                            BoundedQueue<std::string>& chunks);
  void Drop(std::map<uint32_t, Txn>::iterator it);

  const std::string dir_;
  std::map<uint32_t, Txn> txns_;
};

}  // namespace faucet
