// What a multi-table mirror asks the Postgres sources before it starts, against a real server:
// the query source lists the readable tables (keys in key order, partitions under their root,
// row estimates once analyzed, a read query that works; no views), the cdc source names the
// tables its publication would not carry in full and how to fix each, and a change's commit
// LSN orders it against the page bookmarks exactly as a resume does.
#include <gtest/gtest.h>

#include <algorithm>

#include "sources/postgres/pg_test_support.h"
#include "sources/postgres/postgres_cdc_source.h"
#include "sources/postgres/query_source.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using namespace std::chrono_literals;
using testing::TestDb;

// A fresh schema per test ("disc_<pid>_<n>", so "schema.table" names need no quoting in SQL)
// with the tables every test looks at; dropped, with the publications made here, at the end.
class PostgresDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_ = faucet::testing::UniqueName("disc");
    db_.Exec("CREATE SCHEMA " + schema_);
    db_.Exec("CREATE TABLE " + T("single") + " (id int PRIMARY KEY, v text)");
    db_.Exec("CREATE TABLE " + T("composite") + " (a int, v text, b int, PRIMARY KEY (b, a))");
    db_.Exec("CREATE TABLE " + T("uuids") + " (id uuid PRIMARY KEY, v text)");
    // Keyless, made streamable as a user would (DEFAULT without a key logs no old row).
    db_.Exec("CREATE TABLE " + T("nokey") + " (v text)");
    db_.Exec("ALTER TABLE " + T("nokey") + " REPLICA IDENTITY FULL");
    // Two levels: parted_high is itself partitioned; only the three leaves are partitions.
    db_.Exec("CREATE TABLE " + T("parted") + " (k int PRIMARY KEY, v text) PARTITION BY RANGE (k)");
    db_.Exec("CREATE TABLE " + T("parted_low") + " PARTITION OF " + T("parted") +
             " FOR VALUES FROM (0) TO (100)");
    db_.Exec("CREATE TABLE " + T("parted_high") + " PARTITION OF " + T("parted") +
             " FOR VALUES FROM (100) TO (1000) PARTITION BY RANGE (k)");
    db_.Exec("CREATE TABLE " + T("parted_high_a") + " PARTITION OF " + T("parted_high") +
             " FOR VALUES FROM (100) TO (200)");
    db_.Exec("CREATE TABLE " + T("parted_high_b") + " PARTITION OF " + T("parted_high") +
             " FOR VALUES FROM (200) TO (1000)");
    db_.Exec("CREATE TABLE " + schema_ + ".\"we\"\"ird\" (id int PRIMARY KEY)");
    db_.Exec("CREATE VIEW " + T("a_view") + " AS SELECT * FROM " + T("single"));
  }

  void TearDown() override {
    for (const std::string& pub : publications_) db_.Exec("DROP PUBLICATION IF EXISTS " + pub);
    db_.Exec("DROP SCHEMA " + schema_ + " CASCADE");
  }

  std::string T(const std::string& table) const { return schema_ + "." + table; }

  // The tables of this test's schema, as DiscoverTables lists them.
  std::vector<DiscoveredTable> Discover() {
    PostgresQuerySource source(PostgresQueryConfig{db_.url(), "SELECT 1", 1000});
    Result<std::vector<DiscoveredTable>> all = source.DiscoverTables();
    EXPECT_OK(all);
    std::vector<DiscoveredTable> mine;
    if (!all.ok()) return mine;
    EXPECT_TRUE(std::is_sorted(all->begin(), all->end(),
                               [](const auto& a, const auto& b) { return a.name < b.name; }));
    for (DiscoveredTable& t : *all) {
      if (t.schema == schema_) mine.push_back(std::move(t));
    }
    return mine;
  }

  // Creates publication "<schema>_<suffix>" with `definition` ("FOR TABLE ...").
  std::string Publication(const std::string& suffix, const std::string& definition) {
    std::string pub = schema_ + "_" + suffix;
    db_.Exec("CREATE PUBLICATION " + pub + " " + definition);
    publications_.push_back(pub);
    return pub;
  }

  std::map<std::string, std::string> NotStreamed(const std::string& publication,
                                                 const std::vector<std::string>& tables) {
    PostgresCdcSource source(testing::TestCdcConfig(db_.url(), schema_ + "_slot", publication));
    Result<std::map<std::string, std::string>> reasons = source.TablesNotStreamed(tables);
    EXPECT_OK(reasons);
    return reasons.ok() ? *reasons : std::map<std::string, std::string>();
  }

  // Every table of SetUp, as DiscoverTables names them.
  std::vector<std::string> AllTables() const {
    return {T("composite"), T("nokey"), T("parted"), T("single"), T("uuids"), T("we\"ird")};
  }

  TestDb db_;
  std::string schema_;
  std::vector<std::string> publications_;
};

