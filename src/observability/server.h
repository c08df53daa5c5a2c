// Server: the observability HTTP listener (`observability.prometheus.listen`) of `faucet run`
// and `faucet mirror`:
//   GET /metrics           the registry in the Prometheus text format
//   GET /healthz           200 {"status":"ok"} while the process serves
//   GET /readyz            200 {"ready":true} while streaming and not in backoff, else 503
//                          {"ready":false}
//   GET /v1/mirror/{name}  the mirror's status, the JSON of `faucet mirror status --json`, live
//   GET /                  a self-contained status page that polls /v1/mirror/{name}
// With an auth token, /metrics and /v1/ need "Authorization: Bearer <token>" (401 otherwise);
// / and the probes carry no data and need none (the page sends the token it is given in its
// URL fragment, #token=..., which browsers never send to the server). Every error is a 4xx or
// 5xx with {"error": "..."}; every body passes through Redact.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "core/bookmark.h"
#include "core/status.h"
#include "observability/metrics.h"

namespace faucet::observability {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 9187;         // 0: any free port (Server::port says which)
  std::string auth_token;  // "" = none (only allowed on a loopback address; config checks)
};

// What the running command shows. Called on the server's threads: thread-safe.
struct StatusSource {
  std::string name;  // the pipeline's name
  // The mirror's status JSON; empty for a command that is not a mirror (then 404).
  std::function<Result<Json>()> mirror_status;
  std::function<bool()> ready;
};

// "http://HOST:PORT/", with an IPv6 host in brackets.
std::string ServerUrl(const std::string& host, int port);

class Server {
 public:
  // Binds and starts serving on its own threads. kUnavailable when the address cannot be
  // bound (in use, not local), naming it.
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options, Registry& registry,
                                               const StatusSource& status);
  ~Server();  // stops serving and joins its threads
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return port_; }

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_;
};

}  // namespace faucet::observability
