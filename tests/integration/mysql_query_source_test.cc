// The mysql query source against the MariaDB of scripts/services.sh: every type reads back in
// the text form of mysql_types.h (the binary protocol: FLOAT exact, TIMESTAMP in UTC, BIT and
// binary strings as hex, zero dates kept), rows stream in pages of batch_size with bounded
// memory, values longer than the bound buffers come whole, the relation names the table and
// its key, a bad query is the user's error naming it, and `faucet run` copies a query.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "mysql_test_support.h"
#include "sources/mysql/mysql_types.h"
#include "sources/mysql/query_source.h"
#include "testing/process.h"

namespace faucet::mysql {
namespace {

using namespace std::chrono_literals;
using testing::TestDb;

std::vector<Page> ReadAll(MysqlQuerySource& source) {
  std::vector<Page> pages;
  while (true) {
    Result<SourceEvent> e = source.Next(1s);
    EXPECT_OK(e);
    if (!e.ok() || e->kind == SourceEvent::Kind::kEnd) break;
    if (e->kind == SourceEvent::Kind::kPage) pages.push_back(std::move(e->page));
  }
  return pages;
}

MysqlQueryConfig Config(const TestDb& db, const std::string& query, size_t batch_size = 1000) {
  MysqlQueryConfig c;
  c.endpoint = db.endpoint();
  c.query = query;
  c.batch_size = batch_size;
  return c;
}

// Column name -> the cell of `row`.
std::map<std::string, Cell> ByName(const Relation& rel, const Row& row) {
  std::map<std::string, Cell> out;
  for (size_t i = 0; i < rel.columns.size() && i < row.size(); ++i) {
    out[rel.columns[i].name] = row[i];
  }
  return out;
}

class MysqlQuerySourceTypes : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = db_.Table("qtypes");
    db_.Exec("CREATE TABLE " + table_ +
             " (id INT PRIMARY KEY,"
             " ti TINYINT, uti TINYINT UNSIGNED, si SMALLINT, usi SMALLINT UNSIGNED,"
             " mi MEDIUMINT, umi MEDIUMINT UNSIGNED, i INT, ui INT UNSIGNED,"
             " bi BIGINT, ubi BIGINT UNSIGNED, dec1 DECIMAL(10,2), dec0 DECIMAL(30,0),"
             " f FLOAT, d DOUBLE, dt DATE, tm TIME(6), tm0 TIME, dtm DATETIME(6), dtm0 DATETIME,"
             " ts TIMESTAMP(3) NULL DEFAULT NULL, y YEAR, vc VARCHAR(50), ch CHAR(5), tx TEXT,"
             " l1 VARCHAR(10) CHARACTER SET latin1, bn BINARY(4), vb VARBINARY(10), bl BLOB,"
             " e ENUM('a','b','c'), st SET('x','y','z'), b1 BIT(1), b10 BIT(10), j JSON)");
    // The writing session: another time zone (TIMESTAMP values are instants, read in UTC) and
    // a sql_mode that allows the zero date.
    db_.Exec("SET SESSION time_zone = '+05:00'");
    db_.Exec("SET SESSION sql_mode = ''");
    db_.Exec("INSERT INTO " + table_ +
             " VALUES (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,"
             " -9223372036854775808, 18446744073709551615, -12345678.90,"
             " 123456789012345678901234567890, 3.1415927, 2.718281828459045, '2024-02-29',"
             " '-100:00:01.500000', '25:00:00', '2024-01-02 03:04:05.123456',"
             " '2024-01-02 03:04:05', '2024-01-02 08:04:05.120', 2024,"
             " 'h\xC3\xA9llo \xF0\x9F\x98\x80', 'ab', 'tab\\there\\nnew', '\xC3\xA9',"
             " X'0061', X'00ff', X'005c00', 'b', 'z,x', b'1', b'1000000101',"
             " '{\"a\": [1, \"x\"]}')");
    db_.Exec("INSERT INTO " + table_ + " (id) VALUES (2)");
    db_.Exec("INSERT INTO " + table_ +
             " (id, ubi, dec1, f, d, dt, dtm, dtm0, ts, y, tm, tm0, bn, e, st, b1, b10, vc, ch)"
             " VALUES (3, 0, 0.5, 0.1, 1e100, '0000-00-00', '0000-00-00 00:00:00',"
             " '0000-00-00 00:00:00', '0000-00-00 00:00:00', 0, '-00:00:00.000001', '838:59:59',"
             " X'00000000', '', '', b'0', b'0000000001', '', '')");
    db_.Exec("SET SESSION time_zone = '+00:00'");
  }

