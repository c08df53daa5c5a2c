// Row images recorded from MariaDB 10.11 (testdata/, record.sh), decoded to the text forms of
// mysql_types.h. The expected strings are what `mariadb -e 'SELECT ...'` printed for the same
// rows (time_zone '+00:00'), except where mysql_types.h documents a different form: bytes in
// hex ("\x..."), BIT as t/f or 0/1 digits, TIMESTAMP with "+00", FLOAT/DOUBLE as std::to_chars
// prints them (MariaDB: "-3.40282e38", "1e100"), YEAR 0 as "0" (MariaDB: "0000").
// MySQL's binary JSON, which MariaDB does not write, is built by hand.
#include "sources/mysql/row_image.h"

#include <gtest/gtest.h>

#include "sources/mysql/binlog_test_files.h"
#include "sources/mysql/mysql_types.h"
#include "testing/status_matchers.h"

namespace faucet::mysql {
namespace {

using testing::Le;
using testing::LoadBinlog;
using testing::Replay;

constexpr const char* kNull = "<NULL>";
constexpr const char* kUnchanged = "<UNCHANGED>";

// A row as strings: the text of each value, kNull, or kUnchanged.
std::vector<std::string> Texts(const Row& row) {
  std::vector<std::string> out;
  for (const Cell& c : row) {
    out.push_back(c.state == CellState::kNull             ? kNull
                  : c.state == CellState::kUnchangedToast ? kUnchanged
                                                          : c.text);
  }
  return out;
}

using Rows = std::vector<std::vector<std::string>>;

Rows TextsOf(const std::vector<Row>& rows) {
  Rows out;
  for (const Row& r : rows) out.push_back(Texts(r));
  return out;
}

Replay ReplayOf(const std::string& name) {
  Replay replay = testing::RecordedReplay();
  replay.complete_table_map = testing::CompleteFromCatalog;
  Status s = replay.FeedAll(LoadBinlog(name).events);
  EXPECT_OK(s) << name;
  return replay;
}

// The rows the one write event of a recorded insert-only file wrote.
Rows Inserted(const std::string& name) {
  Replay replay = ReplayOf(name);
  EXPECT_EQ(replay.rows.size(), 1u) << name;
  if (replay.rows.empty()) return {};
  EXPECT_EQ(replay.rows[0].kind, RowsKind::kWrite);
  return TextsOf(replay.rows[0].after);
}

TEST(RecordedRows, IntegersSignedAndUnsignedAtTheirLimits) {
  EXPECT_EQ(
      Inserted("ints"),
      (Rows{{"1", "-128", "255", "-32768", "65535", "-8388608", "16777215", "-2147483648",
             "4294967295", "-9223372036854775808", "18446744073709551615", "2155"},
            {"2", "127", "0", "32767", "0", "8388607", "0", "2147483647", "0",
             "9223372036854775807", "0", "1901"},
            {"3", "-1", "1", "-1", "1", "-1", "1", "-1", "1", "-1", "1", "0"},
            {"4", kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull}}));
}

TEST(RecordedRows, DecimalsExactWithTheirScaleAndFloatsShortest) {
  EXPECT_EQ(Inserted("nums"),
            (Rows{{"1", "12345678901234567890123456789012345.123456789012345678901234567890",
                   "0.50", "1234567890", "-123456789.987654321", "999.9", "0.1", "0.1"},
                  {"2", "-12345678901234567890123456789012345.123456789012345678901234567890",
                   "-1.00", "-1", "0.000000001", "0.0", "-3.4028235e+38", "1e+100"},
                  {"3", "-0.000000000000000000000000000001", "999.99", "0", "-0.500000000", "0.5",
                   "1.5", "-2.2250738585072014e-308"},
                  {"4", "0.000000000000000000000000000000", "-999.99", "-9999999999",
                   "999999999.999999999", kNull, "0", "1.7976931348623157e+308"},
                  {"5", kNull, kNull, kNull, kNull, kNull, kNull, kNull}}));
}

TEST(RecordedRows, TemporalTypesWithEveryFractionalPrecision) {
  const Rows rows = Inserted("times");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"1",
                                               "2024-02-29",
                                               "-838:59:59",
                                               "-12:34:56.1",
                                               "-00:00:00.01",
                                               "-00:00:01.500",
                                               "123:00:00.0001",
                                               "-00:00:00.00001",
                                               "-838:59:59.000000",
                                               "2024-02-29 13:14:15",
                                               "2024-02-29 13:14:15.1",
                                               "2024-02-29 13:14:15.12",
                                               "2024-02-29 13:14:15.123",
                                               "2024-02-29 13:14:15.1234",
                                               "2024-02-29 13:14:15.12345",
                                               "2024-02-29 13:14:15.123456",
                                               "2024-02-29 13:14:15+00",
                                               "2024-02-29 13:14:15.1+00",
                                               "2024-02-29 13:14:15.12+00",
                                               "2024-02-29 13:14:15.123+00",
                                               "2024-02-29 13:14:15.1234+00",
                                               "2024-02-29 13:14:15.12345+00",
                                               "2024-02-29 13:14:15.123456+00",
                                               "2024"}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"2",
                                               "0000-00-00",
                                               "00:00:00",
                                               "00:00:00.0",
                                               "00:00:00.00",
                                               "00:00:00.000",
                                               "00:00:00.0000",
                                               "00:00:00.00000",
                                               "00:00:00.000000",
                                               "0000-00-00 00:00:00",
                                               "0000-00-00 00:00:00.0",
                                               "0000-00-00 00:00:00.00",
                                               "0000-00-00 00:00:00.000",
                                               "0000-00-00 00:00:00.0000",
                                               "0000-00-00 00:00:00.00000",
                                               "0000-00-00 00:00:00.000000",
                                               "0000-00-00 00:00:00+00",
                                               "0000-00-00 00:00:00.0+00",
                                               "0000-00-00 00:00:00.00+00",
                                               "0000-00-00 00:00:00.000+00",
                                               "0000-00-00 00:00:00.0000+00",
                                               "0000-00-00 00:00:00.00000+00",
                                               "0000-00-00 00:00:00.000000+00",
                                               "0"}));
  EXPECT_EQ(rows[2], (std::vector<std::string>{"3",
                                               "9999-12-31",
                                               "838:59:59",
                                               "838:59:59.9",
                                               "838:59:59.99",
                                               "838:59:59.999",
                                               "838:59:59.9999",
                                               "838:59:59.99999",
                                               "838:59:59.999999",
                                               "9999-12-31 23:59:59",
                                               "9999-12-31 23:59:59.9",
                                               "9999-12-31 23:59:59.99",
                                               "9999-12-31 23:59:59.999",
                                               "9999-12-31 23:59:59.9999",
                                               "9999-12-31 23:59:59.99999",
                                               "9999-12-31 23:59:59.999999",
                                               "2038-01-19 03:14:07+00",
                                               "2038-01-19 03:14:07.9+00",
                                               "2038-01-19 03:14:07.99+00",
                                               "2038-01-19 03:14:07.999+00",
                                               "2038-01-19 03:14:07.9999+00",
                                               "2038-01-19 03:14:07.99999+00",
                                               "2038-01-19 03:14:07.999999+00",
                                               "2155"}));
  EXPECT_EQ(rows[3], (std::vector<std::string>{"4",
                                               "2024-00-15",
                                               "-00:00:01",
                                               "-00:00:00.9",
                                               "-00:00:00.99",
                                               "-00:00:00.999",
                                               "-00:00:00.9999",
                                               "-00:00:00.99999",
                                               "-00:00:00.000001",
                                               "1000-01-01 00:00:00",
                                               "1000-01-01 00:00:00.0",
                                               "1000-01-01 00:00:00.01",
                                               "1000-01-01 00:00:00.001",
                                               "1000-01-01 00:00:00.0001",
                                               "1000-01-01 00:00:00.00001",
                                               "1000-01-01 00:00:00.000001",
                                               "1970-01-01 00:00:01+00",
                                               "1970-01-01 00:00:01.5+00",
                                               "1970-01-01 00:00:01.05+00",
                                               "1970-01-01 00:00:01.005+00",
                                               "1970-01-01 00:00:01.0005+00",
                                               "1970-01-01 00:00:01.00005+00",
                                               "1970-01-01 00:00:01.000005+00",
                                               "1901"}));
  std::vector<std::string> nulls(24, kNull);
  nulls[0] = "5";
  EXPECT_EQ(rows[4], nulls);
}

