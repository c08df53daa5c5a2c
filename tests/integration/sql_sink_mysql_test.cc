// The mysql sink against the MariaDB of scripts/services.sh: the backend for the shared
// scenarios and the conversions of Postgres text forms MySQL reads differently.
#include <gtest/gtest.h>
#include <mysql.h>

#include "clients/mysql/connection.h"
#include "sinks/mysql/mysql_sink.h"
#include "sql_sink_test.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::sqltest {
namespace {

class MysqlBackend : public Backend {
 public:
  MysqlBackend() : url_(testing::RequireEnv("FAUCET_TEST_MYSQL_URL")) {
    auto parts = ParseMysqlUrl(url_);
    EXPECT_OK(parts);
    conn_ = mysql_init(nullptr);
    mysql_options(conn_, MYSQL_SET_CHARSET_NAME, "utf8mb4");
    EXPECT_NE(
        mysql_real_connect(conn_, parts->host.c_str(), parts->user.c_str(), parts->password.c_str(),
                           parts->database.c_str(), parts->port, nullptr, 0),
        nullptr)
        << mysql_error(conn_);
    Exec("SET time_zone = '+00:00'");
  }
  ~MysqlBackend() override { mysql_close(conn_); }

  std::string Name() const override { return "mysql"; }

  void Exec(const std::string& sql) override {
    EXPECT_EQ(mysql_real_query(conn_, sql.data(), sql.size()), 0)
        << sql << ": " << mysql_error(conn_);
  }

  Rows Query(const std::string& sql) override {
    Rows rows;
    if (mysql_real_query(conn_, sql.data(), sql.size()) != 0) {
      ADD_FAILURE() << sql << ": " << mysql_error(conn_);
      return rows;
    }
    MYSQL_RES* res = mysql_store_result(conn_);
    unsigned int n = mysql_num_fields(res);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      unsigned long* lengths = mysql_fetch_lengths(res);
      rows.emplace_back();
      for (unsigned int j = 0; j < n; ++j) {
        if (row[j] == nullptr) {
          rows.back().push_back(std::nullopt);
        } else {
          rows.back().push_back(std::string(row[j], lengths[j]));
        }
      }
    }
    mysql_free_result(res);
    return rows;
  }

  std::string Quote(const std::string& table) const override { return "`" + table + "`"; }
  std::string ItemsDdl(const std::string& table) const override {
    return "CREATE TABLE " + Quote(table) +
           " (id INT PRIMARY KEY, name VARCHAR(100), doc TEXT, qty INT)";
  }
  std::string Locate(const std::string& table) const override {
    return "connection_url: '" + url_ + "', table_name: " + table;
  }
  Result<std::unique_ptr<Sink>> MakeSink(const config::Block& cfg) const override {
    return MakeMysqlSink(cfg);
  }

 private:
  std::string url_;
  MYSQL* conn_ = nullptr;
};

// Writes `changes` as a page per change (each batch one row: bulk execution, whatever kinds its
// values are of) or as one page.
void WriteChanges(Sink& sink, const std::vector<Change>& changes, bool page_per_row) {
  if (page_per_row) {
    for (const Change& c : changes) ASSERT_OK(sink.Write(PageOf({c})));
  } else {
    ASSERT_OK(sink.Write(PageOf(changes)));
  }
}

