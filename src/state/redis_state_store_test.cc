#include "state/redis_state_store.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

TEST(ParseRedisUrl, HostAloneUsesTheDefaults) {
  Result<RedisUrl> url = ParseRedisUrl("redis://cache.internal");
  ASSERT_OK(url);
  EXPECT_EQ(url->host, "cache.internal");
  EXPECT_EQ(url->port, 6379);
  EXPECT_FALSE(url->user.has_value());
  EXPECT_FALSE(url->password.has_value());
  EXPECT_EQ(url->db, 0);
}

TEST(ParseRedisUrl, ReadsEveryPart) {
  Result<RedisUrl> url = ParseRedisUrl("redis://app:p%40ss@10.0.0.7:6380/3");
  ASSERT_OK(url);
  EXPECT_EQ(url->host, "10.0.0.7");
  EXPECT_EQ(url->port, 6380);
  EXPECT_EQ(url->user, "app");
  EXPECT_EQ(url->password, "p@ss");
  EXPECT_EQ(url->db, 3);
}

TEST(ParseRedisUrl, PasswordWithoutUserAuthenticatesTheDefaultUser) {
  Result<RedisUrl> url = ParseRedisUrl("redis://:secret@localhost/");
  ASSERT_OK(url);
  EXPECT_FALSE(url->user.has_value());
  EXPECT_EQ(url->password, "secret");
  EXPECT_EQ(url->db, 0);
}

TEST(ParseRedisUrl, BracketedIpv6Host) {
  Result<RedisUrl> url = ParseRedisUrl("redis://[::1]:7000");
  ASSERT_OK(url);
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 7000);
}

TEST(ParseRedisUrl, RejectsMalformedUrlsWithoutShowingThePassword) {
  for (const char* bad :
       {"http://:hunter2@localhost", "redis://:hunter2@", "redis://:hunter2@host:0",
        "redis://:hunter2@host:99999", "redis://:hunter2@host:", "redis://:hunter2@host/db1",
        "redis://:hunter2@host?timeout=1", "rediss://:hunter2@host", "redis://user@host",
        "redis://:hunter2%zz@host", "redis://:hunter2@[::1"}) {
    Result<RedisUrl> url = ParseRedisUrl(bad);
    ASSERT_FALSE(url.ok()) << bad;
    EXPECT_EQ(url.status().code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(url.status().message().find("hunter2"), std::string::npos) << url.status().message();
  }
}

}  // namespace
}  // namespace faucet
