#include "sources/kafka/message_decoder.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json_render.h"

namespace faucet::kafka {
namespace {

// --- Helpers ------------------------------------------------------------------------------

Column Col(std::string name, ValueType type, uint32_t type_oid = 0, bool key = false) {
  Column c;
  c.name = std::move(name);
  c.type = type;
  c.type_oid = type_oid;
  c.key = key;
  return c;
}

RelationPtr RelationOf(std::vector<Column> columns) {
  auto r = std::make_shared<Relation>();
  r->schema = "public";
  r->name = "orders";
  r->columns = std::move(columns);
  return r;
}

// id bigint (the key), note text, price numeric, doc jsonb, flag bool, data bytea, uid uuid,
// f float8.
RelationPtr Orders() {
  return RelationOf({Col("id", ValueType::kInt, 20, true), Col("note", ValueType::kText, 25),
                     Col("price", ValueType::kNumeric, 1700), Col("doc", ValueType::kJson, 3802),
                     Col("flag", ValueType::kBool, 16), Col("data", ValueType::kBytes, 17),
                     Col("uid", ValueType::kUuid, 2950), Col("f", ValueType::kFloat, 701)});
}

constexpr char kNote[] = "a \"quoted\"\\ line\nnext\ttab \x01 é ✓";
constexpr char kPrice[] = "1234567890123456789012345678901234567890.0000000001";

Row OrdersRow(const std::string& id) {
  return {Cell::Value(id),
          Cell::Value(kNote),
          Cell::Value(kPrice),
          Cell::Value(R"({"a": [1, 2.50, "x"], "b": null})"),
          Cell::Value("t"),
          Cell::Value("\\x0a0bff"),
          Cell::Value("6f1c7a52-6a3b-4c3e-9d8e-3a2b1c0d9e8f"),
          Cell::Value("1.5")};
}

Change ChangeOf(ChangeOp op, RelationPtr relation, std::optional<Row> before,
                std::optional<Row> after) {
  Change c;
  c.op = op;
  c.relation = std::move(relation);
  c.before = std::move(before);
  c.after = std::move(after);
  c.commit_time_us = 1700000000123000;
  c.commit_position = 0x16B3748;
  return c;
}

std::string Json(const Change& change) {
  std::string out;
  AppendChangeJson(change, out);
  return out;
}

// Our json sink's key: the key columns as a flat row.
std::string JsonKey(const std::string& id) {
  Change key;
  key.relation = RelationOf({Col("id", ValueType::kInt, 20, true)});
  key.after = Row{Cell::Value(id)};
  return Json(key);
}

std::string Debezium(const Change& change) {
  std::string out;
  AppendDebeziumJson(change, "server", out);
  return out;
}

std::string DebeziumKey(const std::string& id) {
  std::string out;
  AppendDebeziumKeyJson(RelationOf({Col("id", ValueType::kInt, 20, true)}), {Cell::Value(id)},
                        "server", out);
  return out;
}

// Decodes a message that must hold a change.
std::optional<Change> DecodeChange(MessageDecoder& decoder, std::optional<std::string_view> key,
                                   std::string_view value, std::string_view topic = "topic") {
  Result<std::optional<Change>> decoded = decoder.Decode(topic, key, value);
  if (!decoded.ok()) {
    ADD_FAILURE() << decoded.status().ToString() << "\ndecoding " << value;
    return std::nullopt;
  }
  if (!decoded->has_value()) ADD_FAILURE() << "no change decoding " << value;
  return std::move(decoded).value();
}

// The cell of column `name` in `row`, which must hold one per column.
Cell CellOf(const Change& change, const std::optional<Row>& row, const std::string& name) {
  const int column = change.relation->FindColumn(name);
  if (column < 0 || !row || row->size() != change.relation->columns.size()) {
    ADD_FAILURE() << "no cell for column " << name;
    return {};
  }
  return (*row)[static_cast<size_t>(column)];
}

ValueType TypeOf(const Change& change, const std::string& name) {
  const int column = change.relation->FindColumn(name);
  EXPECT_GE(column, 0) << name;
  return column < 0 ? ValueType::kOther
                    : change.relation->columns[static_cast<size_t>(column)].type;
}

std::vector<std::string> KeyColumns(const Change& change) {
  std::vector<std::string> names;
  for (const Column& c : change.relation->columns) {
    if (c.key) names.push_back(c.name);
  }
  return names;
}

Status DecodeError(ValueFormat format, std::string_view value) {
  MessageDecoder decoder(format);
  Result<std::optional<Change>> decoded = decoder.Decode("topic", std::nullopt, value);
  return decoded.status();
}

// --- value_format json ----------------------------------------------------------------------

TEST(MessageDecoderJson, InsertRoundTripsWithKeyColumnsAndExactText) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::string key = JsonKey("42");
  const std::optional<Change> c = DecodeChange(
      decoder, key, Json(ChangeOf(ChangeOp::kInsert, Orders(), std::nullopt, OrdersRow("42"))));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kInsert);
  EXPECT_EQ(c->relation->schema, "public");
  EXPECT_EQ(c->relation->name, "orders");
  EXPECT_EQ(c->relation->id, 0u);
  EXPECT_EQ(KeyColumns(*c), std::vector<std::string>{"id"});
  EXPECT_EQ(c->commit_time_us, 1700000000123000);
  EXPECT_EQ(c->commit_position, 0x16B3748u);
  EXPECT_FALSE(c->before);
  EXPECT_EQ(CellOf(*c, c->after, "id"), Cell::Value("42"));
  EXPECT_EQ(CellOf(*c, c->after, "note"), Cell::Value(kNote));
  EXPECT_EQ(CellOf(*c, c->after, "price"), Cell::Value(kPrice));
  EXPECT_EQ(CellOf(*c, c->after, "doc"), Cell::Value(R"({"a":[1,2.50,"x"],"b":null})"));
  EXPECT_EQ(CellOf(*c, c->after, "flag"), Cell::Value("t"));
  EXPECT_EQ(CellOf(*c, c->after, "data"), Cell::Value("Cgv/"));  // base64: json has no bytes
  EXPECT_EQ(CellOf(*c, c->after, "f"), Cell::Value("1.5"));
  // Numbers are kNumeric whatever their shape, so that a column's type never flips.
  EXPECT_EQ(TypeOf(*c, "id"), ValueType::kNumeric);
  EXPECT_EQ(TypeOf(*c, "f"), ValueType::kNumeric);
  EXPECT_EQ(TypeOf(*c, "note"), ValueType::kText);
  EXPECT_EQ(TypeOf(*c, "doc"), ValueType::kJson);
  EXPECT_EQ(TypeOf(*c, "flag"), ValueType::kBool);
}

