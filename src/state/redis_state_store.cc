#include "state/redis_state_store.h"

#include <hiredis/hiredis.h>

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "core/redact.h"
#include "core/text.h"
#include "state/state_json.h"

namespace faucet {
namespace {

bool ParseNumber(const std::string& s, int64_t max, int64_t* out) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *out = std::strtoll(s.c_str(), nullptr, 10);
  return *out <= max;
}

// Redis error replies start with an upper-case code. These may clear up on their own: the
// server is loading its data set, busy with a script, a replica after a failover, out of
// memory or unable to persist (full disk, like ENOSPC for the file store), or it restarted
// with a password since we authenticated.
bool RetryableRedisError(const std::string& message) {
  std::string code = message.substr(0, message.find(' '));
  for (const char* c :
       {"LOADING", "BUSY", "TRYAGAIN", "READONLY", "MASTERDOWN", "MISCONF", "OOM", "NOAUTH"}) {
    if (code == c) return true;
  }
  return false;
}

}  // namespace

Result<RedisUrl> ParseRedisUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("redis URL '" + Redact(url) + "' " + why +
                           " (expected redis://[[user]:password@]host[:port][/db])");
  };
  const std::string scheme = "redis://";
  if (url.rfind("rediss://", 0) == 0) return bad("uses TLS, which this build does not support");
  if (url.rfind(scheme, 0) != 0) return bad("must start with redis://");
  std::string rest = url.substr(scheme.size());
  if (rest.find_first_of("?#") != std::string::npos) {
    return bad("has query parameters or a fragment, which are not supported");
  }

  RedisUrl out;
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    std::string userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    size_t colon = userinfo.find(':');
    if (colon == std::string::npos) return bad("names a user without a password");
    std::string user, password;
    if (!PercentDecode(userinfo.substr(0, colon), user) ||
        !PercentDecode(userinfo.substr(colon + 1), password)) {
      return bad("has an invalid percent-encoding in its user or password");
    }
    if (!user.empty()) out.user = user;
    out.password = password;
  }

  size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  if (slash != std::string::npos) {
    std::string db = rest.substr(slash + 1);
    if (!db.empty() && !ParseNumber(db, std::numeric_limits<int32_t>::max(), &out.db)) {
      return bad("has database '" + db + "', expected a number");
    }
  }

  std::string port;
  if (!hostport.empty() && hostport[0] == '[') {
    size_t close = hostport.find(']');
    if (close == std::string::npos) return bad("has an unclosed '[' in its host");
    out.host = hostport.substr(1, close - 1);
    std::string after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return bad("has text after its IPv6 host");
      port = after.substr(1);
      if (port.empty()) return bad("has an empty port");
    }
  } else {
    size_t colon = hostport.find(':');
    out.host = hostport.substr(0, colon);
    if (colon != std::string::npos) {
      port = hostport.substr(colon + 1);
      if (port.empty()) return bad("has an empty port");
    }
  }
  if (out.host.empty()) return bad("has no host");
  if (!port.empty()) {
    int64_t p = 0;
    if (!ParseNumber(port, 65535, &p) || p == 0) {
      return bad("has port '" + port + "', expected 1 to 65535");
    }
    out.port = static_cast<int>(p);
  }
  return out;
}

RedisStateStore::RedisStateStore(std::string url, RedisUrl parsed, std::string ns)
    : url_(std::move(url)), parsed_(std::move(parsed)), ns_(std::move(ns)) {}

RedisStateStore::~RedisStateStore() {
  if (ctx_ != nullptr) redisFree(ctx_);
}

Result<std::unique_ptr<RedisStateStore>> RedisStateStore::Open(const std::string& url,
                                                               const std::string& ns) {
  ASSIGN_OR_RETURN(RedisUrl parsed, ParseRedisUrl(url));
  std::unique_ptr<RedisStateStore> store(new RedisStateStore(url, std::move(parsed), ns));
  MutexLock lock(store->mu_);
  RETURN_IF_ERROR(store->Connect());
  return store;
}

