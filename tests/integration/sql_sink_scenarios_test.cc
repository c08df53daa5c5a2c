// The behaviour every SQL sink (postgres, sqlite, mysql) must show, against the real databases.
#include <gtest/gtest.h>

#include "config/document.h"
#include "sql_sink_test.h"
#include "testing/services.h"
#include "testing/status_matchers.h"
#include "transforms/transforms.h"

namespace faucet::sqltest {
namespace {

using BackendFactory = std::unique_ptr<Backend> (*)();

constexpr char kUpsert[] = ", column_mapping: auto_map, write_mode: upsert, key: [id]";

class SqlSinkScenario : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override {
    b_ = GetParam()();
    table_ = testing::UniqueName("items");
    b_->Exec(b_->ItemsDdl(table_));
  }

  void Fill(const std::string& values) {
    b_->Exec("INSERT INTO " + b_->Quote(table_) + " (id, name, doc, qty) VALUES " + values);
  }

  std::unique_ptr<Backend> b_;
  std::string table_;
  RelationPtr rel_ = Relation({"id", "name", "doc", "qty"});
};

TEST_P(SqlSinkScenario, UpsertRoundTrip) {
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Insert(rel_, {T("1"), T("a"), T("x"), T("1")}),
                                Insert(rel_, {T("2"), T("b"), T("y"), T("2")})})));
  ASSERT_OK(sink->Flush());
  EXPECT_EQ(Dump(*b_, table_), "1|a|x|1;2|b|y|2");

  ASSERT_OK(sink->Write(PageOf({Update(rel_, {T("1"), T("a2"), T("x"), T("10")}),
                                Read(rel_, {T("3"), T("c"), Null(), T("3")})})));
  EXPECT_EQ(Dump(*b_, table_), "1|a2|x|10;2|b|y|2;3|c|NULL|3");

  ASSERT_OK(sink->Write(PageOf({Delete(rel_, {T("2"), Null(), Null(), Null()})})));
  EXPECT_EQ(Dump(*b_, table_), "1|a2|x|10;3|c|NULL|3");
}

// The reference's defect (spec §9): row A carries column doc, row B has doc unchanged (TOAST);
// batched together, B's doc must keep its destination value, not become NULL.
// A page far larger than any batch (100,000 rows) goes in whole, as new keys and then as
// updates of all of them (throughput is measured in bench/, beside the raw load).
TEST_P(SqlSinkScenario, AHundredThousandRowPageUpsertsWhole) {
  constexpr int kRows = 100000;
  auto make_page = [&](const char* name) {
    Page page;
    page.changes.reserve(kRows);
    for (int i = 0; i < kRows; ++i) {
      std::string id = std::to_string(i);
      page.changes.push_back(Update(
          rel_, {Cell::Value(id), Cell::Value(name), Cell::Value("doc " + id), Cell::Value(id)}));
    }
    return page;
  };
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(make_page("first")));
  ASSERT_OK(sink->Write(make_page("second")));
  EXPECT_EQ(b_->Query("SELECT COUNT(*), SUM(qty) FROM " + b_->Quote(table_) +
                      " WHERE name = 'second'")[0],
            (std::vector<std::optional<std::string>>{std::to_string(kRows), "4999950000"}));
}

TEST_P(SqlSinkScenario, UnchangedToastKeepsTheDestinationValue) {
  Fill("(1, 'a', 'doc one', 1), (2, 'b', 'doc two', 2)");
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Update(rel_, {T("1"), T("a2"), T("new doc"), T("1")}),
                                Update(rel_, {T("2"), T("b2"), Toast(), T("20")})})));
  EXPECT_EQ(Dump(*b_, table_), "1|a2|new doc|1;2|b2|doc two|20");
}

TEST_P(SqlSinkScenario, KeyChangingUpdateRemovesTheOldRow) {
  Fill("(1, 'a', 'x', 1)");
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf(
      {Update(rel_, {T("5"), T("a"), T("x"), T("1")}, Row{T("1"), Null(), Null(), Null()})})));
  EXPECT_EQ(Dump(*b_, table_), "5|a|x|1");
}

