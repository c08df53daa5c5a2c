// The sqlite sink on a database file in a temporary directory: the backend for the shared
// scenarios and SQLite's own conversions.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include "sinks/sqlite/sqlite_sink.h"
#include "sql_sink_test.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::sqltest {
namespace {

class SqliteBackend : public Backend {
 public:
  SqliteBackend() : path_(testing::TempDir("sqlite_sink") + "/dest.db") {
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    sqlite3_busy_timeout(db_, 10000);
  }
  ~SqliteBackend() override { sqlite3_close_v2(db_); }

  std::string Name() const override { return "sqlite"; }

  void Exec(const std::string& sql) override {
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
        << sql << ": " << (err ? err : "");
    sqlite3_free(err);
  }

  Rows Query(const std::string& sql) override {
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK)
        << sql << ": " << sqlite3_errmsg(db_);
    Rows rows;
    while (stmt != nullptr && sqlite3_step(stmt) == SQLITE_ROW) {
      rows.emplace_back();
      for (int j = 0; j < sqlite3_column_count(stmt); ++j) {
        if (sqlite3_column_type(stmt, j) == SQLITE_NULL) {
          rows.back().push_back(std::nullopt);
        } else {
          rows.back().push_back(
              std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, j))));
        }
      }
    }
    sqlite3_finalize(stmt);
    return rows;
  }

  std::string Quote(const std::string& table) const override { return "\"" + table + "\""; }
  // STRICT: an ordinary SQLite table would store 'lots' in an INTEGER column as text.
  std::string ItemsDdl(const std::string& table) const override {
    return "CREATE TABLE " + Quote(table) +
           " (id INTEGER PRIMARY KEY, name TEXT, doc TEXT, qty INTEGER) STRICT";
  }
  std::string Locate(const std::string& table) const override {
    return "database_url: 'sqlite://" + path_ + "', table_name: " + table;
  }
  Result<std::unique_ptr<Sink>> MakeSink(const config::Block& cfg) const override {
    return MakeSqliteSink(cfg);
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

TEST(SqliteSink, DatabaseUrlFormsNameAFile) {
  EXPECT_EQ(*SqlitePath("sqlite:///var/lib/a.db"), "/var/lib/a.db");
  EXPECT_EQ(*SqlitePath("sqlite://data/a.db"), "data/a.db");
  EXPECT_EQ(*SqlitePath("sqlite:a.db?mode=rwc"), "a.db");
  EXPECT_EQ(*SqlitePath("/plain/a.db"), "/plain/a.db");
  EXPECT_FALSE(SqlitePath("sqlite::memory:").ok());
}

TEST(SqliteSink, ColumnMappingIsRequired) {
  auto sink = MakeSqliteSink(Yaml("{database_url: 'sqlite:///tmp/x.db', table_name: t}"));
  ASSERT_FALSE(sink.ok());
  EXPECT_NE(sink.status().message().find("column_mapping"), std::string::npos);
}

TEST(SqliteSink, OpensTheDatabaseInWalMode) {
  SqliteBackend b;
  const std::string table = testing::UniqueName("items");
  b.Exec(b.ItemsDdl(table));
  auto sink = OpenSink(b, table, ", column_mapping: auto_map");
  ASSERT_NE(sink, nullptr);
  // A connection opened before the switch keeps its view; a new one reads the file header.
  sqlite3* fresh = nullptr;
  ASSERT_EQ(sqlite3_open(b.path().c_str(), &fresh), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(fresh, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close_v2(fresh);
}

// A STRICT table takes only INT, INTEGER, REAL, TEXT, BLOB and ANY: evolve adds a numeric
// column as ANY there (NUMERIC elsewhere).
TEST(SqliteSink, EvolveAddsColumnsAStrictTableAccepts) {
  SqliteBackend b;
  b.Exec("CREATE TABLE strict_t (id INTEGER PRIMARY KEY, name TEXT) STRICT");
  auto sink = MakeSqliteSink(Yaml("{" + b.Locate("strict_t") +
                                  ", column_mapping: auto_map, write_mode: upsert, key: [id]}"));
  ASSERT_OK(sink);
  (*sink)->SetSchemaPolicy(SchemaPolicy{OnDrift::kEvolve});
  ASSERT_OK((*sink)->Open(false));
  auto rel = std::make_shared<faucet::Relation>();
  rel->columns = {{"id", ValueType::kInt, 23, -1, true},
                  {"name", ValueType::kText, 25, -1, false},
                  {"amount", ValueType::kNumeric, 1700, -1, false}};
  ASSERT_OK((*sink)->Write(PageOf({Insert(rel, {T("1"), T("a"), T("12.50")})})));
  EXPECT_EQ(b.Query("SELECT type FROM pragma_table_info('strict_t') WHERE name = 'amount'")[0][0],
            "ANY");
  EXPECT_EQ(b.Query("SELECT id || ':' || name || ':' || amount FROM strict_t")[0][0], "1:a:12.50");
}

TEST(SqliteSink, PostgresTextFormsAreConvertedByColumnType) {
  SqliteBackend b;
  b.Exec(
      "CREATE TABLE conv (id INTEGER PRIMARY KEY, flag BOOLEAN, n INTEGER, bin BLOB,"
      " r REAL, t TEXT, num NUMERIC)");
  auto sink = OpenSink(b, "conv", ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Relation({"id", "flag", "n", "bin", "r", "t", "num"});
  ASSERT_OK(sink->Write(PageOf(
      {Read(rel, {T("1"), T("t"), T("f"), T("\\x00ff5c"), T("-Infinity"), T("t"), T("12.5")}),
       Read(rel, {T("2"), T("f"), T("42"), T("\\x"), T("NaN"), T("\\xzz"), T("7")})})));
  Rows rows = b.Query(
      "SELECT flag, typeof(flag), n, hex(bin), typeof(bin), r, typeof(r), t, typeof(num)"
      " FROM conv ORDER BY id");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::optional<std::string>>{"1", "integer", "0", "00FF5C", "blob",
                                                              "-Inf", "real", "t", "real"}));
  EXPECT_EQ(rows[1], (std::vector<std::optional<std::string>>{"0", "integer", "42", "", "blob",
                                                              "NaN", "text", "\\xzz", "integer"}));
}

}  // namespace

std::unique_ptr<Backend> MakeSqliteBackend() { return std::make_unique<SqliteBackend>(); }

}  // namespace faucet::sqltest
