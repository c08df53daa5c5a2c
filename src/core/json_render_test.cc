#include "core/json_render.h"

#include <gtest/gtest.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <nlohmann/json.hpp>
#include <random>

namespace faucet {
namespace {

RelationPtr OneColumn(ValueType type, uint32_t type_oid = 0) {
  auto r = std::make_shared<Relation>();
  r->schema = "public";
  r->name = "t";
  r->columns = {{"v", type, type_oid}};
  return r;
}

Change ReadOf(RelationPtr relation, Row row) {
  Change c;
  c.op = ChangeOp::kRead;
  c.relation = std::move(relation);
  c.after = std::move(row);
  return c;
}

std::string Render(const Change& change) {
  std::string out;
  AppendChangeJson(change, out);
  return out;
}

// The JSON of one value of `type` whose text form is `text`.
std::string RenderValue(ValueType type, const std::string& text, uint32_t type_oid = 0) {
  std::string json = Render(ReadOf(OneColumn(type, type_oid), {Cell::Value(text)}));
  const std::string prefix = "{\"v\":";
  EXPECT_EQ(json.substr(0, prefix.size()), prefix);
  EXPECT_EQ(json.back(), '}');
  return json.substr(prefix.size(), json.size() - prefix.size() - 1);
}

RelationPtr Orders() {
  auto r = std::make_shared<Relation>();
  r->schema = "public";
  r->name = "orders";
  r->columns = {{"id", ValueType::kInt, 20, -1, true}, {"note", ValueType::kText, 25}};
  return r;
}

TEST(AppendChangeJson, ReadRendersTheFlatRow) {
  Change c = ReadOf(Orders(), {Cell::Value("1"), Cell::Value("hi")});
  EXPECT_EQ(Render(c), R"({"id":1,"note":"hi"})");
}

TEST(AppendChangeJson, InsertRendersTheEnvelope) {
  Change c;
  c.op = ChangeOp::kInsert;
  c.relation = Orders();
  c.after = Row{Cell::Value("1"), Cell::Value("hi")};
  c.commit_position = 0x16B3748;
  c.commit_time_us = 1700000000123456;
  EXPECT_EQ(Render(c), R"({"op":"c","schema":"public","table":"orders","lsn":"0/16B3748",)"
                       R"("ts_ms":1700000000123,"before":null,"after":{"id":1,"note":"hi"}})");
}

TEST(AppendUncommittedChangeJson, WithTheCommitFieldsInsertedIsTheCommittedLine) {
  for (ChangeOp op : {ChangeOp::kInsert, ChangeOp::kUpdate, ChangeOp::kDelete}) {
    for (int64_t time : {int64_t{0}, int64_t{1700000000123456}}) {
      Change c;
      c.op = op;
      c.relation = Orders();
      if (op != ChangeOp::kInsert) c.before = Row{Cell::Value("1"), Cell::Value("old")};
      if (op != ChangeOp::kDelete) c.after = Row{Cell::Value("1"), Cell::Value("new")};
      std::string staged = "x";  // appends after what the buffer holds
      const size_t at = AppendUncommittedChangeJson(c, staged);
      EXPECT_EQ(staged.find("lsn"), std::string::npos) << staged;
      std::string commit;
      AppendCommitJson(0x16B3748, time, commit);
      staged.insert(1 + at, commit);
      c.commit_position = 0x16B3748;
      c.commit_time_us = time;
      EXPECT_EQ(staged, "x" + Render(c));
    }
  }
}

TEST(AppendChangeJson, ABinlogChangeNamesItsFileAndOffset) {
  auto binlog = std::make_shared<Relation>(*Orders());
  binlog->schema = "shop";
  binlog->binlog_base = "binlog";
  Change c;
  c.op = ChangeOp::kInsert;
  c.relation = binlog;
  c.after = Row{Cell::Value("1"), Cell::Value("hi")};
  c.commit_position = (uint64_t{12} << 32) | 4567;
  c.commit_time_us = 1700000000000000;
  EXPECT_EQ(Render(c), R"({"op":"c","schema":"shop","table":"orders",)"
                       R"("lsn":{"file":"binlog.000012","pos":4567},"ts_ms":1700000000000,)"
                       R"("before":null,"after":{"id":1,"note":"hi"}})");
  // The same position from a Postgres relation is an LSN again (the cache knows the kind).
  c.relation = Orders();
  EXPECT_NE(Render(c).find(R"("lsn":"C/11D7")"), std::string::npos) << Render(c);
}

TEST(AppendChangeJson, ABinlogChangeNamesItsTransactionsGtidAndServer) {
  auto binlog = std::make_shared<Relation>(*Orders());
  binlog->binlog_base = "binlog";
  Change c;
  c.op = ChangeOp::kDelete;
  c.relation = binlog;
  c.before = Row{Cell::Value("1"), Cell::Null()};
  c.commit_position = (uint64_t{1} << 32) | 4;
  c.txn = std::make_shared<const SourceTxn>(SourceTxn{"0-7-42", 7});
  EXPECT_NE(Render(c).find(R"("lsn":{"file":"binlog.000001","pos":4},"gtid":"0-7-42",)"
                           R"("server_id":7,"ts_ms":null)"),
            std::string::npos)
      << Render(c);
  // A server that logs no GTIDs: the gtid is null, the server still named.
  c.txn = std::make_shared<const SourceTxn>(SourceTxn{"", 7});
  EXPECT_NE(Render(c).find(R"("gtid":null,"server_id":7,)"), std::string::npos) << Render(c);
}

TEST(AppendChangeJson, UpdateCarriesBeforeAndAfter) {
  Change c;
  c.op = ChangeOp::kUpdate;
  c.relation = Orders();
  c.before = Row{Cell::Value("1"), Cell::Value("old")};
  c.after = Row{Cell::Value("1"), Cell::Value("new")};
  c.commit_position = (uint64_t{0x1A} << 32) | 0x2B;
  c.commit_time_us = 5000;
  EXPECT_EQ(Render(c), R"({"op":"u","schema":"public","table":"orders","lsn":"1A/2B","ts_ms":5,)"
                       R"("before":{"id":1,"note":"old"},"after":{"id":1,"note":"new"}})");
}

TEST(AppendChangeJson, DeleteHasOnlyBefore) {
  Change c;
  c.op = ChangeOp::kDelete;
  c.relation = Orders();
  c.before = Row{Cell::Value("7"), Cell::Null()};
  EXPECT_EQ(Render(c), R"({"op":"d","schema":"public","table":"orders","lsn":"0/0",)"
                       R"("ts_ms":null,"before":{"id":7,"note":null},"after":null})");
}

TEST(AppendChangeJson, TruncateHasNeitherRow) {
  Change c;
  c.op = ChangeOp::kTruncate;
  c.relation = Orders();
  c.commit_time_us = 1000;
  EXPECT_EQ(Render(c), R"({"op":"t","schema":"public","table":"orders","lsn":"0/0",)"
                       R"("ts_ms":1,"before":null,"after":null})");
}

TEST(AppendChangeJson, UnknownCommitTimeIsNullTsMs) {
  Change c;
  c.op = ChangeOp::kInsert;
  c.relation = Orders();
  c.after = Row{Cell::Value("1"), Cell::Value("x")};
  EXPECT_EQ(nlohmann::json::parse(Render(c))["ts_ms"], nullptr);
}

TEST(AppendChangeJson, AppendsToTheBufferWithoutNewline) {
  std::string out = "prefix\n";
  AppendChangeJson(ReadOf(Orders(), {Cell::Value("1"), Cell::Value("a")}), out);
  AppendChangeJson(ReadOf(Orders(), {Cell::Value("2"), Cell::Value("b")}), out);
  EXPECT_EQ(out, "prefix\n{\"id\":1,\"note\":\"a\"}{\"id\":2,\"note\":\"b\"}");
}

TEST(AppendChangeJson, UnchangedToastCellsAreOmittedAndListed) {
  auto r = std::make_shared<Relation>();
  r->schema = "public";
  r->name = "docs";
  r->columns = {{"id", ValueType::kInt}, {"body", ValueType::kText}, {"meta", ValueType::kJson}};
  Change c;
  c.op = ChangeOp::kUpdate;
  c.relation = r;
  c.after = Row{Cell::Value("3"), Cell::UnchangedToast(), Cell::UnchangedToast()};
  nlohmann::json j = nlohmann::json::parse(Render(c));
  EXPECT_EQ(j["after"].dump(), R"({"__unchanged_toast__":["body","meta"],"id":3})");
  EXPECT_EQ(j["before"], nullptr);
}

TEST(AppendChangeJson, ColumnNamesAreEscaped) {
  auto r = std::make_shared<Relation>();
  r->columns = {{"we\"ird\\", ValueType::kText}};
  EXPECT_EQ(Render(ReadOf(r, {Cell::Value("x")})), R"({"we\"ird\\":"x"})");
}

TEST(RenderValue, NullCellIsNull) {
  EXPECT_EQ(Render(ReadOf(OneColumn(ValueType::kInt), {Cell::Null()})), R"({"v":null})");
}

TEST(RenderValue, BoolSpellingsAreBooleans) {
  EXPECT_EQ(RenderValue(ValueType::kBool, "t"), "true");
  EXPECT_EQ(RenderValue(ValueType::kBool, "f"), "false");
  EXPECT_EQ(RenderValue(ValueType::kBool, "true"), "true");
  EXPECT_EQ(RenderValue(ValueType::kBool, "false"), "false");
  EXPECT_EQ(RenderValue(ValueType::kBool, "1"), "true");
  EXPECT_EQ(RenderValue(ValueType::kBool, "0"), "false");
}

TEST(RenderValue, UnrecognisedBoolTextIsKeptAsString) {
  EXPECT_EQ(RenderValue(ValueType::kBool, "maybe"), R"("maybe")");
}

TEST(RenderValue, IntDigitsAreCopied) {
  EXPECT_EQ(RenderValue(ValueType::kInt, "-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(RenderValue(ValueType::kInt, "0"), "0");
}

TEST(RenderValue, FloatIsANumberAndNonFiniteFloatsAreStrings) {
  EXPECT_EQ(RenderValue(ValueType::kFloat, "1.5e-07"), "1.5e-07");
  EXPECT_EQ(RenderValue(ValueType::kFloat, "1e+100"), "1e+100");
  EXPECT_EQ(RenderValue(ValueType::kFloat, "-0"), "-0");
  EXPECT_EQ(RenderValue(ValueType::kFloat, "NaN"), R"("NaN")");
  EXPECT_EQ(RenderValue(ValueType::kFloat, "Infinity"), R"("Infinity")");
  EXPECT_EQ(RenderValue(ValueType::kFloat, "-Infinity"), R"("-Infinity")");
}

TEST(RenderValue, NumericKeepsAllThirtyDigits) {
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "123456789012345678901234567890"),
            "123456789012345678901234567890");
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "-0.000000000000000000000000000001"),
            "-0.000000000000000000000000000001");
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "12345678901234567890.1234567890"),
            "12345678901234567890.1234567890");
}

