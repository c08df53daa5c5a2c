// MessageDecoder: a Kafka message that faucet's kafka sink (or Debezium) wrote becomes a Change
// again, the inverse of AppendChangeJson and AppendDebeziumJson (core/json_render.h), so that a
// keyed SQL sink can apply a topic.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "core/change.h"
#include "core/status.h"

namespace faucet::kafka {

// How a topic's message values are written.
enum class ValueFormat {
  kJson,          // AppendChangeJson's: a change envelope, or a flat row
  kDebeziumJson,  // Debezium's JsonConverter, with schemas.enable true or false
};

// value_format json:
//   - An object with an "op" member and a "before" or "after" member is a change envelope:
//     op "c"/"u"/"d"/"t"/"r" (or "insert"/"update"/"delete"/"truncate"/"read"); schema from
//     "schema"
//     ("" when absent); table from "table" (the topic when absent); commit_time_us from "ts_ms"
//     (a number of milliseconds, or null); commit_position from "lsn" when it is an "X/Y" string
//     (0 for any other shape, e.g. a binlog's {"file","pos"}); rows from "before" and "after"
//     (an object, or null or absent for none).
//   - Any other object is a flat row, what a query or snapshot source or cdc_unwrap writes:
//     op kRead, the row in `after`, schema "", table the topic.
//   - A row's members are its columns: null is Cell::Null(); true/false "t"/"f" (kBool); a
//     number its exact digits (kNumeric whatever its shape, so that a column's type does not
//     change from message to message); a string its text (kText); an object or array its
//     compact JSON (kJson). The columns that member "__unchanged_toast__" (an array of names)
//     lists are Cell::UnchangedToast(). These types are guessed from values, not declared:
//     the columns are Column::type_inferred (schema drift does not judge them).
//   - Key columns: the member names of the message key when it is a JSON object ({"id":42});
//     none for any other key.
//
// value_format debezium_json, with schemas ({"schema":..,"payload":..}) or without (the payload
// alone), for both key and value:
//   - op "c"/"u"/"d"/"r"/"t"; schema from source.schema, else source.db (MySQL); table from
//     source.table, else the topic; commit_time_us from source.ts_ms; commit_position from
//     source.lsn when it is a number.
//   - With a schema, each column's type is its field's in the envelope's "after" (or "before")
//     struct: int8..int64 kInt; float, float32, float64, double kFloat; boolean kBool ("t"/"f");
//     string kText, or kJson, kUuid, kTimestampTz, kTime for logical types io.debezium.data.Json,
//     .Uuid, io.debezium.time.ZonedTimestamp, .ZonedTime; bytes kBytes (base64 becomes Postgres
//     hex text "\x0a0b"). Decimal (org.apache.kafka.connect.data.Decimal) and
//     io.debezium.data.VariableScaleDecimal become kNumeric decimal text; io.debezium.time.Date
//     (days) kDate "YYYY-MM-DD"; .Timestamp (ms), .MicroTimestamp, .NanoTimestamp kTimestamp
//     "YYYY-MM-DD HH:MM:SS[.ffffff]"; .Time (ms), .MicroTime, .NanoTime kTime "HH:MM:SS[.ffffff]"
//     (Kafka Connect's own Date, Time and Timestamp likewise); dates before 1 AD end in " BC",
//     as Postgres writes them. Columns of other types, or missing from the schema, are read as
//     without a schema.
//   - Without a schema, values are read as in value_format json.
//   - Debezium's placeholder "__debezium_unavailable_value" (for bytes, its base64) is
//     Cell::UnchangedToast().
//   - Key columns: the member names of the key's payload object.
//
// Both formats: numbers keep their exact text; one beyond a double's range (309 integer digits
// or more, which RapidJSON's reader refuses) is an error, never a rounded value. The relation's
// columns are the union of the before and after rows' members, in order of first appearance
// (after's first); each row holds one cell per column, Null where it lacks the column. A
// column's type without a schema is its first non-null value's (kText when it has none). Key
// names that are not columns are ignored. One RelationPtr is returned for every message of one
// shape (schema, table, column names, types and key flags), so that a sink checks each shape
// against its destination once; Relation::id is 0.
//
// Not thread-safe: one decoder per consuming thread.
class MessageDecoder {
 public:
  explicit MessageDecoder(ValueFormat format);
  ~MessageDecoder();
  MessageDecoder(MessageDecoder&&) noexcept;
  MessageDecoder& operator=(MessageDecoder&&) noexcept;

  // One message of `topic`; `key` and `value` are nullopt when the message has none. A message
  // without a value (a tombstone: compaction's marker after a delete) decodes to nullopt, as
  // there is nothing to apply. Errors are kInvalidArgument saying what is wrong with the message
  // (not JSON: RapidJSON's error and the byte offset; not an object; an unknown op; a row that
  // is not an object; a value its schema type cannot hold), without the topic, partition or
  // offset: the caller prefixes those. Never crashes on any input.
  Result<std::optional<Change>> Decode(std::string_view topic, std::optional<std::string_view> key,
                                       std::optional<std::string_view> value);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace faucet::kafka