TEST(MessageDecoderJson, UpdateKeepsBeforeAndMarksUnchangedToast) {
  MessageDecoder decoder(ValueFormat::kJson);
  const RelationPtr r = RelationOf({Col("id", ValueType::kInt, 20, true),
                                    Col("big", ValueType::kText), Col("note", ValueType::kText)});
  const Change update =
      ChangeOf(ChangeOp::kUpdate, r, Row{Cell::Value("1"), Cell::Value("old"), Cell::Null()},
               Row{Cell::Value("1"), Cell::UnchangedToast(), Cell::Value("new")});
  const std::optional<Change> c = DecodeChange(decoder, JsonKey("1"), Json(update));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kUpdate);
  EXPECT_EQ(CellOf(*c, c->after, "id"), Cell::Value("1"));
  EXPECT_EQ(CellOf(*c, c->after, "big"), Cell::UnchangedToast());
  EXPECT_EQ(CellOf(*c, c->after, "note"), Cell::Value("new"));
  EXPECT_EQ(CellOf(*c, c->before, "big"), Cell::Value("old"));
  EXPECT_EQ(CellOf(*c, c->before, "note"), Cell::Null());
  EXPECT_EQ(TypeOf(*c, "big"), ValueType::kText);
}

TEST(MessageDecoderJson, DeleteHasOnlyBefore) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> c = DecodeChange(
      decoder, JsonKey("7"), Json(ChangeOf(ChangeOp::kDelete, Orders(), OrdersRow("7"), {})));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kDelete);
  EXPECT_FALSE(c->after);
  EXPECT_EQ(CellOf(*c, c->before, "id"), Cell::Value("7"));
  EXPECT_EQ(KeyColumns(*c), std::vector<std::string>{"id"});
}