TEST(RenderValue, NonFiniteNumericsAreStrings) {
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "NaN"), R"("NaN")");
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "Infinity"), R"("Infinity")");
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "-Infinity"), R"("-Infinity")");
}

TEST(RenderValue, TextThatIsNotAJsonNumberIsAString) {
  EXPECT_EQ(RenderValue(ValueType::kInt, "007"), R"("007")");
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "1."), R"("1.")");
  EXPECT_EQ(RenderValue(ValueType::kNumeric, "+1"), R"("+1")");
  EXPECT_EQ(RenderValue(ValueType::kFloat, "1e"), R"("1e")");
  EXPECT_EQ(RenderValue(ValueType::kInt, ""), R"("")");
}

TEST(RenderValue, JsonIsEmbeddedAsIs) {
  EXPECT_EQ(RenderValue(ValueType::kJson, R"({"a": [1, 2.50, "x\ny"]})"),
            R"({"a": [1, 2.50, "x\ny"]})");
  EXPECT_EQ(RenderValue(ValueType::kJson, "42"), "42");
  EXPECT_EQ(RenderValue(ValueType::kJson, "null"), "null");
}

TEST(RenderValue, JsonLineBreaksBecomeSpacesSoTheLineStaysOneLine) {
  std::string json = RenderValue(ValueType::kJson, "{\r\n  \"a\": 1\n}");
  EXPECT_EQ(json, "{    \"a\": 1 }");
}

