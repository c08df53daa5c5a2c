#include "sinks/sql/apply_isolating.h"

#include <gtest/gtest.h>

#include <set>

#include "testing/status_matchers.h"

namespace faucet::sql {
namespace {

// A fake table that refuses some rows: a range applies all or nothing; it names the failing row
// only when told to.
struct FakeTable {
  std::set<size_t> bad;
  bool names_row = false;
  std::set<size_t> applied;
  int calls = 0;

  RangeResult Apply(size_t begin, size_t end) {
    ++calls;
    for (size_t r = begin; r < end; ++r) {
      if (bad.count(r)) {
        RangeResult result{InvalidArgument("bad value")};
        if (names_row) result.failed_at = r;
        return result;
      }
    }
    for (size_t r = begin; r < end; ++r) applied.insert(r);
    return RangeResult::Ok();
  }
};

std::vector<size_t> Rows(const std::vector<FailedRow>& failed) {
  std::vector<size_t> out;
  for (const FailedRow& f : failed) out.push_back(f.row);
  return out;
}

TEST(ApplyIsolating, CleanRangeTakesOneCall) {
  FakeTable t;
  std::vector<FailedRow> failed;
  ASSERT_OK(ApplyIsolating(
      100, [&](size_t b, size_t e) { return t.Apply(b, e); }, false, failed));
  EXPECT_EQ(t.calls, 1);
  EXPECT_EQ(t.applied.size(), 100u);
  EXPECT_TRUE(failed.empty());
}

TEST(ApplyIsolating, UnnamedFailuresAreFoundByBisection) {
  FakeTable t;
  t.bad = {3, 64, 99};
  std::vector<FailedRow> failed;
  ASSERT_OK(ApplyIsolating(
      100, [&](size_t b, size_t e) { return t.Apply(b, e); }, false, failed));
  EXPECT_EQ(Rows(failed), (std::vector<size_t>{3, 64, 99}));
  EXPECT_EQ(t.applied.size(), 97u);
  EXPECT_LT(t.calls, 3 * 2 * 8);
}

TEST(ApplyIsolating, NamedFailureStepsOverTheRow) {
  FakeTable t;
  t.bad = {10, 11};
  t.names_row = true;
  std::vector<FailedRow> failed;
  ASSERT_OK(ApplyIsolating(
      50, [&](size_t b, size_t e) { return t.Apply(b, e); }, false, failed));
  EXPECT_EQ(Rows(failed), (std::vector<size_t>{10, 11}));
  EXPECT_EQ(t.applied.size(), 48u);
  EXPECT_LE(t.calls, 5);
}

TEST(ApplyIsolating, StopAtFirstLeavesTheRestUnapplied) {
  FakeTable t;
  t.bad = {5, 7};
  std::vector<FailedRow> failed;
  ASSERT_OK(ApplyIsolating(
      10, [&](size_t b, size_t e) { return t.Apply(b, e); }, true, failed));
  EXPECT_EQ(Rows(failed), (std::vector<size_t>{5}));
  EXPECT_EQ(t.applied.count(9), 0u);
}

TEST(ApplyIsolating, OtherErrorsFailTheWholeCall) {
  std::vector<FailedRow> failed;
  Status st = ApplyIsolating(
      10, [](size_t, size_t) { return RangeResult{Unavailable("connection lost")}; }, false,
      failed);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(failed.empty());
}

}  // namespace
}  // namespace faucet::sql