TEST(MessageDecoderJson, TruncateHasNoRows) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> c =
      DecodeChange(decoder, std::nullopt, Json(ChangeOf(ChangeOp::kTruncate, Orders(), {}, {})));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kTruncate);
  EXPECT_EQ(c->relation->name, "orders");
  EXPECT_TRUE(c->relation->columns.empty());
  EXPECT_FALSE(c->before);
  EXPECT_FALSE(c->after);
}

TEST(MessageDecoderJson, FlatRowIsAReadOfTheTopicsTable) {
  MessageDecoder decoder(ValueFormat::kJson);
  Row row = OrdersRow("5");
  row[1] = Cell::Null();
  const std::optional<Change> c = DecodeChange(
      decoder, JsonKey("5"), Json(ChangeOf(ChangeOp::kRead, Orders(), {}, row)), "shop.orders");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kRead);
  EXPECT_EQ(c->relation->schema, "");
  EXPECT_EQ(c->relation->name, "shop.orders");
  EXPECT_EQ(c->commit_time_us, 0);
  EXPECT_FALSE(c->before);
  EXPECT_EQ(CellOf(*c, c->after, "id"), Cell::Value("5"));
  EXPECT_EQ(CellOf(*c, c->after, "note"), Cell::Null());
  EXPECT_EQ(TypeOf(*c, "note"), ValueType::kText);  // null everywhere
  EXPECT_EQ(CellOf(*c, c->after, "price"), Cell::Value(kPrice));
  EXPECT_EQ(KeyColumns(*c), std::vector<std::string>{"id"});
}

TEST(MessageDecoderJson, ReferenceSystemEnvelopeIsAccepted) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> c = DecodeChange(
      decoder, std::nullopt,
      R"({"op":"update","ts_ms":null,"schema":"shop","table":"items","lsn":{"file":"binlog.000001","pos":4},)"
      R"("before":null,"after":{"id":1,"gone":null}})");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kUpdate);
  EXPECT_EQ(c->relation->schema, "shop");
  EXPECT_EQ(c->relation->name, "items");
  EXPECT_EQ(c->commit_time_us, 0);
  EXPECT_EQ(c->commit_position, 0u);
  EXPECT_TRUE(KeyColumns(*c).empty());
}

TEST(MessageDecoderJson, ColumnsAreTheUnionOfBothRowsAfterFirst) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> c =
      DecodeChange(decoder, R"({"id":1,"missing":2})",
                   R"({"op":"u","table":"t","before":{"id":1,"old":"x","b":null},)"
                   R"("after":{"b":true,"id":1,"__unchanged_toast__":["t1"]}})");
  ASSERT_TRUE(c);
  std::vector<std::string> names;
  for (const Column& column : c->relation->columns) names.push_back(column.name);
  EXPECT_EQ(names, (std::vector<std::string>{"b", "id", "t1", "old"}));
  EXPECT_EQ(*c->after, (Row{Cell::Value("t"), Cell::Value("1"), Cell::UnchangedToast(), {}}));
  EXPECT_EQ(*c->before, (Row{{}, Cell::Value("1"), {}, Cell::Value("x")}));
  EXPECT_EQ(KeyColumns(*c), std::vector<std::string>{"id"});  // "missing" is not a column
  EXPECT_EQ(TypeOf(*c, "b"), ValueType::kBool);
  EXPECT_EQ(TypeOf(*c, "t1"), ValueType::kText);
}

TEST(MessageDecoderJson, ColumnTypeIsItsFirstNonNullValues) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> c =
      DecodeChange(decoder, std::nullopt, R"({"op":"u","before":{"n":12.5},"after":{"n":null}})");
  ASSERT_TRUE(c);
  EXPECT_EQ(TypeOf(*c, "n"), ValueType::kNumeric);
  EXPECT_EQ(CellOf(*c, c->before, "n"), Cell::Value("12.5"));
  // Guessed, not declared: schema drift does not judge it against the destination.
  EXPECT_TRUE(c->relation->columns[0].type_inferred);
}

