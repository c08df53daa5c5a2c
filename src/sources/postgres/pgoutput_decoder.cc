#include "sources/postgres/pgoutput_decoder.h"

#include <type_traits>

namespace faucet::postgres {
namespace {

int64_t ToUnixMicros(int64_t postgres_micros) {
  // Unsigned, so that a corrupt timestamp near the int64 limit wraps instead of being undefined.
  return static_cast<int64_t>(static_cast<uint64_t>(postgres_micros) +
                              static_cast<uint64_t>(kPostgresEpochUnixMicros));
}

std::string Xid(uint32_t xid) { return std::to_string(xid); }

}  // namespace

PgoutputDecoder::PgoutputDecoder(DecoderOptions options)
    : streams_(options.stream_memory_bytes, std::move(options.spill_dir)) {}

RelationPtr PgoutputDecoder::FindRelation(uint32_t oid) const {
  auto it = relations_.find(oid);
  return it == relations_.end() ? nullptr : it->second;
}

Result<RelationPtr> PgoutputDecoder::Lookup(uint32_t relation_id, const char* what) const {
  RelationPtr r;
  if (overlay_ != nullptr) {
    auto it = overlay_->find(relation_id);
    if (it != overlay_->end()) r = it->second;
  }
  if (r == nullptr) r = FindRelation(relation_id);
  if (r == nullptr) {
    return DataLoss(std::string("pgoutput: ") + what + " for relation id " +
                    std::to_string(relation_id) + " that no Relation message described");
  }
  return r;
}

Status PgoutputDecoder::Emit(Txn& txn, ChangeOp op, RelationPtr relation, std::optional<Row> before,
                             std::optional<Row> after, std::vector<TxnEvent>& out) {
  const size_t arity = relation->columns.size();
  for (const std::optional<Row>* row : {&before, &after}) {
    if (*row && (*row)->size() != arity) {
      return DataLoss("pgoutput: " + std::string(1, ChangeOpCode(op)) + " on " + relation->schema +
                      "." + relation->name + " carries a tuple of " +
                      std::to_string((*row)->size()) + " columns; the relation has " +
                      std::to_string(arity));
    }
  }
  Change& c = out.emplace_back().change;  // in place: this runs once per row
  c.op = op;
  c.relation = std::move(relation);
  c.before = std::move(before);
  c.after = std::move(after);
  c.commit_time_us = txn.commit_time_us;
  c.commit_position = txn.commit_lsn.value();
  c.ordinal = txn.ordinal++;
  return Status::Ok();
}

Status PgoutputDecoder::Apply(PgoutputMessage& message, Txn& txn, std::vector<TxnEvent>& out) {
  if (auto* m = std::get_if<RelationMessage>(&message)) {
    // A new object, never a mutation: Changes decoded earlier keep the columns they had. The
    // server sends a relation again (every streamed transaction, every session) without a
    // change: the object stays the same, so that per-relation caches downstream stay small.
    RelationPtr& known = relations_[m->relation.id];
    if (known == nullptr || !(*known == m->relation)) {
      known = std::make_shared<const Relation>(std::move(m->relation));
    }
    return Status::Ok();
  }
  if (std::holds_alternative<TypeMessage>(message) ||
      std::holds_alternative<OriginMessage>(message) ||
      std::holds_alternative<LogicalMessage>(message)) {
    // No change event: types are described by their OID in Relation messages, origins and
    // pg_logical_emit_message() payloads are not row changes.
    return Status::Ok();
  }
  if (auto* m = std::get_if<InsertMessage>(&message)) {
    ASSIGN_OR_RETURN(RelationPtr rel, Lookup(m->relation_id, "Insert"));
    return Emit(txn, ChangeOp::kInsert, std::move(rel), std::nullopt, std::move(m->new_tuple), out);
  }
  if (auto* m = std::get_if<UpdateMessage>(&message)) {
    ASSIGN_OR_RETURN(RelationPtr rel, Lookup(m->relation_id, "Update"));
    return Emit(txn, ChangeOp::kUpdate, std::move(rel), std::move(m->old_tuple),
                std::move(m->new_tuple), out);
  }
  if (auto* m = std::get_if<DeleteMessage>(&message)) {
    ASSIGN_OR_RETURN(RelationPtr rel, Lookup(m->relation_id, "Delete"));
    return Emit(txn, ChangeOp::kDelete, std::move(rel), std::move(m->old_tuple), std::nullopt, out);
  }
  if (auto* m = std::get_if<TruncateMessage>(&message)) {
    for (uint32_t id : m->relation_ids) {
      ASSIGN_OR_RETURN(RelationPtr rel, Lookup(id, "Truncate"));
      RETURN_IF_ERROR(
          Emit(txn, ChangeOp::kTruncate, std::move(rel), std::nullopt, std::nullopt, out));
    }
    return Status::Ok();
  }
  return Internal("pgoutput: transaction-control message where a change was expected");
}

Status PgoutputDecoder::Stage(PgoutputMessage& message, uint32_t xid, uint32_t subxid,
                              std::vector<TxnEvent>& out) {
  StagedTxn& staged = staged_.at(xid);
  if (auto* m = std::get_if<RelationMessage>(&message)) {
    // Applies to this transaction only until it commits (another one may still see the old
    // schema). The same object as the known one when nothing changed, as Apply keeps it.
    RelationPtr& known = staged.relations[m->relation.id];
    if (known == nullptr || !(*known == m->relation)) {
      RelationPtr global = FindRelation(m->relation.id);
      known = global != nullptr && *global == m->relation
                  ? global
                  : std::make_shared<const Relation>(std::move(m->relation));
    }
    return Status::Ok();
  }
  const size_t first = out.size();
  overlay_ = &staged.relations;
  Status applied = Apply(message, staged.txn, out);
  overlay_ = nullptr;
  RETURN_IF_ERROR(applied);
  for (size_t i = first; i < out.size(); ++i) {
    out[i].kind = TxnEvent::Kind::kStagedChange;
    out[i].xid = xid;
    out[i].subxid = subxid;
  }
  return Status::Ok();
}

Status PgoutputDecoder::Decode(std::string_view bytes, std::vector<TxnEvent>& out) {
  if (replaying()) return Internal("pgoutput: Decode called while a streamed transaction replays");
  // Inside a stream block that is buffered the message is only checked: it is parsed again at
  // replay.
  const bool staged = stream_xid_ && staged_.count(*stream_xid_) != 0;
  ASSIGN_OR_RETURN(PgoutputMessage message, !stream_xid_ ? ParsePgoutputMessage(bytes, false)
                                            : staged     ? ParsePgoutputMessage(bytes, true)
                                                         : CheckPgoutputMessage(bytes, true));
  auto name = [&] { return PgoutputMessageName(bytes[0]); };

  if (stream_xid_) {
    // Inside a Stream Start/Stop block: schema and data messages of the streamed transaction
    // wait for its outcome; only Stream Stop may end the block.
    if (std::holds_alternative<StreamStopMessage>(message)) {
      stream_xid_.reset();
      return Status::Ok();
    }
    uint32_t subxid = 0;
    bool buffered = std::visit(
        [&](const auto& m) {
          using M = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<M, RelationMessage> || std::is_same_v<M, TypeMessage> ||
                        std::is_same_v<M, InsertMessage> || std::is_same_v<M, UpdateMessage> ||
                        std::is_same_v<M, DeleteMessage> || std::is_same_v<M, TruncateMessage>) {
            subxid = m.xid;
            return true;
          }
          return false;
        },
        message);
    if (buffered) {
      return staged ? Stage(message, *stream_xid_, subxid, out)
                    : streams_.Append(*stream_xid_, subxid, bytes);
    }
    // An Origin follows Stream Start for a transaction replicated from elsewhere; neither it
    // nor a logical message is a row change.
    if (std::holds_alternative<LogicalMessage>(message) ||
        std::holds_alternative<OriginMessage>(message)) {
      return Status::Ok();
    }
    return DataLoss("pgoutput: " + name() + " message inside the stream block of transaction " +
                    Xid(*stream_xid_));
  }

