#include "sources/postgres/copy_text.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

Row Parse(std::string_view line, size_t columns) {
  Row row;
  Status s = ParseCopyTextRow(line, columns, row);
  EXPECT_OK(s);
  return row;
}

TEST(CopyText, SplitsOnTabsAndDropsTheNewline) {
  Row r = Parse("1\tabc\t\n", 3);
  EXPECT_EQ(r[0].text, "1");
  EXPECT_EQ(r[1].text, "abc");
  EXPECT_EQ(r[2].state, CellState::kValue);
  EXPECT_EQ(r[2].text, "");
}

TEST(CopyText, BackslashNIsNullButAnEscapedBackslashNIsText) {
  Row r = Parse("\\N\t\\\\N\n", 2);
  EXPECT_EQ(r[0].state, CellState::kNull);
  EXPECT_EQ(r[1].state, CellState::kValue);
  EXPECT_EQ(r[1].text, "\\N");
}

TEST(CopyText, DecodesEveryEscape) {
  Row r = Parse("a\\tb\\nc\\rd\\\\e\\bf\\fg\\vh\\101\\x41\\x4a\\q\n", 1);
  EXPECT_EQ(r[0].text, "a\tb\nc\rd\\e\bf\fg\vhAAJq");
}

TEST(CopyText, KeepsNonAsciiBytes) {
  Row r = Parse("h\xc3\xa9llo \xe2\x9c\x93\n", 1);
  EXPECT_EQ(r[0].text, "h\xc3\xa9llo \xe2\x9c\x93");
}

TEST(CopyText, WrongColumnCountIsDataLoss) {
  Row row;
  EXPECT_EQ(ParseCopyTextRow("1\t2\n", 3, row).code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseCopyTextRow("1\t2\t3\n", 2, row).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace faucet::postgres