TEST(MessageDecoderJson, NestedJsonIsWrittenCompactAsRapidJsonWritesIt) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> c = DecodeChange(
      decoder, std::nullopt,
      R"({"doc": { "s" : "q\"b\\s\/e\u00e9\u0001\n" , "n" : [ 1e300 , -0.10, {} , [] ] }})");
  ASSERT_TRUE(c);
  EXPECT_EQ(CellOf(*c, c->after, "doc"),
            Cell::Value(R"({"s":"q\"b\\s/eé\u0001\n","n":[1e300,-0.10,{},[]]})"));
}

TEST(MessageDecoderJson, KeyThatIsNotAnObjectMarksNoKeyColumns) {
  MessageDecoder decoder(ValueFormat::kJson);
  for (const std::string_view key : {"42", "plain text", "[\"id\"]", "{\"id\":"}) {
    const std::optional<Change> c = DecodeChange(decoder, key, R"({"id":42})");
    ASSERT_TRUE(c);
    EXPECT_TRUE(KeyColumns(*c).empty()) << key;
  }
}

// --- Both formats ---------------------------------------------------------------------------

TEST(MessageDecoder, TombstoneDecodesToNothing) {
  for (const ValueFormat format : {ValueFormat::kJson, ValueFormat::kDebeziumJson}) {
    MessageDecoder decoder(format);
    Result<std::optional<Change>> decoded = decoder.Decode("topic", "{\"id\":1}", std::nullopt);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_FALSE(decoded->has_value());
  }
}

TEST(MessageDecoder, OneShapeSharesOneRelation) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> first =
      DecodeChange(decoder, JsonKey("1"), R"({"op":"c","table":"t","after":{"id":1,"v":"a"}})");
  const std::optional<Change> other =
      DecodeChange(decoder, std::nullopt, R"({"op":"c","table":"u","after":{"id":1}})");
  const std::optional<Change> second =
      DecodeChange(decoder, JsonKey("2"), R"({"op":"u","table":"t","after":{"id":2,"v":"b"}})");
  ASSERT_TRUE(first && second && other);
  EXPECT_EQ(first->relation, second->relation);
  EXPECT_NE(first->relation, other->relation);
}

TEST(MessageDecoder, AnAddedColumnIsANewRelation) {
  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> before =
      DecodeChange(decoder, JsonKey("1"), R"({"op":"c","table":"t","after":{"id":1}})");
  const std::optional<Change> after =
      DecodeChange(decoder, JsonKey("2"), R"({"op":"c","table":"t","after":{"id":2,"v":"b"}})");
  const std::optional<Change> unkeyed =
      DecodeChange(decoder, std::nullopt, R"({"op":"c","table":"t","after":{"id":2,"v":"b"}})");
  ASSERT_TRUE(before && after && unkeyed);
  EXPECT_NE(before->relation, after->relation);
  EXPECT_NE(after->relation, unkeyed->relation);
  EXPECT_EQ(after->relation->columns.size(), 2u);
}

TEST(MessageDecoder, ErrorsSayWhatIsWrong) {
  struct Case {
    ValueFormat format;
    std::string value;
    std::string message;
  };
  const Case cases[] = {
      {ValueFormat::kJson, "{\"a\":", "value: not JSON at byte 5: Invalid value."},
      {ValueFormat::kJson, "{} x", "value: not JSON at byte 3: The document root must not"},
      {ValueFormat::kJson, std::string("{}\0x", 4), "value: not JSON at byte 2: The document root"},
      {ValueFormat::kJson, "", "value: not JSON at byte 0: The document is empty."},
      {ValueFormat::kJson, "{\"a\":\"\xff\"}", "value: not JSON at byte 6: Invalid encoding"},
      {ValueFormat::kJson, "{\"n\":1" + std::string(400, '0') + "}",
       "value: not JSON at byte 5: Number too big to be stored in double."},
      {ValueFormat::kJson, "[1]", "value is not a JSON object"},
      {ValueFormat::kJson, R"({"op":"x","after":{}})", "unknown op \"x\""},
      {ValueFormat::kJson, R"({"op":3,"after":{}})", "unknown op 3"},
      {ValueFormat::kJson, R"({"op":"u","before":5,"after":{}})", "before is not a JSON object"},
      {ValueFormat::kJson, R"({"op":"c","after":[]})", "after is not a JSON object"},
      {ValueFormat::kJson, R"({"op":"c","table":1,"after":{}})", "table is not a string"},
      {ValueFormat::kJson, R"({"op":"c","ts_ms":1.5,"after":{}})", "ts_ms is not a time"},
      {ValueFormat::kJson, R"({"a":1,"__unchanged_toast__":[1]})", "__unchanged_toast__ is not"},
      {ValueFormat::kDebeziumJson, R"({"op":"x","after":{}})", "unknown op \"x\""},
      {ValueFormat::kDebeziumJson, R"({"after":{}})", "no op"},
      {ValueFormat::kDebeziumJson, R"({"schema":{},"payload":5})", "payload is not a JSON object"},
      {ValueFormat::kDebeziumJson, R"({"op":"c","source":1,"after":{}})", "source is not"},
      {ValueFormat::kDebeziumJson, R"({"op":"c","source":{"lsn":"1"},"after":{}})",
       "source.lsn is not a position"},
  };
  for (const Case& c : cases) {
    const Status status = DecodeError(c.format, c.value);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.value;
    EXPECT_EQ(status.message().substr(0, c.message.size()), c.message) << status.message();
  }
}

