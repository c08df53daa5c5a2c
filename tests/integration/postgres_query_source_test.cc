// The postgres query source against a real server: rows stream through COPY in pages of
// batch_size, values keep Postgres' printed text (escapes undone), the relation names the
// columns, types and the table's key, no page is resumable, and a bad query is the user's error.
#include <gtest/gtest.h>

#include "sources/postgres/pg_test_support.h"
#include "sources/postgres/query_source.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using namespace std::chrono_literals;
using testing::TestDb;

std::vector<Page> ReadAll(PostgresQuerySource& source) {
  std::vector<Page> pages;
  while (true) {
    Result<SourceEvent> e = source.Next(1s);
    EXPECT_OK(e);
    if (!e.ok() || e->kind == SourceEvent::Kind::kEnd) break;
    if (e->kind == SourceEvent::Kind::kPage) pages.push_back(std::move(e->page));
  }
  return pages;
}

TEST(PostgresQuerySource, StreamsRowsInPagesWithoutBookmarks) {
  TestDb db;
  const std::string t = faucet::testing::UniqueName("query_t");
  db.Exec("CREATE TABLE " + t + " (id int, k int, v text, n numeric, PRIMARY KEY (k, id))");
  db.Exec("INSERT INTO " + t +
          " SELECT g, g % 3, 'row ' || g, g * 1.5 FROM generate_series(1, 2500) g");
  PostgresQueryConfig config{db.url(), "SELECT id, v, k, n FROM " + t + " ORDER BY id;", 1000};
  PostgresQuerySource source(config);
  ASSERT_OK(source.Open(std::nullopt));
  const Relation& rel = *source.relation();
  EXPECT_EQ(rel.name, t);
  EXPECT_EQ(rel.schema, "public");
  ASSERT_EQ(rel.columns.size(), 4u);
  EXPECT_EQ(rel.columns[0].name, "id");
  EXPECT_EQ(rel.columns[0].type, ValueType::kInt);
  EXPECT_TRUE(rel.columns[0].key);
  EXPECT_FALSE(rel.columns[1].key);
  EXPECT_TRUE(rel.columns[2].key);
  EXPECT_EQ(rel.columns[3].type, ValueType::kNumeric);

  std::vector<Page> pages = ReadAll(source);
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[0].changes.size(), 1000u);
  EXPECT_EQ(pages[2].changes.size(), 500u);
  int next = 1;
  for (const Page& p : pages) {
    EXPECT_FALSE(p.bookmark.has_value());
    for (const Change& c : p.changes) {
      EXPECT_EQ(c.op, ChangeOp::kRead);
      ASSERT_EQ((*c.after)[0].text, std::to_string(next));
      ++next;
    }
  }
  EXPECT_EQ((*pages[0].changes[1].after)[3].text, "3.0");
  EXPECT_EQ(source.Next(10ms)->kind, SourceEvent::Kind::kEnd);
}

TEST(PostgresQuerySource, ValuesKeepTheTextPostgresPrints) {
  TestDb db;
  const std::string q =
      "SELECT E'tab\\there\\nnew \\\\ back ''q'' h\\u00e9llo' AS t, NULL::text AS nothing, "
      "'\\N'::text AS backslash_n, '\\x00ff'::bytea AS b, true AS bo, "
      "'{\"a\": [1, \"x\\ty\"]}'::jsonb AS j, ARRAY['a b', NULL, 'c\"d'] AS arr, "
      "'NaN'::float8 AS f, interval '1 day 2 hours' AS iv";
  PostgresQuerySource source(PostgresQueryConfig{db.url(), q, 10});
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = ReadAll(source);
  ASSERT_EQ(pages.size(), 1u);
  const Row& row = *pages[0].changes[0].after;
  const Relation& rel = *source.relation();
  EXPECT_EQ(rel.name, "query");
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    std::optional<std::string> expected =
        db.Scalar("SELECT " + rel.columns[i].name + " FROM (" + q + ") s");
    if (!expected) {
      EXPECT_EQ(row[i].state, CellState::kNull) << rel.columns[i].name;
    } else {
      EXPECT_EQ(row[i].state, CellState::kValue) << rel.columns[i].name;
      EXPECT_EQ(row[i].text, *expected) << rel.columns[i].name;
    }
  }
  EXPECT_EQ(row[2].text, "\\N");
  EXPECT_EQ(rel.columns[3].type, ValueType::kBytes);
  EXPECT_EQ(rel.columns[6].type, ValueType::kArray);
}

TEST(PostgresQuerySource, BadQueryIsInvalidArgument) {
  TestDb db;
  PostgresQuerySource source(PostgresQueryConfig{db.url(), "SELECT * FROM no_such_table", 10});
  Status s = source.Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("no_such_table"), std::string::npos);
}

TEST(PostgresQuerySource, FactoryReadsTheConfigBlock) {
  config::Block block(YAML::Load("connection_url: postgres://h/d\nquery: SELECT 1\n"),
                      std::make_shared<const std::string>("p.yaml"), "source.config");
  EXPECT_OK(MakePostgresQuerySource(block));
  config::Block bad(YAML::Load("connection_url: postgres://h/d\n"),
                    std::make_shared<const std::string>("p.yaml"), "source.config");
  EXPECT_EQ(MakePostgresQuerySource(bad).status().code(), StatusCode::kInvalidArgument);
}


TEST(PostgresQuerySource, TlsAndEstimateGoThroughTheSourcesOwnSettings) {
  TestDb db;
  const std::string t = faucet::testing::UniqueName("query_tls");
  db.Exec("CREATE TABLE " + t + " (id int PRIMARY KEY)");
  db.Exec("INSERT INTO " + t + " SELECT generate_series(1, 5000)");
  db.Exec("ANALYZE " + t);
  PostgresQueryConfig config{db.url(), "SELECT id FROM " + t, 1000};
  // The test server has no TLS: `require` must refuse it, for the read and the estimate alike.
  config.tls.mode = PostgresTlsMode::kRequire;
  Status s = PostgresQuerySource(config).Open(std::nullopt);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("SSL"), std::string::npos) << s.message();
  EXPECT_EQ(PostgresQuerySource(config).EstimateRows(), std::nullopt);
  config.tls.mode = PostgresTlsMode::kDisable;
  std::optional<int64_t> estimate = PostgresQuerySource(config).EstimateRows();
  ASSERT_TRUE(estimate.has_value());
  EXPECT_EQ(*estimate, 5000);
  EXPECT_OK(PostgresQuerySource(config).Open(std::nullopt));
}

}  // namespace
}  // namespace faucet::postgres