  if (auto* m = std::get_if<BeginMessage>(&message)) {
    if (txn_) {
      return DataLoss("pgoutput: Begin of transaction " + Xid(m->xid) +
                      " inside another transaction");
    }
    txn_ = Txn{m->final_lsn, ToUnixMicros(m->commit_time), 0};
    return Status::Ok();
  }
  if (auto* m = std::get_if<CommitMessage>(&message)) {
    if (!txn_) {
      return DataLoss("pgoutput: Commit at " + m->commit_lsn.ToString() + " outside a transaction");
    }
    if (m->commit_lsn != txn_->commit_lsn) {
      return DataLoss("pgoutput: Commit at " + m->commit_lsn.ToString() +
                      " ends a transaction that Begin announced at " + txn_->commit_lsn.ToString());
    }
    TxnEvent e;
    e.kind = TxnEvent::Kind::kCommit;
    e.commit_lsn = m->commit_lsn;
    e.end_lsn = m->end_lsn;
    out.push_back(std::move(e));
    txn_.reset();
    return Status::Ok();
  }
  if (auto* m = std::get_if<StreamStartMessage>(&message)) {
    if (txn_) return DataLoss("pgoutput: Stream Start inside a transaction");
    const bool open = streams_.Contains(m->xid) || staged_.count(m->xid) != 0;
    if (m->first_segment) {
      if (open) {
        return DataLoss("pgoutput: first stream segment of transaction " + Xid(m->xid) +
                        " arrived twice");
      }
      if (staging_) {
        staged_.emplace(m->xid, StagedTxn{});
      } else {
        streams_.Open(m->xid);
      }
    } else if (!open) {
      return DataLoss("pgoutput: stream segment of transaction " + Xid(m->xid) +
                      " whose first segment this connection never received");
    }
    stream_xid_ = m->xid;
    return Status::Ok();
  }
  if (std::holds_alternative<StreamStopMessage>(message)) {
    return DataLoss("pgoutput: Stream Stop outside a stream block");
  }
  if (auto* m = std::get_if<StreamCommitMessage>(&message)) {
    if (txn_) return DataLoss("pgoutput: Stream Commit inside a transaction");
    if (auto it = staged_.find(m->xid); it != staged_.end()) {
      // Its schema messages now describe the relations for every later transaction, as a
      // replay's would.
      for (auto& [id, relation] : it->second.relations) relations_[id] = std::move(relation);
      staged_.erase(it);
      TxnEvent e;
      e.kind = TxnEvent::Kind::kStagedCommit;
      e.xid = m->xid;
      e.commit_lsn = m->commit_lsn;
      e.end_lsn = m->end_lsn;
      e.commit_time_us = ToUnixMicros(m->commit_time);
      out.push_back(std::move(e));
      return Status::Ok();
    }
    if (!streams_.Contains(m->xid)) {
      return DataLoss("pgoutput: Stream Commit of transaction " + Xid(m->xid) +
                      " that was never streamed");
    }
    replay_ = streams_.Take(m->xid);
    replay_txn_ = Txn{m->commit_lsn, ToUnixMicros(m->commit_time), 0};
    replay_end_lsn_ = m->end_lsn;
    return Status::Ok();
  }
  if (auto* m = std::get_if<StreamAbortMessage>(&message)) {
    if (txn_) return DataLoss("pgoutput: Stream Abort inside a transaction");
    if (auto it = staged_.find(m->xid); it != staged_.end()) {
      if (m->subxid == m->xid) staged_.erase(it);
      TxnEvent e;
      e.kind = TxnEvent::Kind::kStagedAbort;
      e.xid = m->xid;
      e.subxid = m->subxid;
      out.push_back(std::move(e));
      return Status::Ok();
    }
    streams_.Abort(m->xid, m->subxid);
    return Status::Ok();
  }
  if (std::holds_alternative<RelationMessage>(message) ||
      std::holds_alternative<TypeMessage>(message) ||
      std::holds_alternative<OriginMessage>(message) ||
      std::holds_alternative<LogicalMessage>(message)) {
    Txn none;
    return Apply(message, txn_ ? *txn_ : none, out);
  }
  if (!txn_) return DataLoss("pgoutput: " + name() + " outside a transaction");
  return Apply(message, *txn_, out);
}

Status PgoutputDecoder::Replay(size_t max_changes, std::vector<TxnEvent>& out) {
  if (!replaying()) return Internal("pgoutput: Replay without a committed streamed transaction");
  size_t produced = 0;
  std::string_view bytes;
  while (produced < max_changes) {
    ASSIGN_OR_RETURN(bool more, replay_->Next(bytes));
    if (!more) {
      TxnEvent e;
      e.kind = TxnEvent::Kind::kCommit;
      e.commit_lsn = replay_txn_.commit_lsn;
      e.end_lsn = replay_end_lsn_;
      out.push_back(std::move(e));
      replay_.reset();
      return Status::Ok();
    }
    // The buffered bytes were checked on arrival; parsing again is what keeps memory bounded.
    ASSIGN_OR_RETURN(PgoutputMessage message, ParsePgoutputMessage(bytes, /*in_stream=*/true));
    size_t before = out.size();
    RETURN_IF_ERROR(Apply(message, replay_txn_, out));
    produced += out.size() - before;
  }
  return Status::Ok();
}

}  // namespace faucet::postgres
