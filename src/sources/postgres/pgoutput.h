// Parsing of single pgoutput messages: the payload of one XLogData of a logical replication
// stream started with the pgoutput plugin, protocol versions 1 and 2. Formats: PostgreSQL docs,
// "Logical Replication Message Formats" (protocol-logicalrep-message-formats.html).
//
// This layer is stateless: it checks that a message is well formed and nothing more. What a
// message means in the flow of a stream (is there an open transaction, which relation is id N)
// is PgoutputDecoder's job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/change.h"
#include "core/lsn.h"
#include "core/status.h"

namespace faucet::postgres {

// Timestamps on the wire are microseconds since the Postgres epoch, 2000-01-01 00:00 UTC.
inline constexpr int64_t kPostgresEpochUnixMicros = 946'684'800'000'000;

struct BeginMessage {
  Lsn final_lsn;  // the LSN of the commit record
  int64_t commit_time = 0;
  uint32_t xid = 0;
};

struct CommitMessage {
  Lsn commit_lsn;
  Lsn end_lsn;  // just past the commit record: where a resumed stream continues
  int64_t commit_time = 0;
};

struct OriginMessage {
  Lsn commit_lsn;
  std::string name;
};

// In the messages below, `xid` is present only inside a Stream Start/Stop block (protocol 2):
// there it names the (sub)transaction the message belongs to. Elsewhere it is 0.

struct RelationMessage {
  uint32_t xid = 0;
  char replica_identity = 'd';  // d(efault), n(othing), f(ull), i(ndex)
  Relation relation;            // columns typed with ValueTypeForOid
};

struct TypeMessage {
  uint32_t xid = 0;
  uint32_t oid = 0;
  std::string schema;
  std::string name;
};

struct InsertMessage {
  uint32_t xid = 0;
  uint32_t relation_id = 0;
  Row new_tuple;
};

struct UpdateMessage {
  uint32_t xid = 0;
  uint32_t relation_id = 0;
  // 'K': the old replica-identity key (other columns null), 'O': the whole old row (REPLICA
  // IDENTITY FULL); absent when the key did not change under DEFAULT/INDEX identity.
  std::optional<Row> old_tuple;
  char old_kind = 0;
  Row new_tuple;
};

struct DeleteMessage {
  uint32_t xid = 0;
  uint32_t relation_id = 0;
  char old_kind = 'K';  // 'K' or 'O', as for UpdateMessage
  Row old_tuple;
};

struct TruncateMessage {
  uint32_t xid = 0;
  uint8_t options = 0;  // 1 CASCADE, 2 RESTART IDENTITY
  std::vector<uint32_t> relation_ids;
};

// pg_logical_emit_message().
struct LogicalMessage {
  uint32_t xid = 0;
  bool transactional = false;
  Lsn lsn;
  std::string prefix;
  std::string content;
};

struct StreamStartMessage {
  uint32_t xid = 0;  // the top-level transaction
  bool first_segment = false;
};

struct StreamStopMessage {};

struct StreamCommitMessage {
  uint32_t xid = 0;
  Lsn commit_lsn;
  Lsn end_lsn;
  int64_t commit_time = 0;
};

// Aborts the streamed transaction `xid` when subxid == xid, else only its subtransaction
// `subxid` (ROLLBACK TO SAVEPOINT).
struct StreamAbortMessage {
  uint32_t xid = 0;
  uint32_t subxid = 0;
};

using PgoutputMessage =
    std::variant<BeginMessage, CommitMessage, OriginMessage, RelationMessage, TypeMessage,
                 InsertMessage, UpdateMessage, DeleteMessage, TruncateMessage, LogicalMessage,
                 StreamStartMessage, StreamStopMessage, StreamCommitMessage, StreamAbortMessage>;

// Parses one message. `in_stream` says whether it arrived inside a Stream Start/Stop block,
// which adds the xid field to Relation, Type, Insert, Update, Delete, Truncate and Message.
//
// Tuple cells: 'n' -> Cell::Null(), 'u' (an unchanged TOASTed value the server did not send)
// -> Cell::UnchangedToast(), 't' -> a kValue cell of its text. A binary cell ('b') is kInternal:
// it only comes when binary mode is requested, which we never do.
//
// A short buffer, an unknown tag, an unknown tuple-cell kind, a length out of bounds or trailing
// bytes are kDataLoss naming the message and the byte offset. Never reads outside `data`.
Result<PgoutputMessage> ParsePgoutputMessage(std::string_view data, bool in_stream);

// The same checks as ParsePgoutputMessage, with the same errors, without copying tuple values:
// the rows of an Insert, Update or Delete come back empty (every other field is set). For
// messages that are only checked now and parsed again later (streamed transactions).
Result<PgoutputMessage> CheckPgoutputMessage(std::string_view data, bool in_stream);

// The message's name for error messages, from its tag byte ("Insert", "Stream Commit", ...).
std::string PgoutputMessageName(char tag);

}  // namespace faucet::postgres
