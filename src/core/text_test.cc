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

}  // namespace
}  // namespace faucet
