// The data model: a Change is one row event; values keep the source's own text form plus a
// logical type, so that a Postgres -> Postgres mirror moves text straight into COPY and no JSON
// is built on the hot path. Sinks render values for their target.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace faucet {

// Logical type of a column: how a sink renders the source's text (JSON number, string, ...).
enum class ValueType : uint8_t {
  kBool,
  kInt,      // int2/4/8, tinyint...bigint: rendered as a JSON number
  kFloat,    // float4/8: a JSON number, or "NaN"/"Infinity"/"-Infinity" as strings
  kNumeric,  // arbitrary precision: rendered as a JSON number when finite
  kText,
  kBytes,  // text form is Postgres hex ("\x0a0b"); rendered base64
  kJson,   // json/jsonb: embedded as JSON
  kDate,
  kTime,
  kTimestamp,
  kTimestampTz,
  kInterval,
  kUuid,
  kArray,
  kOther,  // enums, domains over unknown types, ranges, composites: rendered as text
};

struct Column {
  std::string name;
  ValueType type = ValueType::kText;
  uint32_t type_oid = 0;       // the source's own type id (Postgres OID); 0 when none
  int32_t type_modifier = -1;  // Postgres atttypmod; -1 when none
  bool key = false;            // part of the replica identity / primary key
  // The declared bound of a source without Postgres OIDs: bits of an integer or float (an
  // unsigned integer counts one more: it fits a signed one that wide), characters of a
  // CHAR/VARCHAR; 0 when unbounded, unknown, or given by type_oid/type_modifier instead.
  uint32_t width = 0;
  // The type was guessed from a value, not declared (JSON read back from Kafka without a
  // schema): it says how to render the value, not what the column holds, so schema drift does
  // not judge it.
  bool type_inferred = false;

  bool operator==(const Column&) const = default;
};

// A table as the source describes it. Immutable once published: a schema change produces a new
// Relation, and Changes already decoded keep pointing at the one they were decoded with.
struct Relation {
  uint32_t id = 0;  // the source's relation id (Postgres OID); 0 when none
  std::string schema;
  std::string name;
  std::vector<Column> columns;
  // A binlog source's file base name ("binlog"): its changes' commit_position is
  // (file number << 32) | offset. Empty for a Postgres source (an LSN).
  std::string binlog_base;

  // Index of the column named `name`, or -1.
  int FindColumn(const std::string& column_name) const;

  bool operator==(const Relation&) const = default;
};

using RelationPtr = std::shared_ptr<const Relation>;

// A cell is null, a value in text form, or a TOASTed value the source did not send because the
// update did not change it. kUnchangedToast is never NULL: a sink must leave the destination's
// value as it is.
enum class CellState : uint8_t { kNull, kValue, kUnchangedToast };

struct Cell {
  CellState state = CellState::kNull;
  std::string text;

  Cell() = default;
  // Builds the text from its bytes in place: `row.emplace_back(CellState::kValue, bytes)` copies
  // them once, where pushing a built Cell copies a short (SSO) value again on every move.
  Cell(CellState s, std::string_view t) : state(s), text(t) {}

  static Cell Null() { return {}; }
  static Cell Value(std::string t) {
    Cell c;
    c.state = CellState::kValue;
    c.text = std::move(t);
    return c;
  }
  static Cell UnchangedToast() { return {CellState::kUnchangedToast, {}}; }

  bool operator==(const Cell&) const = default;
};

// Cells in the order of Relation::columns.
using Row = std::vector<Cell>;

// True when a column of `relation` that `is_key(column)` selects differs between `before` and
// `after` (an update that moves the row to another key).
template <class IsKey>
bool KeyChanged(const Relation& relation, const Row& before, const Row& after, IsKey is_key) {
  for (size_t i = 0; i < relation.columns.size() && i < before.size() && i < after.size(); ++i) {
    if (is_key(relation.columns[i]) && !(before[i] == after[i])) return true;
  }
  return false;
}

enum class ChangeOp : uint8_t {
  kInsert,    // "c"
  kUpdate,    // "u"
  kDelete,    // "d"
  kRead,      // "r": a row read by a query or snapshot source, not a change event
  kTruncate,  // "t"
};

// Every ChangeOp, in enum order: a ChangeOp indexes arrays of kChangeOps.size().
inline constexpr std::array<ChangeOp, 5> kChangeOps = {
    ChangeOp::kInsert, ChangeOp::kUpdate, ChangeOp::kDelete, ChangeOp::kRead, ChangeOp::kTruncate};

// One-letter code used in envelopes: c, u, d, r, t.
char ChangeOpCode(ChangeOp op);
// Its long name, as the reference's Postgres envelopes and the metrics spell it: insert, update,
// delete, read, truncate.
const char* ChangeOpName(ChangeOp op);
// The ChangeOp that `text` names by its code or its long name ("d" or "delete"); none for
// anything else.
std::optional<ChangeOp> ParseChangeOp(std::string_view text);

// Where a binlog source's transaction came from, shared by its changes: its GTID (MariaDB
// "domain-server-seq", MySQL "uuid:n"; "" when the server logged none) and the server_id of
// the server that wrote it.
struct SourceTxn {
  std::string gtid;
  uint32_t server_id = 0;
};

struct Change {
  ChangeOp op = ChangeOp::kRead;
  RelationPtr relation;
  std::optional<Row> before;
  std::optional<Row> after;
  int64_t commit_time_us = 0;    // commit timestamp, microseconds since the Unix epoch; 0 if none
  uint64_t commit_position = 0;  // source position of the commit (Postgres: commit LSN)
  uint32_t ordinal = 0;          // position within the transaction
  std::shared_ptr<const SourceTxn> txn;  // a binlog source's transaction; null for Postgres

  // Approximate heap size, for memory budgets.
  size_t ApproxBytes() const;
};

}  // namespace faucet
