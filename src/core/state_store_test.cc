#include "core/state_store.h"

#include <gtest/gtest.h>

namespace faucet {
namespace {

TEST(ValidateStateKey, AcceptsTheReferenceGrammar) {
  EXPECT_TRUE(ValidateStateKey("orders_mirror::cdc").ok());
  EXPECT_TRUE(ValidateStateKey("a.b-c_D:9").ok());
}

TEST(ValidateStateKey, RejectsBadKeys) {
  EXPECT_FALSE(ValidateStateKey("").ok());
  EXPECT_FALSE(ValidateStateKey(".hidden").ok());
  EXPECT_FALSE(ValidateStateKey("has space").ok());
  EXPECT_FALSE(ValidateStateKey("slash/key").ok());
  EXPECT_FALSE(ValidateStateKey(std::string(257, 'a')).ok());
}

}  // namespace
}  // namespace faucet
