#include "state/memory_state_store.h"

#include <gtest/gtest.h>

namespace faucet {
namespace {

TEST(MemoryStateStore, PutGetDeleteRoundTrip) {
  MemoryStateStore store;
  Json value = {{"last_lsn", "0/16B3748"}};
  ASSERT_TRUE(store.Put("orders::row-0", value).ok());
  EXPECT_EQ(*store.Get("orders::row-0"), value);
  ASSERT_TRUE(store.Delete("orders::row-0").ok());
  EXPECT_FALSE(store.Get("orders::row-0")->has_value());
  EXPECT_TRUE(store.Delete("orders::row-0").ok());
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
