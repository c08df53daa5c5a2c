#include "config/block.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet::config {
namespace {

Block Parse(const std::string& yaml, const std::string& path = "pipeline.source.config") {
  return Block(YAML::Load(yaml), std::make_shared<const std::string>("p.yaml"), path);
}

void ExpectError(const Status& status, const std::string& message) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), message);
}

TEST(Block, ReadsTypedValues) {
  Block b = Parse("s: text\ni: 42\nd: 0.5\nb: true\ne: upsert\nl: [a, b]\n");
  EXPECT_EQ(*b.RequiredString("s"), "text");
  EXPECT_EQ(*b.Int("i", 0, 1, 100), 42);
  EXPECT_EQ(*b.Double("d", 0, 0, 1), 0.5);
  EXPECT_TRUE(*b.Bool("b", false));
  EXPECT_EQ(*b.Enum("e", "append", {"append", "upsert"}), "upsert");
  EXPECT_EQ(*b.StringList("l"), (std::vector<std::string>{"a", "b"}));
}

// Assigning a block never changes the config its old node belonged to (yaml-cpp's Node
// assignment would write through to every copy).
TEST(Block, AssignmentRebindsAndLeavesCopiesAlone) {
  Block original = Parse("table_name: orders\n");
  Block copy = original;
  Block other = Parse("table_name: lines\n");
  copy = other;
  EXPECT_EQ(*copy.RequiredString("table_name"), "lines");
  EXPECT_EQ(*original.RequiredString("table_name"), "orders");
  Block moved = original;
  moved = Parse("table_name: x\n");
  EXPECT_EQ(*original.RequiredString("table_name"), "orders");
}

TEST(Block, AbsentKeysReadAsFallbacks) {
  Block b = Parse("x: 1\n");
  EXPECT_EQ(*b.String("s", "dflt"), "dflt");
  EXPECT_EQ(*b.Int("i", 7), 7);
  EXPECT_FALSE(b.OptionalInt("i")->has_value());
  EXPECT_TRUE(b.StringList("l")->empty());
  EXPECT_TRUE(b.BlockList("l")->empty());
  EXPECT_FALSE(b.OptionalChild("c")->has_value());
  EXPECT_EQ(b.Child("c")->path(), "pipeline.source.config.c");
}

TEST(Block, IntGivenAsListNamesFileLineKeyAndExpectation) {
  Block b = Parse("slot_name: s\nbatch_size: [1, 2]\n");
  ExpectError(b.Int("batch_size", 1000, 1, 1000000).status(),
              "p.yaml:2:13: pipeline.source.config.batch_size: expected an integer between 1 "
              "and 1000000, got a list");
}

TEST(Block, IntOutOfRangeShowsTheValue) {
  ExpectError(Parse("batch_size: 0\n").Int("batch_size", 1000, 1, 1000000).status(),
              "p.yaml:1:13: pipeline.source.config.batch_size: expected an integer between 1 "
              "and 1000000, got '0'");
}

TEST(Block, MissingRequiredStringIsLocatedAtTheBlock) {
  ExpectError(Parse("other: 1\n").RequiredString("table_name").status(),
              "p.yaml:1:1: pipeline.source.config.table_name: is required (expected a string)");
}

TEST(Block, EnumListsTheAllowedValues) {
  ExpectError(Parse("mode: sideways\n").Enum("mode", "append", {"append", "upsert"}).status(),
              "p.yaml:1:7: pipeline.source.config.mode: expected one of append, upsert, got "
              "'sideways'");
}

TEST(Block, BoolAcceptsOnlyTrueAndFalse) {
  ExpectError(Parse("flag: yes\n").Bool("flag", false).status(),
              "p.yaml:1:7: pipeline.source.config.flag: expected true or false, got 'yes'");
}

TEST(Block, ChildMustBeAMapping) {
  ExpectError(Parse("c: [1]\n").Child("c").status(),
              "p.yaml:1:4: pipeline.source.config.c: expected a mapping, got a list");
}

TEST(Block, BlockListGivesEachItemAnIndexedPath) {
  Block b = Parse("transforms:\n  - type: a\n  - type: b\n", "pipeline");
  Result<std::vector<Block>> items = b.BlockList("transforms");
  ASSERT_OK(items);
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ((*items)[1].path(), "pipeline.transforms[1]");
  ExpectError((*items)[1].Error("config", "bad"), "p.yaml:3:5: pipeline.transforms[1].config: bad");
}

TEST(Block, BlockListRejectsAnItemThatIsNotAMapping) {
  ExpectError(Parse("transforms:\n  - type: a\n  - cdc_unwrap\n", "pipeline")
                  .BlockList("transforms")
                  .status(),
              "p.yaml:3:5: pipeline.transforms[1]: expected a mapping, got 'cdc_unwrap'");
}

TEST(Block, KeyErrorPointsAtTheKeyNotItsValue) {
  Block b = Parse("a: 1\nmatrix:\n  - id: x\n", "");
  ExpectError(b.Error("matrix", "m"), "p.yaml:3:3: matrix: m");
  ExpectError(b.KeyError("matrix", "m"), "p.yaml:2:1: matrix: m");
}

TEST(Block, UnreadKeysAreThoseNoGetterAsked) {
  Block b = Parse("a: 1\nb: 2\nc: 3\n");
  ASSERT_OK(b.Int("a", 0));
  b.MarkRead("c");
  EXPECT_EQ(b.UnreadKeys(), std::vector<std::string>{"b"});
}

TEST(Block, CopiesShareWhatWasRead) {
  Block b = Parse("a: 1\n");
  Block copy = b;  // NOLINT(performance-unnecessary-copy-initialization): the copy is the test
  ASSERT_OK(copy.Int("a", 0));
  EXPECT_TRUE(b.UnreadKeys().empty());
}

TEST(Block, InterpolatedValuesAreNotQuotedInMessages) {
  YAML::Node node = YAML::Load("port: hunter2\n");
  node["port"].SetTag(kInterpolatedTag);
  Block b(node, std::make_shared<const std::string>("p.yaml"), "c");
  Status s = b.Int("port", 5432).status();
  EXPECT_EQ(s.message(),
            "p.yaml:1:7: c.port: expected an integer, got a value from ${env:}, ${secret:} or "
            "${file:} (not shown)");
}

TEST(Block, DefaultConstructedIsAnEmptyMapping) {
  Block b;
  EXPECT_TRUE(b.Keys().empty());
  EXPECT_EQ(*b.Int("x", 3), 3);
}

}  // namespace
}  // namespace faucet::config
