// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with clang's
// thread-safety annotations, so that the tsan preset's -Wthread-safety checks at compile time
// that every member marked GUARDED_BY(mu_) is touched only with mu_ held, and that a function
// marked REQUIRES(mu_) is only called with it held. Other compilers see plain std types.
//
// Shared state in faucet is either guarded this way or owned by one thread by construction
// (said in its class's header).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define FAUCET_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define FAUCET_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) FAUCET_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY FAUCET_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) FAUCET_THREAD_ANNOTATION(guarded_by(x))
#define REQUIRES(...) FAUCET_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) FAUCET_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) FAUCET_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EXCLUDES(...) FAUCET_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

namespace faucet {

class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` from construction to the end of the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

// Waits release `mu` while blocked and hold it again when they return. There are no predicate
// overloads: a lambda is checked without the caller's lock, so callers loop on their condition
// in the function that holds the lock.
class CondVar {
 public:
  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // False once `deadline` has passed (the caller re-checks its condition either way).
  bool WaitUntil(Mutex& mu, std::chrono::steady_clock::time_point deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace faucet
