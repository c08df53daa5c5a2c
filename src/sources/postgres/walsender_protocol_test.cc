#include "sources/postgres/walsender_protocol.h"

#include <gtest/gtest.h>

#include "sources/postgres/pgoutput_test_messages.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using testmsg::Bytes;

TEST(WalsenderProtocol, XLogDataExposesPayloadAndPositions) {
  std::string m = Bytes('w').U64(0x10).U64(0x20).U64(5).str() + "Bpayload";
  Result<ReplicationMessage> r = ParseReplicationMessage(m);
  ASSERT_OK(r);
  const XLogData& x = std::get<XLogData>(*r);
  EXPECT_EQ(x.wal_start, Lsn(0x10));
  EXPECT_EQ(x.wal_end, Lsn(0x20));
  EXPECT_EQ(x.payload, "Bpayload");
}

TEST(WalsenderProtocol, KeepaliveCarriesWalEndAndReplyFlag) {
  Result<ReplicationMessage> r = ParseReplicationMessage(Bytes('k').U64(0x1234).U64(9).U8(1).str());
  ASSERT_OK(r);
  const Keepalive& k = std::get<Keepalive>(*r);
  EXPECT_EQ(k.wal_end, Lsn(0x1234));
  EXPECT_TRUE(k.reply_requested);
}

TEST(WalsenderProtocol, MalformedMessagesAreDataLoss) {
  EXPECT_EQ(ParseReplicationMessage("").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseReplicationMessage("w123").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseReplicationMessage(Bytes('k').U64(1).str()).status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseReplicationMessage("x").status().code(), StatusCode::kDataLoss);
}

TEST(WalsenderProtocol, StandbyStatusUpdateLayout) {
  std::string m = EncodeStandbyStatus(Lsn(1), Lsn(2), Lsn(3), 4, true);
  EXPECT_EQ(m, Bytes('r').U64(1).U64(2).U64(3).U64(4).U8(1).str());
}

}  // namespace
}  // namespace faucet::postgres
