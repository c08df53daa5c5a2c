#include "transforms/transforms.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"
#include "transforms/relation_cache.h"

namespace faucet {
namespace {

config::ConnectorSpec Spec(const std::string& yaml) {
  auto file = std::make_shared<const std::string>("t.yaml");
  config::Block spec(YAML::Load(yaml), file, "pipeline.transforms[0]");
  config::Block cfg = *spec.Child("config");
  return config::ConnectorSpec{*spec.String("type", ""), cfg, spec};
}

RelationPtr Orders() {
  return std::make_shared<Relation>(Relation{7,
                                             "public",
                                             "orders",
                                             {Column{"id", ValueType::kInt, 23, -1, true},
                                              Column{"note", ValueType::kText, 25, -1, false}}});
}

Change Make(ChangeOp op, std::optional<Row> before, std::optional<Row> after) {
  Change c;
  c.op = op;
  c.relation = Orders();
  c.before = std::move(before);
  c.after = std::move(after);
  return c;
}

Page Apply(const std::string& yaml, std::vector<Change> changes) {
  auto t = MakeCdcUnwrap(Spec(yaml));
  if (yaml.find("cdc_unwrap") == std::string::npos) {
    if (yaml.find("rename_fields") != std::string::npos) t = MakeRenameFields(Spec(yaml));
    if (yaml.find("drop_fields") != std::string::npos) t = MakeDropFields(Spec(yaml));
    if (yaml.find("filter") != std::string::npos) t = MakeFilter(Spec(yaml));
  }
  EXPECT_OK(t);
  Page page;
  page.changes = std::move(changes);
  page.bookmark = Bookmark{Json{{"n", 1}}};
  EXPECT_OK((*t)->Apply(page));
  return page;
}

Row R(const std::string& id, const std::string& note) {
  return Row{Cell::Value(id), Cell::Value(note)};
}

// A relation replaced by a schema change, once nothing holds it, leaves the cache when the
// next new relation comes: a long stream of schema changes keeps it small.
TEST(DerivedRelations, ForgetsRelationsNothingElseHolds) {
  int derived = 0;
  DerivedRelations cache([&](const Relation& r) {
    ++derived;
    return r;
  });
  std::weak_ptr<const Relation> old_one;
  {
    auto old_relation = std::make_shared<const Relation>(Relation{1, "s", "t", {}});
    old_one = old_relation;
    cache.For(old_relation);
    EXPECT_EQ(cache.For(old_relation), cache.For(old_relation));  // derived once
  }
  EXPECT_FALSE(old_one.expired());  // only the cache holds it now
  auto next = std::make_shared<const Relation>(Relation{1, "s", "t", {{"c"}}});
  cache.For(next);
  EXPECT_TRUE(old_one.expired());
  EXPECT_EQ(derived, 2);
}

TEST(CdcUnwrap, InsertBecomesFlatRowMarkedU) {
  Page p = Apply("type: cdc_unwrap", {Make(ChangeOp::kInsert, std::nullopt, R("1", "a"))});
  ASSERT_EQ(p.changes.size(), 1u);
  const Change& c = p.changes[0];
  EXPECT_EQ(c.op, ChangeOp::kRead);
  EXPECT_EQ(c.relation->columns.back().name, "__op");
  EXPECT_EQ(c.after->back().text, "u");
  EXPECT_TRUE(p.bookmark.has_value());
}

TEST(CdcUnwrap, DeleteBecomesBeforeRowMarkedD) {
  Page p = Apply("type: cdc_unwrap", {Make(ChangeOp::kDelete, R("1", "a"), std::nullopt)});
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_EQ((*p.changes[0].after)[0].text, "1");
  EXPECT_EQ(p.changes[0].after->back().text, "d");
}

TEST(CdcUnwrap, TruncateIsDroppedByDefault) {
  Page p = Apply("type: cdc_unwrap", {Make(ChangeOp::kTruncate, std::nullopt, std::nullopt)});
  EXPECT_TRUE(p.changes.empty());
}

TEST(CdcUnwrap, KeyChangingUpdateDeletesTheOldKeyFirst) {
  Page p = Apply("type: cdc_unwrap", {Make(ChangeOp::kUpdate, R("1", "a"), R("2", "a"))});
  ASSERT_EQ(p.changes.size(), 2u);
  EXPECT_EQ((*p.changes[0].after)[0].text, "1");
  EXPECT_EQ(p.changes[0].after->back().text, "d");
  EXPECT_EQ((*p.changes[1].after)[0].text, "2");
  EXPECT_EQ(p.changes[1].after->back().text, "u");
}

TEST(CdcUnwrap, UpdateWithSameKeyIsOneUpsert) {
  Page p = Apply("type: cdc_unwrap", {Make(ChangeOp::kUpdate, R("1", "a"), R("1", "b"))});
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_EQ((*p.changes[0].after)[1].text, "b");
}

TEST(CdcUnwrap, ConfiguredKeyOverridesReplicaIdentity) {
  // Keyed on note: a change of id alone is not a key change.
  Page p =
      Apply("{type: cdc_unwrap, key: [note]}", {Make(ChangeOp::kUpdate, R("1", "a"), R("2", "a"))});
  EXPECT_EQ(p.changes.size(), 1u);
}

TEST(CdcUnwrap, UnchangedToastStaysUnchanged) {
  Row after{Cell::Value("1"), Cell::UnchangedToast()};
  Page p = Apply("type: cdc_unwrap", {Make(ChangeOp::kUpdate, std::nullopt, after)});
  EXPECT_EQ((*p.changes[0].after)[1].state, CellState::kUnchangedToast);
}

TEST(CdcUnwrap, CustomMarkerAndDeleteOps) {
  Page p = Apply("{type: cdc_unwrap, config: {marker_field: op_kind, delete_ops: [delete]}}",
                 {Make(ChangeOp::kDelete, R("1", "a"), std::nullopt)});
  EXPECT_EQ(p.changes[0].relation->columns.back().name, "op_kind");
  EXPECT_EQ(p.changes[0].after->back().text, "d");
}

TEST(RenameFields, RenamesColumns) {
  Page p = Apply("{type: rename_fields, config: {fields: {note: comment}}}",
                 {Make(ChangeOp::kInsert, std::nullopt, R("1", "a"))});
  EXPECT_EQ(p.changes[0].relation->columns[1].name, "comment");
  EXPECT_EQ(Orders()->columns[1].name, "note");
}

TEST(DropFields, DropsColumnsAndCells) {
  Page p = Apply("{type: drop_fields, config: {fields: [note]}}",
                 {Make(ChangeOp::kUpdate, R("1", "a"), R("1", "b"))});
  ASSERT_EQ(p.changes[0].relation->columns.size(), 1u);
  ASSERT_EQ(p.changes[0].after->size(), 1u);
  EXPECT_EQ((*p.changes[0].after)[0].text, "1");  // kept cells keep their values
  EXPECT_EQ(p.changes[0].before->size(), 1u);
}

TEST(Filter, KeepsMatchingChanges) {
  Page p = Apply("{type: filter, config: {path: after.note, op: in, value: [a, c]}}",
                 {Make(ChangeOp::kInsert, std::nullopt, R("1", "a")),
                  Make(ChangeOp::kInsert, std::nullopt, R("2", "b"))});
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_EQ((*p.changes[0].after)[0].text, "1");
  EXPECT_TRUE(p.bookmark.has_value());
}

TEST(Filter, MatchesOnTable) {
  Page p = Apply("{type: filter, config: {path: table, op: ne, value: orders}}",
                 {Make(ChangeOp::kInsert, std::nullopt, R("1", "a"))});
  EXPECT_TRUE(p.changes.empty());
}

TEST(Filter, BadOpNamesTheKey) {
  auto t = MakeFilter(Spec("{type: filter, config: {path: x, op: like, value: y}}"));
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("pipeline.transforms[0].config.op"), std::string::npos)
      << t.status().message();
}

}  // namespace
}  // namespace faucet
