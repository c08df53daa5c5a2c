// PgoutputDecoder: turns the pgoutput message stream of one replication connection into
// Changes and transaction boundaries, enforcing the message flow (Begin ... Commit; Stream
// Start ... Stop blocks; Stream Commit/Abort outside them) and keeping the relation map.
//
// Every violation — an unknown or malformed message, a tuple whose arity differs from its
// relation, an unknown relation id, a Commit outside a transaction, a stream segment of a
// transaction whose start was never seen — is a typed error (kDataLoss; kInternal for a binary
// cell or misuse), never a silent drop. After an error the decoder's state is unspecified: the
// caller ends the run and the next run replays from the last persisted bookmark.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/change.h"
#include "core/lsn.h"
#include "core/status.h"
#include "sources/postgres/pgoutput.h"
#include "sources/postgres/stream_buffer.h"

namespace faucet::postgres {

// A change, or the end of the transaction the changes before it belong to.
struct TxnEvent {
  enum class Kind { kChange, kCommit };
  Kind kind = Kind::kChange;
  Change change;   // kChange
  Lsn commit_lsn;  // kCommit
  Lsn end_lsn;     // kCommit: the resume position after this transaction
};

struct DecoderOptions {
  size_t stream_memory_bytes = 16 << 20;  // see StreamBuffer
  std::string spill_dir;
};

class PgoutputDecoder {
 public:
  explicit PgoutputDecoder(DecoderOptions options = {});

  // Decodes one message, appending to `out` the changes it yields (a Truncate yields one per
  // relation) and, for a Commit, the kCommit event. Changes carry the relation they were
  // decoded with: a later Relation message for the same id replaces the map entry, not them.
  //
  // Messages inside a Stream Start/Stop block are only checked and buffered. A Stream Commit
  // yields nothing here but makes replaying() true: the transaction may be larger than memory,
  // so its events come from Replay, in slices. REQUIRES: !replaying().
  Status Decode(std::string_view message, std::vector<TxnEvent>& out);

  // True from a Stream Commit until Replay has produced that transaction's kCommit.
  bool replaying() const { return replay_ != nullptr; }

  // Appends the next events of the committed streamed transaction: at most `max_changes`
  // changes, followed by its kCommit once the last change is out. REQUIRES: replaying().
  Status Replay(size_t max_changes, std::vector<TxnEvent>& out);

  // True when the next message may not start a new transaction: between Begin and Commit,
  // inside a Stream Start/Stop block, or while replaying.
  bool in_transaction() const { return txn_.has_value() || stream_xid_.has_value() || replaying(); }

  // Streamed transactions whose outcome the server has not sent yet.
  size_t open_streams() const { return streams_.open_count(); }
  const StreamBuffer& stream_buffer() const { return streams_; }

  // The relation with id `oid`, or null.
  RelationPtr FindRelation(uint32_t oid) const;

 private:
  struct Txn {
    Lsn commit_lsn;
    int64_t commit_time_us = 0;  // Unix epoch
    uint32_t ordinal = 0;
  };

  // Applies a schema message or converts a data message of transaction `txn` into events.
  Status Apply(PgoutputMessage& message, Txn& txn, std::vector<TxnEvent>& out);
  Result<RelationPtr> Lookup(uint32_t relation_id, const char* what) const;
  Status Emit(Txn& txn, ChangeOp op, RelationPtr relation, std::optional<Row> before,
              std::optional<Row> after, std::vector<TxnEvent>& out);

  std::unordered_map<uint32_t, RelationPtr> relations_;
  std::optional<Txn> txn_;              // between Begin and Commit
  std::optional<uint32_t> stream_xid_;  // inside a Stream Start/Stop block
  StreamBuffer streams_;

  // The committed streamed transaction being replayed.
  std::unique_ptr<BufferedStream> replay_;
  Txn replay_txn_;
  Lsn replay_end_lsn_;
};

}  // namespace faucet::postgres