std::string RedisStateStore::Describe() const {
  return "redis state store " + Redact(url_) + " namespace '" + ns_ + "'";
}

Status RedisStateStore::Connect() {
  if (ctx_ != nullptr) redisFree(ctx_);
  // Without timeouts an unreachable or hung server would block the pipeline forever.
  ctx_ = redisConnectWithTimeout(parsed_.host.c_str(), parsed_.port, timeval{10, 0});
  std::string why;
  if (ctx_ == nullptr) {
    why = "out of memory";
  } else if (ctx_->err != 0 || redisSetTimeout(ctx_, timeval{30, 0}) != REDIS_OK) {
    why = ctx_->errstr;
  }
  // AUTH and SELECT errors already name the store and the command.
  Status st =
      why.empty() ? Status::Ok() : Unavailable(Redact(Describe() + ": cannot connect: " + why));
  if (st.ok() && parsed_.password) {
    std::vector<std::string> auth = {"AUTH"};
    if (parsed_.user) auth.push_back(*parsed_.user);
    auth.push_back(*parsed_.password);
    st = CommandOnce(auth).status();
  }
  if (st.ok() && parsed_.db != 0) st = CommandOnce({"SELECT", std::to_string(parsed_.db)}).status();
  if (st.ok()) return st;
  if (ctx_ != nullptr) redisFree(ctx_);
  ctx_ = nullptr;
  return Unavailable(st.message());
}

Result<RedisStateStore::Reply> RedisStateStore::Command(const std::vector<std::string>& args) {
  MutexLock lock(mu_);
  bool fresh = false;
  if (ctx_ == nullptr || ctx_->err != 0) {
    RETURN_IF_ERROR(Connect());
    fresh = true;
  }
  Result<Reply> reply = CommandOnce(args);
  if (reply.ok() || fresh || ctx_->err == 0) return reply;
  // The server restarted or dropped an idle connection: one fresh attempt.
  RETURN_IF_ERROR(Connect());
  return CommandOnce(args);
}

Result<RedisStateStore::Reply> RedisStateStore::CommandOnce(const std::vector<std::string>& args) {
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  std::unique_ptr<redisReply, void (*)(void*)> reply(
      static_cast<redisReply*>(
          redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lengths.data())),
      &freeReplyObject);
  // Only the command name: arguments may be a password (AUTH) or a whole state value.
  std::string what = Describe() + ": " + args[0] + ": ";
  if (reply == nullptr) return Unavailable(Redact(what + ctx_->errstr));
  switch (reply->type) {
    case REDIS_REPLY_NIL:
      return Reply{.nil = true};
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      return Reply{.text = std::string(reply->str, reply->len)};
    case REDIS_REPLY_INTEGER:
      return Reply{};
    case REDIS_REPLY_ERROR: {
      std::string message(reply->str, reply->len);
      if (message.rfind("WRONGTYPE", 0) == 0) {
        return FailedPrecondition(Redact(what + message +
                                         "; something other than faucet writes "
                                         "into this namespace"));
      }
      if (RetryableRedisError(message)) return Unavailable(Redact(what + message));
      return Internal(Redact(what + message));
    }
    default:
      return Internal(Redact(what + "unexpected reply type " + std::to_string(reply->type)));
  }
}

Result<std::optional<Json>> RedisStateStore::Get(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  ASSIGN_OR_RETURN(Reply reply, Command({"GET", RedisKey(key)}));
  if (reply.nil) return std::optional<Json>();
  ASSIGN_OR_RETURN(Json value,
                   ParseStateValue(reply.text, Describe() + " key '" + RedisKey(key) + "'"));
  return std::optional<Json>(std::move(value));
}

Status RedisStateStore::Put(const std::string& key, const Json& value) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  ASSIGN_OR_RETURN(std::string text, DumpStateValue(value));
  return Command({"SET", RedisKey(key), text}).status();
}

Status RedisStateStore::Delete(const std::string& key) {
  RETURN_IF_ERROR(ValidateStateKey(key));
  return Command({"DEL", RedisKey(key)}).status();
}

}  // namespace faucet
