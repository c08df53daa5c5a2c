#include "core/change.h"

#include <gtest/gtest.h>

namespace faucet {
namespace {

// delete_ops/drop_ops and Kafka envelopes name operations by code or by long name: each names
// its own operation, and nothing else names one.
TEST(ParseChangeOp, EveryOperationIsNamedByItsCodeAndItsLongName) {
  for (size_t i = 0; i < kChangeOps.size(); ++i) {
    const ChangeOp op = kChangeOps[i];
    EXPECT_EQ(static_cast<size_t>(op), i);  // in enum order: an op indexes arrays by it
    EXPECT_EQ(ParseChangeOp(std::string(1, ChangeOpCode(op))), op) << ChangeOpCode(op);
    EXPECT_EQ(ParseChangeOp(ChangeOpName(op)), op) << ChangeOpName(op);
  }
  EXPECT_EQ(ParseChangeOp("delete"), ChangeOp::kDelete);
  EXPECT_EQ(ParseChangeOp("c"), ChangeOp::kInsert);
  for (const char* other : {"", "x", "dd", "Delete", "ddl", "inserts"}) {
    EXPECT_EQ(ParseChangeOp(other), std::nullopt) << other;
  }
}

}  // namespace
}  // namespace faucet
