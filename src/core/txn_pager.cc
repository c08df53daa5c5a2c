#include "core/txn_pager.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace faucet {

TxnPager::TxnPager(Options options) : options_(options) { Reserve(); }

void TxnPager::Reserve() {
  // Room for a page's changes up front, instead of a dozen regrowths per page.
  pending_.changes.reserve(std::min<size_t>(options_.batch_size, 1024));
}

void TxnPager::AddChange(Change change) {
  if (PageFull()) {
    // Complete transactions before the open one go out whole with their bookmark; if the open
    // one alone fills a page, that goes out as a chunk without one.
    Flush();
    if (PageFull()) {
      ready_.push_back(std::move(pending_));
      pending_ = Page();
      Reserve();
      pending_bytes_ = 0;
    }
  }
  pending_bytes_ += change.ApproxBytes();
  pending_.changes.push_back(std::move(change));
}

void TxnPager::Commit(Bookmark bookmark, bool empty) {
  pending_end_ = std::move(bookmark);
  open_start_ = pending_.changes.size();
  const Clock::time_point at = Clock::now() + (empty ? options_.empty_linger : options_.linger);
  if (!flush_at_ || at < *flush_at_) flush_at_ = at;
  if (PageFull()) Flush();
}

void TxnPager::Tick(Clock::time_point now) {
  if (flush_at_ && now >= *flush_at_) Flush();
}

std::optional<TxnPager::Clock::time_point> TxnPager::deadline() const { return flush_at_; }

void TxnPager::Flush() {
  flush_at_.reset();
  if (!pending_end_) return;
  Page page;
  page.bookmark = std::move(pending_end_);
  pending_end_.reset();
  if (open_start_ == pending_.changes.size()) {
    page.changes = std::move(pending_.changes);
    pending_.changes.clear();
    Reserve();
    pending_bytes_ = 0;
  } else {
    auto split = pending_.changes.begin() + static_cast<long>(open_start_);
    page.changes.assign(std::make_move_iterator(pending_.changes.begin()),
                        std::make_move_iterator(split));
    pending_.changes.erase(pending_.changes.begin(), split);
    pending_bytes_ = 0;
    for (const Change& c : pending_.changes) pending_bytes_ += c.ApproxBytes();
  }
  open_start_ = 0;
  ready_.push_back(std::move(page));
}

void TxnPager::DropOpen() {
  pending_.changes.resize(open_start_);
  pending_bytes_ = 0;
  for (const Change& c : pending_.changes) pending_bytes_ += c.ApproxBytes();
}

Page TxnPager::PopReady() {
  Page page = std::move(ready_.front());
  ready_.pop_front();
  return page;
}

}  // namespace faucet