// Reads everything `query` returns through a query source; the row count.
size_t CountRows(const std::string& url, const std::string& query) {
  PostgresQuerySource source(PostgresQueryConfig{url, query, 1000});
  EXPECT_OK(source.Open(std::nullopt)) << query;
  size_t rows = 0;
  while (true) {
    Result<SourceEvent> e = source.Next(5s);
    EXPECT_OK(e) << query;
    if (!e.ok() || e->kind == SourceEvent::Kind::kEnd) break;
    rows += e->page.changes.size();
  }
  return rows;
}

TEST_F(PostgresDiscoveryTest, ListsTablesWithKeysInKeyOrderAndPartitionsUnderTheirRoot) {
  PostgresQuerySource source(PostgresQueryConfig{db_.url(), "SELECT 1", 1000});
  EXPECT_TRUE(source.Capabilities().discovers_tables);

  std::vector<DiscoveredTable> tables = Discover();
  std::vector<std::string> names;
  for (const DiscoveredTable& t : tables) names.push_back(t.name);
  // No view, no partition: the partitioned table once, under its root.
  ASSERT_EQ(names, AllTables());

  using Names = std::vector<std::string>;
  EXPECT_EQ(tables[0].schema, schema_);
  EXPECT_EQ(tables[0].table, "composite");
  EXPECT_EQ(tables[0].key, (Names{"b", "a"}));
  EXPECT_EQ(tables[1].key, Names{});
  EXPECT_EQ(tables[2].key, Names{"k"});
  EXPECT_EQ(tables[2].partitions, (Names{T("parted_high_a"), T("parted_high_b"), T("parted_low")}));
  EXPECT_EQ(tables[3].key, Names{"id"});
  EXPECT_EQ(tables[4].key, Names{"id"});
  EXPECT_EQ(tables[5].table, "we\"ird");
  EXPECT_EQ(tables[5].key, Names{"id"});
  for (const DiscoveredTable& t : tables) {
    if (t.table != "parted") {
      EXPECT_EQ(t.partitions, Names{}) << t.name;
    }
  }
  EXPECT_EQ(tables[3].read_patch, (std::map<std::string, std::string>{
                                      {"query", "SELECT * FROM \"" + schema_ + "\".\"single\""}}));
  EXPECT_EQ(tables[5].read_patch.at("query"), "SELECT * FROM \"" + schema_ + "\".\"we\"\"ird\"");
}