TEST(RenderValue, ByteaHexIsBase64) {
  EXPECT_EQ(RenderValue(ValueType::kBytes, R"(\x)"), R"("")");
  EXPECT_EQ(RenderValue(ValueType::kBytes, R"(\x61)"), R"("YQ==")");
  EXPECT_EQ(RenderValue(ValueType::kBytes, R"(\x6162)"), R"("YWI=")");
  EXPECT_EQ(RenderValue(ValueType::kBytes, R"(\x616263)"), R"("YWJj")");
  EXPECT_EQ(RenderValue(ValueType::kBytes, R"(\x00FF10fe)"), R"("AP8Q/g==")");
}

TEST(RenderValue, BytesNotInHexFormAreKeptAsString) {
  EXPECT_EQ(RenderValue(ValueType::kBytes, R"(\x6)"), R"("\\x6")");
  EXPECT_EQ(RenderValue(ValueType::kBytes, R"(\xzz)"), R"("\\xzz")");
  EXPECT_EQ(RenderValue(ValueType::kBytes, "abc"), R"("abc")");
}

TEST(RenderValue, TextIsEscaped) {
  EXPECT_EQ(RenderValue(ValueType::kText, "tab\there\nnew \"q\" back\\slash\r\x01"),
            R"("tab\there\nnew \"q\" back\\slash\r\u0001")");
}

