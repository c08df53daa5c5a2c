#include "sinks/sql/write_spec.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet::sql {
namespace {

config::Block Cfg(const std::string& yaml) {
  return config::Block(YAML::Load(yaml), std::make_shared<const std::string>("p.yaml"),
                       "pipeline.sink.config");
}

const MappingGrammar kPostgres{{"jsonb"}, false};
const MappingGrammar kSqlite{{"json"}, true};

TEST(WriteSpec, DefaultsToAppendIntoTheDataJsonColumn) {
  auto spec = ParseWriteSpec(Cfg("{}"), kPostgres);
  ASSERT_OK(spec);
  EXPECT_EQ(spec->mode, WriteMode::kAppend);
  EXPECT_FALSE(spec->auto_map);
  EXPECT_EQ(spec->json_column, "data");
}

TEST(WriteSpec, ReadsTheReferenceUpsertShape) {
  auto spec = ParseWriteSpec(Cfg("{column_mapping: auto_map, write_mode: upsert, key: [id],"
                                 " delete_marker: {field: __op, values: [d]}}"),
                             kPostgres);
  ASSERT_OK(spec);
  EXPECT_TRUE(spec->auto_map);
  EXPECT_EQ(spec->key, (std::vector<std::string>{"id"}));
  ASSERT_TRUE(spec->delete_marker.has_value());
  EXPECT_EQ(spec->delete_marker->values, (std::vector<std::string>{"d"}));
}

TEST(WriteSpec, JsonColumnIsNamedByTheSinksKey) {
  auto spec = ParseWriteSpec(Cfg("{column_mapping: {json: {column: doc}}}"), kSqlite);
  ASSERT_OK(spec);
  EXPECT_EQ(spec->json_column, "doc");
  auto wrong = ParseWriteSpec(Cfg("{column_mapping: {jsonb: {column: doc}}}"), kSqlite);
  EXPECT_FALSE(wrong.ok());
}

TEST(WriteSpec, SqliteNeedsAColumnMapping) {
  auto spec = ParseWriteSpec(Cfg("{}"), kSqlite);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("column_mapping: is required"), std::string::npos);
}

TEST(WriteSpec, UpsertNeedsAKeyAndAutoMap) {
  EXPECT_FALSE(
      ParseWriteSpec(Cfg("{column_mapping: auto_map, write_mode: upsert}"), kPostgres).ok());
  auto json = ParseWriteSpec(
      Cfg("{write_mode: upsert, key: [id], column_mapping: {jsonb: {column: d}}}"), kPostgres);
  ASSERT_FALSE(json.ok());
  EXPECT_NE(json.status().message().find("needs column_mapping: auto_map"), std::string::npos);
}

// Defaults follow what the user wrote; only a written contradictory pair is an error.
TEST(WriteSpec, AKeyedModeWithoutAMappingMapsByName) {
  for (const char* mode : {"upsert", "delete"}) {
    auto spec =
        ParseWriteSpec(Cfg(std::string("{write_mode: ") + mode + ", key: [id]}"), kPostgres);
    ASSERT_OK(spec) << mode << ": " << spec.status().ToString();
    EXPECT_TRUE(spec->auto_map) << mode;
  }
  auto sqlite = ParseWriteSpec(Cfg("{write_mode: upsert, key: [id]}"), kSqlite);
  ASSERT_FALSE(sqlite.ok());  // sqlite has no default mapping: it must be written
  EXPECT_NE(sqlite.status().message().find("column_mapping: is required"), std::string::npos);
}

TEST(WriteSpec, ADeleteMarkerWithoutAModeIsAnUpsert) {
  auto spec =
      ParseWriteSpec(Cfg("{key: [id], delete_marker: {field: __op, values: [d]}}"), kPostgres);
  ASSERT_OK(spec);
  EXPECT_EQ(spec->mode, WriteMode::kUpsert);
  EXPECT_TRUE(spec->auto_map);
  ASSERT_TRUE(spec->delete_marker.has_value());
}

TEST(WriteSpec, DeleteMarkerIsForUpsertOnly) {
  auto spec = ParseWriteSpec(Cfg("{column_mapping: auto_map, write_mode: append,"
                                 " delete_marker: {field: __op, values: [d]}}"),
                             kPostgres);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("p.yaml:1:"), std::string::npos);
  EXPECT_NE(spec.status().message().find("only valid with write_mode: upsert"), std::string::npos);
}

TEST(ScopeKey, ShortScopesAreKeptAndLongOnesHashedToTheWidth) {
  EXPECT_EQ(ScopeKey("orders::row-0", 255), "orders::row-0");
  std::string long_scope(300, 'a');
  std::string key = ScopeKey(long_scope, 255);
  EXPECT_EQ(key.size(), 255u);
  EXPECT_EQ(key.substr(0, 235), long_scope.substr(0, 235));
  EXPECT_EQ(key.substr(235, 4), "__h:");
  EXPECT_NE(ScopeKey(long_scope + "b", 255), key);
}

}  // namespace
}  // namespace faucet::sql