TEST(MessageDecoder, DeepNestingIsAnErrorNotACrash) {
  const std::string deep = "{\"a\":" + std::string(100000, '[');
  const Status status = DecodeError(ValueFormat::kJson, deep);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("nested deeper than 1000 levels"), std::string::npos)
      << status.message();

  MessageDecoder decoder(ValueFormat::kJson);
  const std::optional<Change> c = DecodeChange(
      decoder, std::nullopt, "{\"a\":" + std::string(900, '[') + std::string(900, ']') + "}");
  ASSERT_TRUE(c);
  EXPECT_EQ(CellOf(*c, c->after, "a").text.size(), 1800u);
}

// --- value_format debezium_json -------------------------------------------------------------

TEST(MessageDecoderDebezium, InsertRoundTripsWithSchemaTypes) {
  MessageDecoder decoder(ValueFormat::kDebeziumJson);
  const std::optional<Change> c =
      DecodeChange(decoder, DebeziumKey("42"),
                   Debezium(ChangeOf(ChangeOp::kInsert, Orders(), std::nullopt, OrdersRow("42"))));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kInsert);
  EXPECT_EQ(c->relation->schema, "public");
  EXPECT_EQ(c->relation->name, "orders");
  EXPECT_EQ(KeyColumns(*c), std::vector<std::string>{"id"});
  EXPECT_EQ(c->commit_time_us, 1700000000123000);
  EXPECT_EQ(c->commit_position, 0x16B3748u);
  EXPECT_FALSE(c->before);
  const Row& after = *c->after;
  EXPECT_EQ(after, OrdersRow("42"));
  std::vector<ValueType> types;
  for (const Column& column : c->relation->columns) types.push_back(column.type);
  // numeric is a string to Debezium (decimal.handling.mode=string): its digits, as text.
  EXPECT_EQ(types, (std::vector<ValueType>{ValueType::kInt, ValueType::kText, ValueType::kText,
                                           ValueType::kJson, ValueType::kBool, ValueType::kBytes,
                                           ValueType::kUuid, ValueType::kFloat}));
  for (const Column& column : c->relation->columns) EXPECT_FALSE(column.type_inferred);
}

TEST(MessageDecoderDebezium, PlaceholderIsUnchangedToast) {
  MessageDecoder decoder(ValueFormat::kDebeziumJson);
  Row after = OrdersRow("1");
  after[1] = Cell::UnchangedToast();  // text
  after[5] = Cell::UnchangedToast();  // bytea: the placeholder's base64
  const std::optional<Change> c =
      DecodeChange(decoder, DebeziumKey("1"),
                   Debezium(ChangeOf(ChangeOp::kUpdate, Orders(), OrdersRow("1"), after)));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kUpdate);
  EXPECT_EQ(*c->after, after);
  EXPECT_EQ(*c->before, OrdersRow("1"));
}