TEST(RecordedRows, OldTemporalTypes) {
  EXPECT_EQ(Inserted("old_times"),
            (Rows{{"1", "-838:59:59", "9999-12-31 23:59:59", "2038-01-19 03:14:07+00"},
                  {"2", "12:34:56", "0000-00-00 00:00:00", "0000-00-00 00:00:00+00"},
                  {"3", "-00:00:01", "2024-02-29 13:14:15", "1970-01-01 00:00:01+00"}}));
}

TEST(RecordedRows, StringsInEveryCharsetAsUtf8) {
  const Rows rows = Inserted("strs");
  ASSERT_EQ(rows.size(), 3u);
  std::string euros;
  for (int i = 0; i < 100; ++i) euros += "€";
  EXPECT_EQ(rows[0], (std::vector<std::string>{
                         "1", "ab", "héllo 😀", std::string(300, 'x'), "text 😀\n\ttab", "tiny",
                         "medium", "long", euros, "Bin", "€ÿŠ", "café", "latin1 ‰ text", "ascii",
                         "ünï", "Привет", "{\"a\": [1, 2.5, \"x\"], \"b\": null}"}));
  std::vector<std::string> empty(17, "");
  empty[0] = "2";
  empty[16] = "[]";
  EXPECT_EQ(rows[1], empty);
  std::vector<std::string> nulls(17, kNull);
  nulls[0] = "3";
  EXPECT_EQ(rows[2], nulls);
}