TEST(RenderValue, NonAsciiUtf8PassesThrough) {
  EXPECT_EQ(RenderValue(ValueType::kText, "héllo € 😀 日本"), "\"héllo € 😀 日本\"");
}

TEST(RenderValue, OtherTypesAreTheirText) {
  EXPECT_EQ(RenderValue(ValueType::kDate, "2026-01-01"), R"("2026-01-01")");
  EXPECT_EQ(RenderValue(ValueType::kTime, "12:00:00.5"), R"("12:00:00.5")");
  EXPECT_EQ(RenderValue(ValueType::kTimestamp, "2026-01-01 00:00:01"), R"("2026-01-01 00:00:01")");
  EXPECT_EQ(RenderValue(ValueType::kTimestampTz, "2026-01-01 00:00:01+00"),
            R"("2026-01-01 00:00:01+00")");
  EXPECT_EQ(RenderValue(ValueType::kInterval, "1 day 02:00:00"), R"("1 day 02:00:00")");
  EXPECT_EQ(RenderValue(ValueType::kUuid, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            R"("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")");
  EXPECT_EQ(RenderValue(ValueType::kOther, "(1,2)"), R"x("(1,2)")x");
}

constexpr uint32_t kTextArray = 1009;
constexpr uint32_t kInt4Array = 1007;

TEST(RenderArray, TextElementsAreStrings) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{a,b,c}", kTextArray), R"(["a","b","c"])");
}

TEST(RenderArray, QuotedElementsAreUnescaped) {
  EXPECT_EQ(
      RenderValue(ValueType::kArray, R"({"a,b","say \"hi\"","back\\slash","x y"})", kTextArray),
      R"(["a,b","say \"hi\"","back\\slash","x y"])");
}

TEST(RenderArray, UnquotedNullIsNullAndQuotedNullIsText) {
  EXPECT_EQ(RenderValue(ValueType::kArray, R"({NULL,null,"NULL",""})", kTextArray),
            R"([null,null,"NULL",""])");
}

TEST(RenderArray, WhitespaceAroundUnquotedElementsIsIgnored) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{ a , b c }", kTextArray), R"(["a","b c"])");
}

TEST(RenderArray, EmptyArrayIsEmpty) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{}", kTextArray), "[]");
}

