#include "sinks/sql/session_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "testing/status_matchers.h"

namespace faucet::sql {
namespace {

using namespace std::chrono_literals;

struct FakeSession {
  explicit FakeSession(int id, std::atomic<int>* closed) : id(id), closed(closed) {}
  ~FakeSession() { ++*closed; }
  bool Reusable() const { return !in_transaction; }

  int id;
  std::atomic<int>* closed;
  bool in_transaction = false;
};
using Pool = SessionPool<FakeSession>;

class SessionPoolTest : public ::testing::Test {
 protected:
  Pool::Factory Counting() {
    return [this]() -> Result<std::unique_ptr<FakeSession>> {
      if (fail_next_) {
        fail_next_ = false;
        return Unavailable("cannot connect");
      }
      return std::make_unique<FakeSession>(++opened_, &closed_);
    };
  }

  std::atomic<int> opened_{0};
  std::atomic<int> closed_{0};
  bool fail_next_ = false;
};

TEST_F(SessionPoolTest, AGivenBackSessionIsReusedNotReopened) {
  auto pool = std::make_shared<Pool>(2, Counting());
  int first;
  {
    Result<Pool::Lease> lease = pool->Acquire();
    ASSERT_OK(lease.status());
    first = (*lease)->id;
  }
  Result<Pool::Lease> again = pool->Acquire();
  ASSERT_OK(again.status());
  EXPECT_EQ((*again)->id, first);
  EXPECT_EQ(opened_, 1);
  EXPECT_EQ(pool->open(), 1u);
}

TEST_F(SessionPoolTest, NeverMoreThanSizeOpenAndAWaiterGetsTheNextOneBack) {
  auto pool = std::make_shared<Pool>(2, Counting());
  Result<Pool::Lease> a = pool->Acquire();
  Result<Pool::Lease> b = pool->Acquire();
  ASSERT_OK(a.status());
  ASSERT_OK(b.status());
  EXPECT_NE((*a)->id, (*b)->id);

  std::atomic<bool> got{false};
  int waited_for = 0;
  std::thread waiter([&] {
    Result<Pool::Lease> c = pool->Acquire();
    ASSERT_OK(c.status());
    waited_for = (*c)->id;
    got = true;
  });
  std::this_thread::sleep_for(100ms);  // a negative check: nothing frees a session meanwhile
  EXPECT_FALSE(got) << "a third session was handed out while two are leased";
  const int given_back = (*a)->id;
  a->Reset();
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_EQ(waited_for, given_back);
  EXPECT_EQ(opened_, 2);
}

TEST_F(SessionPoolTest, ASessionLeftInATransactionIsClosedAndItsPlaceFreed) {
  auto pool = std::make_shared<Pool>(1, Counting());
  {
    Result<Pool::Lease> lease = pool->Acquire();
    ASSERT_OK(lease.status());
    (*lease)->in_transaction = true;
  }
  EXPECT_EQ(closed_, 1);
  EXPECT_EQ(pool->open(), 0u);
  Result<Pool::Lease> fresh = pool->Acquire();
  ASSERT_OK(fresh.status());
  EXPECT_EQ((*fresh)->id, 2) << "the next sink gets a new session, not the one mid-transaction";
}

TEST_F(SessionPoolTest, AFailedOpenIsTheErrorAndFreesItsPlace) {
  auto pool = std::make_shared<Pool>(1, Counting());
  fail_next_ = true;
  Result<Pool::Lease> failed = pool->Acquire();
  EXPECT_EQ(failed.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(pool->open(), 0u);
  ASSERT_OK(pool->Acquire().status()) << "the failed open does not hold the only place";
}

TEST_F(SessionPoolTest, OnePoolPerDestinationWhileAnyoneHoldsIt) {
  std::shared_ptr<Pool> a = Pool::Shared("db://one", 3, Counting());
  std::shared_ptr<Pool> b = Pool::Shared("db://one", 7, Counting());
  std::shared_ptr<Pool> other = Pool::Shared("db://two", 2, Counting());
  EXPECT_EQ(a, b);
  EXPECT_EQ(b->size(), 3u) << "the first caller's size counts";
  EXPECT_NE(a, other);
  a.reset();
  b.reset();
  std::shared_ptr<Pool> renewed = Pool::Shared("db://one", 4, Counting());
  EXPECT_EQ(renewed->size(), 4u) << "a pool nobody holds is gone, with its sessions";
}

}  // namespace
}  // namespace faucet::sql
