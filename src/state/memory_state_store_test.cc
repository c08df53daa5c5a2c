#include "state/memory_state_store.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

TEST(MemoryStateStore, PutGetDeleteRoundTrip) {
  MemoryStateStore store;
  Json value = {{"last_lsn", "0/16B3748"}};
  ASSERT_OK(store.Put("orders::row-0", value));
  EXPECT_EQ(*store.Get("orders::row-0"), value);
  ASSERT_OK(store.Delete("orders::row-0"));
  EXPECT_FALSE(store.Get("orders::row-0")->has_value());
  EXPECT_OK(store.Delete("orders::row-0"));
}

TEST(MemoryStateStore, IsNotDurable) {
  EXPECT_EQ(MemoryStateStore().durability(), Durability::kNone);
}

TEST(MemoryStateStore, RejectsWhatTheDurableStoresReject) {
  MemoryStateStore store;
  EXPECT_EQ(store.Put("bad key", Json(1)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Put("k", Json("\xff")).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace faucet
