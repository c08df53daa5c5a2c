// A FIFO between two threads, bounded by the total byte size of what it holds, so that a fast
// source cannot run ahead of a slow sink by more than a fixed amount of memory.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

#include "core/mutex.h"

namespace faucet {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Blocks while the queue holds max_bytes or more; an item larger than the budget still goes
  // in when the queue is empty. Returns false (dropping the item) once the queue is closed.
  bool Push(T item, size_t bytes) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (!closed_ && !HasRoom(bytes)) not_full_.Wait(mu_);
    if (closed_) return false;
    Add(item, bytes);
    return true;
  }

  enum class PushResult { kPushed, kTimedOut, kClosed };
  // Like Push, but gives up after `timeout` (leaving `item` untouched) so the caller can do
  // housekeeping while the consumer is slow.
  template <typename Duration>
  PushResult PushFor(T& item, size_t bytes, Duration timeout) EXCLUDES(mu_) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(mu_);
    while (!closed_ && !HasRoom(bytes) && not_full_.WaitUntil(mu_, deadline)) {
    }
    if (closed_) return PushResult::kClosed;
    if (!HasRoom(bytes)) return PushResult::kTimedOut;
    Add(item, bytes);
    return PushResult::kPushed;
  }

  // Blocks until an item is available; nullopt once the queue is closed and drained.
  std::optional<T> Pop() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (!closed_ && items_.empty()) not_empty_.Wait(mu_);
    if (items_.empty()) return std::nullopt;
    auto [item, bytes] = std::move(items_.front());
    items_.pop_front();
    bytes_ -= bytes;
    not_full_.NotifyOne();
    return std::move(item);
  }

  enum class PopResult { kPopped, kTimedOut, kClosed };
  // Like Pop, but gives up at `deadline`: kPopped with the item in `out`, kTimedOut with the
  // queue still open and empty, kClosed once it is closed and drained.
  PopResult PopUntil(T& out, std::chrono::steady_clock::time_point deadline) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (!closed_ && items_.empty() && not_empty_.WaitUntil(mu_, deadline)) {
    }
    if (items_.empty()) return closed_ ? PopResult::kClosed : PopResult::kTimedOut;
    auto& [item, bytes] = items_.front();
    out = std::move(item);
    bytes_ -= bytes;
    items_.pop_front();
    not_full_.NotifyOne();
    return PopResult::kPopped;
  }

  // Wakes both sides; pending Push calls fail, Pop drains what is left then returns nullopt.
  void Close() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    closed_ = true;
    not_full_.NotifyAll();
    not_empty_.NotifyAll();
  }

 private:
  bool HasRoom(size_t bytes) const REQUIRES(mu_) {
    return items_.empty() || bytes_ + bytes <= max_bytes_;
  }
  void Add(T& item, size_t bytes) REQUIRES(mu_) {
    bytes_ += bytes;
    items_.emplace_back(std::move(item), bytes);
    not_empty_.NotifyOne();
  }

  const size_t max_bytes_;
  mutable Mutex mu_;
  CondVar not_full_;
  CondVar not_empty_;
  std::deque<std::pair<T, size_t>> items_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  bool closed_ GUARDED_BY(mu_) = false;
};

}  // namespace faucet
