// WaitFor: waits for a condition with a deadline, for tests that must see something happen
// (rows present, a position reached, a log line written) instead of sleeping a fixed time.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

namespace faucet::testing {

// Calls `condition` until it returns true or `deadline` × TimeScale() (services.h) has passed,
// pausing `poll` between calls. Success as soon as the condition holds; otherwise a failure
// saying how long it waited for `what` ("the slot to reach 0/1A2B"), to which the caller can
// stream more (ASSERT_TRUE(WaitFor(...)) << last_seen). The condition is called at least once.
// A longer `poll` is for conditions that load a server (a whole-table aggregate).
::testing::AssertionResult WaitFor(const std::function<bool()>& condition,
                                   std::chrono::milliseconds deadline, const std::string& what,
                                   std::chrono::milliseconds poll = std::chrono::milliseconds(5));

}  // namespace faucet::testing
