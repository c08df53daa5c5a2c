#include "sinks/sql/write_plan.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet::sql {
namespace {

TargetTable Table() {
  TargetTable t;
  t.display_name = "public.items";
  t.columns = {{"id", "integer"}, {"name", "text"}, {"doc", "text"}};
  t.unique_keys = {{"id"}};
  return t;
}

RelationPtr Rel(const std::vector<std::string>& names) {
  auto r = std::make_shared<Relation>();
  r->schema = "src";
  r->name = "items";
  for (auto& n : names) r->columns.push_back(Column{n, ValueType::kText, 25, -1, n == "id"});
  return r;
}

Cell V(const char* s) { return Cell::Value(s); }

Change Make(ChangeOp op, const RelationPtr& rel, std::optional<Row> before,
            std::optional<Row> after) {
  Change c;
  c.op = op;
  c.relation = rel;
  c.before = std::move(before);
  c.after = std::move(after);
  return c;
}

WriteSpec Upsert() {
  WriteSpec s;
  s.mode = WriteMode::kUpsert;
  s.key = {"id"};
  s.auto_map = true;
  return s;
}

// The written values of plan row r as "col=value" pairs, "-" for a column not written.
std::string Show(const WritePlan& plan, size_t r) {
  std::string out;
  for (size_t c = 0; c < plan.target().columns.size(); ++c) {
    const Cell* cell = plan.cell(r, c);
    if (c) out += " ";
    out += plan.target().columns[c].name + "=";
    if (cell == nullptr) {
      out += "-";
    } else if (cell->state == CellState::kNull) {
      out += "NULL";
    } else {
      out += cell->text;
    }
  }
  return out;
}

class WritePlanTest : public ::testing::Test {
 protected:
  std::unique_ptr<WritePlan> Plan(const WriteSpec& spec) {
    auto plan = WritePlan::Make(table_, spec);
    EXPECT_OK(plan);
    return std::move(plan).value();
  }
  TargetTable table_ = Table();
  RelationPtr rel_ = Rel({"id", "name", "doc"});
};

TEST_F(WritePlanTest, InsertDeleteInsertLeavesTheLastValues) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("a"), V("x")}));
  page.changes.push_back(Make(ChangeOp::kDelete, rel_, Row{V("1"), V("a"), V("x")}, {}));
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("b"), V("y")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ(plan->row(0).action, RowAction::kUpsert);
  EXPECT_EQ(plan->row(0).change, 2u);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=b doc=y");
}