TEST(RenderArray, KnownElementTypesAreTyped) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{1,-2,NULL}", kInt4Array), "[1,-2,null]");
  EXPECT_EQ(RenderValue(ValueType::kArray, "{t,f}", 1000), "[true,false]");
  EXPECT_EQ(RenderValue(ValueType::kArray, "{1.5,NaN,-Infinity}", 1022),
            R"([1.5,"NaN","-Infinity"])");
  EXPECT_EQ(RenderValue(ValueType::kArray, "{123456789012345678901234567890.5}", 1231),
            "[123456789012345678901234567890.5]");
  EXPECT_EQ(RenderValue(ValueType::kArray, R"({"\\x6162"})", 1001), R"(["YWI="])");
  EXPECT_EQ(RenderValue(ValueType::kArray, R"({"{\"a\": 1}",NULL})", 3807), R"([{"a": 1},null])");
}

TEST(RenderArray, UnknownElementTypeRendersStrings) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{1,2}", 0), R"(["1","2"])");
}

TEST(RenderArray, BoxArraysSplitOnSemicolon) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{(1,1),(0,0);(2,2),(1,1)}", 1020),
            R"x(["(1,1),(0,0)","(2,2),(1,1)"])x");
}

TEST(RenderArray, MultiDimensionalArrayIsItsText) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{{1,2},{3,4}}", kInt4Array), R"("{{1,2},{3,4}}")");
}

TEST(RenderArray, ExplicitBoundsAreKeptAsText) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "[0:1]={1,2}", kInt4Array), R"("[0:1]={1,2}")");
}