// The same through the real cdc_unwrap: a "d" row for the old key, then a "u" row.
TEST_P(SqlSinkScenario, KeyChangeThroughCdcUnwrapRemovesTheOldRow) {
  Fill("(1, 'a', 'x', 1), (2, 'b', 'y', 2)");
  config::ConnectorSpec spec{"cdc_unwrap", Yaml("{}"), Yaml("{type: cdc_unwrap}")};
  auto unwrap = MakeCdcUnwrap(spec);
  ASSERT_OK(unwrap);
  Page page =
      PageOf({Update(rel_, {T("7"), T("a"), T("x"), T("1")}, Row{T("1"), T("a"), T("x"), T("1")}),
              Delete(rel_, {T("2"), Null(), Null(), Null()})});
  ASSERT_OK((*unwrap)->Apply(page));
  ASSERT_EQ(page.changes.size(), 3u);
  auto sink =
      OpenSink(*b_, table_, std::string(kUpsert) + ", delete_marker: {field: __op, values: [d]}");
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(page));
  EXPECT_EQ(Dump(*b_, table_), "7|a|x|1");
}

TEST_P(SqlSinkScenario, ChangesToOneKeyInAPageApplyInOrder) {
  Fill("(11, 'old', 'old', 0), (20, 'pre', 'predoc', 0)");
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  Row del10{T("10"), Null(), Null(), Null()};
  Row del11{T("11"), Null(), Null(), Null()};
  ASSERT_OK(sink->Write(PageOf({
      // insert, delete, insert: present with the last values
      Insert(rel_, {T("10"), T("a"), T("x"), T("1")}),
      Delete(rel_, del10),
      Insert(rel_, {T("10"), T("b"), T("y"), T("2")}),
      // insert, delete: absent (also the row that was there)
      Insert(rel_, {T("11"), T("a"), T("x"), T("1")}),
      Delete(rel_, del11),
      // update after insert: the updated values
      Insert(rel_, {T("12"), T("a"), T("x"), T("1")}),
      Update(rel_, {T("12"), T("a2"), T("x2"), T("5")}),
      // unchanged TOAST takes the earlier change's value
      Insert(rel_, {T("13"), T("a"), T("big"), T("1")}),
      Update(rel_, {T("13"), T("a3"), Toast(), T("3")}),
      // ... or keeps the destination's
      Update(rel_, {T("20"), T("p2"), Toast(), T("9")}),
  })));
  EXPECT_EQ(Dump(*b_, table_), "10|b|y|2;12|a2|x2|5;13|a3|big|3;20|p2|predoc|9");
}

TEST_P(SqlSinkScenario, CompositeKeysUpsertAndDelete) {
  const std::string pairs = testing::UniqueName("pairs");
  b_->Exec("CREATE TABLE " + b_->Quote(pairs) +
           " (a INTEGER NOT NULL, b VARCHAR(20) NOT NULL, v TEXT, PRIMARY KEY (a, b))");
  b_->Exec("INSERT INTO " + b_->Quote(pairs) + " VALUES (1, 'x', 'old'), (1, 'y', 'old')");
  auto sink = OpenSink(*b_, pairs, ", column_mapping: auto_map, write_mode: upsert, key: [a, b]");
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Relation({"a", "b", "v"});
  ASSERT_OK(sink->Write(
      PageOf({Update(rel, {T("1"), T("x"), T("new")}), Delete(rel, {T("1"), T("y"), Null()}),
              Insert(rel, {T("2"), T("x"), T("two")})})));
  Rows rows = b_->Query("SELECT a, b, v FROM " + b_->Quote(pairs) + " ORDER BY a, b");
  EXPECT_EQ(rows, (Rows{{"1", "x", "new"}, {"2", "x", "two"}}));
}