TEST(RecordedRows, BinaryStringsAsHexWithTheirZeroBytes) {
  EXPECT_EQ(Inserted("bins"),
            (Rows{{"1", "\\x00010000", "\\x00ff00", "\\x000102", "\\xff", "\\x00", "\\xdeadbeef",
                   "\\x" +
                       [] {
                         std::string s;
                         for (int i = 0; i < 150; ++i) s += "00ab";
                         return s;
                       }(),
                   "\\x610000"},
                  {"2", "\\x00000000", "\\x", "\\x", "\\x", "\\x", "\\x", "\\x", "\\x000000"},
                  {"3", kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull}}));
}

TEST(RecordedRows, EnumSetBitAndGeometry) {
  EXPECT_EQ(
      Inserted("misc"),
      (Rows{{"1", "b", "v260", "x,z", "m1,m64", "é", "t", "1010101011",
             "1000000000000000000000000000000000000000000000000000000000000001",
             "\\x000000000101000000000000000000f03f0000000000000040",
             "\\x000000000101000000000000000000f8bf0000000000000000"},
            {"2", "", "v1", "", "", "ü", "f", "0000000000", std::string(64, '0'),
             "\\x0000000001020000000200000000000000000000000000000000000000000000000000f03f0000"
             "00000000f03f",
             "\\x00000000010100000000000000000000000000000000000000"},
            {"3", kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull, kNull}}));
}

TEST(RecordedRows, UpdatesDeletesAndAMultiStatementTransaction) {
  Replay replay = ReplayOf("dml");
  ASSERT_EQ(replay.rows.size(), 6u);
  const auto& ints_update = replay.rows[0];
  EXPECT_EQ(ints_update.kind, RowsKind::kUpdate);
  EXPECT_EQ(TextsOf(ints_update.before),
            (Rows{{"3", "-1", "1", "-1", "1", "-1", "1", "-1", "1", "-1", "1", "0"}}));
  EXPECT_EQ(TextsOf(ints_update.after),
            (Rows{{"3", "5", "1", "-1", "1", "-1", "1", "-1", "1", kNull, "1", "0"}}));
  const auto& strs_update = replay.rows[1];
  ASSERT_EQ(strs_update.after.size(), 1u);
  EXPECT_EQ(Texts(strs_update.before[0])[2], "héllo 😀");
  EXPECT_EQ(Texts(strs_update.after[0])[2], "changed 😀");
  EXPECT_EQ(Texts(strs_update.after[0])[11], "Ñ");  // latin1
  const auto& bins_delete = replay.rows[2];
  EXPECT_EQ(bins_delete.kind, RowsKind::kDelete);
  EXPECT_TRUE(bins_delete.after.empty());
  EXPECT_EQ(TextsOf(bins_delete.before),
            (Rows{{"2", "\\x00000000", "\\x", "\\x", "\\x", "\\x", "\\x", "\\x", "\\x000000"}}));
  // After the ALTER TABLE: the new column, in a new table map of the same table.
  const auto& ints_insert = replay.rows[3];
  EXPECT_EQ(TextsOf(ints_insert.after), (Rows{{"10", "10", kNull, kNull, kNull, kNull, kNull, kNull,
                                               kNull, kNull, kNull, kNull, "ten"},
                                              {"11", "11", kNull, kNull, kNull, kNull, kNull, kNull,
                                               kNull, kNull, kNull, kNull, kNull}}));
  const auto& misc_update = replay.rows[4];
  EXPECT_EQ(Texts(misc_update.before[0])[1], "b");
  EXPECT_EQ(Texts(misc_update.after[0])[1], "c");
  EXPECT_EQ(Texts(misc_update.before[0])[3], "x,z");
  EXPECT_EQ(Texts(misc_update.after[0])[3], "y");
  EXPECT_EQ(TextsOf(replay.rows[5].before),
            (Rows{{"5", kNull, kNull, kNull, kNull, kNull, kNull, kNull}}));
}

TEST(RecordedRows, MinimalMetadataWithMembersFromTheCatalog) {
  Replay replay = ReplayOf("minimal");
  ASSERT_EQ(replay.rows.size(), 3u);
  EXPECT_EQ(TextsOf(replay.rows[0].after),
            (Rows{{"20", "-5", "250", kNull, kNull, kNull, kNull, kNull, kNull, "-1",
                   "18446744073709551615", kNull, "x"}}));
  std::vector<std::string> strs(17, kNull);
  strs[0] = "20";
  strs[2] = "ok 😀";
  strs[9] = "x";
  strs[11] = "çà";
  strs[15] = "Да";
  EXPECT_EQ(TextsOf(replay.rows[1].after), Rows{strs});
  const std::vector<std::string> before = Texts(replay.rows[2].before[0]);
  const std::vector<std::string> after = Texts(replay.rows[2].after[0]);
  EXPECT_EQ((std::vector<std::string>{before[1], before[3], before[5]}),
            (std::vector<std::string>{"", "", "ü"}));
  EXPECT_EQ((std::vector<std::string>{after[1], after[3], after[5]}),
            (std::vector<std::string>{"a", "x,y", "ü"}));
}

