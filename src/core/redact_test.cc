#include "core/redact.h"

#include <gtest/gtest.h>

namespace faucet {
namespace {

TEST(Redact, HidesUrlPasswords) {
  EXPECT_EQ(Redact("cannot connect to postgres://app:s3cr:et@db:5432/x: refused"),
            "cannot connect to postgres://app:***@db:5432/x: refused");
  EXPECT_EQ(Redact("mysql://root:pw@127.0.0.1/db and redis://:pw2@h:6379"),
            "mysql://root:***@127.0.0.1/db and redis://:***@h:6379");
}

TEST(Redact, HidesKeyValuePasswords) {
  EXPECT_EQ(Redact("host=a password=hunter2 user=b"), "host=a password=*** user=b");
  EXPECT_EQ(Redact("PASSWORD = 'two words'"), "PASSWORD = ***");
}

TEST(Redact, LeavesUrlsWithoutPasswordAlone) {
  EXPECT_EQ(Redact("postgres://app@db/x"), "postgres://app@db/x");
  EXPECT_EQ(Redact("see https://example.com/a:b"), "see https://example.com/a:b");
}

}  // namespace
}  // namespace faucet