TEST_P(SqlSinkScenario, NullKeyFailsThePageNamingTableKeyAndColumn) {
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  Status st = sink->Write(PageOf({Insert(rel_, {T("1"), T("a"), T("x"), T("1")}),
                                  Insert(rel_, {Null(), T("b"), T("y"), T("2")})}));
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(table_), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("key (id)=(NULL)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("column id"), std::string::npos) << st.message();
  EXPECT_EQ(Dump(*b_, table_), "");

  st = sink->Write(PageOf({Insert(Relation({"name"}), {T("no key")})}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("missing"), std::string::npos) << st.message();
}

TEST_P(SqlSinkScenario, WriteIsolatingLeavesOutRowsWithoutKey) {
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  std::vector<Sink::RejectedRow> rejected;
  ASSERT_OK(sink->WriteIsolating(PageOf({Insert(rel_, {T("1"), T("a"), T("x"), T("1")}),
                                         Insert(rel_, {Null(), T("b"), T("y"), T("2")}),
                                         Insert(rel_, {T("3"), T("c"), T("z"), T("3")})}),
                                 &rejected));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_NE(rejected[0].error.message().find("column id"), std::string::npos);
  EXPECT_EQ(Dump(*b_, table_), "1|a|x|1;3|c|z|3");
}

TEST_P(SqlSinkScenario, BadValueFailsThePageNamingTableKeyAndColumn) {
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  Status st = sink->Write(PageOf({Insert(rel_, {T("1"), T("a"), T("x"), T("1")}),
                                  Insert(rel_, {T("2"), T("b"), T("y"), T("lots")}),
                                  Insert(rel_, {T("3"), T("c"), T("z"), T("3")})}));
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find(table_), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("key (id)=(2)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("qty"), std::string::npos) << st.message();
  EXPECT_EQ(Dump(*b_, table_), "");
}

TEST_P(SqlSinkScenario, WriteIsolatingLeavesOutBadValuesAndWritesTheRest) {
  Fill("(4, 'keep', 'keep', 4)");
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  std::vector<Sink::RejectedRow> rejected;
  ASSERT_OK(sink->WriteIsolating(PageOf({Insert(rel_, {T("1"), T("a"), T("x"), T("1")}),
                                         Insert(rel_, {T("2"), T("b"), T("y"), T("lots")}),
                                         Insert(rel_, {T("3"), T("c"), T("z"), T("3")}),
                                         Update(rel_, {T("4"), T("d"), T("w"), T("x4")}),
                                         Insert(rel_, {T("5"), T("e"), T("v"), T("5")}),
                                         Delete(rel_, {T("9"), Null(), Null(), Null()})}),
                                 &rejected));
  ASSERT_EQ(rejected.size(), 2u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_EQ(rejected[1].index, 3u);
  EXPECT_NE(rejected[0].error.message().find("key (id)=(2)"), std::string::npos)
      << rejected[0].error.message();
  EXPECT_NE(rejected[1].error.message().find("qty"), std::string::npos)
      << rejected[1].error.message();
  EXPECT_EQ(Dump(*b_, table_), "1|a|x|1;3|c|z|3;4|keep|keep|4;5|e|v|5");
}

TEST_P(SqlSinkScenario, AppendWritesEveryRowAndIsolatesBadValues) {
  auto sink = OpenSink(*b_, table_, ", column_mapping: auto_map");
  ASSERT_NE(sink, nullptr);
  RelationPtr unwrapped = Relation({"id", "name", "doc", "qty", "__op", "extra"});
  ASSERT_OK(
      sink->Write(PageOf({Read(unwrapped, {T("1"), T("a"), T("x"), T("1"), T("u"), T("e")}),
                          Read(unwrapped, {T("2"), T("b"), Toast(), T("2"), T("u"), T("e")})})));
  EXPECT_EQ(Dump(*b_, table_), "1|a|x|1;2|b|NULL|2");

  Status st = sink->Write(PageOf({Insert(rel_, {T("3"), T("c"), T("z"), T("3")}),
                                  Insert(rel_, {T("4"), T("d"), T("w"), T("four")})}));
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("qty"), std::string::npos) << st.message();
  EXPECT_EQ(Dump(*b_, table_), "1|a|x|1;2|b|NULL|2");

  std::vector<Sink::RejectedRow> rejected;
  ASSERT_OK(sink->WriteIsolating(PageOf({Insert(rel_, {T("3"), T("c"), T("z"), T("3")}),
                                         Insert(rel_, {T("4"), T("d"), T("w"), T("four")}),
                                         Insert(rel_, {T("1"), T("dup"), T("w"), T("1")}),
                                         Insert(rel_, {T("5"), T("e"), T("v"), T("5")})}),
                                 &rejected));
  ASSERT_EQ(rejected.size(), 2u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_EQ(rejected[1].index, 2u);  // a duplicate key is the row's fault in append mode
  EXPECT_EQ(Dump(*b_, table_), "1|a|x|1;2|b|NULL|2;3|c|z|3;5|e|v|5");
}

TEST_P(SqlSinkScenario, DeleteModeDeletesTheRowsKeys) {
  Fill("(1, 'a', 'x', 1), (2, 'b', 'y', 2), (3, 'c', 'z', 3)");
  auto sink = OpenSink(*b_, table_, ", column_mapping: auto_map, write_mode: delete, key: [id]");
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Read(rel_, {T("1"), T("a"), T("x"), T("1")}),
                                Read(rel_, {T("3"), Null(), Null(), Null()})})));
  EXPECT_EQ(Dump(*b_, table_), "2|b|y|2");
}

