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

// A step of a transaction that the source hands over before it knows whether the transaction
// commits (Postgres streams a large one while it runs), for a sink that stages such changes
// (Sink::Stage). Only the kCommit step carries a bookmark.
struct StagedStep {
  enum class Kind {
    // Page::changes belong to subtransaction `part` of `txn` (part == txn: the top level). Their
    // commit_position and commit_time_us are 0: the commit is not known yet.
    kChanges,
    // Subtransaction `part` of `txn` rolled back: its changes vanish (a rollback to a savepoint
    // names each subtransaction it ends, nested ones too). part == txn: all of `txn` rolled back.
    kAbort,
    // `txn` committed at `commit_position` at `commit_time_us` (Unix microseconds, 0: unknown);
    // its surviving changes follow the pages written before this one.
    kCommit,
  };
  Kind kind = Kind::kChanges;
  uint32_t txn = 0;
  uint32_t part = 0;
  uint64_t commit_position = 0;
  int64_t commit_time_us = 0;
};

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
  // Set on the pages of a transaction whose outcome was not known when it was handed over (only
  // when the source was allowed to: Source::AllowStaging).
  std::optional<StagedStep> staged;

  size_t ApproxBytes() const {
    size_t n = sizeof(Page);
    for (const Change& c : changes) n += c.ApproxBytes();
    return n;
  }
};

}  // namespace faucet
