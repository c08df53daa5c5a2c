// Schema drift (sinks/sql/schema_drift.h) against the real databases: what each policy does when
// the source's rows stop matching the destination table.
#include <gtest/gtest.h>

#include "sql_sink_test.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::sqltest {
namespace {

using BackendFactory = std::unique_ptr<Backend> (*)();

constexpr char kUpsert[] = ", column_mapping: auto_map, write_mode: upsert, key: [id]";
constexpr uint32_t kInt4 = 23, kInt8 = 20, kText = 25, kVarchar = 1043;

// A source relation as postgres-cdc decodes it: id int4, name varchar(50), qty int4 (or int8),
// then `extra` text columns.
RelationPtr Source(const std::vector<std::string>& extra, uint32_t qty_oid = kInt4) {
  auto r = std::make_shared<faucet::Relation>();
  r->schema = "src";
  r->name = "items";
  r->columns = {{"id", ValueType::kInt, kInt4, -1, true},
                {"name", ValueType::kText, kVarchar, 54, false},
                {"qty", ValueType::kInt, qty_oid, -1, false}};
  for (const std::string& n : extra) r->columns.push_back({n, ValueType::kText, kText, -1, false});
  return r;
}

class SqlSinkDrift : public ::testing::TestWithParam<BackendFactory> {
 protected:
  void SetUp() override {
    b_ = GetParam()();
    table_ = testing::UniqueName("drift");
    b_->Exec(b_->ItemsDdl(table_));
  }

  std::unique_ptr<Sink> Open(SchemaPolicy policy, const std::string& extra = kUpsert) {
    auto sink = b_->MakeSink(Yaml("{" + b_->Locate(table_) + extra + "}"));
    EXPECT_OK(sink);
    if (!sink.ok()) return nullptr;
    (*sink)->SetSchemaPolicy(policy);
    Status st = (*sink)->Open(false);
    EXPECT_OK(st);
    return st.ok() ? std::move(sink).value() : nullptr;
  }

  // "id|name|qty|note;..." by id; note is NULL when the table has no such column.
  std::string Rows(bool with_note) {
    std::string out;
    for (const auto& row :
         b_->Query("SELECT id, name, qty" + std::string(with_note ? ", note" : "") + " FROM " +
                   b_->Quote(table_) + " ORDER BY id")) {
      if (!out.empty()) out += ";";
      for (size_t i = 0; i < row.size(); ++i) out += (i ? "|" : "") + row[i].value_or("NULL");
    }
    return out;
  }

  std::unique_ptr<Backend> b_;
  std::string table_;
};

TEST_P(SqlSinkDrift, EvolveAddsTheMissingColumnAndWritesIt) {
  RelationPtr before = Source({});
  RelationPtr after = Source({"note"});
  auto sink = Open(SchemaPolicy{OnDrift::kEvolve});
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Insert(before, {T("1"), T("a"), T("1")})})));
  // The source gained a column: the same page also carries a row of the old shape.
  ASSERT_OK(sink->Write(PageOf({Insert(after, {T("2"), T("b"), T("2"), T("hello")}),
                                Insert(before, {T("3"), T("c"), T("3")})})));
  EXPECT_EQ(Rows(true), "1|a|1|NULL;2|b|2|hello;3|c|3|NULL");

  // A second sink (the next run) finds the column and changes nothing.
  auto again = Open(SchemaPolicy{OnDrift::kEvolve});
  ASSERT_NE(again, nullptr);
  ASSERT_OK(again->Write(PageOf({Update(after, {T("1"), T("a"), T("1"), T("later")})})));
  EXPECT_EQ(Rows(true), "1|a|1|later;2|b|2|hello;3|c|3|NULL");
}

TEST_P(SqlSinkDrift, WarnWritesTheColumnsTheDestinationHas) {
  auto sink = Open(SchemaPolicy{});
  ASSERT_NE(sink, nullptr);
  ASSERT_OK(sink->Write(PageOf({Insert(Source({"note"}), {T("1"), T("a"), T("1"), T("x")})})));
  EXPECT_EQ(Rows(false), "1|a|1");
}