  TestDb db_;
  std::string table_;
};

TEST_F(MysqlQuerySourceTypes, EveryTypeReadsBackInItsTextForm) {
  MysqlQuerySource source(Config(db_, "SELECT * FROM " + table_ + " ORDER BY id;"));
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = ReadAll(source);
  ASSERT_EQ(pages.size(), 1u);
  ASSERT_EQ(pages[0].changes.size(), 3u);
  const Relation& rel = *source.relation();
  auto row = [&](size_t i) { return ByName(rel, *pages[0].changes[i].after); };

  const std::map<std::string, std::string> expected = {
      {"id", "1"},
      {"ti", "-128"},
      {"uti", "255"},
      {"si", "-32768"},
      {"usi", "65535"},
      {"mi", "-8388608"},
      {"umi", "16777215"},
      {"i", "-2147483648"},
      {"ui", "4294967295"},
      {"bi", "-9223372036854775808"},
      {"ubi", "18446744073709551615"},
      {"dec1", "-12345678.90"},
      {"dec0", "123456789012345678901234567890"},
      {"f", "3.1415927"},
      {"d", "2.718281828459045"},
      {"dt", "2024-02-29"},
      {"tm", "-100:00:01.500000"},
      {"tm0", "25:00:00"},
      {"dtm", "2024-01-02 03:04:05.123456"},
      {"dtm0", "2024-01-02 03:04:05"},
      {"ts", "2024-01-02 03:04:05.120+00"},
      {"y", "2024"},
      {"vc", "h\xC3\xA9llo \xF0\x9F\x98\x80"},
      {"ch", "ab"},
      {"tx", "tab\there\nnew"},
      {"l1", "\xC3\xA9"},
      {"bn", "\\x00610000"},
      {"vb", "\\x00ff"},
      {"bl", "\\x005c00"},
      {"e", "b"},
      {"st", "x,z"},
      {"b1", "t"},
      {"b10", "1000000101"},
      {"j", "{\"a\": [1, \"x\"]}"},
  };
  std::map<std::string, Cell> first = row(0);
  ASSERT_EQ(first.size(), expected.size());
  for (const auto& [name, text] : expected) {
    EXPECT_EQ(first[name], Cell::Value(text)) << name;
  }

  for (const auto& [name, cell] : row(1)) {
    if (name != "id") {
      EXPECT_EQ(cell, Cell::Null()) << name;
    }
  }

  std::map<std::string, Cell> third = row(2);
  const std::map<std::string, std::string> zeros = {
      {"ubi", "0"},
      {"dec1", "0.50"},
      {"f", "0.1"},
      {"d", "1e+100"},
      {"dt", "0000-00-00"},
      {"dtm", "0000-00-00 00:00:00.000000"},
      {"dtm0", "0000-00-00 00:00:00"},
      {"ts", "0000-00-00 00:00:00.000+00"},
      {"y", "0"},
      {"tm", "-00:00:00.000001"},
      {"tm0", "838:59:59"},
      {"bn", "\\x00000000"},
      {"e", ""},
      {"st", ""},
      {"b1", "f"},
      {"b10", "0000000001"},
      {"vc", ""},
      {"ch", ""},
  };
  for (const auto& [name, text] : zeros) EXPECT_EQ(third[name], Cell::Value(text)) << name;
}