TEST_P(SqlSinkScenario, OverwriteSwapsInTheNewTableOnACompletedRun) {
  Fill("(1, 'old', 'old', 1)");
  auto sink = OpenSink(*b_, table_, ", column_mapping: auto_map, write_mode: overwrite");
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Read(rel_, {T("5"), T("new"), T("x"), T("5")}),
                                Read(rel_, {T("6"), T("new"), T("y"), T("6")})})));
  ASSERT_OK(sink->Flush());
  EXPECT_EQ(Dump(*b_, table_), "1|old|old|1");  // readers see the old table until the swap
  ASSERT_OK(sink->Finish(true));
  EXPECT_EQ(Dump(*b_, table_), "5|new|x|5;6|new|y|6");
  // The new table kept the primary key (a duplicate is refused).
  auto again = OpenSink(*b_, table_, ", column_mapping: auto_map");
  ASSERT_NE(again, nullptr);
  EXPECT_FALSE(again->Write(PageOf({Read(rel_, {T("5"), T("dup"), T("x"), T("5")})})).ok());
}

TEST_P(SqlSinkScenario, OverwriteLeavesTheOldTableOnAFailedRun) {
  Fill("(1, 'old', 'old', 1)");
  auto sink = OpenSink(*b_, table_, ", column_mapping: auto_map, write_mode: overwrite");
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Read(rel_, {T("5"), T("new"), T("x"), T("5")})})));
  ASSERT_OK(sink->Finish(false));
  EXPECT_EQ(Dump(*b_, table_), "1|old|old|1");
  // The new table is gone: a second overwrite run starts from scratch.
  auto second = OpenSink(*b_, table_, ", column_mapping: auto_map, write_mode: overwrite");
  ASSERT_NE(second, nullptr);
  ASSERT_OK(second->Write(PageOf({Read(rel_, {T("7"), T("newer"), T("x"), T("7")})})));
  ASSERT_OK(second->Finish(true));
  EXPECT_EQ(Dump(*b_, table_), "7|newer|x|7");
}

TEST_P(SqlSinkScenario, OverwriteRefusesToResumeFromABookmark) {
  auto sink = b_->MakeSink(
      Yaml("{" + b_->Locate(table_) + ", column_mapping: auto_map, write_mode: overwrite}"));
  ASSERT_OK(sink);
  EXPECT_EQ((*sink)->Open(/*resuming=*/true).code(), StatusCode::kFailedPrecondition);
}

TEST_P(SqlSinkScenario, CommitTokenIsStoredWithTheRowsAtomically) {
  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  const std::string scope = testing::UniqueName("pipe") + "::row-0";
  auto none = sink->CommittedToken(scope);
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());

  const std::string t1 = "00000000000000000001#{\"last_lsn\":\"0/16B3748\"}";
  ASSERT_OK(
      sink->WriteIdempotent(PageOf({Insert(rel_, {T("1"), T("a"), T("x"), T("1")})}), scope, t1));
  auto got = sink->CommittedToken(scope);
  ASSERT_OK(got);
  EXPECT_EQ(got->value_or(""), t1);

  // A page that fails commits neither its rows nor its token.
  Status st = sink->WriteIdempotent(PageOf({Insert(rel_, {T("2"), T("b"), T("y"), T("2")}),
                                            Insert(rel_, {T("3"), T("c"), T("z"), T("bad")})}),
                                    scope, "00000000000000000002#{\"last_lsn\":\"0/16B3800\"}");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  got = sink->CommittedToken(scope);
  ASSERT_OK(got);
  EXPECT_EQ(got->value_or(""), t1);
  EXPECT_EQ(Dump(*b_, table_), "1|a|x|1");

  // A page with no rows still commits its token (an idle source's bookmark).
  const std::string t3 = "00000000000000000003#{\"last_lsn\":\"0/16B3900\"}";
  ASSERT_OK(sink->WriteIdempotent(Page{}, scope, t3));
  got = sink->CommittedToken(scope);
  ASSERT_OK(got);
  EXPECT_EQ(got->value_or(""), t3);

  // A scope longer than any key column round-trips too.
  const std::string long_scope = scope + std::string(300, 'x');
  ASSERT_OK(sink->WriteIdempotent(Page{}, long_scope, t1));
  got = sink->CommittedToken(long_scope);
  ASSERT_OK(got);
  EXPECT_EQ(got->value_or(""), t1);
}