TEST(MessageDecoderDebezium, SnapshotRowIsARead) {
  MessageDecoder decoder(ValueFormat::kDebeziumJson);
  const std::optional<Change> c = DecodeChange(
      decoder, DebeziumKey("3"), Debezium(ChangeOf(ChangeOp::kRead, Orders(), {}, OrdersRow("3"))));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kRead);
  EXPECT_EQ(c->commit_position, 0u);  // source.lsn is null for a snapshot row
  EXPECT_EQ(*c->after, OrdersRow("3"));
}

TEST(MessageDecoderDebezium, TruncateHasNoRows) {
  MessageDecoder decoder(ValueFormat::kDebeziumJson);
  const std::optional<Change> c = DecodeChange(
      decoder, std::nullopt, Debezium(ChangeOf(ChangeOp::kTruncate, Orders(), {}, {})));
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kTruncate);
  EXPECT_EQ(c->relation->name, "orders");
  EXPECT_FALSE(c->before);
  EXPECT_FALSE(c->after);
}

// A Debezium insert of a row of one column, "v", whose schema field is `field` (without its
// "field" member) and whose value is `value`.
std::string OneColumnInsert(const std::string& field, const std::string& value) {
  const std::string row_struct =
      R"({"type":"struct","optional":true,"name":"s.public.t.Value","fields":[{)" + field +
      R"(,"field":"v"}],"field":")";
  return R"({"schema":{"type":"struct","optional":false,"name":"s.public.t.Envelope","fields":[)" +
         row_struct + R"(before"},)" + row_struct + R"(after"},)" +
         R"({"type":"string","optional":false,"field":"op"}]},)" +
         R"("payload":{"before":null,"after":{"v":)" + value +
         R"(},"source":{"schema":"public","table":"t","ts_ms":1},"op":"c","ts_ms":2}})";
}

struct Decoded {
  ValueType type = ValueType::kOther;
  Cell cell;
};

Decoded DecodeOneColumn(const std::string& field, const std::string& value) {
  MessageDecoder decoder(ValueFormat::kDebeziumJson);
  const std::optional<Change> c =
      DecodeChange(decoder, std::nullopt, OneColumnInsert(field, value));
  if (!c) return {};
  return {TypeOf(*c, "v"), CellOf(*c, c->after, "v")};
}

TEST(MessageDecoderDebezium, DecimalBecomesDecimalText) {
  const std::string decimal =
      R"("type":"bytes","optional":true,"name":"org.apache.kafka.connect.data.Decimal",)"
      R"("version":1,"parameters":{"scale":"2","connect.decimal.precision":"60"})";
  EXPECT_EQ(DecodeOneColumn(decimal, "\"BNI=\"").type, ValueType::kNumeric);
  EXPECT_EQ(DecodeOneColumn(decimal, "\"BNI=\"").cell, Cell::Value("12.34"));
  EXPECT_EQ(DecodeOneColumn(decimal, "\"+y4=\"").cell, Cell::Value("-12.34"));
  EXPECT_EQ(DecodeOneColumn(decimal, "\"BQ==\"").cell, Cell::Value("0.05"));
  EXPECT_EQ(DecodeOneColumn(decimal, "\"AA==\"").cell, Cell::Value("0.00"));
  EXPECT_EQ(DecodeOneColumn(decimal, "\"/w==\"").cell, Cell::Value("-0.01"));
  EXPECT_EQ(DecodeOneColumn(decimal, "\"CHJ/Y2mq+DyhUCZ0evjH8ZbOPwrS\"").cell,
            Cell::Value("123456789012345678901234567890123456789012345678.90"));
  EXPECT_EQ(DecodeOneColumn(decimal, "\"942AnJZVB8Ner9mLhQc4DmkxwPUu\"").cell,
            Cell::Value("-123456789012345678901234567890123456789012345678.90"));
  const std::string integral =
      R"("type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":0})";
  EXPECT_EQ(DecodeOneColumn(integral, "\"+y4=\"").cell, Cell::Value("-1234"));
}

TEST(MessageDecoderDebezium, VariableScaleDecimalBecomesDecimalText) {
  const std::string field = R"("type":"struct","name":"io.debezium.data.VariableScaleDecimal")";
  EXPECT_EQ(DecodeOneColumn(field, R"({"scale":3,"value":"AeI="})").cell, Cell::Value("0.482"));
  EXPECT_EQ(DecodeOneColumn(field, R"({"scale":0,"value":"+y4="})").cell, Cell::Value("-1234"));
}