TEST_F(PostgresDiscoveryTest, EstimatesRowsOnceAnalyzedAndTheReadQueryReadsTheTable) {
  // Fresh tables have never been vacuumed or analyzed (reltuples -1): unknown, not 0.
  for (const DiscoveredTable& t : Discover()) {
    EXPECT_EQ(t.estimated_rows, std::nullopt) << t.name;
  }
  db_.Exec("INSERT INTO " + T("single") + " SELECT g, 'v' FROM generate_series(1, 1000) g");
  db_.Exec("INSERT INTO " + T("composite") + " SELECT g, 'v', g FROM generate_series(1, 10) g");
  db_.Exec("INSERT INTO " + T("nokey") + " SELECT 'v' FROM generate_series(1, 50) g");
  db_.Exec("INSERT INTO " + T("parted") + " SELECT g, 'v' FROM generate_series(0, 299) g");
  db_.Exec("INSERT INTO " + schema_ + ".\"we\"\"ird\" VALUES (1), (2)");
  // uuids stays empty: analyzed, it is known to hold nothing.
  db_.Exec("ANALYZE " + T("single") + ", " + T("composite") + ", " + T("nokey") + ", " +
           T("parted") + ", " + T("uuids") + ", " + schema_ + ".\"we\"\"ird\"");

  const std::map<std::string, int64_t> rows = {{T("composite"), 10}, {T("nokey"), 50},
                                               {T("parted"), 300},   {T("single"), 1000},
                                               {T("uuids"), 0},      {T("we\"ird"), 2}};
  std::vector<DiscoveredTable> tables = Discover();
  ASSERT_EQ(tables.size(), rows.size());
  for (const DiscoveredTable& t : tables) {
    const int64_t expected = rows.at(t.name);
    ASSERT_TRUE(t.estimated_rows.has_value()) << t.name;
    EXPECT_GE(*t.estimated_rows, expected * 9 / 10) << t.name;
    EXPECT_LE(*t.estimated_rows, expected * 11 / 10) << t.name;
    EXPECT_EQ(CountRows(db_.url(), t.read_patch.at("query")), static_cast<size_t>(expected))
        << t.name;
  }
}

TEST_F(PostgresDiscoveryTest, TablesOutsideThePublicationAreNamedWithTheFix) {
  const std::string pub =
      Publication("pub", "FOR TABLE " + T("single") + ", " + T("composite") + ", " + T("parted"));
  db_.Exec("CREATE TABLE " + T("gone") + " (id int)");
  db_.Exec("DROP TABLE " + T("gone"));
  std::vector<std::string> tables = AllTables();
  tables.push_back(T("gone"));

  std::map<std::string, std::string> reasons = NotStreamed(pub, tables);
  auto not_in = [&](const std::string& quoted) {
    return "not in publication '" + pub +
           "' (its changes would never arrive): " + "ALTER PUBLICATION \"" + pub +
           "\" ADD TABLE \"" + schema_ + "\"." + quoted;
  };
  // parted is published through its leaves (publish_via_partition_root is off); gone is gone.
  EXPECT_EQ(reasons, (std::map<std::string, std::string>{{T("nokey"), not_in("\"nokey\"")},
                                                         {T("uuids"), not_in("\"uuids\"")},
                                                         {T("we\"ird"), not_in("\"we\"\"ird\"")}}));
}

TEST_F(PostgresDiscoveryTest, APartitionedTablePublishedViaItsRootOrBySchemaIsStreamed) {
  const std::string via_root =
      Publication("root", "FOR TABLE " + T("parted") + " WITH (publish_via_partition_root)");
  EXPECT_EQ(NotStreamed(via_root, {T("parted")}), (std::map<std::string, std::string>{}));
  // A leaf alone publishes that leaf's changes: the table counts as published.
  const std::string leaf = Publication("leaf", "FOR TABLE " + T("parted_high_b"));
  EXPECT_EQ(NotStreamed(leaf, {T("parted")}), (std::map<std::string, std::string>{}));
  // pg_publication_tables expands schema-wide (and FOR ALL TABLES) publications.
  const std::string schema = Publication("schema", "FOR TABLES IN SCHEMA " + schema_);
  EXPECT_EQ(NotStreamed(schema, AllTables()), (std::map<std::string, std::string>{}));
}