TEST(RenderArray, MalformedLiteralIsItsText) {
  EXPECT_EQ(RenderValue(ValueType::kArray, "{a,}", kTextArray), R"("{a,}")");
  EXPECT_EQ(RenderValue(ValueType::kArray, R"({"a})", kTextArray), R"("{\"a}")");
  EXPECT_EQ(RenderValue(ValueType::kArray, R"({"a"b})", kTextArray), R"("{\"a\"b}")");
  EXPECT_EQ(RenderValue(ValueType::kArray, "{a", kTextArray), R"("{a")");
}

TEST(AppendChangeJson, EveryRuleTogetherIsValidJson) {
  auto r = std::make_shared<Relation>();
  r->columns = {
      {"b", ValueType::kBool},  {"n", ValueType::kNumeric},           {"j", ValueType::kJson},
      {"x", ValueType::kBytes}, {"a", ValueType::kArray, kTextArray}, {"s", ValueType::kText}};
  Change c = ReadOf(r, {Cell::Value("t"), Cell::Value("NaN"), Cell::Value("{\"k\":\n[1]}"),
                        Cell::Value(R"(\x00)"), Cell::Value(R"({"a\\b",NULL})"),
                        Cell::Value("line1\nline2\t\"é\"")});
  std::string line = Render(c);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["b"], true);
  EXPECT_EQ(j["n"], "NaN");
  EXPECT_EQ(j["j"]["k"][0], 1);
  EXPECT_EQ(j["x"], "AA==");
  EXPECT_EQ(j["a"][0], "a\\b");
  EXPECT_EQ(j["a"][1], nullptr);
  EXPECT_EQ(j["s"], "line1\nline2\t\"é\"");
}

// The renderer is hand-written for speed (BENCHMARKS.md: 694 -> 177 ns per row); RapidJSON's
// Writer is the oracle for its strings. Random strings of quotes, backslashes, control
// characters, NUL, DEL, ASCII and 2-, 3- and 4-byte UTF-8 render byte for byte as RapidJSON
// writes them, as values and as column names.
TEST(AppendChangeJson, StringsAreEscapedExactlyAsRapidJsonWritesThem) {
  const std::vector<std::string> pieces = {"\"",
                                           "\\",
                                           "/",
                                           "\n",
                                           "\r",
                                           "\t",
                                           "\b",
                                           "\f",
                                           std::string(1, '\0'),
                                           "\x01",
                                           "\x1f",
                                           "\x7f",
                                           "a",
                                           "Z",
                                           "0",
                                           " ",
                                           "'",
                                           "\xc3\xa9",
                                           "\xe2\x82\xac",
                                           "\xf0\x9d\x84\x9e",
                                           "plain text"};
  std::mt19937 rng(20261130);
  for (int i = 0; i < 20000; ++i) {
    std::string s;
    for (int n = static_cast<int>(rng() % 12); n > 0; --n) s += pieces[rng() % pieces.size()];
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    const std::string want(buffer.GetString(), buffer.GetSize());
    ASSERT_EQ(RenderValue(ValueType::kText, s), want) << "string #" << i;

    auto named = std::make_shared<Relation>();
    named->columns = {{s, ValueType::kText, 0}};
    ASSERT_EQ(Render(ReadOf(named, {Cell::Value("x")})), "{" + want + ":\"x\"}")
        << "column name #" << i;
  }
}

// --- Debezium ---------------------------------------------------------------------------

// The payload's value of each field must be of the type the schema declares for it: what
// Kafka Connect's JsonConverter checks when it reads the message.
void ExpectPayloadMatchesSchema(const nlohmann::json& row, const nlohmann::json& fields) {
  for (const auto& f : fields) {
    const std::string name = f["field"];
    ASSERT_TRUE(row.contains(name)) << name;
    const auto& v = row[name];
    if (v.is_null()) {
      EXPECT_TRUE(f["optional"].get<bool>()) << name;
      continue;
    }
    const std::string type = f["type"];
    if (type == "string" || type == "bytes") {
      EXPECT_TRUE(v.is_string()) << name << ": " << v;
    } else if (type == "boolean") {
      EXPECT_TRUE(v.is_boolean()) << name << ": " << v;
    } else if (type.rfind("int", 0) == 0) {
      EXPECT_TRUE(v.is_number_integer()) << name << ": " << v;
    } else {
      EXPECT_TRUE(v.is_number()) << name << ": " << v;
    }
  }
}

RelationPtr Wide() {
  auto r = std::make_shared<Relation>();
  r->schema = "shop";
  r->name = "items";
  r->columns = {{"id", ValueType::kInt, 23, -1, true}, {"price", ValueType::kNumeric, 1700},
                {"doc", ValueType::kJson, 3802},       {"body", ValueType::kText, 25},
                {"raw", ValueType::kBytes, 17},        {"ok", ValueType::kBool, 16},
                {"tags", ValueType::kArray, 1009},     {"big", ValueType::kInt, 0, -1, false, 65}};
  return r;
}

TEST(AppendDebeziumJson, AnUpdateIsDebeziumsEnvelopeWithASchemaItsValuesMatch) {
  Change c;
  c.op = ChangeOp::kUpdate;
  c.relation = Wide();
  c.commit_position = 0x16B3748;
  c.commit_time_us = 1'700'000'000'123'456;
  c.before = Row{Cell::Value("7"),
                 Cell::Value("1.10"),
                 Cell::Value(R"({"a": [1, 2]})"),
                 Cell::Value("old"),
                 Cell::Value("\\x0102"),
                 Cell::Value("t"),
                 Cell::Value("{a,b}"),
                 Cell::Value("18446744073709551615")};
  c.after = c.before;
  (*c.after)[3] = Cell{CellState::kUnchangedToast, ""};
  (*c.after)[1] = Cell::Value("123456789012345678901234567890.5");
  std::string out;
  AppendDebeziumJson(c, "pg1", out);
  const nlohmann::json j = nlohmann::json::parse(out);
  const auto& schema = j["schema"];
  EXPECT_EQ(schema["name"], "pg1.shop.items.Envelope");
  const auto& fields = schema["fields"];
  ASSERT_EQ(fields.size(), 5u);
  EXPECT_EQ(fields[0]["field"], "before");
  EXPECT_EQ(fields[0]["name"], "pg1.shop.items.Value");
  EXPECT_EQ(fields[2]["name"], "io.debezium.connector.postgresql.Source");
  const auto& p = j["payload"];
  EXPECT_EQ(p["op"], "u");
  EXPECT_TRUE(p["ts_ms"].is_number_integer());
  ExpectPayloadMatchesSchema(p["before"], fields[0]["fields"]);
  ExpectPayloadMatchesSchema(p["after"], fields[1]["fields"]);
  ExpectPayloadMatchesSchema(p["source"], fields[2]["fields"]);
  // Exact numbers stay exact (strings), json is a string, TOAST not sent is the placeholder.
  EXPECT_EQ(p["after"]["price"], "123456789012345678901234567890.5");
  EXPECT_EQ(p["after"]["big"], "18446744073709551615");
  EXPECT_EQ(p["after"]["doc"], R"({"a": [1, 2]})");
  EXPECT_EQ(p["after"]["body"], "__debezium_unavailable_value");
  EXPECT_EQ(p["after"]["raw"], "AQI=");
  EXPECT_EQ(p["after"]["id"], 7);
  EXPECT_EQ(fields[1]["fields"][0]["type"], "int32");
  EXPECT_FALSE(fields[1]["fields"][0]["optional"].get<bool>());  // the key
  EXPECT_EQ(fields[1]["fields"][2]["name"], "io.debezium.data.Json");
  EXPECT_EQ(p["source"]["connector"], "postgresql");
  EXPECT_EQ(p["source"]["name"], "pg1");
  EXPECT_EQ(p["source"]["lsn"], 0x16B3748);
  EXPECT_EQ(p["source"]["ts_ms"], 1'700'000'000'123);
  EXPECT_EQ(p["source"]["schema"], "shop");
  EXPECT_EQ(p["source"]["table"], "items");
}

TEST(AppendDebeziumJson, ABinlogDeleteAndASnapshotReadNameTheirSourceLikeDebezium) {
  auto r = std::make_shared<Relation>(*Orders());
  r->schema = "shop";
  r->binlog_base = "mysql-bin";
  Change d;
  d.op = ChangeOp::kDelete;
  d.relation = r;
  d.commit_position = (uint64_t{3} << 32) | 4567;
  d.txn = std::make_shared<const SourceTxn>(SourceTxn{"0-1-42", 1});
  d.before = Row{Cell::Value("5"), Cell::Value("x")};
  std::string out;
  AppendDebeziumJson(d, "my", out);
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["payload"]["op"], "d");
  EXPECT_TRUE(j["payload"]["after"].is_null());
  EXPECT_EQ(j["payload"]["before"]["id"], 5);
  const auto& source = j["payload"]["source"];
  EXPECT_EQ(source["connector"], "mysql");
  EXPECT_EQ(source["db"], "shop");
  EXPECT_EQ(source["file"], "mysql-bin.000003");
  EXPECT_EQ(source["pos"], 4567);
  EXPECT_EQ(source["gtid"], "0-1-42");
  EXPECT_EQ(source["server_id"], 1);
  EXPECT_EQ(j["schema"]["fields"][2]["name"], "io.debezium.connector.mysql.Source");
  ExpectPayloadMatchesSchema(source, j["schema"]["fields"][2]["fields"]);

  Change read = ReadOf(Orders(), {Cell::Value("1"), Cell::Value("hi")});
  out.clear();
  AppendDebeziumJson(read, "pg", out);
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["payload"]["op"], "r");
  EXPECT_EQ(j["payload"]["source"]["snapshot"], "true");
  EXPECT_TRUE(j["payload"]["before"].is_null());
  EXPECT_EQ(j["payload"]["after"]["note"], "hi");
}

