#include "clients/postgres/connection.h"

#include <gtest/gtest.h>

namespace faucet::postgres {
namespace {

TEST(SqlStateCode, OneMappingForEveryCaller) {
  // Retrying may help.
  for (const char* s : {"", "08006", "40001", "40P01", "53300", "57P01", "25006"}) {
    EXPECT_EQ(SqlStateCode(s), StatusCode::kUnavailable) << s;
  }
  // The row's own error: a DLQ takes it, nothing retries it.
  for (const char* s : {"22001", "22P02", "23505", "23502", "21000"}) {
    EXPECT_EQ(SqlStateCode(s), StatusCode::kInvalidArgument) << s;
  }
  EXPECT_EQ(SqlStateCode("42P01"), StatusCode::kNotFound);  // undefined table
  EXPECT_EQ(SqlStateCode("42704"), StatusCode::kNotFound);  // undefined object
  for (const char* s : {"42501", "42703", "55006", "28P01"}) {
    EXPECT_EQ(SqlStateCode(s), StatusCode::kFailedPrecondition) << s;
  }
  EXPECT_EQ(SqlStateCode("XX000"), StatusCode::kInternal);
}

}  // namespace
}  // namespace faucet::postgres