TEST_F(PostgresDiscoveryTest, TablesWithoutAReplicaIdentityAreReportedAlsoViaALeafPartition) {
  const std::string pub = Publication("pub", "FOR TABLES IN SCHEMA " + schema_);
  db_.Exec("ALTER TABLE " + T("composite") + " REPLICA IDENTITY NOTHING");
  db_.Exec("ALTER TABLE " + T("parted_low") + " REPLICA IDENTITY NOTHING");
  // Without a primary key: not reported (a mirror decides: without_primary_key).
  db_.Exec("ALTER TABLE " + T("nokey") + " REPLICA IDENTITY DEFAULT");
  // USING INDEX whose index is dropped afterwards: relreplident stays 'i', with no index.
  db_.Exec("CREATE TABLE " + T("by_index") + " (id int NOT NULL)");
  db_.Exec("CREATE UNIQUE INDEX by_index_id ON " + T("by_index") + " (id)");
  db_.Exec("ALTER TABLE " + T("by_index") + " REPLICA IDENTITY USING INDEX by_index_id");
  db_.Exec("DROP INDEX " + schema_ + ".by_index_id");
  std::vector<std::string> tables = AllTables();
  tables.push_back(T("by_index"));

  const std::string lost =
      ": its updates and deletes are not streamed (the server rejects them while the "
      "publication publishes them) — ALTER TABLE \"" +
      schema_ + "\".";
  const std::string fix = " REPLICA IDENTITY DEFAULT (with a primary key) or FULL";
  EXPECT_EQ(NotStreamed(pub, tables),
            (std::map<std::string, std::string>{
                {T("by_index"), "replica identity USING INDEX with the index dropped" + lost +
                                    "\"by_index\"" + fix},
                {T("composite"), "replica identity NOTHING" + lost + "\"composite\"" + fix},
                {T("parted"), "partition " + T("parted_low") + " has replica identity NOTHING" +
                                  lost + "\"parted_low\"" + fix}}));
}

TEST_F(PostgresDiscoveryTest, APublicationWithoutUpdatesOrDeletesIsReportedForEveryTable) {
  const std::string pub = Publication(
      "pub", "FOR TABLE " + T("single") + ", " + T("nokey") + " WITH (publish = 'insert')");
  const std::string missing = "publication '" + pub +
                              "' does not publish updates, deletes: " + "ALTER PUBLICATION \"" +
                              pub + "\" SET (publish = 'insert, update, delete, truncate')";
  std::map<std::string, std::string> reasons = NotStreamed(pub, {T("single"), T("uuids")});
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[T("single")], missing);
  EXPECT_EQ(reasons[T("uuids")], missing + "; not in publication '" + pub +
                                     "' (its changes would never arrive): ALTER PUBLICATION \"" +
                                     pub + "\" ADD TABLE \"" + schema_ + "\".\"uuids\"");
}

TEST_F(PostgresDiscoveryTest, AMissingPublicationIsReportedForEveryTable) {
  const std::string pub = schema_ + "_never_created";
  EXPECT_EQ(NotStreamed(pub, {T("single")}),
            (std::map<std::string, std::string>{
                {T("single"), "publication '" + pub + "' does not exist: CREATE PUBLICATION \"" +
                                  pub + "\" FOR TABLE \"" + schema_ + "\".\"single\""}}));
  EXPECT_EQ(NotStreamed(pub, {}), (std::map<std::string, std::string>{}));
}

