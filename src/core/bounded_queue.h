// A FIFO between two threads, bounded by the total byte size of what it holds, so that a fast
// source cannot run ahead of a slow sink by more than a fixed amount of memory.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace faucet {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Blocks while the queue holds max_bytes or more; an item larger than the budget still goes
  // in when the queue is empty. Returns false (dropping the item) once the queue is closed.
  bool Push(T item, size_t bytes) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return closed_ || items_.empty() || bytes_ + bytes <= max_bytes_; });
    if (closed_) return false;
    bytes_ += bytes;
    items_.emplace_back(std::move(item), bytes);
    not_empty_.notify_one();
    return true;
  }

  enum class PushResult { kPushed, kTimedOut, kClosed };
  // Like Push, but gives up after `timeout` (leaving `item` untouched) so the caller can do
  // housekeeping while the consumer is slow.
  template <typename Duration>
  PushResult PushFor(T& item, size_t bytes, Duration timeout) {
    std::unique_lock lock(mu_);
    bool room = not_full_.wait_for(lock, timeout, [&] {
      return closed_ || items_.empty() || bytes_ + bytes <= max_bytes_;
    });
    if (closed_) return PushResult::kClosed;
    if (!room) return PushResult::kTimedOut;
    bytes_ += bytes;
    items_.emplace_back(std::move(item), bytes);
    not_empty_.notify_one();
    return PushResult::kPushed;
  }

  // Blocks until an item is available; nullopt once the queue is closed and drained.
  std::optional<T> Pop() {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    auto [item, bytes] = std::move(items_.front());
    items_.pop_front();
    bytes_ -= bytes;
    not_full_.notify_one();
    return std::move(item);
  }

  // Wakes both sides; pending Push calls fail, Pop drains what is left then returns nullopt.
  void Close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

 private:
  const size_t max_bytes_;
  std::mutex mu_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<std::pair<T, size_t>> items_;  // guarded by mu_
  size_t bytes_ = 0;                        // guarded by mu_
  bool closed_ = false;                     // guarded by mu_
};

}  // namespace faucet
