#include "clients/mysql/connection.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet::mysql {
namespace {

TEST(MysqlUrl, IsParsedAndPercentDecoded) {
  auto url = ParseMysqlUrl("mysql://loader:p%40ss%3Aw@db.internal:3307/shop?ssl-mode=REQUIRED");
  ASSERT_OK(url);
  EXPECT_EQ(url->user, "loader");
  EXPECT_EQ(url->password, "p@ss:w");
  EXPECT_EQ(url->host, "db.internal");
  EXPECT_EQ(url->port, 3307);
  EXPECT_EQ(url->database, "shop");
  auto v6 = ParseMysqlUrl("mariadb://u@[::1]/db");
  ASSERT_OK(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 3306);
  auto bad = ParseMysqlUrl("mysql://u:secret@host:3306");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("secret"), std::string::npos);
}

TEST(MysqlUrl, ACdcSourceMayNameNoDatabase) {
  auto url = ParseMysqlUrl("mysql://repl:repl@localhost:3306", /*database_required=*/false);
  ASSERT_OK(url);
  EXPECT_EQ(url->database, "");
  EXPECT_EQ(url->port, 3306);
  auto slash = ParseMysqlUrl("mysql://repl:repl@localhost/", /*database_required=*/false);
  ASSERT_OK(slash);
  EXPECT_EQ(slash->host, "localhost");
}

TEST(ErrorCode, OneMappingForEveryCaller) {
  EXPECT_EQ(ErrorCode(2013), StatusCode::kUnavailable);         // CR_SERVER_LOST
  EXPECT_EQ(ErrorCode(1213), StatusCode::kUnavailable);         // ER_LOCK_DEADLOCK
  EXPECT_EQ(ErrorCode(1062), StatusCode::kInvalidArgument);     // ER_DUP_ENTRY
  EXPECT_EQ(ErrorCode(1146), StatusCode::kFailedPrecondition);  // ER_NO_SUCH_TABLE
  EXPECT_EQ(ErrorCode(1227), StatusCode::kFailedPrecondition);  // ER_SPECIFIC_ACCESS_DENIED
  EXPECT_EQ(ErrorCode(1064), StatusCode::kInternal);            // ER_PARSE_ERROR
}

}  // namespace
}  // namespace faucet::mysql