TEST(MessageDecoderDebezium, DateCountsDaysFromTheEpochBothWays) {
  const std::string date = R"("type":"int32","optional":true,"name":"io.debezium.time.Date")";
  EXPECT_EQ(DecodeOneColumn(date, "19782").type, ValueType::kDate);
  EXPECT_EQ(DecodeOneColumn(date, "19782").cell, Cell::Value("2024-02-29"));
  EXPECT_EQ(DecodeOneColumn(date, "0").cell, Cell::Value("1970-01-01"));
  EXPECT_EQ(DecodeOneColumn(date, "-1").cell, Cell::Value("1969-12-31"));
  EXPECT_EQ(DecodeOneColumn(date, "-25508").cell, Cell::Value("1900-03-01"));
  EXPECT_EQ(DecodeOneColumn(date, "-719162").cell, Cell::Value("0001-01-01"));
  EXPECT_EQ(DecodeOneColumn(date, "-719163").cell, Cell::Value("0001-12-31 BC"));
}

TEST(MessageDecoderDebezium, TimestampsAndTimesKeepTheirFraction) {
  const std::string micro =
      R"("type":"int64","optional":true,"name":"io.debezium.time.MicroTimestamp")";
  EXPECT_EQ(DecodeOneColumn(micro, "1700000000123456").type, ValueType::kTimestamp);
  EXPECT_EQ(DecodeOneColumn(micro, "1700000000123456").cell,
            Cell::Value("2023-11-14 22:13:20.123456"));
  EXPECT_EQ(DecodeOneColumn(micro, "1700000000000000").cell, Cell::Value("2023-11-14 22:13:20"));
  EXPECT_EQ(DecodeOneColumn(micro, "-1").cell, Cell::Value("1969-12-31 23:59:59.999999"));
  EXPECT_EQ(DecodeOneColumn(micro, "-62135596800000000").cell, Cell::Value("0001-01-01 00:00:00"));
  EXPECT_EQ(DecodeOneColumn(micro, "-62135596800000001").cell,
            Cell::Value("0001-12-31 23:59:59.999999 BC"));
  const std::string millis = R"("type":"int64","name":"io.debezium.time.Timestamp")";
  EXPECT_EQ(DecodeOneColumn(millis, "1500").cell, Cell::Value("1970-01-01 00:00:01.5"));
  const std::string nanos = R"("type":"int64","name":"io.debezium.time.NanoTimestamp")";
  EXPECT_EQ(DecodeOneColumn(nanos, "1000000001").cell,
            Cell::Value("1970-01-01 00:00:01.000000001"));

  const std::string time = R"("type":"int64","name":"io.debezium.time.MicroTime")";
  EXPECT_EQ(DecodeOneColumn(time, "3723000000").type, ValueType::kTime);
  EXPECT_EQ(DecodeOneColumn(time, "3723000000").cell, Cell::Value("01:02:03"));
  EXPECT_EQ(DecodeOneColumn(time, "3723250000").cell, Cell::Value("01:02:03.25"));
  EXPECT_EQ(DecodeOneColumn(time, "-3600000000").cell, Cell::Value("-01:00:00"));  // MySQL TIME
  EXPECT_EQ(DecodeOneColumn(time, "3020399000000").cell, Cell::Value("838:59:59"));
  const std::string time_ms = R"("type":"int32","name":"io.debezium.time.Time")";
  EXPECT_EQ(DecodeOneColumn(time_ms, "45296789").cell, Cell::Value("12:34:56.789"));
}

