// Reading a source in tests: pages until a condition holds.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "core/source.h"

namespace faucet::testing {

// Calls source.Next until `done` holds for the pages read so far or `timeout` passes; returns
// the pages. An error (a test failure, printed) or kEnd stops early.
std::vector<Page> ReadPages(Source& source,
                            const std::function<bool(const std::vector<Page>&)>& done,
                            std::chrono::milliseconds timeout);

size_t CountChanges(const std::vector<Page>& pages);

}  // namespace faucet::testing
