#include "state/state_json.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

const Json kBookmark = {{"last_lsn", "16/B374D848"}};

Result<Json> Parse(const std::string& text) { return ParseStateValue(text, "state file 'x.json'"); }

TEST(ParseStateValue, BareValueIsReadAsIs) {
  Result<Json> got = Parse(R"({"last_lsn": "16/B374D848"})");
  ASSERT_OK(got);
  EXPECT_EQ(*got, kBookmark);
}

TEST(ParseStateValue, EnvelopeIsUnwrappedToItsData) {
  Result<Json> got = Parse(
      R"({"faucet_state":1,"owner":"postgres-cdc","schema":0,"data":{"last_lsn":"16/B374D848"}})");
  ASSERT_OK(got);
  EXPECT_EQ(*got, kBookmark);
}

TEST(ParseStateValue, EnvelopeAroundTheExactlyOnceWrapperYieldsTheWrapper) {
  Json eo = {{"__faucet_eo", 1}, {"bookmark", kBookmark}, {"seq", 18446744073709551615u}};
  Result<Json> got =
      Parse(R"({"faucet_state":1,"owner":"postgres-cdc","schema":0,"data":)" + eo.dump() + "}");
  ASSERT_OK(got);
  EXPECT_EQ(*got, eo);
  EXPECT_EQ((*got)["seq"].get<uint64_t>(), 18446744073709551615u);
}

TEST(ParseStateValue, EnvelopeOfAnotherVersionIsDataLossNamingWhere) {
  for (const char* version : {"2", "0", "\"1\"", "1.5", "null"}) {
    Status s = Parse(std::string(R"({"faucet_state":)") + version +
                     R"(,"owner":"postgres-cdc","schema":0,"data":{"last_lsn":"0/1"}})")
                   .status();
    EXPECT_EQ(s.code(), StatusCode::kDataLoss) << version;
    EXPECT_NE(s.message().find("state file 'x.json'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("version"), std::string::npos) << s.message();
  }
}

TEST(ParseStateValue, EnvelopeWithoutDataIsDataLossNamingWhere) {
  Status s = Parse(R"({"faucet_state":1,"owner":"postgres-cdc","schema":0})").status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("state file 'x.json'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("without \"data\""), std::string::npos) << s.message();
}

TEST(ParseStateValue, TextThatIsNotJsonIsDataLossNamingWhere) {
  Status s = Parse(R"({"last_lsn": "16/B3)").status();
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("state file 'x.json'"), std::string::npos) << s.message();
}

TEST(DumpStateValue, WritesTheBareValueCompact) {
  Result<std::string> text = DumpStateValue(kBookmark);
  ASSERT_OK(text);
  EXPECT_EQ(*text, R"({"last_lsn":"16/B374D848"})");
}

}  // namespace
}  // namespace faucet
