#include "observability/progress.h"

#include <gtest/gtest.h>

namespace faucet::observability {
namespace {

TEST(Progress, DescribesRowsRatePercentAndEta) {
  EXPECT_EQ(Progress::Describe(1234567, 50000, 2700000),
            "1,234,567 rows, 50,000 rows/s, 46% of ~2,700,000, ETA 29s");
  EXPECT_EQ(Progress::Describe(10, 2, 1000), "10 rows, 2 rows/s, 1% of ~1,000, ETA 8m15s");
  EXPECT_EQ(Progress::Describe(5, 0, std::nullopt), "5 rows, 0 rows/s");
  // An estimate below what was read (the catalog was stale): no ETA, never above 100%.
  EXPECT_EQ(Progress::Describe(1200, 100, 1000), "1,200 rows, 100 rows/s, 100% of ~1,000");
}

TEST(Progress, Thousands) {
  EXPECT_EQ(Thousands(0), "0");
  EXPECT_EQ(Thousands(999), "999");
  EXPECT_EQ(Thousands(1000), "1,000");
  EXPECT_EQ(Thousands(18446744073709551615ULL), "18,446,744,073,709,551,615");
}

}  // namespace
}  // namespace faucet::observability
