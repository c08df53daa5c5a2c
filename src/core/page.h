// Page: the unit of write -> flush -> persist. Changes are in commit order and a page ends at a
// transaction boundary, except that a transaction bigger than the page budget is cut into
// chunks of which only the last carries the bookmark (so a crash replays the whole transaction
// and memory stays bounded). A page with no changes but a bookmark is still checkpointed: that
// is how an idle source moves its durable position forward.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/bookmark.h"
#include "core/change.h"

namespace faucet {

struct Page {
  std::vector<Change> changes;
  // The resume position that becomes safe once this page is durably written: the end position
  // of the last complete transaction in the page. Absent on all but the last chunk of a split
  // transaction.
  std::optional<Bookmark> bookmark;
  // Under the atomic watermark, appended to the pipeline's commit-token scope for this page's
  // token: a source whose parts advance independently (a Kafka topic's partitions,
  // SourceCapabilities::tokens_per_part) keeps one token per part. Empty: the pipeline's scope.
  std::string token_scope;

  size_t ApproxBytes() const {
    size_t n = sizeof(Page);
    for (const Change& c : changes) n += c.ApproxBytes();
    return n;
  }
};

}  // namespace faucet