TEST(RecordedRows, MinimalImageMarksColumnsNotSentUnchanged) {
  Replay replay = ReplayOf("image_minimal");
  ASSERT_EQ(replay.rows.size(), 2u);
  std::vector<std::string> key(13, kUnchanged);
  key[0] = "20";
  EXPECT_EQ(TextsOf(replay.rows[0].before), Rows{key});
  std::vector<std::string> changed(13, kUnchanged);
  changed[2] = "7";
  EXPECT_EQ(TextsOf(replay.rows[0].after), Rows{changed});
  key[0] = "11";
  EXPECT_EQ(TextsOf(replay.rows[1].before), Rows{key});
  EXPECT_EQ(replay.rows[1].kind, RowsKind::kDelete);
}

TEST(RecordedRows, CompressedRowsEvents) {
  Replay replay = ReplayOf("compressed");
  ASSERT_EQ(replay.rows.size(), 3u);
  std::string compressible, again;
  for (int i = 0; i < 15; ++i) compressible += "compressible ";
  for (int i = 0; i < 20; ++i) again += "again ";
  EXPECT_EQ(TextsOf(replay.rows[0].after),
            (Rows{{"1", compressible, "-7"}, {"2", "short", kNull}}));
  EXPECT_EQ(TextsOf(replay.rows[1].before), (Rows{{"1", compressible, "-7"}}));
  EXPECT_EQ(TextsOf(replay.rows[1].after), (Rows{{"1", again, "8"}}));
  EXPECT_EQ(TextsOf(replay.rows[2].before), (Rows{{"2", "short", kNull}}));
}

TEST(ResolveColumns, CodecsOfTheRecordedStringTable) {
  Replay replay = ReplayOf("strs");
  const std::vector<ColumnCodec>& c = replay.codecs.begin()->second;
  ASSERT_EQ(c.size(), 17u);
  EXPECT_EQ(c[1].type, kTypeString);  // CHAR(10) utf8mb4: 40 bytes
  EXPECT_EQ(c[1].length, 40u);
  EXPECT_EQ(replay.maps.begin()->second.columns[8].meta, 0xee90);  // CHAR(100): 400 bytes
  EXPECT_EQ(c[8].length, 400u);
  EXPECT_EQ(c[1].value_type, ValueType::kText);
  EXPECT_FALSE(c[1].to_utf8);   // utf8mb4: copied
  EXPECT_TRUE(c[10].to_utf8);   // latin1: converted
  EXPECT_FALSE(c[13].to_utf8);  // ascii: copied
  Replay bins = ReplayOf("bins");
  const std::vector<ColumnCodec>& b = bins.codecs.begin()->second;
  EXPECT_TRUE(b[1].binary);
  EXPECT_EQ(b[1].value_type, ValueType::kBytes);
  EXPECT_EQ(b[1].length, 4u);
  Replay misc = ReplayOf("misc");
  const std::vector<ColumnCodec>& m = misc.codecs.begin()->second;
  EXPECT_EQ(m[1].type, kTypeEnum);
  EXPECT_EQ(m[2].length, 2u);
  EXPECT_EQ(m[3].type, kTypeSet);
  EXPECT_EQ(m[4].length, 8u);
  EXPECT_EQ(m[5].enum_values, (std::vector<std::string>{"é", "ü"}));  // converted from latin1
  EXPECT_EQ(m[6].value_type, ValueType::kBool);
  EXPECT_EQ(m[7].value_type, ValueType::kOther);
  EXPECT_EQ(m[9].value_type, ValueType::kBytes);
}

TEST(ResolveColumns, EnumWithoutMembersIsFailedPreconditionNamingTheColumn) {
  Replay replay = testing::RecordedReplay();
  replay.complete_table_map = nullptr;  // no catalog
  Status s = replay.FeedAll(LoadBinlog("minimal").events);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("faucet.misc column 1"), std::string::npos) << s.message();
}

TEST(ResolveColumns, UnknownCollationNeedsTheCatalog) {
  Replay replay;  // DefaultCharsets() without name_of
  Status s = replay.FeedAll(LoadBinlog("strs").events);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("faucet.strs column 15 (cyr)"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("collation id 51"), std::string::npos) << s.message();
}

TEST(ResolveColumns, CharacterColumnWithoutCollationIsUtf8mb4) {
  TableMap map;
  map.database = "d";
  map.table = "t";
  map.columns.resize(1);
  map.columns[0].type = kTypeVarchar;
  map.columns[0].meta = 300;
  Result<std::vector<ColumnCodec>> codecs = ResolveColumns(map, {});
  ASSERT_OK(codecs);
  EXPECT_FALSE((*codecs)[0].binary);
  EXPECT_FALSE((*codecs)[0].to_utf8);
  std::string bytes = Le(3, 2) + "abc";  // 2 length bytes: the maximum is above 255
  std::string_view in = bytes;
  Result<std::string> v = DecodeValue((*codecs)[0], in);
  ASSERT_OK(v);
  EXPECT_EQ(*v, "abc");
  EXPECT_TRUE(in.empty());
}

