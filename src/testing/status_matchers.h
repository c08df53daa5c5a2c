// EXPECT_OK / ASSERT_OK: assert that a Status or a Result<T> is ok, and print its error when it
// is not, so that a failing test says why. Evaluates its argument once; more text can be
// streamed after it (ASSERT_OK(r) << "while ...").
#pragma once

#include <gtest/gtest.h>

#include "core/status.h"

namespace faucet::status_testing {

inline const Status& StatusOf(const Status& status) { return status; }
template <typename T>
Status StatusOf(const Result<T>& result) {
  return result.status();
}

template <typename T>
::testing::AssertionResult IsOk(const char* expression, const T& value) {
  const Status& status = StatusOf(value);
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << expression << ": " << status.ToString();
}

}  // namespace faucet::status_testing

#define EXPECT_OK(expression) EXPECT_PRED_FORMAT1(::faucet::status_testing::IsOk, expression)
#define ASSERT_OK(expression) ASSERT_PRED_FORMAT1(::faucet::status_testing::IsOk, expression)