TEST_F(MysqlQuerySourceTypes, RelationNamesTheTableItsKeyAndTypes) {
  MysqlQuerySource source(Config(db_, "SELECT * FROM " + table_));
  ASSERT_OK(source.Open(std::nullopt));
  const Relation& rel = *source.relation();
  EXPECT_EQ(rel.schema, "faucet");
  EXPECT_EQ(rel.name, table_);
  std::map<std::string, Column> columns;
  for (const Column& c : rel.columns) columns[c.name] = c;
  EXPECT_TRUE(columns["id"].key);
  EXPECT_FALSE(columns["ti"].key);
  EXPECT_EQ(columns["id"].type, ValueType::kInt);
  EXPECT_EQ(columns["ubi"].type, ValueType::kInt);
  EXPECT_EQ(columns["y"].type, ValueType::kInt);
  EXPECT_EQ(columns["dec1"].type, ValueType::kNumeric);
  EXPECT_EQ(columns["f"].type, ValueType::kFloat);
  EXPECT_EQ(columns["d"].type, ValueType::kFloat);
  EXPECT_EQ(columns["dt"].type, ValueType::kDate);
  EXPECT_EQ(columns["tm"].type, ValueType::kTime);
  EXPECT_EQ(columns["dtm"].type, ValueType::kTimestamp);
  EXPECT_EQ(columns["ts"].type, ValueType::kTimestampTz);
  EXPECT_EQ(columns["vc"].type, ValueType::kText);
  EXPECT_EQ(columns["l1"].type, ValueType::kText);
  EXPECT_EQ(columns["bn"].type, ValueType::kBytes);
  EXPECT_EQ(columns["bl"].type, ValueType::kBytes);
  EXPECT_EQ(columns["e"].type, ValueType::kText);
  EXPECT_EQ(columns["st"].type, ValueType::kText);
  EXPECT_EQ(columns["e"].type_oid, 0u) << "type_oid holds Postgres OIDs only";
  EXPECT_EQ(columns["b1"].type, ValueType::kBool);
  EXPECT_EQ(columns["b10"].type, ValueType::kOther);
  EXPECT_EQ(columns["j"].type, ValueType::kText) << "MariaDB's JSON is a LONGTEXT";
  EXPECT_EQ(columns["bi"].type, ValueType::kInt);
  // A query over a table and an expression is not the table: no name, no key.
  MysqlQuerySource mixed(Config(db_, "SELECT id, id + 1 AS next FROM " + table_));
  ASSERT_OK(mixed.Open(std::nullopt));
  EXPECT_EQ(mixed.relation()->name, "query");
  EXPECT_FALSE(mixed.relation()->columns[0].key);
}

// The server's own time zone plays no part: the session reads TIMESTAMP in UTC.
TEST_F(MysqlQuerySourceTypes, TimestampIsUtcWhateverTheWritersZone) {
  MysqlQuerySource source(Config(db_, "SELECT ts FROM " + table_ + " WHERE id = 1"));
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = ReadAll(source);
  ASSERT_EQ(pages.size(), 1u);
  EXPECT_EQ((*pages[0].changes[0].after)[0].text, "2024-01-02 03:04:05.120+00");
}

TEST(MysqlQuerySource, StreamsRowsInPagesWithoutBookmarks) {
  TestDb db;
  const std::string t = db.Table("qpages");
  db.Exec("CREATE TABLE " + t + " (id INT PRIMARY KEY, v VARCHAR(20))");
  db.Exec("INSERT INTO " + t + " SELECT seq, CONCAT('row ', seq) FROM seq_1_to_25000");
  MysqlQuerySource source(Config(db, "SELECT id, v FROM " + t + " ORDER BY id", 1000));
  EXPECT_TRUE(source.Capabilities().one_shot);
  ASSERT_OK(source.Open(std::nullopt));
  size_t pages = 0;
  int64_t next = 1;
  while (true) {
    Result<SourceEvent> e = source.Next(1s);
    ASSERT_OK(e);
    if (e->kind == SourceEvent::Kind::kEnd) break;
    ASSERT_EQ(e->kind, SourceEvent::Kind::kPage);
    ++pages;
    EXPECT_FALSE(e->page.bookmark.has_value());
    EXPECT_LE(e->page.changes.size(), 1000u);
    for (const Change& c : e->page.changes) {
      EXPECT_EQ(c.op, ChangeOp::kRead);
      ASSERT_EQ((*c.after)[0].text, std::to_string(next)) << "rows in order, none lost";
      EXPECT_EQ((*c.after)[1].text, "row " + std::to_string(next));
      ++next;
    }
  }
  EXPECT_EQ(next - 1, 25000);
  EXPECT_EQ(pages, 25u);
  EXPECT_EQ(source.Next(10ms)->kind, SourceEvent::Kind::kEnd);
}