TEST(Charsets, BuiltinCollationsOfMariaDbAndMysql) {
  CharsetLookup charsets = DefaultCharsets();
  for (uint32_t utf8 :
       {33u, 45u, 46u, 83u, 192u, 215u, 224u, 247u, 255u, 309u, 1069u, 2048u, 2304u, 11u, 65u}) {
    Result<std::function<bool(std::string_view, std::string&)>> c = charsets(utf8);
    ASSERT_OK(c) << utf8;
    EXPECT_FALSE(*c) << utf8;
  }
  for (uint32_t latin1 : {5u, 8u, 15u, 31u, 47u, 48u, 49u, 94u}) {
    Result<std::function<bool(std::string_view, std::string&)>> c = charsets(latin1);
    ASSERT_OK(c) << latin1;
    ASSERT_TRUE(*c) << latin1;
  }
  ASSERT_OK(charsets(kBinaryCollation));
  Result<std::function<bool(std::string_view, std::string&)>> unknown = charsets(51);
  EXPECT_EQ(unknown.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(unknown.status().message().find("51"), std::string::npos);
}

TEST(Charsets, Latin1IsCp1252WithItsUndefinedBytesAsC1Controls) {
  auto latin1 = DefaultCharsets()(8);
  ASSERT_OK(latin1);
  std::string out;
  ASSERT_TRUE(
      (*latin1)("\x80\x81\x8a\x9f\xa0\xe9\xff"
                "A",
                out));
  EXPECT_EQ(out, "€\u0081Š\u0178\u00a0éÿA");
}

TEST(Charsets, OtherCharsetsThroughIconvByName) {
  CharsetLookup charsets = DefaultCharsets([](uint32_t id) -> std::string {
    if (id == 51) return "cp1251";
    if (id == 95) return "cp932";
    if (id == 54) return "utf16";
    if (id == 300000) return "utf8mb4";
    if (id == 300001) return "nosuchcharset";
    return "";
  });
  auto cp1251 = charsets(51);
  ASSERT_OK(cp1251);
  std::string out;
  ASSERT_TRUE((*cp1251)("\xcf\xf0\xe8\xe2\xe5\xf2", out));
  EXPECT_EQ(out, "Привет");
  auto utf16 = charsets(54);
  ASSERT_OK(utf16);
  out.clear();
  ASSERT_TRUE((*utf16)(std::string("\xd8\x3d\xde\x00\x00\x41", 6), out));
  EXPECT_EQ(out, "😀A");
  out = "kept";
  EXPECT_FALSE((*utf16)(std::string("\xd8\x3d", 2), out));  // half a surrogate pair
  EXPECT_EQ(out, "kept");
  auto by_name = charsets(300000);
  ASSERT_OK(by_name);
  EXPECT_FALSE(*by_name);
  EXPECT_EQ(charsets(300001).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(charsets(7).status().code(), StatusCode::kFailedPrecondition);  // name_of: ""
}

// --- values built by hand ------------------------------------------------------------------

ColumnCodec Codec(uint8_t type, uint16_t meta = 0, bool is_unsigned = false) {
  ColumnCodec c;
  c.type = type;
  c.meta = meta;
  c.is_unsigned = is_unsigned;
  return c;
}

std::string Decode(const ColumnCodec& c, const std::string& bytes) {
  std::string_view in = bytes;
  Result<std::string> v = DecodeValue(c, in);
  if (!v.ok()) return "error: " + v.status().message();
  if (!in.empty()) return "left " + std::to_string(in.size());
  return *v;
}

TEST(Values, Decimals) {
  // DECIMAL(4,2) 12.34: two digits a side, one byte each; the sign bit is set when positive
  // and every byte inverted when negative.
  const ColumnCodec d42 = Codec(kTypeNewDecimal, (4 << 8) | 2);
  EXPECT_EQ(Decode(d42, "\x8c\x22"), "12.34");
  EXPECT_EQ(Decode(d42, "\x73\xdd"), "-12.34");
  EXPECT_EQ(Decode(d42, std::string("\x80\x00", 2)), "0.00");
  EXPECT_EQ(Decode(d42, "\x80\x64"), "error: DECIMAL digit group out of range");
  EXPECT_EQ(Decode(Codec(kTypeNewDecimal, (66 << 8) | 2), "\x80"), "error: invalid DECIMAL(66,2)");
  EXPECT_EQ(Decode(d42, "\x8c"), "error: truncated value: 2 bytes needed, 1 left");
  // DECIMAL(20,10): a full 9-digit group and a 1-digit remainder a side.
  const ColumnCodec d2010 = Codec(kTypeNewDecimal, (20 << 8) | 10);
  EXPECT_EQ(Decode(d2010, "\x81" + std::string("\x00\x00\x00\x2a", 4) +
                              std::string("\x00\x00\x00\x07\x05", 5)),
            "1000000042.0000000075");
}

TEST(Values, Time2AcrossFractionalPrecisions) {
  // -00:00:00.01 at fsp 2: integer part 0x800000 - 1, fraction byte 0xff (-1 hundredth).
  EXPECT_EQ(Decode(Codec(kTypeTime2, 2), "\x7f\xff\xff\xff"), "-00:00:00.01");
  // 01:02:03.4567 at fsp 4: hms = 1 << 12 | 2 << 6 | 3, fraction 4567 in 2 bytes.
  EXPECT_EQ(Decode(Codec(kTypeTime2, 4), std::string("\x80\x10\x83\x11\xd7", 5)), "01:02:03.4567");
  EXPECT_EQ(Decode(Codec(kTypeTime2, 7), "\x80\x00\x00"),
            "error: fractional seconds precision 7 > 6");
  EXPECT_EQ(Decode(Codec(kTypeTime2, 0), std::string("\x80\x00\x7f", 3)),
            "error: invalid TIME value");
}

TEST(Values, TimestampZeroAndEpochSeconds) {
  EXPECT_EQ(Decode(Codec(kTypeTimestamp2, 3), std::string(6, '\0')), "0000-00-00 00:00:00.000+00");
  EXPECT_EQ(Decode(Codec(kTypeTimestamp2, 0), "\x65\x9b\xd2\x80"), "2024-01-08 10:46:24+00");
  EXPECT_EQ(Decode(Codec(kTypeTimestamp), "\x80\xd2\x9b\x65"), "2024-01-08 10:46:24+00");
}

TEST(Values, YearFloatDoubleBit) {
  EXPECT_EQ(Decode(Codec(kTypeYear), std::string(1, '\0')), "0");
  EXPECT_EQ(Decode(Codec(kTypeYear), "\x7c"), "2024");
  EXPECT_EQ(Decode(Codec(kTypeFloat, 4), Le(0x3dcccccd, 4)), "0.1");
  EXPECT_EQ(Decode(Codec(kTypeDouble, 8), Le(0x3ff8000000000000, 8)), "1.5");
  EXPECT_EQ(Decode(Codec(kTypeBit, 0x0001), "\x01"), "t");
  EXPECT_EQ(Decode(Codec(kTypeBit, 0x0103), "\x05\x01"), "10100000001");
  EXPECT_EQ(Decode(Codec(kTypeBit, 0x0900), "\x01"), "error: invalid BIT width 72");
}

TEST(Values, EnumAndSetOutOfRangeAreDataLoss) {
  ColumnCodec e = Codec(kTypeEnum);
  e.length = 1;
  e.enum_values = {"a", "b"};
  EXPECT_EQ(Decode(e, "\x02"), "b");
  EXPECT_EQ(Decode(e, std::string(1, '\0')), "");
  EXPECT_EQ(Decode(e, "\x03"), "error: ENUM index 3 beyond its 2 members");
  ColumnCodec s = Codec(kTypeSet);
  s.length = 1;
  s.enum_values = {"a", "b"};
  EXPECT_EQ(Decode(s, "\x03"), "a,b");
  EXPECT_EQ(Decode(s, "\x04"), "error: SET bits beyond its members");
}

TEST(DecodeRow, ColumnCountMismatchAndTruncationAreDataLossNamingTheTable) {
  std::vector<ColumnCodec> codecs = {Codec(kTypeLong), Codec(kTypeLong)};
  ColumnBitmap three{{0x07}, 3};
  std::string bytes = std::string(1, '\0') + Le(1, 4) + Le(2, 4);
  std::string_view data = bytes;
  Row row;
  Status s = DecodeRow(codecs, three, data, row, "d.t");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("d.t"), std::string::npos);
  ColumnBitmap both{{0x03}, 2};
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string_view cut = std::string_view(bytes).substr(0, n);
    Status t = DecodeRow(codecs, both, cut, row, "d.t");
    EXPECT_EQ(t.code(), StatusCode::kDataLoss) << n;
    EXPECT_EQ(t.message().rfind("d.t", 0), 0u) << t.message();
  }
  data = bytes;
  ASSERT_OK(DecodeRow(codecs, both, data, row, "d.t"));
  EXPECT_EQ(Texts(row), (std::vector<std::string>{"1", "2"}));
  ColumnBitmap none{{0x00}, 2};
  data = bytes;
  EXPECT_EQ(DecodeRow(codecs, none, data, row, "d.t").code(), StatusCode::kDataLoss);
}

