// TxnPager: how a change-stream source cuts its transactions into pages (core/page.h). Small
// transactions share a page, bounded by a row count, a byte budget and a linger time; a
// transaction larger than a page goes out in chunks of which only the last carries the
// bookmark, so memory stays bounded and a crash replays the transaction whole. One thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

#include "core/bookmark.h"
#include "core/page.h"

namespace faucet {

class TxnPager {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    size_t batch_size = 1000;              // rows per page target
    size_t page_bytes = 16 << 20;          // byte budget of one page
    std::chrono::milliseconds linger{50};  // how long a page waits for more transactions
    // How long a page of only empty transactions (no change: e.g. of tables not streamed)
    // waits: it only moves the bookmark, and a sink writing it (a commit token) into the
    // source's own database would otherwise make the next one.
    std::chrono::milliseconds empty_linger{50};
  };
  explicit TxnPager(Options options);

  // A change of the open transaction. A full page is cut only when the next change arrives,
  // so that a transaction ending exactly at the budget still gets its bookmark on its last
  // chunk.
  void AddChange(Change change);
  // The open transaction committed: `bookmark` resumes just after it. `empty`: it had no
  // change (its page waits empty_linger, unless a change joins it).
  void Commit(Bookmark bookmark, bool empty = false);
  // Moves the complete transactions of the page being built to the ready pages when its
  // linger has passed at `now`.
  void Tick(Clock::time_point now);
  // Moves the complete transactions of the page being built to the ready pages now.
  void Flush();
  // A complete transaction with a change waits (not only empty ones).
  bool complete_changes() const { return pending_end_ && open_start_ > 0; }
  // Flush, if complete_changes() (a page of only empty transactions keeps its linger): for a
  // source whose stream has gone quiet, when nothing is arriving to join them.
  void FlushChanges() {
    if (complete_changes()) Flush();
  }
  // Drops the changes of the open transaction (a cycle that ends before its commit): the
  // next run reads it again from the last bookmark.
  void DropOpen();

  // Hands out `page`, built elsewhere (a staged step: core/page.h), after the pages already
  // ready. Complete transactions still being built go after it unless Flush is called first.
  void Emit(Page page) { ready_.push_back(std::move(page)); }

  // When Tick next has something to do; nullopt when no complete transaction waits.
  std::optional<Clock::time_point> deadline() const;
  bool has_ready() const { return !ready_.empty(); }
  Page PopReady();
  // Nothing built, nothing ready: every page handed out.
  bool empty() const { return ready_.empty() && pending_.changes.empty() && !pending_end_; }
  // Changes of the open transaction are waiting (its commit has not arrived).
  bool open() const { return open_start_ < pending_.changes.size(); }

 private:
  bool PageFull() const {
    return pending_.changes.size() >= options_.batch_size || pending_bytes_ >= options_.page_bytes;
  }
  void Reserve();

  const Options options_;
  // The page being built: complete transactions up to pending_end_, then the first changes of
  // the open transaction from index open_start_.
  Page pending_;
  size_t pending_bytes_ = 0;
  std::optional<Bookmark> pending_end_;
  size_t open_start_ = 0;
  std::optional<Clock::time_point> flush_at_;  // when the complete transactions leave
  std::deque<Page> ready_;
};

}  // namespace faucet
