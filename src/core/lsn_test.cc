#include "core/lsn.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

TEST(Lsn, ParsesAndFormatsUpperCaseWithoutLeadingZeros) {
  Result<Lsn> lsn = Lsn::Parse("16/b374d848");
  ASSERT_OK(lsn);
  EXPECT_EQ(lsn->value(), (uint64_t{0x16} << 32) | 0xB374D848);
  EXPECT_EQ(lsn->ToString(), "16/B374D848");
  EXPECT_EQ(Lsn(0).ToString(), "0/0");
}

TEST(Lsn, OrdersByValue) { EXPECT_LT(*Lsn::Parse("0/FFFFFFFF"), *Lsn::Parse("1/0")); }

TEST(Lsn, RejectsMalformedText) {
  for (const char* bad : {"", "0", "/1", "1/", "G/1", "123456789/0", "1/2/3", " 1/2"}) {
    EXPECT_EQ(Lsn::Parse(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

}  // namespace
}  // namespace faucet