TEST(PostgresDiscoveryErrors, AnUnreachableServerIsUnavailableWithoutThePassword) {
  const std::string url = "postgresql://faucet:s3cret-pw@127.0.0.1:1/faucet?connect_timeout=2";
  PostgresQuerySource query(PostgresQueryConfig{url, "SELECT 1", 1000});
  Result<std::vector<DiscoveredTable>> tables = query.DiscoverTables();
  ASSERT_FALSE(tables.ok());
  EXPECT_EQ(tables.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(tables.status().message().find("s3cret-pw"), std::string::npos)
      << tables.status().message();
  PostgresCdcSource cdc(testing::TestCdcConfig(url, "slot", "pub"));
  Result<std::map<std::string, std::string>> reasons = cdc.TablesNotStreamed({"public.t"});
  ASSERT_FALSE(reasons.ok());
  EXPECT_EQ(reasons.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(reasons.status().message().find("s3cret-pw"), std::string::npos)
      << reasons.status().message();
}

TEST(PostgresCdcChangePosition, IsTheCommitPositionAndUnknownWhenZero) {
  PostgresCdcSource source(testing::TestCdcConfig("postgresql://unused", "slot", "pub"));
  EXPECT_TRUE(source.Capabilities().routes_tables);
  Change c;
  c.commit_position = 0x10;
  EXPECT_EQ(source.ChangePosition(c), (Position{{0x10}}));
  c.commit_position = 0;
  EXPECT_EQ(source.ChangePosition(c), std::nullopt);
}

// The contract a mirror routes by: a bookmark B covers a change exactly when
// ChangePosition(change) < PositionOf(B), and a resume from B delivers exactly the changes
// that B does not cover.
class PostgresCdcChangePositionTest : public testing::CdcTest {};

TEST_F(PostgresCdcChangePositionTest, ABookmarkCoversExactlyTheChangesCommittedBeforeIt) {
  Name("changepos");
  Publish("id int PRIMARY KEY, v text");
  CreateSlot();
  int id = 0;
  for (int txn = 1; txn <= 6; ++txn) {
    std::string sql = "BEGIN;";
    for (int row = 0; row < txn % 3 + 1; ++row) {
      sql += " INSERT INTO " + table_ + " VALUES (" + std::to_string(++id) + ", 'v');";
    }
    db_.Exec(sql + " COMMIT;");
  }
  config_.batch_size = 2;  // pages of one or two transactions, and a chunked one
  std::vector<Page> pages;
  {
    PostgresCdcSource source(config_);
    ASSERT_OK(source.Open(std::nullopt));
    pages = testing::ReadPages(
        source, [&](auto& p) { return testing::CountChanges(p) >= static_cast<size_t>(id); }, 20s);
    ASSERT_EQ(testing::CountChanges(pages), static_cast<size_t>(id));
    std::vector<Change> all;
    for (const Page& p : pages) all.insert(all.end(), p.changes.begin(), p.changes.end());
    size_t seen = 0;  // changes in the pages up to and including the current one
    for (const Page& p : pages) {
      seen += p.changes.size();
      if (!p.bookmark) continue;
      ASSERT_OK(source.PositionOf(*p.bookmark));
      const Position b = *source.PositionOf(*p.bookmark);
      for (size_t i = 0; i < all.size(); ++i) {
        std::optional<Position> at = source.ChangePosition(all[i]);
        ASSERT_TRUE(at.has_value());
        EXPECT_EQ(*at < b, i < seen) << "change " << i << " against " << p.bookmark->ToString();
      }
    }
  }
  // Resuming from the bookmark of the first page that leaves changes after it.
  std::optional<Bookmark> middle;
  size_t covered = 0, seen = 0;
  for (const Page& p : pages) {
    seen += p.changes.size();
    if (p.bookmark && seen < static_cast<size_t>(id) && seen > 0) {
      middle = p.bookmark;
      covered = seen;
      break;
    }
  }
  ASSERT_TRUE(middle.has_value());
  PostgresCdcSource resumed(config_);
  ASSERT_OK(resumed.Open(middle));
  std::vector<Page> rest = testing::ReadPages(
      resumed,
      [&](auto& p) { return testing::CountChanges(p) >= static_cast<size_t>(id) - covered; }, 20s);
  std::vector<Change> after;
  for (const Page& p : rest) after.insert(after.end(), p.changes.begin(), p.changes.end());
  ASSERT_EQ(after.size(), static_cast<size_t>(id) - covered);
  EXPECT_EQ((*after[0].after)[0].text, std::to_string(covered + 1));
}

}  // namespace
}  // namespace faucet::postgres
