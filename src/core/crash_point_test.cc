#include "core/crash_point.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

namespace faucet {
namespace {

TEST(CrashPoint, NamesAreUnique) {
  std::set<std::string> names;
  for (const CrashPointInfo& p : RegisteredCrashPoints()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
  }
}

TEST(CrashPointDeathTest, ExitsAtTheNthHit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("FAUCET_CRASH_AT", "pipeline.after_flush:2", 1);
        CrashPoint("pipeline.after_write");
        CrashPoint("pipeline.after_flush");
        std::fprintf(stderr, "survived first\n");
        CrashPoint("pipeline.after_flush");
        std::exit(0);
      },
      ::testing::ExitedWithCode(kCrashExitCode), "survived first(.|\n)*crash point hit");
}

TEST(CrashPointDeathTest, UnknownArmedNameIsRefused) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("FAUCET_CRASH_AT", "no.such.point", 1);
        CrashPoint("pipeline.after_write");
      },
      ::testing::ExitedWithCode(2), "unknown crash point");
}

}  // namespace
}  // namespace faucet
