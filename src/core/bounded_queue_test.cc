#include "core/bounded_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace faucet {
namespace {

TEST(BoundedQueue, PushBlocksWhileOverBudget) {
  BoundedQueue<int> q(10);
  ASSERT_TRUE(q.Push(1, 8));
  std::atomic<bool> pushed{false};
  std::thread t([&] {
    q.Push(2, 8);
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the push must not happen meanwhile
  EXPECT_FALSE(pushed.load());
  EXPECT_EQ(q.Pop(), 1);
  t.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.Pop(), 2);
}

TEST(BoundedQueue, OversizedItemGoesInWhenEmpty) {
  BoundedQueue<int> q(10);
  EXPECT_TRUE(q.Push(1, 100));
  EXPECT_EQ(q.Pop(), 1);
}

TEST(BoundedQueue, CloseDrainsThenEnds) {
  BoundedQueue<int> q(10);
  ASSERT_TRUE(q.Push(1, 1));
  q.Close();
  EXPECT_FALSE(q.Push(2, 1));
  EXPECT_EQ(q.Pop(), 1);
  EXPECT_EQ(q.Pop(), std::nullopt);
}

TEST(BoundedQueue, PopUntilTellsAnItemFromATimeoutFromTheEnd) {
  using Q = BoundedQueue<int>;
  Q q(10);
  int out = 0;
  const auto soon = [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(20); };
  EXPECT_EQ(q.PopUntil(out, soon()), Q::PopResult::kTimedOut);
  std::thread t([&] { q.Push(7, 1); });
  EXPECT_EQ(q.PopUntil(out, std::chrono::steady_clock::now() + std::chrono::seconds(30)),
            Q::PopResult::kPopped);
  t.join();
  EXPECT_EQ(out, 7);
  ASSERT_TRUE(q.Push(8, 1));
  q.Close();
  EXPECT_EQ(q.PopUntil(out, soon()), Q::PopResult::kPopped);
  EXPECT_EQ(out, 8);
  EXPECT_EQ(q.PopUntil(out, soon()), Q::PopResult::kClosed);
}

}  // namespace
}  // namespace faucet