// The pipeline reads the token before it opens the sink, to re-anchor the source.
TEST_P(SqlSinkScenario, CommittedTokenIsReadableBeforeOpen) {
  const std::string scope = testing::UniqueName("early") + "::row-0";
  auto fresh = b_->MakeSink(Yaml("{" + b_->Locate(table_) + kUpsert + "}"));
  ASSERT_OK(fresh);
  auto none = (*fresh)->CommittedToken(scope);
  ASSERT_OK(none);
  EXPECT_FALSE(none->has_value());

  auto sink = OpenSink(*b_, table_, kUpsert);
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->WriteIdempotent(Page{}, scope, "00000000000000000007#{}"));
  auto restarted = b_->MakeSink(Yaml("{" + b_->Locate(table_) + kUpsert + "}"));
  ASSERT_OK(restarted);
  auto got = (*restarted)->CommittedToken(scope);
  ASSERT_OK(got);
  EXPECT_EQ(got->value_or(""), "00000000000000000007#{}");
  ASSERT_OK((*restarted)->Open(true));
}

TEST_P(SqlSinkScenario, JsonMappingWritesEachRowAsOneDocument) {
  const std::string docs = testing::UniqueName("docs");
  b_->Exec("CREATE TABLE " + b_->Quote(docs) + " (payload TEXT)");
  std::string key = b_->Name() == "postgres" ? "jsonb" : "json";
  auto sink = OpenSink(*b_, docs, ", column_mapping: {" + key + ": {column: payload}}");
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Read(rel_, {T("1"), T("a\tb"), Null(), T("1")})})));
  Rows rows = b_->Query("SELECT payload FROM " + b_->Quote(docs));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].value_or(""), R"({"id":"1","name":"a\tb","doc":null,"qty":"1"})");
}

TEST_P(SqlSinkScenario, MissingTableIsNotFound) {
  auto sink = b_->MakeSink(Yaml("{" + b_->Locate(testing::UniqueName("absent")) + kUpsert + "}"));
  ASSERT_OK(sink);
  Status st = (*sink)->Open(false);
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
}

TEST_P(SqlSinkScenario, UpsertWithoutUniqueIndexOnTheKeyIsRefusedAtOpen) {
  auto sink = b_->MakeSink(Yaml("{" + b_->Locate(table_) +
                                ", column_mapping: auto_map, write_mode: upsert, key: [name]}"));
  ASSERT_OK(sink);
  Status st = (*sink)->Open(false);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("unique index"), std::string::npos) << st.message();
}

// By position in the Values below: naming must not connect (tests are listed without servers).
// A fresh items table and an upsert sink on it, told that a bulk load follows (Open makes the
// sink, so that a test can put rows in the table first). The sinks with a bulk load: postgres
// (one COPY), sqlite (one transaction of statements) and mysql (one LOAD DATA across pages).
class SqlBulkLoad : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override {
    b_ = GetParam()();
    b_->Exec(b_->ItemsDdl(table));
  }
  void Open() {
    sink = OpenSink(*b_, table, kUpsert);
    ASSERT_NE(sink, nullptr);
    sink->BeginBulkLoad({});
  }
  std::string Rows() { return Dump(*b_, table); }

  // Loads two clean rows, then `second`, whose second row (the load's 4th) is refused: the
  // load fails naming it (`place`), and nothing of it remains.
  void ExpectSecondPageRefused(const Page& second, const std::string& column,
                               const std::string& place = "bulk load, row 4") {
    Open();
    ASSERT_OK(sink->Write(PageOf({Read(rel, {T("1"), T("a"), Null(), T("1")}),
                                  Read(rel, {T("2"), T("b"), Null(), T("2")})})));
    Status st = sink->Write(second);
    if (st.ok()) st = sink->Flush();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find(place), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(column), std::string::npos) << st.message();
    ASSERT_OK(sink->Finish(false));
    EXPECT_EQ(Rows(), "");
  }

  std::unique_ptr<Backend> b_;
  const std::string table = testing::UniqueName("bulk");
  const RelationPtr rel = Relation({"id", "name", "doc", "qty"});
  std::unique_ptr<Sink> sink;
};

// A bulk load (a mirror's snapshot, `faucet run` of a query) goes into one transaction:
// invisible until Flush, then all there.
TEST_P(SqlBulkLoad, IsOneTransactionCommittedAtFlush) {
  Open();
  for (int p = 0; p < 3; ++p) {
    std::vector<Change> changes;
    for (int i = 1; i <= 2; ++i) {
      std::string id = std::to_string(p * 2 + i);
      changes.push_back(Read(rel, {T(id.c_str()), T("n"), Null(), T(id.c_str())}));
    }
    ASSERT_OK(sink->Write(PageOf(std::move(changes))));
  }
  EXPECT_EQ(Rows(), "");  // not committed yet
  ASSERT_OK(sink->Flush());
  EXPECT_EQ(Rows(), "1|n|NULL|1;2|n|NULL|2;3|n|NULL|3;4|n|NULL|4;5|n|NULL|5;6|n|NULL|6");
  // After the load, pages are upserts again, each in its own transaction.
  ASSERT_OK(sink->Write(PageOf({Read(rel, {T("1"), T("m"), Null(), T("9")})})));
  EXPECT_EQ(b_->Query("SELECT name FROM " + b_->Quote(table) + " WHERE id = 1")[0][0], "m");
  ASSERT_OK(sink->Finish(true));
}

