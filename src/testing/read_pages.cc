#include "testing/read_pages.h"

#include <gtest/gtest.h>

namespace faucet::testing {

std::vector<Page> ReadPages(Source& source,
                            const std::function<bool(const std::vector<Page>&)>& done,
                            std::chrono::milliseconds timeout) {
  std::vector<Page> pages;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done(pages) && std::chrono::steady_clock::now() < deadline) {
    Result<SourceEvent> e = source.Next(std::chrono::milliseconds(100));
    if (!e.ok()) {
      ADD_FAILURE() << e.status().ToString();
      break;
    }
    if (e->kind == SourceEvent::Kind::kEnd) break;
    if (e->kind == SourceEvent::Kind::kPage) pages.push_back(std::move(e->page));
  }
  return pages;
}

size_t CountChanges(const std::vector<Page>& pages) {
  size_t n = 0;
  for (const Page& p : pages) n += p.changes.size();
  return n;
}

}  // namespace faucet::testing