// Every conversion holds on both ways rows travel: MariaDB's bulk execution of a prepared INSERT
// (a page per row here) and SQL text (the two rows in one page, whose `bin` and `dbl` columns
// mix kinds: hex and text, text and a number, which an array binding cannot carry).
TEST(MysqlSink, PostgresTextFormsAreConvertedByColumnType) {
  MysqlBackend b;
  RelationPtr rel = Relation(
      {"id", "flag", "bits", "ts", "tstz", "tm", "bin", "bl", "num", "j", "t", "dbl", "d"});
  const std::vector<Change> changes = {
      Read(rel, {T("1"), T("t"), T("5"), T("2024-01-01 10:00:00.5+02"),
                 T("2024-01-01 00:30:00-01:30"), T("12:00:00+05:30"), T("\\x00ff"), T("\\x6869"),
                 T("12345678901234567890.12345678901234567890"), T("{\"a\": [1, \"x\"]}"),
                 T("tab\there \\ 'q' \"dq\" h\xC3\xA9llo \xF0\x9F\x9A\x80"), T("-1.5e3"),
                 T("2024-02-29")}),
      Read(rel, {T("2"), T("f"), Null(), T("2024-03-01 00:00:00+00"), T("1999-12-31 23:00:00-02"),
                 T("00:00:00"), T("plain"), Null(), T("-0.5"), T("null"), T(""), T("0"), Null()})};
  for (bool page_per_row : {true, false}) {
    SCOPED_TRACE(page_per_row ? "a page per row (bulk)" : "one page (text)");
    const std::string table = testing::UniqueName("conv");
    b.Exec("CREATE TABLE " + table +
           " (id INT PRIMARY KEY, flag TINYINT(1), bits BIT(8), ts DATETIME(6),"
           " tstz TIMESTAMP(6) NULL, tm TIME(6), bin VARBINARY(10), bl BLOB, num DECIMAL(40,20),"
           " j JSON, t TEXT, dbl DOUBLE, d DATE)");
    auto sink = OpenSink(b, table, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
    ASSERT_NE(sink, nullptr);
    ASSERT_NO_FATAL_FAILURE(WriteChanges(*sink, changes, page_per_row));
    Rows rows = b.Query(
        "SELECT flag, bits + 0, ts, tstz, tm, HEX(bin), HEX(bl), num, j, t, dbl, d"
        " FROM " +
        table + " ORDER BY id");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(
        rows[0],
        (std::vector<std::optional<std::string>>{
            "1", "5", "2024-01-01 08:00:00.500000", "2024-01-01 02:00:00.000000", "06:30:00.000000",
            "00FF", "6869", "12345678901234567890.12345678901234567890", "{\"a\": [1, \"x\"]}",
            "tab\there \\ 'q' \"dq\" h\xC3\xA9llo \xF0\x9F\x9A\x80", "-1500", "2024-02-29"}));
    EXPECT_EQ(rows[1],
              (std::vector<std::optional<std::string>>{
                  "0", std::nullopt, "2024-03-01 00:00:00.000000", "2000-01-01 01:00:00.000000",
                  "00:00:00.000000", "706C61696E", std::nullopt, "-0.50000000000000000000", "null",
                  "", "0", std::nullopt}));
  }
}

// Integer columns, in bulk (a page per row) and in SQL text (one page, whose `bin` column mixes
// hex and text): the extremes of BIGINT and BIGINT UNSIGNED, leading zeros, an exponent and
// booleans land as the literal would, and a value out of the column's range is refused naming
// the row's key and the column.
TEST(MysqlSink, IntegerColumnsTakeTheirWholeRange) {
  MysqlBackend b;
  RelationPtr rel = Relation({"id", "u", "small", "flag", "bin"});
  const std::vector<Change> changes = {
      Read(rel,
           {T("-9223372036854775808"), T("18446744073709551615"), T("007"), T("t"), T("\\x01")}),
      Read(rel, {T("9223372036854775807"), T("5"), T("1.5e1"), T("f"), T("plain")}),
      Read(rel, {T("0"), Null(), Null(), Null(), Null()})};
  for (bool page_per_row : {true, false}) {
    SCOPED_TRACE(page_per_row ? "a page per row (bulk)" : "one page (text)");
    const std::string table = testing::UniqueName("ints");
    b.Exec("CREATE TABLE " + table +
           " (id BIGINT PRIMARY KEY, u BIGINT UNSIGNED, small SMALLINT, flag BOOLEAN,"
           " bin VARBINARY(10))");
    auto sink = OpenSink(b, table, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
    ASSERT_NE(sink, nullptr);
    ASSERT_NO_FATAL_FAILURE(WriteChanges(*sink, changes, page_per_row));
    EXPECT_EQ(b.Query("SELECT CONCAT_WS(' ', id, COALESCE(u, '-'), COALESCE(small, '-'),"
                      " COALESCE(flag, '-'), COALESCE(HEX(bin), '-')) FROM " +
                      table + " ORDER BY id"),
              (Rows{{"-9223372036854775808 18446744073709551615 7 1 01"},
                    {"0 - - - -"},
                    {"9223372036854775807 5 15 0 706C61696E"}}));
    const Status st =
        sink->Write(PageOf({Read(rel, {T("1"), T("1"), T("2"), T("t"), Null()}),
                            Read(rel, {T("2"), T("1"), T("70000"), T("t"), Null()})}));
    ASSERT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("key (id)=(2)"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("small"), std::string::npos) << st.message();
  }
}

// Upserts by bulk execution: 1001 keys take two batches (a batch holds 1000 rows), a later write
// of a key in the page wins, and a batch ends early once its values reach about 4 MiB.
TEST(MysqlSink, BulkUpsertsLandInOrderAndInBatchesOfBoundedSize) {
  MysqlBackend b;
  const std::string table = testing::UniqueName("bulk");
  b.Exec("CREATE TABLE " + b.Quote(table) +
         " (id INT PRIMARY KEY, name VARCHAR(20), doc MEDIUMTEXT)");
  auto sink = OpenSink(b, table, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  ASSERT_NE(sink, nullptr);
  const RelationPtr rel = Relation({"id", "name", "doc"});
  // The server counts each bulk execution as one executed statement (a lower bound: other tests
  // may execute statements meanwhile).
  auto executed = [&] {
    return std::stoll(*b.Query("SHOW GLOBAL STATUS LIKE 'Com_stmt_execute'")[0][1]);
  };
  const long long executed_before = executed();
  auto row = [&](int id, const std::string& name) {
    return Insert(rel, {Cell::Value(std::to_string(id)), Cell::Value(name), Null()});
  };
  for (int round = 0; round < 2; ++round) {
    std::vector<Change> changes;
    for (int id = 1; id <= 1001; ++id) changes.push_back(row(id, "n" + std::to_string(round)));
    changes.push_back(row(5, "again"));
    changes.push_back(row(1001, "again"));
    ASSERT_OK(sink->Write(PageOf(std::move(changes))));
  }
  EXPECT_EQ(b.Query("SELECT CONCAT(COUNT(*), ' ', SUM(name = 'n1'), ' ', GROUP_CONCAT(CASE WHEN "
                    "name NOT LIKE 'n_' THEN CONCAT(id, ':', name) END ORDER BY id)) FROM " +
                    b.Quote(table))[0][0],
            "1001 999 5:again,1001:again");

  std::vector<Change> docs;
  for (int id = 1; id <= 10; ++id) {
    docs.push_back(
        Insert(rel, {Cell::Value(std::to_string(id)), T("doc"),
                     Cell::Value(std::string((1 << 20) + id, static_cast<char>('a' + id)))}));
  }
  ASSERT_OK(sink->Write(PageOf(std::move(docs))));
  Rows rows = b.Query("SELECT id, LENGTH(doc), LEFT(doc, 1) FROM " + b.Quote(table) +
                      " WHERE id <= 10 ORDER BY id");
  ASSERT_EQ(rows.size(), 10u);
  for (int id = 1; id <= 10; ++id) {
    EXPECT_EQ(rows[id - 1], (std::vector<std::optional<std::string>>{
                                std::to_string(id), std::to_string((1 << 20) + id),
                                std::string(1, static_cast<char>('a' + id))}));
  }
  EXPECT_GE(executed() - executed_before, 2 + 2 + 3);  // per round 1000 + 1 rows; 4 + 4 + 2 docs
  b.Exec("DROP TABLE " + b.Quote(table));
}

// A session keeps 32 prepared statements: 40 tables written in turn, twice, make the sessions
// close statements and prepare them again, and every row lands.
TEST(MysqlSink, MoreTablesThanASessionKeepsStatementsForAllLand) {
  MysqlBackend b;
  const RelationPtr rel = Relation({"id", "name", "doc", "qty"});
  std::vector<std::string> tables;
  std::vector<std::unique_ptr<Sink>> sinks;
  for (int t = 0; t < 40; ++t) {
    tables.push_back(testing::UniqueName("many"));
    b.Exec(b.ItemsDdl(tables.back()));
    sinks.push_back(
        OpenSink(b, tables.back(), ", column_mapping: auto_map, write_mode: upsert, key: [id]"));
    ASSERT_NE(sinks.back(), nullptr);
  }
  for (int round = 1; round <= 2; ++round) {
    for (auto& sink : sinks) {
      ASSERT_OK(sink->Write(PageOf({Insert(rel, {Cell::Value(std::to_string(round)), T("n"), Null(),
                                                 Cell::Value(std::to_string(round))})})));
    }
  }
  for (const std::string& table : tables) {
    EXPECT_EQ(Dump(b, table), "1|n|NULL|1;2|n|NULL|2") << table;
    b.Exec("DROP TABLE " + b.Quote(table));
  }
}

TEST(MysqlSink, CommitTokenScopesAreCaseSensitive) {
  MysqlBackend b;
  const std::string table = testing::UniqueName("items");
  b.Exec(b.ItemsDdl(table));
  auto sink = OpenSink(b, table, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  ASSERT_NE(sink, nullptr);
  const std::string scope = testing::UniqueName("Pipe");
  std::string lower = scope;
  for (char& c : lower) c = static_cast<char>(std::tolower(c));
  ASSERT_OK(sink->WriteIdempotent(Page{}, scope, "00000000000000000001"));
  ASSERT_OK(sink->WriteIdempotent(Page{}, lower, "00000000000000000002"));
  EXPECT_EQ(sink->CommittedToken(scope)->value_or(""), "00000000000000000001");
  EXPECT_EQ(sink->CommittedToken(lower)->value_or(""), "00000000000000000002");
}

// Widening restates the column (MODIFY): its NOT NULL and collation stay; a default or
// AUTO_INCREMENT, which MODIFY would drop, makes evolve refuse with a message instead.
TEST(MysqlSink, EvolveWideningKeepsTheColumnOrRefuses) {
  MysqlBackend b;
  const std::string table = testing::UniqueName("widen");
  b.Exec("CREATE TABLE " + b.Quote(table) +
         " (id INT PRIMARY KEY, name VARCHAR(5) CHARACTER SET latin1 COLLATE latin1_bin NOT NULL,"
         " qty INT NOT NULL DEFAULT 0)");
  auto sink = b.MakeSink(
      Yaml("{" + b.Locate(table) + ", column_mapping: auto_map, write_mode: upsert, key: [id]}"));
  ASSERT_OK(sink);
  (*sink)->SetSchemaPolicy(SchemaPolicy{OnDrift::kEvolve});
  ASSERT_OK((*sink)->Open(false));
  auto rel = std::make_shared<faucet::Relation>();
  rel->columns = {{"id", ValueType::kInt, 23, -1, true},
                  {"name", ValueType::kText, 1043, 24, false}};  // varchar(20)
  ASSERT_OK((*sink)->Write(PageOf({Insert(rel, {T("1"), T("a longer name")})})));
  EXPECT_EQ(b.Query("SELECT CONCAT(COLUMN_TYPE, ' ', IS_NULLABLE, ' ', COLLATION_NAME) FROM "
                    "information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND "
                    "TABLE_NAME = '" +
                    table + "' AND COLUMN_NAME = 'name'")[0][0],
            "varchar(20) NO latin1_bin");

  auto wider = std::make_shared<faucet::Relation>(*rel);  // relations are immutable: a new one
  wider->columns.push_back({"qty", ValueType::kInt, 20, -1, false});  // bigint
  Status st = (*sink)->Write(PageOf({Insert(wider, {T("2"), T("b"), T("5000000000")})}));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("column qty has a default"), std::string::npos) << st.message();
  b.Exec("DROP TABLE " + b.Quote(table));
}

TEST(MysqlSink, ConnectionFailureIsUnavailableWithThePasswordRedacted) {
  auto sink = MakeMysqlSink(
      Yaml("{connection_url: 'mysql://faucet:s3cret@127.0.0.1:1/faucet', table_name: t}"));
  ASSERT_OK(sink);
  Status st = (*sink)->Open(false);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message().find("s3cret"), std::string::npos) << st.message();
}

}  // namespace

std::unique_ptr<Backend> MakeMysqlBackend() { return std::make_unique<MysqlBackend>(); }

}  // namespace faucet::sqltest
