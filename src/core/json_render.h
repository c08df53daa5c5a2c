// JSON rendering of Changes, for sinks that write JSON lines: one object per change, in the
// envelope shape of spec/reference-faucet-stream.md §2.1, with each value converted from the
// source's text form according to its ValueType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/change.h"

namespace faucet {

// Appends `change` to `out` as one JSON object on one line, without a trailing newline. It
// appends rather than returns so that a whole page renders into one reused buffer.
//
// op kRead (a row of a query, snapshot or generator source) renders its `after` row itself:
//   {"col": value, ...}
// every other op renders the change envelope:
//   {"op":"c|u|d|t","schema":..,"table":..,"lsn":"X/Y","ts_ms":..,"before":row|null,
//    "after":row|null}
// where lsn is the commit position as an Lsn, or for a binlog source (Relation::binlog_base
// set) {"file":"<base>.NNNNNN","pos":N}, the binlog position where the change's transaction
// starts, and ts_ms the commit time in milliseconds, null when the source gave none
// (commit_time_us == 0). A binlog source's change (Change::txn set) also carries its
// transaction's origin after lsn: "gtid":"0-1-42" (null when the server logged none) and
// "server_id":N.
//
// Values, from the source's text form:
//   - a null cell: null;
//   - kBool: true/false ("t"/"f", "true"/"false", "1"/"0");
//   - kInt, kFloat, kNumeric: a JSON number holding the source's digits verbatim, so that no
//     precision is lost; text that is not a JSON number ("NaN", "Infinity", "-Infinity") is
//     written as a string;
//   - kJson: embedded as JSON; line breaks outside strings become spaces, keeping one line;
//   - kBytes (Postgres hex "\x0a0b"): base64 string;
//   - kArray: a one-dimensional Postgres array literal becomes a JSON array whose elements are
//     typed when Column::type_oid is a Postgres array of bool, bytea, int2/4/8, float4/8,
//     numeric, json or jsonb, and strings otherwise; multi-dimensional arrays or arrays with
//     explicit bounds are written as their text;
//   - every other type, and any text that does not parse as its type: a JSON string.
// Unchanged TOAST cells are left out of their row object and their column names listed in its
// "__unchanged_toast__" array: the value is unknown, and writing null would erase it downstream.
//
// REQUIRES: change.relation is set; rows hold one cell per relation column (extra cells are
// ignored); text is UTF-8; kJson text is valid JSON (Postgres guarantees it).
// Thread-safe.
void AppendChangeJson(const Change& change, std::string& out);

// For a change whose commit is not known yet (staged: core/page.h): appends what
// AppendChangeJson would without the commit fields, and returns where in the appended text
// (an offset from its start) AppendCommitJson's fields belong; with them inserted there the
// line is AppendChangeJson's for the committed change. REQUIRES: change.op != kRead, and
// change is of a Postgres source (no binlog_base, no txn).
size_t AppendUncommittedChangeJson(const Change& change, std::string& out);

// Appends the commit fields of a Postgres change envelope, `,"lsn":"X/Y","ts_ms":N` (ts_ms null
// when commit_time_us is 0), for a change committed at `commit_position`, `commit_time_us`.
void AppendCommitJson(uint64_t commit_position, int64_t commit_time_us, std::string& out);

// Appends `change` as Debezium's change event, the value Debezium's JsonConverter writes with
// schemas.enable=true, so consumers of Debezium's topics read it unchanged:
//   {"schema":{<the Envelope struct: before, after, source, op, ts_ms>},
//    "payload":{"before":row|null,"after":row|null,"source":{"version":"faucet",
//      "connector":"postgresql"|"mysql","name":<server>,"ts_ms":<commit ms>|null,
//      "snapshot":"true"|"false","db":..,"schema":..,"table":..,
//      Postgres: "lsn":<commit LSN as a number>; binlog: "file","pos","gtid","server_id"},
//      "op":"c"|"u"|"d"|"r"|"t","ts_ms":<now, ms>}}
// `server` is Debezium's topic.prefix (the schema names' first part,
// "<server>.<schema>.<table>.Value"). Values as AppendChangeJson's except where Debezium's
// types say otherwise: numeric and unsigned 64-bit integers are strings (Debezium's
// decimal.handling.mode=string), json is a string (io.debezium.data.Json), arrays are their
// source text, and a TOAST value the source did not send is "__debezium_unavailable_value"
// (Debezium's placeholder; its bytes for a bytea). Thread-safe.
void AppendDebeziumJson(const Change& change, const std::string& server, std::string& out);

// Appends the key `row` of relation `key` (its key columns) as Debezium's key:
// {"schema":{"type":"struct","name":"<server>.<schema>.<table>.Key",...},"payload":{..}}. The
// schema is rendered once per relation and server, not per key.
void AppendDebeziumKeyJson(const RelationPtr& key, const Row& row, const std::string& server,
                           std::string& out);

// Appends `s` as a JSON string literal, quotes included, escaped as every renderer here escapes
// (RapidJSON's Writer's escapes: '"', '\\' and control characters; UTF-8 as it is).
void AppendJsonString(std::string_view s, std::string& out);

// The boolean a source's text form spells ("t"/"f", "true"/"false", "1"/"0"), if any.
std::optional<bool> ParseBoolText(std::string_view text);

}  // namespace faucet