TEST_F(WritePlanTest, InsertThenDeleteLeavesADelete) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("a"), V("x")}));
  page.changes.push_back(
      Make(ChangeOp::kDelete, rel_, Row{V("1"), Cell::Null(), Cell::Null()}, {}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ(plan->row(0).action, RowAction::kDelete);
  EXPECT_EQ(plan->deletes(), 1u);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=- doc=-");
}

TEST_F(WritePlanTest, UpdateAfterInsertKeepsTheUpdatedValues) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("a"), V("x")}));
  page.changes.push_back(Make(ChangeOp::kUpdate, rel_, {}, Row{V("1"), V("b"), V("x")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=b doc=x");
}

TEST_F(WritePlanTest, UnchangedToastTakesTheValueOfAnEarlierChangeOfTheKey) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("a"), V("big")}));
  page.changes.push_back(
      Make(ChangeOp::kUpdate, rel_, {}, Row{V("1"), V("b"), Cell::UnchangedToast()}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=b doc=big");
}

TEST_F(WritePlanTest, UnchangedToastIsNeverWrittenAndGetsItsOwnColumnGroup) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kUpdate, rel_, {}, Row{V("1"), V("a"), V("new doc")}));
  page.changes.push_back(
      Make(ChangeOp::kUpdate, rel_, {}, Row{V("2"), V("b"), Cell::UnchangedToast()}));
  page.changes.push_back(Make(ChangeOp::kUpdate, rel_, {}, Row{V("3"), V("c"), V("d3")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 3u);
  EXPECT_EQ(Show(*plan, 1), "id=2 name=b doc=-");
  ASSERT_EQ(plan->groups().size(), 2u);
  EXPECT_EQ(plan->groups()[plan->row(0).group], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plan->groups()[plan->row(1).group], (std::vector<int>{0, 1}));
  EXPECT_EQ(plan->row(2).group, plan->row(0).group);
}

TEST_F(WritePlanTest, KeyChangingUpdateDeletesTheOldKeyFirst) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kUpdate, rel_, Row{V("1"), Cell::Null(), Cell::Null()},
                              Row{V("2"), V("a"), V("x")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ(plan->deletes(), 1u);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=- doc=-");
  EXPECT_EQ(plan->row(1).action, RowAction::kUpsert);
  EXPECT_EQ(Show(*plan, 1), "id=2 name=a doc=x");
}

TEST_F(WritePlanTest, UnwrapMarkerRoutesDeletesAndIsNeverWritten) {
  WriteSpec spec = Upsert();
  spec.delete_marker = DeleteMarker{"__op", {"d"}};
  auto plan = Plan(spec);
  RelationPtr unwrapped = Rel({"id", "name", "doc", "__op"});
  Page page;
  page.changes.push_back(Make(ChangeOp::kRead, unwrapped, {}, Row{V("1"), V("a"), V("x"), V("u")}));
  page.changes.push_back(Make(ChangeOp::kRead, unwrapped, {}, Row{V("2"), V("b"), V("y"), V("d")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ(plan->row(0).action, RowAction::kDelete);
  EXPECT_EQ(Show(*plan, 0), "id=2 name=- doc=-");
  EXPECT_EQ(Show(*plan, 1), "id=1 name=a doc=x");
}

TEST_F(WritePlanTest, UnwrapMarkerMeansDeleteEvenWithoutDeleteMarker) {
  auto plan = Plan(Upsert());
  RelationPtr unwrapped = Rel({"id", "name", "doc", "__op"});
  Page page;
  page.changes.push_back(
      Make(ChangeOp::kRead, unwrapped, {}, Row{V("1"), Cell::Null(), Cell::Null(), V("d")}));
  page.changes.push_back(Make(ChangeOp::kRead, unwrapped, {}, Row{V("2"), V("b"), V("y"), V("u")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ(plan->row(0).action, RowAction::kDelete);
  EXPECT_EQ(Show(*plan, 1), "id=2 name=b doc=y");
}

TEST_F(WritePlanTest, MarkerColumnOfTheTargetIsDataWithoutDeleteMarker) {
  table_.columns.push_back({"__op", "text"});
  auto plan = Plan(Upsert());
  RelationPtr unwrapped = Rel({"id", "name", "doc", "__op"});
  Page page;
  page.changes.push_back(Make(ChangeOp::kRead, unwrapped, {}, Row{V("1"), V("a"), V("x"), V("d")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ(plan->row(0).action, RowAction::kUpsert);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=a doc=x __op=d");
}

TEST_F(WritePlanTest, NullKeyIsRefusedNamingTableKeyAndColumn) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("a"), V("x")}));
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{Cell::Null(), V("b"), V("y")}));
  plan->Build(page);
  EXPECT_EQ(plan->size(), 1u);
  ASSERT_EQ(plan->rejected().size(), 1u);
  EXPECT_EQ(plan->rejected()[0].index, 1u);
  EXPECT_EQ(plan->rejected()[0].error.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(plan->rejected()[0].error.message(),
            "table public.items, key (id)=(NULL), column id: the key column is null");
}

TEST_F(WritePlanTest, MissingKeyColumnIsRefused) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(Make(ChangeOp::kInsert, Rel({"name"}), {}, Row{V("a")}));
  plan->Build(page);
  EXPECT_EQ(plan->size(), 0u);
  ASSERT_EQ(plan->rejected().size(), 1u);
  EXPECT_EQ(plan->rejected()[0].error.message(),
            "table public.items, key (id)=((missing)), column id: the key column is missing "
            "from the row");
}

TEST_F(WritePlanTest, ColumnsTheTargetLacksAreIgnoredAndCaseFolds) {
  auto plan = Plan(Upsert());
  Page page;
  page.changes.push_back(
      Make(ChangeOp::kInsert, Rel({"ID", "NAME", "extra"}), {}, Row{V("1"), V("a"), V("zz")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=a doc=-");
}

TEST_F(WritePlanTest, AppendInsertsEveryRowAndSkipsRawDeletesAndTruncates) {
  WriteSpec spec;
  spec.auto_map = true;
  auto plan = Plan(spec);
  Page page;
  page.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("a"), V("x")}));
  page.changes.push_back(Make(ChangeOp::kUpdate, rel_, {}, Row{V("1"), V("b"), V("x")}));
  page.changes.push_back(Make(ChangeOp::kDelete, rel_, Row{V("1"), V("b"), V("x")}, {}));
  page.changes.push_back(Make(ChangeOp::kTruncate, rel_, {}, {}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ(plan->row(0).action, RowAction::kInsert);
  EXPECT_EQ(Show(*plan, 1), "id=1 name=b doc=x");
  EXPECT_TRUE(plan->rejected().empty());
}

TEST_F(WritePlanTest, DeleteModeDeletesEveryKey) {
  WriteSpec spec = Upsert();
  spec.mode = WriteMode::kDelete;
  auto plan = Plan(spec);
  Page page;
  page.changes.push_back(Make(ChangeOp::kRead, rel_, {}, Row{V("1"), V("a"), V("x")}));
  page.changes.push_back(Make(ChangeOp::kRead, rel_, {}, Row{V("2"), V("a"), V("x")}));
  plan->Build(page);
  EXPECT_EQ(plan->size(), 2u);
  EXPECT_EQ(plan->deletes(), 2u);
}

TEST_F(WritePlanTest, JsonMappingWritesTheWholeRowIntoOneColumn) {
  table_.columns = {{"data", "jsonb"}};
  WriteSpec spec;
  auto plan = Plan(spec);
  Page page;
  page.changes.push_back(Make(ChangeOp::kRead, Rel({"id", "name"}), {}, Row{V("1"), V("a")}));
  plan->Build(page);
  ASSERT_EQ(plan->size(), 1u);
  EXPECT_EQ(plan->cell(0, 0)->text, R"({"id":"1","name":"a"})");
}

TEST_F(WritePlanTest, UpsertNeedsAUniqueIndexOnTheKey) {
  table_.unique_keys.clear();
  auto plan = WritePlan::Make(table_, Upsert());
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("no primary key or unique index on exactly (id)"),
            std::string::npos);
}

TEST_F(WritePlanTest, PlanIsRebuiltPerPage) {
  auto plan = Plan(Upsert());
  Page first;
  first.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("a"), V("x")}));
  plan->Build(first);
  Page second;
  second.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("1"), V("b"), V("y")}));
  second.changes.push_back(Make(ChangeOp::kInsert, rel_, {}, Row{V("2"), V("c"), V("z")}));
  plan->Build(second);
  ASSERT_EQ(plan->size(), 2u);
  EXPECT_EQ(Show(*plan, 0), "id=1 name=b doc=y");
}

}  // namespace
}  // namespace faucet::sql
