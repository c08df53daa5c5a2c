#include "observability/server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "core/redact.h"
#include "observability/status_page.h"

namespace faucet::observability {
namespace {

constexpr const char* kJson = "application/json";

// Every string in `value` redacted (before serializing: a pattern that runs to the next
// whitespace must not swallow the rest of a compact document).
void RedactStrings(Json& value) {
  if (value.is_string()) {
    value = Redact(value.get<std::string>());
  } else if (value.is_structured()) {
    for (Json& item : value) RedactStrings(item);
  }
}

void SendJson(httplib::Response& res, int status, Json body) {
  RedactStrings(body);
  res.status = status;
  // Invalid UTF-8 (a percent-decoded path) is replaced, never thrown.
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), kJson);
}

void SendError(httplib::Response& res, int status, const std::string& message) {
  SendJson(res, status, Json{{"error", message}});
}

// Compares in time independent of where they differ.
bool SameSecret(const std::string& given, const std::string& token) {
  if (given.size() != token.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ token[i]);
  }
  return diff == 0;
}

std::string PageFor(const std::string& name) {
  std::string page = kStatusPage;
  std::string literal = Json(name).dump();
  // Inside <script>: no "</script>" can close it early.
  for (size_t at = literal.find('<'); at != std::string::npos; at = literal.find('<', at)) {
    literal.replace(at, 1, "\\u003c");
  }
  page.replace(page.find("__NAME__"), 8, literal);
  return page;
}

}  // namespace

std::string ServerUrl(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/";
}

struct Server::Impl {
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> ended{false};  // listen_after_bind returned
};

Server::Server(std::unique_ptr<Impl> impl, int port) : impl_(std::move(impl)), port_(port) {}

Server::~Server() {
  impl_->http.stop();
  if (impl_->thread.joinable()) impl_->thread.join();
}

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options, Registry& registry,
                                              const StatusSource& status) {
  auto impl = std::make_unique<Impl>();
  httplib::Server& http = impl->http;
  http.set_payload_max_length(64 << 10);
  http.set_read_timeout(5, 0);
  http.set_write_timeout(5, 0);
  http.set_keep_alive_max_count(100);
  // httplib's default also sets SO_REUSEPORT, which lets a second process bind the same port.
  http.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });

  const std::string token = options.auth_token;
  auto authorized = [token](const httplib::Request& req, httplib::Response& res) {
    if (token.empty()) return true;
    const std::string header = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    if (header.compare(0, prefix.size(), prefix) == 0 &&
        SameSecret(header.substr(prefix.size()), token)) {
      return true;
    }
    res.set_header("WWW-Authenticate", "Bearer");
    SendError(res, 401, "this endpoint needs Authorization: Bearer <observability.auth_token>");
    return false;
  };

  http.Get("/metrics",
           [&registry, authorized](const httplib::Request& req, httplib::Response& res) {
             if (!authorized(req, res)) return;
             res.set_content(registry.Render(), "text/plain; version=0.0.4; charset=utf-8");
           });
  http.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, Json{{"status", "ok"}});
  });
  http.Get("/readyz", [status](const httplib::Request&, httplib::Response& res) {
    const bool ready = status.ready && status.ready();
    SendJson(res, ready ? 200 : 503, Json{{"ready", ready}});
  });
  http.Get(R"(/v1/mirror/([^/]+))", [status, authorized](const httplib::Request& req,
                                                         httplib::Response& res) {
    if (!authorized(req, res)) return;
    if (!status.mirror_status || req.matches[1] != status.name) {
      SendError(res, 404,
                "no mirror named '" + std::string(req.matches[1]) + "' runs in this process");
      return;
    }
    Result<Json> s = status.mirror_status();
    if (!s.ok()) {
      SendError(res, s.status().code() == StatusCode::kNotFound ? 404 : 503, s.status().message());
      return;
    }
    SendJson(res, 200, *s);
  });
  const std::string page = PageFor(status.name);
  http.Get("/", [page](const httplib::Request&, httplib::Response& res) {
    res.set_content(page, "text/html; charset=utf-8");
  });
  // Runs outside httplib's exception guard: it must not throw.
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler's own error
    try {
      SendError(res, res.status,
                res.status == 404 ? "no such endpoint: " + req.method + " " + req.path
                                  : "bad request (HTTP " + std::to_string(res.status) + ")");
    } catch (...) {
      res.set_content("{\"error\":\"bad request\"}", kJson);
    }
  });
  http.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, const std::exception_ptr&) {
        SendError(res, 500, "internal error");
      });

  int port = options.port;
  if (port == 0) {
    port = http.bind_to_any_port(options.host);
  } else if (!http.bind_to_port(options.host, port)) {
    port = -1;
  }
  if (port < 0) {
    return Unavailable("observability: cannot listen on " + options.host + ":" +
                       std::to_string(options.port) + " (in use, or not an address of this host)");
  }
  impl->thread = std::thread([raw = impl.get()] {
    raw->http.listen_after_bind();
    raw->ended = true;
  });
  // Until it runs, stop() would not stop it (and the destructor would wait forever).
  while (!http.is_running() && !impl->ended.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  spdlog::info("observability: serving /metrics, /healthz, /readyz{} and the status page on {}",
               status.mirror_status ? ", /v1/mirror/" + status.name : "",
               ServerUrl(options.host, port));
  return std::unique_ptr<Server>(new Server(std::move(impl), port));
}

}  // namespace faucet::observability
