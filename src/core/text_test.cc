#include "core/text.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

namespace faucet {
namespace {

TEST(AppendPadded, WritesWhatPrintfWritesWithZeroPadding) {
  for (uint64_t v :
       {uint64_t{0}, uint64_t{7}, uint64_t{42}, uint64_t{1999}, uint64_t{10000}, UINT64_MAX}) {
    for (int width : {0, 1, 2, 4, 6}) {
      char want[32];
      std::snprintf(want, sizeof want, "%0*" PRIu64, width, v);
      std::string out = "x";
      AppendPadded(out, v, width);
      EXPECT_EQ(out, std::string("x") + want) << "value " << v << ", width " << width;
    }
  }
}

TEST(AppendUnhex, AppendsTheBytesOrRefusesWhatIsNotHex) {
  std::string out = "x";
  EXPECT_TRUE(AppendUnhex("00ff0A7e", out));
  EXPECT_EQ(out, std::string("x\x00\xff\x0a\x7e", 5));
  std::string bytes;
  for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  std::string hex;
  AppendHex(bytes, hex);
  std::string back;
  EXPECT_TRUE(AppendUnhex(hex, back));
  EXPECT_EQ(back, bytes);
  std::string refused;
  EXPECT_FALSE(AppendUnhex("abc", refused));  // odd length
  EXPECT_FALSE(AppendUnhex("0g", refused));
  EXPECT_TRUE(AppendUnhex("", refused));
}

}  // namespace
}  // namespace faucet