TEST(AppendDebeziumKeyJson, IsTheKeyStructAndItsValues) {
  auto key = std::make_shared<Relation>();
  key->schema = "public";
  key->name = "orders";
  key->columns = {{"id", ValueType::kInt, 20, -1, true}};
  std::string out;
  AppendDebeziumKeyJson(key, Row{Cell::Value("42")}, "pg", out);
  EXPECT_EQ(out,
            R"({"schema":{"type":"struct","optional":false,"name":"pg.public.orders.Key",)"
            R"("fields":[{"type":"int64","optional":false,"field":"id"}]},"payload":{"id":42}})");
  // The cached schema follows the server, and the key does not take the envelope's.
  out.clear();
  AppendDebeziumKeyJson(key, Row{Cell::Value("7")}, "other", out);
  EXPECT_EQ(out.substr(0, 76),
            R"({"schema":{"type":"struct","optional":false,"name":"other.public.orders.Key")");
  EXPECT_EQ(out.substr(out.size() - 23), R"(}]},"payload":{"id":7}})");
}

TEST(ParseBoolText, RejectsOtherSpellings) {
  EXPECT_EQ(ParseBoolText("T"), std::nullopt);
  EXPECT_EQ(ParseBoolText("yes"), std::nullopt);
  EXPECT_EQ(ParseBoolText(""), std::nullopt);
}

}  // namespace
}  // namespace faucet
