// RedisStateStore: state as plain string keys of a Redis server, in the reference system's
// layout (docs/state-format.md): `SET {namespace}:{key} <compact JSON>`, GET, DEL.
//
// Durability is kWeak: Redis acknowledges a SET once it is in memory and never waits for an
// fsync, so a Put is exactly as durable as the server's persistence settings make it (with
// `appendonly yes` and `appendfsync always` it survives a power cut; with the default
// `appendfsync everysec` the last second may be lost; with no persistence a restart loses
// everything). A bookmark lost that way makes the next run resume from an older position:
// pages are delivered again (at-least-once still holds; an atomic-watermark sink re-anchors at
// its own commit token), but no change is skipped.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/state_store.h"

struct redisContext;

namespace faucet {

struct RedisUrl {
  std::string host;
  int port = 6379;
  std::optional<std::string> user;      // sent with AUTH when set (Redis 6 ACL users)
  std::optional<std::string> password;  // AUTH when set
  int64_t db = 0;                       // SELECT when not 0
};

// Parses `redis://[[user]:password@]host[:port][/db]`; user and password may be
// percent-encoded, an IPv6 host is written in brackets. kInvalidArgument saying what is wrong;
// the message never contains the password. Does no I/O (used by `faucet validate`).
Result<RedisUrl> ParseRedisUrl(const std::string& url);

// Thread-safe: one connection behind a mutex. Connection failures (refused, timed out, AUTH or
// SELECT rejected) are kUnavailable; a connection that broke is re-opened once per call before
// giving up (SET, GET and DEL are idempotent, so repeating one is safe). No error message
// carries the password of the URL.
class RedisStateStore : public StateStore {
 public:
  // Connects, authenticates and selects the database. REQUIRES: `ns` matches [A-Za-z0-9_.-]+
  // (ParseStateConfig).
  static Result<std::unique_ptr<RedisStateStore>> Open(const std::string& url,
                                                       const std::string& ns);
  ~RedisStateStore() override;

  // A stored value that is not JSON is kDataLoss naming the Redis key; a key of another type
  // (a list, a hash) is kFailedPrecondition: something else writes into this namespace.
  Result<std::optional<Json>> Get(const std::string& key) override;
  Status Put(const std::string& key, const Json& value) override;
  Status Delete(const std::string& key) override;
  Durability durability() const override { return Durability::kWeak; }

 private:
  struct Reply {
    bool nil = false;
    std::string text;  // bulk string or status reply
  };

  RedisStateStore(std::string url, RedisUrl parsed, std::string ns);
  Status Connect() REQUIRES(mu_);
  // Runs one command, reconnecting once when the connection broke.
  Result<Reply> Command(const std::vector<std::string>& args) EXCLUDES(mu_);
  Result<Reply> CommandOnce(const std::vector<std::string>& args) REQUIRES(mu_);
  std::string Describe() const;
  std::string RedisKey(const std::string& key) const { return ns_ + ":" + key; }

  const std::string url_;
  const RedisUrl parsed_;
  const std::string ns_;
  Mutex mu_;
  redisContext* ctx_ GUARDED_BY(mu_) = nullptr;  // null when not connected
};

}  // namespace faucet