TEST_P(SqlBulkLoad, AbandonedByAFailedRunLeavesNothing) {
  Open();
  ASSERT_OK(sink->Write(PageOf({Read(rel, {T("1"), T("a"), Null(), T("1")})})));
  ASSERT_OK(sink->Finish(false));
  EXPECT_EQ(Rows(), "");
}

// A value the column refuses fails the whole load (no row is isolated: the caller redoes the
// load page by page); the error places the row in the load.
TEST_P(SqlBulkLoad, ARefusedValueFailsTheWholeLoad) {
  ExpectSecondPageRefused(PageOf({Read(rel, {T("3"), T("c"), Null(), T("3")}),
                                  Read(rel, {T("4"), T("d"), Null(), T("four")})}),
                          "column qty");
}

// A page that deletes is not part of a load: what the load holds is committed and the page is
// written the usual way.
TEST_P(SqlBulkLoad, EndsAtAPageThatDeletes) {
  Open();
  ASSERT_OK(sink->Write(PageOf(
      {Read(rel, {T("1"), T("a"), Null(), T("1")}), Read(rel, {T("2"), T("b"), Null(), T("2")})})));
  ASSERT_OK(sink->Write(PageOf({Delete(rel, {T("1"), Null(), Null(), Null()})})));
  EXPECT_EQ(Rows(), "2|b|NULL|2");
  ASSERT_OK(sink->Flush());
}

// Postgres loads by COPY and MySQL by LOAD DATA, which cannot upsert: a keyed table that
// already holds rows is loaded page by page, and a key repeated across pages fails the load.
class InsertingBulkLoad : public SqlBulkLoad {};

TEST_P(InsertingBulkLoad, IntoATableWithRowsUpsertsPageByPage) {
  b_->Exec("INSERT INTO " + b_->Quote(table) + " VALUES (1, 'old', NULL, 0)");
  Open();
  ASSERT_OK(sink->Write(PageOf({Read(rel, {T("1"), T("new"), Null(), T("1")}),
                                Read(rel, {T("2"), T("b"), Null(), T("2")})})));
  EXPECT_EQ(Rows(), "1|new|NULL|1;2|b|NULL|2");  // committed by the Write
  ASSERT_OK(sink->Flush());
}

// MySQL's duplicate-key warning does not say which row of the LOAD DATA it is.
TEST_P(InsertingBulkLoad, ARepeatedKeyFailsTheWholeLoad) {
  ExpectSecondPageRefused(
      PageOf({Read(rel, {T("3"), T("c"), Null(), T("3")}),
              Read(rel, {T("2"), T("x"), Null(), T("2")})}),
      "", b_->Name() == "mysql" ? "bulk load: Duplicate entry '2'" : "bulk load, row 4");
}

// SQLite loads by its upsert statements: a table with rows, and a key repeated across pages,
// are upserted within the load.
class SqliteBulkLoad : public SqlBulkLoad {};

TEST_P(SqliteBulkLoad, IntoATableWithRowsUpsertsInTheLoad) {
  b_->Exec("INSERT INTO " + b_->Quote(table) + " VALUES (1, 'old', NULL, 0)");
  Open();
  ASSERT_OK(sink->Write(PageOf({Read(rel, {T("1"), T("new"), Null(), T("1")}),
                                Read(rel, {T("2"), T("b"), Null(), T("2")})})));
  ASSERT_OK(sink->Write(PageOf({Read(rel, {T("2"), T("c"), Null(), T("3")})})));
  EXPECT_EQ(Rows(), "1|old|NULL|0");  // not committed yet
  ASSERT_OK(sink->Flush());
  EXPECT_EQ(Rows(), "1|new|NULL|1;2|c|NULL|3");
}