int64_t RssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// 25,000 rows of 4 KiB (100 MB) read page by page: the process never holds much more than a
// page, because rows come off the wire one fetch at a time (no mysql_stmt_store_result).
TEST(MysqlQuerySource, MemoryStaysBoundedWhateverTheResultSize) {
  TestDb db;
  const std::string t = db.Table("qmem");
  db.Exec("CREATE TABLE " + t + " (id INT PRIMARY KEY, v TEXT)");
  db.Exec("INSERT INTO " + t + " SELECT seq, REPEAT(CHAR(65 + seq % 26), 4096) FROM " +
          "seq_1_to_25000");
  MysqlQuerySource source(Config(db, "SELECT id, v FROM " + t, 500));
  const int64_t before = RssKiB();  // before Open: a result buffered by the execute counts
  ASSERT_OK(source.Open(std::nullopt));
  int64_t peak = before;
  size_t rows = 0;
  while (true) {
    Result<SourceEvent> e = source.Next(1s);
    ASSERT_OK(e);
    if (e->kind == SourceEvent::Kind::kEnd) break;
    EXPECT_LE(e->page.changes.size(), 500u);
    rows += e->page.changes.size();
    for (const Change& c : e->page.changes) ASSERT_EQ((*c.after)[1].text.size(), 4096u);
    peak = std::max(peak, RssKiB());
  }
  EXPECT_EQ(rows, 25000u);
  EXPECT_LT(peak - before, 32 * 1024) << "KiB grown while reading 100 MB";
  RecordProperty("rss_growth_kib", std::to_string(peak - before));
}

// Values beyond the bound buffers (64 KiB at most) are fetched whole, before and after the
// buffer has grown; short values after a long one are not padded.
TEST(MysqlQuerySource, LongValuesComeWhole) {
  TestDb db;
  const std::string t = db.Table("qlong");
  db.Exec("CREATE TABLE " + t + " (id INT PRIMARY KEY, tx LONGTEXT, bl LONGBLOB)");
  db.Exec("INSERT INTO " + t +
          " VALUES (1, REPEAT('a', 100), X'01'), (2, REPEAT('b', 200000), REPEAT(X'5c', 70000)),"
          " (3, 'c', X'02'), (4, REPEAT('d', 3000), REPEAT(X'00', 3000))");
  MysqlQuerySource source(Config(db, "SELECT * FROM " + t + " ORDER BY id"));
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = ReadAll(source);
  ASSERT_EQ(pages.size(), 1u);
  ASSERT_EQ(pages[0].changes.size(), 4u);
  auto cell = [&](size_t row, size_t col) { return (*pages[0].changes[row].after)[col].text; };
  EXPECT_EQ(cell(0, 1), std::string(100, 'a'));
  EXPECT_EQ(cell(0, 2), "\\x01");
  EXPECT_EQ(cell(1, 1), std::string(200000, 'b'));
  std::string hex = "\\x";
  for (int i = 0; i < 70000; ++i) hex += "5c";
  EXPECT_EQ(cell(1, 2), hex);
  EXPECT_EQ(cell(2, 1), "c");
  EXPECT_EQ(cell(2, 2), "\\x02");
  EXPECT_EQ(cell(3, 1), std::string(3000, 'd'));
  EXPECT_EQ(cell(3, 2), "\\x" + std::string(6000, '0'));
}

TEST(MysqlQuerySource, BadQueryIsInvalidArgumentNamingIt) {
  TestDb db;
  MysqlQuerySource source(Config(db, "SELECT * FROM no_such_table_q"));
  Status s = source.Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("SELECT * FROM no_such_table_q"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("doesn't exist"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find(":faucet@"), std::string::npos) << "password shown: " << s.message();

  MysqlQuerySource syntax(Config(db, "SELEC 1"));
  EXPECT_EQ(syntax.Open(std::nullopt).code(), StatusCode::kInvalidArgument);
}

// A statement that returns no rows is refused before it runs.
TEST(MysqlQuerySource, AStatementWithoutRowsIsRefusedUnrun) {
  TestDb db;
  const std::string t = db.Table("qdel");
  db.Exec("CREATE TABLE " + t + " (id INT PRIMARY KEY)");
  db.Exec("INSERT INTO " + t + " VALUES (1), (2)");
  MysqlQuerySource source(Config(db, "DELETE FROM " + t));
  Status s = source.Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("returns no rows"), std::string::npos) << s.message();
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM " + t), "2");
}

TEST(MysqlQuerySource, AnUnreachableServerIsUnavailable) {
  TestDb db;
  MysqlQueryConfig config = Config(db, "SELECT 1");
  config.endpoint = testing::TestEndpoint("mysql://faucet:s3cret@127.0.0.1:1/faucet");
  MysqlQuerySource source(config);
  Status s = source.Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_EQ(s.message().find("s3cret"), std::string::npos) << s.message();
}