TEST(ValueTypeOf, EveryTypeHasItsLogicalType) {
  EXPECT_EQ(ValueTypeOf(kTypeLongLong, false, 0), ValueType::kInt);
  EXPECT_EQ(ValueTypeOf(kTypeYear, false, 0), ValueType::kInt);
  EXPECT_EQ(ValueTypeOf(kTypeNewDecimal, false, 0), ValueType::kNumeric);
  EXPECT_EQ(ValueTypeOf(kTypeDouble, false, 0), ValueType::kFloat);
  EXPECT_EQ(ValueTypeOf(kTypeDate, false, 0), ValueType::kDate);
  EXPECT_EQ(ValueTypeOf(kTypeTime2, false, 0), ValueType::kTime);
  EXPECT_EQ(ValueTypeOf(kTypeDateTime2, false, 0), ValueType::kTimestamp);
  EXPECT_EQ(ValueTypeOf(kTypeTimestamp2, false, 0), ValueType::kTimestampTz);
  EXPECT_EQ(ValueTypeOf(kTypeVarchar, false, 0), ValueType::kText);
  EXPECT_EQ(ValueTypeOf(kTypeBlob, true, 0), ValueType::kBytes);
  EXPECT_EQ(ValueTypeOf(kTypeEnum, false, 0), ValueType::kText);
  EXPECT_EQ(ValueTypeOf(kTypeBit, false, 1), ValueType::kBool);
  EXPECT_EQ(ValueTypeOf(kTypeBit, false, 10), ValueType::kOther);
  EXPECT_EQ(ValueTypeOf(kTypeJson, false, 0), ValueType::kJson);
  EXPECT_EQ(ValueTypeOf(kTypeGeometry, true, 0), ValueType::kBytes);
}

