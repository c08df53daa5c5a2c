#include "observability/server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testing/status_matchers.h"

namespace faucet::observability {
namespace {

class ServerTest : public ::testing::Test {
 protected:
  void Start(const std::string& token = "") {
    registry_.GetCounter("faucet_changes_total", "Changes", {{"pipeline", "shop"}}).Add(7);
    StatusSource status;
    status.name = "shop";
    status.mirror_status = [] {
      return Result<Json>(Json{
          {"name", "shop"},
          {"tables",
           Json::array({{{"table", "public.a"},
                         {"phase", "active"},
                         {"last_error", "postgres://app:hunter2@db/x down; password=hunter3"}}})}});
    };
    status.ready = [this] { return ready_.load(); };
    ServerOptions options;
    options.port = 0;
    options.auth_token = token;
    Result<std::unique_ptr<Server>> server = Server::Start(options, registry_, status);
    ASSERT_OK(server);
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  // Sends `raw` on a new connection and returns what comes back.
  std::string RawRequest(const std::string& raw) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::send(fd, raw.data(), raw.size(), 0), static_cast<ssize_t>(raw.size()));
    ::shutdown(fd, SHUT_WR);
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
    ::close(fd);
    return out;
  }

  Registry registry_;
  std::atomic<bool> ready_{false};
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ServerTest, ServesMetricsProbesStatusAndPage) {
  Start();
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("faucet_changes_total{pipeline=\"shop\"} 7"), std::string::npos);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");

  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  EXPECT_EQ(client_->Get("/readyz")->status, 503);
  ready_ = true;
  auto ready = client_->Get("/readyz");
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(Json::parse(ready->body)["ready"], true);

  auto status = client_->Get("/v1/mirror/shop");
  ASSERT_EQ(status->status, 200) << status->body;
  const Json parsed = Json::parse(status->body);
  EXPECT_EQ(parsed["tables"][0]["table"], "public.a");

  auto page = client_->Get("/");
  ASSERT_EQ(page->status, 200);
  EXPECT_NE(page->body.find("const name = \"shop\";"), std::string::npos);
  EXPECT_EQ(page->body.find("http://"), std::string::npos) << "no external assets";
}

TEST_F(ServerTest, AnUnknownPathWithInvalidUtf8IsA404) {
  Start();
  auto r = client_->Get("/%FF");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_TRUE(Json::accept(r->body)) << r->body;
  EXPECT_EQ(client_->Get("/healthz")->status, 200) << "still serving";
}

TEST_F(ServerTest, NoResponseCarriesAPassword) {
  Start();
  auto status = client_->Get("/v1/mirror/shop");
  ASSERT_EQ(status->status, 200);
  EXPECT_EQ(status->body.find("hunter2"), std::string::npos) << status->body;
  EXPECT_EQ(status->body.find("hunter3"), std::string::npos) << status->body;
  EXPECT_TRUE(Json::accept(status->body)) << "still JSON: " << status->body;
  EXPECT_NE(status->body.find("app:***@db"), std::string::npos) << status->body;
}

TEST_F(ServerTest, UnknownPathsAndMirrorsAreJsonErrors) {
  Start();
  auto missing = client_->Get("/nope");
  EXPECT_EQ(missing->status, 404);
  EXPECT_NE(Json::parse(missing->body)["error"].get<std::string>().find("/nope"),
            std::string::npos);
  auto other = client_->Get("/v1/mirror/other");
  EXPECT_EQ(other->status, 404);
  EXPECT_NE(Json::parse(other->body)["error"].get<std::string>().find("'other'"),
            std::string::npos);
  auto post = client_->Post("/metrics", "x", "text/plain");
  EXPECT_GE(post->status, 400);
  EXPECT_LT(post->status, 500);
}

TEST_F(ServerTest, MalformedRequestsGet4xxAndTheServerGoesOn) {
  Start();
  for (const std::string& raw :
       {std::string("GARBAGE\r\n\r\n"), std::string("GET\r\n\r\n"),
        std::string("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\nab"),
        "GET /" + std::string(20000, 'a') + " HTTP/1.1\r\n\r\n",
        std::string("GET /v1/mirror/%ZZ HTTP/1.1\r\nHost: x\r\n\r\n"),
        // Percent-decodes to invalid UTF-8, which the error's JSON must survive.
        std::string("GET /%FF%FE HTTP/1.1\r\nHost: x\r\n\r\n"),
        std::string("GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n"),
        std::string("\x00\x01\x02\xff", 4)}) {
    const std::string reply = RawRequest(raw);
    if (!reply.empty()) {
      EXPECT_EQ(reply.compare(0, 9, "HTTP/1.1 "), 0) << reply;
      EXPECT_EQ(reply[9], '4') << raw.substr(0, 60) << " -> " << reply.substr(0, 40);
    }
  }
  EXPECT_EQ(client_->Get("/healthz")->status, 200) << "still serving";
}

TEST_F(ServerTest, ATokenGuardsTheDataButNotTheProbesOrThePage) {
  Start("s3cret");
  EXPECT_EQ(client_->Get("/metrics")->status, 401);
  EXPECT_EQ(client_->Get("/v1/mirror/shop")->status, 401);
  httplib::Headers wrong{{"Authorization", "Bearer s3crex"}};
  EXPECT_EQ(client_->Get("/metrics", wrong)->status, 401);
  httplib::Headers right{{"Authorization", "Bearer s3cret"}};
  EXPECT_EQ(client_->Get("/metrics", right)->status, 200);
  EXPECT_EQ(client_->Get("/v1/mirror/shop", right)->status, 200);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  EXPECT_EQ(client_->Get("/")->status, 200);
  EXPECT_EQ(client_->Get("/metrics")->body.find("s3cret"), std::string::npos);
}

TEST(Server, APortInUseIsAClearError) {
  Registry registry;
  ServerOptions options;
  options.port = 0;
  Result<std::unique_ptr<Server>> first = Server::Start(options, registry, {});
  ASSERT_OK(first);
  options.port = (*first)->port();
  Result<std::unique_ptr<Server>> second = Server::Start(options, registry, {});
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("127.0.0.1:" + std::to_string(options.port)),
            std::string::npos)
      << second.status().message();
}

}  // namespace
}  // namespace faucet::observability