// A read abandoned after its first page ends at once: the rest is not read off the wire.
TEST(MysqlQuerySource, AnAbandonedReadEndsWithoutReadingTheRest) {
  TestDb db;
  const std::string t = db.Table("qabandon");
  db.Exec("CREATE TABLE " + t + " (id INT PRIMARY KEY, v TEXT)");
  db.Exec("INSERT INTO " + t + " SELECT seq, REPEAT('x', 2000) FROM seq_1_to_25000");
  auto source = std::make_unique<MysqlQuerySource>(Config(db, "SELECT * FROM " + t, 100));
  ASSERT_OK(source->Open(std::nullopt));
  Result<SourceEvent> e = source->Next(1s);
  ASSERT_OK(e);
  EXPECT_EQ(e->page.changes.size(), 100u);
  const auto start = std::chrono::steady_clock::now();
  source.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(db.Scalar("SELECT COUNT(*) FROM " + t), "25000") << "the server is still usable";
}

TEST(MysqlQuerySource, EstimatesTheRowsOfAOneTableQuery) {
  TestDb db;
  const std::string t = db.Table("qestimate");
  db.Exec("CREATE TABLE " + t + " (id INT PRIMARY KEY)");
  db.Exec("INSERT INTO " + t + " SELECT seq FROM seq_1_to_5000");
  db.Exec("ANALYZE TABLE " + t);
  MysqlQuerySource source(Config(db, "SELECT * FROM " + t));
  std::optional<int64_t> rows = source.EstimateRows();
  ASSERT_TRUE(rows.has_value());
  EXPECT_GT(*rows, 2500);
  EXPECT_LT(*rows, 10000);
  MysqlQuerySource join(Config(db, "SELECT * FROM " + t + " a JOIN " + t + " b USING (id)"));
  EXPECT_FALSE(join.EstimateRows().has_value()) << "a plan over two tables";
  MysqlQuerySource bad(Config(db, "SELECT * FROM no_such_table_e"));
  EXPECT_FALSE(bad.EstimateRows().has_value());
}

TEST(MysqlQuerySource, FactoryReadsTheConfigBlock) {
  config::Block block(YAML::Load("connection_url: mysql://u:p@h/d\nquery: SELECT 1\n"),
                      std::make_shared<const std::string>("p.yaml"), "source.config");
  EXPECT_OK(MakeMysqlQuerySource(block));
  config::Block no_db(YAML::Load("connection_url: mysql://u:p@h\nquery: SELECT 1\n"),
                      std::make_shared<const std::string>("p.yaml"), "source.config");
  EXPECT_EQ(MakeMysqlQuerySource(no_db).status().code(), StatusCode::kInvalidArgument);
}

// `faucet run` of a mysql query into a JSON-lines file: every row, values in their forms.
TEST(MysqlQuerySourceCli, RunCopiesAQueryIntoJsonl) {
  TestDb db;
  const std::string t = db.Table("qcli");
  db.Exec("CREATE TABLE " + t + " (id BIGINT UNSIGNED PRIMARY KEY, f FLOAT, b VARBINARY(4))");
  db.Exec("INSERT INTO " + t + " SELECT seq, 3.1415927, X'00ff' FROM seq_1_to_1234");
  db.Exec("UPDATE " + t + " SET id = 18446744073709551615 WHERE id = 1234");
  const std::string dir = faucet::testing::TempDir("mysqlcli");
  const std::string config = dir + "/copy.yaml";
  std::ofstream(config) << "version: 1\nname: mysqlcopy\npipeline:\n"
                           "  source: {type: mysql, config: {connection_url: '"
                        << db.url() << "', query: 'SELECT * FROM " << t
                        << " ORDER BY id', batch_size: 100}}\n"
                           "  sink: {type: jsonl, config: {path: '"
                        << dir << "/out.jsonl'}}\n";
  faucet::testing::ProcessResult r = faucet::testing::RunProcess({FAUCET_BINARY, "run", config});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find(":faucet@"), std::string::npos) << r.output;
  std::ifstream out(dir + "/out.jsonl");
  std::string line, last;
  int lines = 0;
  while (std::getline(out, line)) {
    ++lines;
    if (lines == 1) {
      EXPECT_NE(line.find("3.1415927"), std::string::npos) << line;
      EXPECT_EQ(line.find("3.14159274"), std::string::npos) << line;
    }
    last = line;
  }
  EXPECT_EQ(lines, 1234);
  EXPECT_NE(last.find("18446744073709551615"), std::string::npos) << last;
}

}  // namespace
}  // namespace faucet::mysql