TEST(DeclaredWidth, IntegersInBitsCharactersInCharacters) {
  EXPECT_EQ(DeclaredWidth(kTypeTiny, false, false, 0, 1), 8u);
  EXPECT_EQ(DeclaredWidth(kTypeLong, false, false, 0, 1), 32u);
  // Unsigned: one bit more, so that BIGINT UNSIGNED does not fit a signed 64-bit column.
  EXPECT_EQ(DeclaredWidth(kTypeLong, true, false, 0, 1), 33u);
  EXPECT_EQ(DeclaredWidth(kTypeLongLong, true, false, 0, 1), 65u);
  EXPECT_EQ(DeclaredWidth(kTypeYear, false, false, 0, 1), 16u);
  EXPECT_EQ(DeclaredWidth(kTypeFloat, false, false, 0, 1), 32u);
  // VARCHAR(40) of utf8mb4 is 160 bytes; of latin1 40.
  EXPECT_EQ(DeclaredWidth(kTypeVarchar, false, false, 160, 4), 40u);
  EXPECT_EQ(DeclaredWidth(kTypeString, false, false, 40, 1), 40u);
  EXPECT_EQ(DeclaredWidth(kTypeVarchar, false, /*binary=*/true, 160, 1), 0u);
  EXPECT_EQ(DeclaredWidth(kTypeBlob, false, false, 0, 4), 0u);
  EXPECT_EQ(DeclaredWidth(kTypeNewDecimal, false, false, 0, 1), 0u);
}

// --- MySQL binary JSON, built by hand (json_binary.h) ---------------------------------------

std::string Json(const std::string& binary) {
  std::string out;
  Status s = DecodeMysqlJson(binary, out);
  return s.ok() ? out : "error: " + s.message();
}

std::string U16(uint64_t v) { return Le(v, 2); }
std::string U32(uint64_t v) { return Le(v, 4); }

TEST(MysqlJson, Scalars) {
  EXPECT_EQ(Json("\x04" + std::string(1, '\0')), "null");
  EXPECT_EQ(Json("\x04\x01"), "true");
  EXPECT_EQ(Json("\x04\x02"), "false");
  EXPECT_EQ(Json("\x05" + U16(0xfffe)), "-2");
  EXPECT_EQ(Json("\x06" + U16(0xfffe)), "65534");
  EXPECT_EQ(Json("\x07" + U32(0x80000000)), "-2147483648");
  EXPECT_EQ(Json("\x08" + U32(0xffffffff)), "4294967295");
  EXPECT_EQ(Json("\x09" + Le(0x8000000000000000, 8)), "-9223372036854775808");
  EXPECT_EQ(Json("\x0a" + Le(0xffffffffffffffff, 8)), "18446744073709551615");
  EXPECT_EQ(Json("\x0b" + Le(0x4004000000000000, 8)), "2.5");
  EXPECT_EQ(Json("\x0b" + Le(0x3ff0000000000000, 8)), "1.0");
  EXPECT_EQ(Json("\x0b" + Le(0x7ff0000000000000, 8)), "error: binary JSON: non-finite double");
  EXPECT_EQ(Json("\x0c\x0a"
                 "a\"b\\c\n\x01\xc3\xa9z"),
            "\"a\\\"b\\\\c\\n\\u0001éz\"");
  // A 200-byte string: its length takes two bytes (0xc8 0x01).
  EXPECT_EQ(Json("\x0c\xc8\x01" + std::string(200, 'x')), "\"" + std::string(200, 'x') + "\"");
}

TEST(MysqlJson, SmallObjectWithNestedArray) {
  // {"a": 1, "bb": [true, "x"]}: count 2, size, key entries (offset, length), value entries
  // (type, inline value or offset), keys, then the array.
  const std::string array = U16(2) + U16(12) + "\x04" + U16(1) + "\x0c" + U16(10) + "\x01x";
  std::string object = U16(2) + U16(0) + U16(18) + U16(1) + U16(19) + U16(2) + "\x05" + U16(1) +
                       "\x02" + U16(21) + "abb" + array;
  object.replace(2, 2, U16(object.size()));
  EXPECT_EQ(Json(std::string(1, '\0') + object), "{\"a\":1,\"bb\":[true,\"x\"]}");
}

