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
#include <map>
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

// A change, or the end of the transaction the changes before it belong to; when staging
// (set_staging), also the steps of a streamed transaction whose outcome is not known yet.
struct TxnEvent {
  enum class Kind {
    kChange,
    kCommit,
    kStagedChange,  // `change` of subtransaction `subxid` of streamed transaction `xid`,
                    // without its commit position and time (0)
    kStagedAbort,   // subtransaction `subxid` of `xid` (all of it when subxid == xid) rolled back
    kStagedCommit,  // `xid` committed at commit_lsn, commit_time_us; end_lsn as for kCommit
  };
  Kind kind = Kind::kChange;
  Change change;               // kChange, kStagedChange
  Lsn commit_lsn;              // kCommit, kStagedCommit
  Lsn end_lsn;                 // kCommit, kStagedCommit: the resume position after this transaction
  uint32_t xid = 0;            // the kStaged* kinds
  uint32_t subxid = 0;         // kStagedChange, kStagedAbort
  int64_t commit_time_us = 0;  // kStagedCommit (Unix epoch)
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
  //
  // When staging, a streamed transaction is not buffered: its changes come out as they arrive
  // (kStagedChange, decoded with the schema its own Relation messages gave), then a Stream
  // Abort yields kStagedAbort and a Stream Commit kStagedCommit, and nothing replays.
  Status Decode(std::string_view message, std::vector<TxnEvent>& out);

  // Stages streamed transactions from the next one to start on. Called before the first Decode.
  void set_staging(bool staging) { staging_ = staging; }

  // True from a Stream Commit until Replay has produced that transaction's kCommit.
  bool replaying() const { return replay_ != nullptr; }

  // Appends the next events of the committed streamed transaction: at most `max_changes`
  // changes, followed by its kCommit once the last change is out. REQUIRES: replaying().
  Status Replay(size_t max_changes, std::vector<TxnEvent>& out);

  // True when the next message may not start a new transaction: between Begin and Commit,
  // inside a Stream Start/Stop block, or while replaying.
  bool in_transaction() const { return txn_.has_value() || stream_xid_.has_value() || replaying(); }

  // Streamed transactions whose outcome the server has not sent yet.
  size_t open_streams() const { return streams_.open_count() + staged_.size(); }
  const StreamBuffer& stream_buffer() const { return streams_; }

  // The relation with id `oid`, or null.
  RelationPtr FindRelation(uint32_t oid) const;

 private:
  struct Txn {
    Lsn commit_lsn;
    int64_t commit_time_us = 0;  // Unix epoch
    uint32_t ordinal = 0;
  };

  // A streamed transaction being staged: its changes' ordinals, and the relations its own
  // Relation messages described, which apply to other transactions only once it commits.
  struct StagedTxn {
    Txn txn;
    std::unordered_map<uint32_t, RelationPtr> relations;
  };

  // Applies a schema message or converts a data message of transaction `txn` into events.
  Status Apply(PgoutputMessage& message, Txn& txn, std::vector<TxnEvent>& out);
  // Applies a schema or data message of subtransaction `subxid` of staged transaction `xid`.
  Status Stage(PgoutputMessage& message, uint32_t xid, uint32_t subxid, std::vector<TxnEvent>& out);
  Result<RelationPtr> Lookup(uint32_t relation_id, const char* what) const;
  Status Emit(Txn& txn, ChangeOp op, RelationPtr relation, std::optional<Row> before,
              std::optional<Row> after, std::vector<TxnEvent>& out);

  std::unordered_map<uint32_t, RelationPtr> relations_;
  // While Stage applies a message: the staged transaction's relations, looked up first.
  const std::unordered_map<uint32_t, RelationPtr>* overlay_ = nullptr;
  bool staging_ = false;
  std::map<uint32_t, StagedTxn> staged_;
  std::optional<Txn> txn_;              // between Begin and Commit
  std::optional<uint32_t> stream_xid_;  // inside a Stream Start/Stop block
  StreamBuffer streams_;

  // The committed streamed transaction being replayed.
  std::unique_ptr<BufferedStream> replay_;
  Txn replay_txn_;
  Lsn replay_end_lsn_;
};

}  // namespace faucet::postgres
