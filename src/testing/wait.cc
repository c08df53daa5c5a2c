#include "testing/wait.h"

#include <thread>

#include "testing/services.h"

namespace faucet::testing {

::testing::AssertionResult WaitFor(const std::function<bool()>& condition,
                                   std::chrono::milliseconds deadline, const std::string& what,
                                   std::chrono::milliseconds poll) {
  const std::chrono::milliseconds scaled = deadline * TimeScale();
  const auto until = std::chrono::steady_clock::now() + scaled;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) {
      return ::testing::AssertionFailure() << "waited " << scaled.count() << " ms for " << what;
    }
    std::this_thread::sleep_for(poll);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace faucet::testing