// MySQL loads with LOAD DATA LOCAL INFILE, which the server runs as with IGNORE: a value it
// would refuse in an INSERT is altered or skipped with a warning, which refuses the load.
class MysqlBulkLoad : public SqlBulkLoad {
 protected:
  // Writes 60 pages of 1000 rows with 90-byte names (about 6 MB) into the open load; the row
  // at 0-based place `refused` (if any) gets a name too long for its column.
  void WriteSixtyPages(std::optional<int> refused = std::nullopt) {
    for (int p = 0; p < 60; ++p) {
      std::vector<Change> changes;
      for (int i = 0; i < 1000; ++i) {
        const int row = p * 1000 + i;
        const std::string id = std::to_string(row + 1);
        const std::string name(row == refused ? 101 : 90, 'x');
        changes.push_back(Read(rel, {T(id.c_str()), T(name.c_str()), Null(), T("1")}));
      }
      ASSERT_OK(sink->Write(PageOf(std::move(changes))));
    }
  }
};

TEST_P(MysqlBulkLoad, ATooLongValueFailsTheWholeLoad) {
  ExpectSecondPageRefused(
      PageOf({Read(rel, {T("3"), T("c"), Null(), T("3")}),
              Read(rel, {T("4"), T(std::string(101, 'd').c_str()), Null(), T("4")})}),
      "column name");
}

TEST_P(MysqlBulkLoad, ANullIntoNotNullFailsTheWholeLoad) {
  b_->Exec("ALTER TABLE " + b_->Quote(table) + " MODIFY qty INT NOT NULL");
  ExpectSecondPageRefused(PageOf({Read(rel, {T("3"), T("c"), Null(), T("3")}),
                                  Read(rel, {T("4"), T("d"), Null(), Null()})}),
                          "column qty");
}

// One LOAD DATA carries the whole load: 60 pages of 1000 rows (about 6 MB, more than the 4 MiB
// that may wait for the server, in many 256 KiB pieces) go through it, and a refused row near
// the end is named by its place in the load, counted across pages and pieces.
TEST_P(MysqlBulkLoad, ALoadLargerThanItsQueueNamesARefusedRowByItsPlace) {
  Open();
  WriteSixtyPages(59500);
  Status st = sink->Flush();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_NE(st.message().find("bulk load, row 59501, column name"), std::string::npos)
      << st.message();
  ASSERT_OK(sink->Finish(false));
  EXPECT_EQ(b_->Query("SELECT count(*) FROM " + b_->Quote(table))[0][0], "0");
}

TEST_P(MysqlBulkLoad, ALoadLargerThanItsQueueIsCommittedWhole) {
  Open();
  WriteSixtyPages();
  EXPECT_EQ(b_->Query("SELECT count(*) FROM " + b_->Quote(table))[0][0], "0") << "not committed";
  ASSERT_OK(sink->Flush());
  EXPECT_EQ(b_->Query("SELECT CONCAT(count(*), '/', sum(id), '/', sum(qty)) FROM " +
                      b_->Quote(table))[0][0],
            "60000/1800030000/60000");
  ASSERT_OK(sink->Finish(true));
}