TEST(MessageDecoderDebezium, StringLogicalTypesKeepTheirText) {
  const std::string zoned = R"("type":"string","name":"io.debezium.time.ZonedTimestamp")";
  EXPECT_EQ(DecodeOneColumn(zoned, "\"2024-01-02T03:04:05.5Z\"").type, ValueType::kTimestampTz);
  EXPECT_EQ(DecodeOneColumn(zoned, "\"2024-01-02T03:04:05.5Z\"").cell,
            Cell::Value("2024-01-02T03:04:05.5Z"));
  const std::string json = R"("type":"string","name":"io.debezium.data.Json")";
  EXPECT_EQ(DecodeOneColumn(json, R"("{\"a\": 1}")").cell, Cell::Value(R"({"a": 1})"));
  EXPECT_EQ(DecodeOneColumn(json, R"("{\"a\": 1}")").type, ValueType::kJson);
  const std::string number = R"("type":"float64")";
  EXPECT_EQ(DecodeOneColumn(number, "\"NaN\"").cell, Cell::Value("NaN"));
  EXPECT_EQ(DecodeOneColumn(number, "1e-7").cell, Cell::Value("1e-7"));
}

TEST(MessageDecoderDebezium, SchemalessMessageInfersTypes) {
  MessageDecoder decoder(ValueFormat::kDebeziumJson);
  const std::optional<Change> c = DecodeChange(
      decoder, R"({"id":7})",
      R"({"before":null,"after":{"id":7,"name":"x","price":1.50,"big":"__debezium_unavailable_value",)"
      R"("blob":"X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ==","ok":false,"tags":["a"]},)"
      R"("source":{"version":"2.5","connector":"mysql","db":"shop","table":"items","ts_ms":1000,)"
      R"("file":"binlog.000003","pos":154},"op":"c","ts_ms":2000})",
      "srv.shop.items");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->op, ChangeOp::kInsert);
  EXPECT_EQ(c->relation->schema, "shop");  // MySQL: the database
  EXPECT_EQ(c->relation->name, "items");
  EXPECT_EQ(c->commit_time_us, 1000000);
  EXPECT_EQ(c->commit_position, 0u);
  EXPECT_EQ(KeyColumns(*c), std::vector<std::string>{"id"});
  EXPECT_EQ(*c->after,
            (Row{Cell::Value("7"), Cell::Value("x"), Cell::Value("1.50"), Cell::UnchangedToast(),
                 Cell::UnchangedToast(), Cell::Value("f"), Cell::Value(R"(["a"])")}));
  EXPECT_EQ(TypeOf(*c, "id"), ValueType::kNumeric);
  EXPECT_EQ(TypeOf(*c, "ok"), ValueType::kBool);
  EXPECT_EQ(TypeOf(*c, "tags"), ValueType::kJson);
}

TEST(MessageDecoderDebezium, SchemalessKeyEnvelopeNamesKeyColumns) {
  MessageDecoder decoder(ValueFormat::kDebeziumJson);
  const std::optional<Change> c =
      DecodeChange(decoder, R"({"schema":{"type":"struct"},"payload":{"b":1}})",
                   R"({"op":"c","after":{"a":1,"b":2}})");
  ASSERT_TRUE(c);
  EXPECT_EQ(KeyColumns(*c), std::vector<std::string>{"b"});
  EXPECT_EQ(c->relation->name, "topic");
}

TEST(MessageDecoderDebezium, ValueItsTypeCannotHoldIsAnError) {
  struct Case {
    std::string field;
    std::string value;
    std::string message;
  };
  const Case cases[] = {
      {R"("type":"bytes")", "\"not base64!\"", "column \"v\": value is not a valid bytes"},
      {R"("type":"int64")", "\"12\"", "column \"v\": value is not a valid int64"},
      {R"("type":"boolean")", "1", "column \"v\": value is not a valid boolean"},
      {R"("type":"int32","name":"io.debezium.time.Date")", "1.5",
       "column \"v\": value is not a valid io.debezium.time.Date"},
      {R"("type":"int32","name":"io.debezium.time.Date")", "4294967296",
       "column \"v\": value is not a valid io.debezium.time.Date"},
      {R"("type":"bytes","name":"org.apache.kafka.connect.data.Decimal")", "\"AA==\"",
       "column \"v\": a Decimal without a valid scale parameter"},
      {R"("type":"struct","name":"io.debezium.data.VariableScaleDecimal")", R"({"scale":1})",
       "column \"v\": value is not a valid io.debezium.data.VariableScaleDecimal"},
  };
  for (const Case& c : cases) {
    const Status status =
        DecodeError(ValueFormat::kDebeziumJson, OneColumnInsert(c.field, c.value));
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << c.field;
    EXPECT_EQ(status.message(), c.message);
  }
}

}  // namespace
}  // namespace faucet::kafka