TEST(MysqlJson, LargeArrayInlinesInt32) {
  // [7, -1, "s"] in the large form: 4-byte count, size and offsets; int32 inlined.
  std::string array =
      U32(3) + U32(0) + "\x07" + U32(7) + "\x07" + U32(0xffffffff) + "\x0c" + U32(23) + "\x01s";
  array.replace(4, 4, U32(array.size()));
  EXPECT_EQ(Json("\x03" + array), "[7,-1,\"s\"]");
  // In the small form an int32 is not inlined: its entry is an offset.
  std::string small = U16(1) + U16(11) + "\x07" + U16(7) + U32(42);
  EXPECT_EQ(Json("\x02" + small), "[42]");
  EXPECT_EQ(Json("\x02" + U16(0) + U16(4)), "[]");
  EXPECT_EQ(Json("\x01" + U32(0) + U32(8)), "{}");
}

TEST(MysqlJson, OpaqueValues) {
  // DECIMAL(4,2) 12.34 as opaque: precision, scale, binary decimal.
  EXPECT_EQ(Json("\x0f\xf6\x04\x04\x02\x8c\x22"), "\"12.34\"");
  // DATETIME 2015-01-15 23:24:25.5 packed: ((2015*13+1) << 22 | 15 << 17 | 23 << 12 |
  // 24 << 6 | 25) << 24 | 500000.
  const uint64_t ymdhms =
      ((2015ull * 13 + 1) << 22) | (15ull << 17) | (23ull << 12) | (24ull << 6) | 25;
  const uint64_t datetime = (ymdhms << 24) | 500000;
  EXPECT_EQ(Json("\x0f\x0c\x08" + Le(datetime, 8)), "\"2015-01-15 23:24:25.500000\"");
  EXPECT_EQ(Json("\x0f\x0a\x08" + Le((((2015ull * 13 + 1) << 22) | (15ull << 17)) << 24, 8)),
            "\"2015-01-15\"");
  const int64_t time = -static_cast<int64_t>(((1ull << 12) | (2ull << 6) | 3) << 24);
  EXPECT_EQ(Json("\x0f\x0b\x08" + Le(static_cast<uint64_t>(time), 8)), "\"-01:02:03.000000\"");
  EXPECT_EQ(Json("\x0f\xfc\x03"
                 "abc"),
            "\"base64:type252:YWJj\"");
  EXPECT_EQ(Json("\x0f\xfc\x04"
                 "abcd"),
            "\"base64:type252:YWJjZA==\"");
}

TEST(MysqlJson, MalformedDocumentsAreDataLoss) {
  EXPECT_EQ(Json(""), "error: binary JSON: empty document");
  EXPECT_EQ(Json("\x0e"), "error: binary JSON: unknown value type 14");
  EXPECT_EQ(Json("\x04\x03"), "error: binary JSON: unknown literal 3");
  EXPECT_EQ(Json("\x02" + U16(1) + U16(200)),
            "error: binary JSON: container larger than its "
            "bytes");
  EXPECT_EQ(Json("\x02" + U16(5) + U16(7) + std::string("\x04\x01\x00", 3)),
            "error: binary JSON: container entries beyond its size");
  EXPECT_EQ(Json("\x02" + U16(1) + U16(7) + "\x0c" + U16(50)),
            "error: binary JSON: value offset beyond its container");
  EXPECT_EQ(Json("\x0c\x80\x80\x80\x80\x80"),
            "error: binary JSON: string length longer than 5 "
            "bytes");
  // 101 nested arrays, each the only element of the one around it.
  std::string doc;
  for (int depth = 0; depth < 101; ++depth) {
    std::string inner = doc.empty() ? U16(0) + U16(4) : doc;
    doc = U16(1) + U16(7 + inner.size()) + "\x02" + U16(7) + inner;
  }
  EXPECT_EQ(Json("\x02" + doc), "error: binary JSON: nested deeper than 100");
  // Every prefix of a valid document fails cleanly.
  const std::string valid = "\x03" + U32(1) + U32(18) + "\x0c" + U32(13) +
                            "\x04"
                            "abcd";
  EXPECT_EQ(Json(valid), "[\"abcd\"]");
  for (size_t n = 0; n < valid.size(); ++n) {
    EXPECT_EQ(Json(valid.substr(0, n)).rfind("error: binary JSON", 0), 0u) << n;
  }
}

TEST(MysqlJson, JsonColumnInARowImage) {
  ColumnCodec c = Codec(kTypeJson, 4);
  c.value_type = ValueType::kJson;
  EXPECT_EQ(Decode(c, U32(2) + "\x04\x01"), "true");
  EXPECT_EQ(Decode(c, U32(0)), "null");
}

}  // namespace
}  // namespace faucet::mysql
