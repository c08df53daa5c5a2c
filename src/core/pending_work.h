// PendingWork: work handed on but not done yet, oldest first, for lag gauges. Each entry is the
// mark that retires it (a page count, a position) and the commit time of its oldest change.
// Bounded: past `max_entries` the newest two merge (the older time, the newer mark), which can
// only make a lag read longer, never shorter, and memory stays fixed however far behind.
// Not synchronized: its owner's lock guards it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

namespace faucet {

template <typename Mark>
class PendingWork {
 public:
  explicit PendingWork(size_t max_entries) : max_entries_(max_entries) {}

  // Work up to `mark`, whose oldest change committed at `first_commit`.
  void Add(Mark mark, int64_t first_commit) {
    entries_.emplace_back(std::move(mark), first_commit);
    if (entries_.size() > max_entries_ && entries_.size() >= 2) {
      entries_[entries_.size() - 2].first = std::move(entries_.back().first);
      entries_.pop_back();
    }
  }

  // Drops the oldest entries while `done(mark)` holds.
  template <typename Done>
  void Retire(Done done) {
    while (!entries_.empty() && done(entries_.front().first)) entries_.pop_front();
  }

  // The commit time of the oldest entry for which `done(mark)` does not hold; 0 when none.
  template <typename Done>
  int64_t OldestNot(Done done) const {
    for (const auto& [mark, first_commit] : entries_) {
      if (!done(mark)) return first_commit;
    }
    return 0;
  }

  // The commit time of the oldest entry; 0 when empty.
  int64_t Oldest() const { return entries_.empty() ? 0 : entries_.front().second; }

  void Clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }

 private:
  size_t max_entries_;
  std::deque<std::pair<Mark, int64_t>> entries_;
};

}  // namespace faucet