// Every type the sink converts lands the same through a bulk load as through pages: NULLs,
// text with the LOAD DATA format's own characters (tab, newline, backslash, \N, NUL), emoji,
// bytes (0x00, 0x09, 0x5c), decimals (one rounded, with a note), dates, times, JSON.
TEST_P(MysqlBulkLoad, ValuesLandAsThroughPages) {
  const std::string columns =
      " (id INT PRIMARY KEY, flag TINYINT(1), ts DATETIME(6), tstz TIMESTAMP(6) NULL,"
      " tm TIME(6), bin VARBINARY(10), bl BLOB, num DECIMAL(40,20), r DECIMAL(5,2), j JSON,"
      " t TEXT, dbl DOUBLE, d DATE, lat VARCHAR(20) CHARACTER SET latin1, e ENUM('a', 'b'))";
  const std::string paged = table + "_p";
  b_->Exec("CREATE TABLE " + b_->Quote(paged) + columns);
  b_->Exec("DROP TABLE " + b_->Quote(table));
  b_->Exec("CREATE TABLE " + b_->Quote(table) + columns);
  const RelationPtr all = Relation({"id", "flag", "ts", "tstz", "tm", "bin", "bl", "num", "r", "j",
                                    "t", "dbl", "d", "lat", "e"});
  const Page page = PageOf({
      Read(all, {T("1"), T("t"), T("2024-01-01 10:00:00.5+02"), T("2024-01-01 00:30:00-01:30"),
                 T("12:00:00+05:30"), T("\\x0009ff5c0a"), T("\\x5c4e"),
                 T("12345678901234567890.12345678901234567890"), T("1.125"),
                 T("{\"a\": [1, \"x\\ty\"]}"),
                 Cell::Value(std::string("tab\there\nline \\ back\\slash \\N h\xC3\xA9llo "
                                         "\xF0\x9F\x9A\x80 nul") +
                             '\0' + "end"),
                 T("-1.5e3"), T("2024-02-29"), T("h\xC3\xA9llo"), T("b")}),
      Read(all, {T("2"), T("f"), T("2024-03-01 00:00:00+00"), T("1999-12-31 23:00:00-02"),
                 T("00:00:00"), T("plain"), T("\\x"), T("-0.5"), T("0"), T("null"), T(""), T("0"),
                 Null(), T("NULL"), T("a")}),
      Read(all, {T("3"), Null(), Null(), Null(), Null(), Null(), Null(), Null(), Null(), Null(),
                 T("\\N"), Null(), Null(), Null(), Null()}),
  });
  auto page_sink = OpenSink(*b_, paged, kUpsert);
  ASSERT_NE(page_sink, nullptr);
  ASSERT_OK(page_sink->Write(page));
  ASSERT_OK(page_sink->Finish(true));

  Open();
  ASSERT_OK(sink->Write(page));
  EXPECT_EQ(b_->Query("SELECT count(*) FROM " + b_->Quote(table))[0][0], "0") << "not loaded";
  ASSERT_OK(sink->Flush());
  ASSERT_OK(sink->Finish(true));

  const std::string select =
      "SELECT id, flag, ts, tstz, tm, HEX(bin), HEX(bl), num, r, j, HEX(t), dbl, d, HEX(lat), e"
      " FROM ";
  const sqltest::Rows loaded = b_->Query(select + b_->Quote(table) + " ORDER BY id");
  EXPECT_EQ(loaded, b_->Query(select + b_->Quote(paged) + " ORDER BY id"));
  ASSERT_EQ(loaded.size(), 3u);
  EXPECT_EQ(loaded[0][5], "0009FF5C0A");
  EXPECT_EQ(loaded[0][8], "1.13");
  EXPECT_EQ(loaded[0][13], "68E96C6C6F");  // latin1
  EXPECT_EQ(loaded[1][5], "706C61696E");
  EXPECT_EQ(loaded[1][6], "");
  EXPECT_EQ(loaded[1][10], "");
  EXPECT_EQ(loaded[1][13], "4E554C4C");  // the text NULL
  EXPECT_EQ(loaded[2][1], std::nullopt);
  EXPECT_EQ(loaded[2][10], "5C4E");  // the text \N
  b_->Exec("DROP TABLE " + b_->Quote(paged) + ", " + b_->Quote(table));
}

// A BIT or YEAR column reads a LOAD DATA field (a string) unlike the page's number ('0' is
// the year 2000, 0 the year 0000): such a table is loaded page by page.
TEST_P(MysqlBulkLoad, ATableWithAYearColumnIsLoadedPageByPage) {
  b_->Exec("ALTER TABLE " + b_->Quote(table) + " MODIFY qty YEAR");
  Open();
  ASSERT_OK(sink->Write(PageOf({Read(rel, {T("1"), T("a"), Null(), T("0")})})));
  EXPECT_EQ(Rows(), "1|a|NULL|0000");  // committed by the Write
  ASSERT_OK(sink->Flush());
}

std::string BackendName(const ::testing::TestParamInfo<BackendFactory>& info) {
  static const char* kNames[] = {"postgres", "sqlite", "mysql"};
  return kNames[info.index];
}

INSTANTIATE_TEST_SUITE_P(Sql, SqlSinkScenario,
                         ::testing::Values(&MakePostgresBackend, &MakeSqliteBackend,
                                           &MakeMysqlBackend),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Sql, SqlBulkLoad,
                         ::testing::Values(&MakePostgresBackend, &MakeSqliteBackend,
                                           &MakeMysqlBackend),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Sql, InsertingBulkLoad,
                         ::testing::Values(&MakePostgresBackend, &MakeMysqlBackend),
                         [](const auto& info) {
                           return std::string(info.index == 0 ? "postgres" : "mysql");
                         });
INSTANTIATE_TEST_SUITE_P(Sql, SqliteBulkLoad, ::testing::Values(&MakeSqliteBackend),
                         [](const auto&) { return std::string("sqlite"); });
INSTANTIATE_TEST_SUITE_P(Sql, MysqlBulkLoad, ::testing::Values(&MakeMysqlBackend),
                         [](const auto&) { return std::string("mysql"); });

}  // namespace
}  // namespace faucet::sqltest