TEST_P(SqlSinkDrift, FailRefusesThePageNamingTableAndColumn) {
  auto sink = Open(SchemaPolicy{OnDrift::kFail});
  ASSERT_NE(sink, nullptr);
  Status st = sink->Write(PageOf({Insert(Source({}), {T("1"), T("a"), T("1")}),
                                  Insert(Source({"note"}), {T("2"), T("b"), T("2"), T("x")})}));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find(table_), std::string::npos) << st.message();
  // The type is the one the sink would give the column: text, TEXT, longtext.
  EXPECT_NE(st.message().find("the source's column note ("), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(") is not in the destination (on_drift: fail)"), std::string::npos)
      << st.message();
  EXPECT_EQ(Rows(false), "") << "nothing of the page is written";
}

TEST_P(SqlSinkDrift, QuarantineRefusesOnlyRowsCarryingTheDriftingColumn) {
  auto sink = Open(SchemaPolicy{OnDrift::kQuarantine});
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Source({"note"});
  std::vector<Sink::RejectedRow> rejected;
  ASSERT_OK(sink->WriteIsolating(PageOf({Insert(rel, {T("1"), T("a"), T("1"), Null()}),
                                         Insert(rel, {T("2"), T("b"), T("2"), T("x")}),
                                         Delete(rel, {T("1"), T("a"), T("1"), T("y")})}),
                                 &rejected));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_NE(rejected[0].error.message().find("key (id)=(2), column note: the source's column note"),
            std::string::npos)
      << rejected[0].error.message();
  EXPECT_EQ(Rows(false), "") << "row 1 was inserted, then deleted; row 2 went to the DLQ";
}

// Widening and relaxing are DDL SQLite does not have (its types are affinities, and NOT NULL
// cannot be dropped in place): those tests run against postgres and mysql.
class SqlSinkTypedDrift : public SqlSinkDrift {};

TEST_P(SqlSinkTypedDrift, EvolveWidensAColumnTheSourceWidened) {
  auto sink = Open(SchemaPolicy{OnDrift::kEvolve});
  ASSERT_NE(sink, nullptr);
  // qty became bigint on the source: the next value does not fit the destination's integer.
  ASSERT_OK(sink->Write(PageOf({Insert(Source({}, kInt8), {T("1"), T("a"), T("5000000000")})})));
  EXPECT_EQ(Rows(false), "1|a|5000000000");
}

TEST_P(SqlSinkTypedDrift, WideningNotAllowedFailsUnderOnIncompatible) {
  SchemaPolicy policy{OnDrift::kEvolve};
  policy.allow_type_widening = false;
  auto sink = Open(policy);
  ASSERT_NE(sink, nullptr);
  Status st = sink->Write(PageOf({Insert(Source({}, kInt8), {T("1"), T("a"), T("5")})}));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("column qty is"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("allow_type_widening is false (on_drift: evolve, on_incompatible: "
                              "fail)"),
            std::string::npos)
      << st.message();
}

TEST_P(SqlSinkTypedDrift, EvolveRelaxesAColumnTheSourceNoLongerSends) {
  b_->Exec("ALTER TABLE " + b_->Quote(table_) + " ADD COLUMN legacy varchar(10) NOT NULL");
  SchemaPolicy policy{OnDrift::kEvolve};
  auto strict = Open(policy);
  ASSERT_NE(strict, nullptr);
  Status st = strict->Write(PageOf({Insert(Source({}), {T("1"), T("a"), T("1")})}));
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("column legacy is NOT NULL without a default"), std::string::npos)
      << st.message();

  policy.relax_nullability_on_missing = true;
  auto relaxed = Open(policy);
  ASSERT_NE(relaxed, nullptr);
  ASSERT_OK(relaxed->Write(PageOf({Insert(Source({}), {T("1"), T("a"), T("1")})})));
  EXPECT_EQ(Rows(false), "1|a|1");
}

std::string BackendName(const ::testing::TestParamInfo<BackendFactory>& info) {
  static const char* kNames[] = {"postgres", "sqlite", "mysql"};
  return kNames[info.index];
}
std::string TypedBackendName(const ::testing::TestParamInfo<BackendFactory>& info) {
  static const char* kNames[] = {"postgres", "mysql"};
  return kNames[info.index];
}

INSTANTIATE_TEST_SUITE_P(Sql, SqlSinkDrift,
                         ::testing::Values(&MakePostgresBackend, &MakeSqliteBackend,
                                           &MakeMysqlBackend),
                         BackendName);
INSTANTIATE_TEST_SUITE_P(Sql, SqlSinkTypedDrift,
                         ::testing::Values(&MakePostgresBackend, &MakeMysqlBackend),
                         TypedBackendName);

}  // namespace
}  // namespace faucet::sqltest
