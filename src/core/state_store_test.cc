#include "core/state_store.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

TEST(ValidateStateKey, AcceptsTheReferenceGrammar) {
  EXPECT_OK(ValidateStateKey("orders_mirror::cdc"));
  EXPECT_OK(ValidateStateKey("a.b-c_D:9"));
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
