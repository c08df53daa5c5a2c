#include "core/pending_work.h"

#include <gtest/gtest.h>

namespace faucet {
namespace {

auto AtMost(int done) {
  return [done](int mark) { return mark <= done; };
}

TEST(PendingWorkTest, RetiresOldestFirstAndReportsTheOldestNotDone) {
  PendingWork<int> work(8);
  EXPECT_EQ(work.Oldest(), 0);
  work.Add(1, 100);
  work.Add(2, 200);
  work.Add(3, 300);
  EXPECT_EQ(work.Oldest(), 100);
  EXPECT_EQ(work.OldestNot(AtMost(1)), 200);  // entry 1 is done, entry 2 is not
  EXPECT_EQ(work.OldestNot(AtMost(3)), 0);
  work.Retire(AtMost(2));
  EXPECT_EQ(work.size(), 1u);
  EXPECT_EQ(work.Oldest(), 300);
  work.Clear();
  EXPECT_EQ(work.Oldest(), 0);
}

// Past its bound the newest two merge: the oldest time stays exact, and the merged entry
// retires only with its newest mark, so a lag read can be longer, never shorter.
TEST(PendingWorkTest, MergesTheNewestTwoPastItsBound) {
  PendingWork<int> work(2);
  work.Add(1, 100);
  work.Add(2, 200);
  work.Add(3, 300);  // merges with 2: (3, 200)
  EXPECT_EQ(work.size(), 2u);
  EXPECT_EQ(work.Oldest(), 100);
  work.Retire(AtMost(2));  // entry 1 retires; the merged one waits for 3
  EXPECT_EQ(work.size(), 1u);
  EXPECT_EQ(work.Oldest(), 200);
  work.Retire(AtMost(3));
  EXPECT_EQ(work.size(), 0u);
}

}  // namespace
}  // namespace faucet
