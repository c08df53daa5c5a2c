// SessionPool: the sessions of one destination, shared by every sink in the process that writes
// to it. A multi-table mirror's N tables then use at most `size` destination sessions (the
// sink's `max_connections`), not N.
//
// Acquire hands out an idle session, opens a new one while fewer than `size` are open, or waits
// until one comes back. A Lease gives its session back when it ends; the pool keeps it only if
// Session::Reusable() (connected, no transaction open), so no sink ever receives a session in
// the middle of another's transaction: anything else is closed. The factory opens a session
// and applies its settings, which every sink of the destination shares.
//
// Session must provide `bool Reusable() const`. Thread-safe; a Lease belongs to one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"

namespace faucet::sql {

template <typename Session>
class SessionPool : public std::enable_shared_from_this<SessionPool<Session>> {
 public:
  using Factory = std::function<Result<std::unique_ptr<Session>>()>;

  // One session taken from the pool, given back when the lease ends (Reset or destruction).
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&& other) noexcept {
      Reset();
      pool_ = std::move(other.pool_);
      session_ = std::move(other.session_);
      return *this;
    }
    ~Lease() { Reset(); }

    explicit operator bool() const { return session_ != nullptr; }
    Session* operator->() const { return session_.get(); }
    Session& operator*() const { return *session_; }

    void Reset() {
      if (session_ != nullptr) pool_->GiveBack(std::move(session_));
      pool_.reset();
    }

   private:
    friend class SessionPool;
    Lease(std::shared_ptr<SessionPool> pool, std::unique_ptr<Session> session)
        : pool_(std::move(pool)), session_(std::move(session)) {}
    std::shared_ptr<SessionPool> pool_;
    std::unique_ptr<Session> session_;
  };

  // The pool of `destination` (its URL or file), shared by everyone in the process who asks for
  // it while someone holds it. The first caller's size and factory make it; later callers get
  // that pool whatever they pass.
  static std::shared_ptr<SessionPool> Shared(const std::string& destination, size_t size,
                                             Factory factory) {
    static Mutex mu;
    static std::map<std::string, std::weak_ptr<SessionPool>> pools;
    MutexLock lock(mu);
    std::erase_if(pools, [](const auto& entry) { return entry.second.expired(); });
    std::weak_ptr<SessionPool>& slot = pools[destination];
    std::shared_ptr<SessionPool> pool = slot.lock();
    if (pool == nullptr) {
      pool = std::make_shared<SessionPool>(size, std::move(factory));
      slot = pool;
    }
    return pool;
  }

  SessionPool(size_t size, Factory factory)
      : size_(size < 1 ? 1 : size), factory_(std::move(factory)) {}

  // An idle session, a new one (the factory's error when it cannot be opened), or, when `size`
  // are out, the next one given back.
  Result<Lease> Acquire() EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      while (idle_.empty() && open_ >= size_) returned_.Wait(mu_);
      if (!idle_.empty()) {
        std::unique_ptr<Session> session = std::move(idle_.back());
        idle_.pop_back();
        return Lease(this->shared_from_this(), std::move(session));
      }
      ++open_;
    }
    Result<std::unique_ptr<Session>> opened = factory_();  // outside the lock: it connects
    if (!opened.ok()) {
      Forget();
      return opened.status();
    }
    return Lease(this->shared_from_this(), std::move(*opened));
  }

  size_t size() const { return size_; }
  // Sessions open now, idle or leased.
  size_t open() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return open_;
  }

 private:
  void GiveBack(std::unique_ptr<Session> session) EXCLUDES(mu_) {
    if (!session->Reusable()) {
      session.reset();  // closes it
      Forget();
      return;
    }
    MutexLock lock(mu_);
    idle_.push_back(std::move(session));
    returned_.NotifyOne();
  }

  // A session closed or never opened: its place is free.
  void Forget() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    --open_;
    returned_.NotifyOne();
  }

  const size_t size_;
  const Factory factory_;
  mutable Mutex mu_;
  CondVar returned_;
  std::vector<std::unique_ptr<Session>> idle_ GUARDED_BY(mu_);
  size_t open_ GUARDED_BY(mu_) = 0;
};

}  // namespace faucet::sql
