#include "sources/postgres/pgoutput_decoder.h"

#include <gtest/gtest.h>

#include "sources/postgres/pgoutput_test_messages.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using namespace testmsg;

constexpr uint32_t kOrders = 16384;
constexpr uint32_t kItems = 16390;
// 2024-01-01 00:00:00 UTC in microseconds since 2000-01-01.
constexpr int64_t kPgTime = 757'382'400'000'000;
constexpr int64_t kUnixTime = 1'704'067'200'000'000;

// `xid` is set when sent inside a stream block.
std::string OrdersRelation(std::optional<uint32_t> xid = std::nullopt) {
  return Relation(kOrders, "public", "orders", {{"id", 20, true}, {"note", 25}}, xid);
}

class DecoderTest : public ::testing::Test {
 protected:
  // Decodes `messages` in order; the first error fails the test.
  std::vector<TxnEvent> Feed(const std::vector<std::string>& messages) {
    std::vector<TxnEvent> out;
    for (const std::string& m : messages) {
      Status s = decoder_.Decode(m, out);
      EXPECT_OK(s) << PgoutputMessageName(m[0]) << ": " << s.ToString();
    }
    return out;
  }

  // Decodes `messages`; all but the last must succeed. Returns the last one's status.
  Status FeedUntilError(const std::vector<std::string>& messages) {
    std::vector<TxnEvent> out;
    for (size_t i = 0; i + 1 < messages.size(); ++i) {
      Status s = decoder_.Decode(messages[i], out);
      EXPECT_OK(s);
    }
    return decoder_.Decode(messages.back(), out);
  }

  std::vector<TxnEvent> ReplayAll(size_t slice = 1000) {
    std::vector<TxnEvent> out;
    while (decoder_.replaying()) {
      size_t before = out.size();
      Status s = decoder_.Replay(slice, out);
      EXPECT_OK(s);
      if (!s.ok()) break;
      size_t changes = 0;
      for (size_t i = before; i < out.size(); ++i) {
        changes += out[i].kind == TxnEvent::Kind::kChange;
      }
      EXPECT_LE(changes, slice);
    }
    return out;
  }

  PgoutputDecoder decoder_;
};

TEST_F(DecoderTest, InsertBecomesChangeAtTheCommitPositionInUnixTime) {
  auto out = Feed({Begin(0x500, kPgTime, 7), OrdersRelation(), Insert(kOrders, {T("1"), T("a")}),
                   Commit(0x500, 0x530, kPgTime)});
  ASSERT_EQ(out.size(), 2u);
  const Change& c = out[0].change;
  EXPECT_EQ(c.op, ChangeOp::kInsert);
  EXPECT_EQ(c.relation->name, "orders");
  EXPECT_FALSE(c.before.has_value());
  ASSERT_TRUE(c.after.has_value());
  EXPECT_EQ((*c.after)[1].text, "a");
  EXPECT_EQ(c.commit_position, 0x500u);
  EXPECT_EQ(c.commit_time_us, kUnixTime);
  EXPECT_EQ(out[1].kind, TxnEvent::Kind::kCommit);
  EXPECT_EQ(out[1].commit_lsn, Lsn(0x500));
  EXPECT_EQ(out[1].end_lsn, Lsn(0x530));
  EXPECT_FALSE(decoder_.in_transaction());
}

TEST_F(DecoderTest, OrdinalsCountChangesWithinATransaction) {
  auto out = Feed({Begin(0x500, 0, 7), OrdersRelation(), Insert(kOrders, {T("1"), N()}),
                   Insert(kOrders, {T("2"), N()}), Commit(0x500, 0x530, 0), Begin(0x600, 0, 8),
                   Insert(kOrders, {T("3"), N()}), Commit(0x600, 0x630, 0)});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].change.ordinal, 0u);
  EXPECT_EQ(out[1].change.ordinal, 1u);
  EXPECT_EQ(out[3].change.ordinal, 0u);
}

TEST_F(DecoderTest, UnchangedToastColumnIsMarkedUnchanged) {
  auto out = Feed({Begin(0x500, 0, 7), OrdersRelation(), Update(kOrders, 0, {}, {T("1"), U()}),
                   Commit(0x500, 0x530, 0)});
  ASSERT_EQ(out.size(), 2u);
  const Row& after = *out[0].change.after;
  EXPECT_EQ(after[0].state, CellState::kValue);
  EXPECT_EQ(after[1].state, CellState::kUnchangedToast);
}

TEST_F(DecoderTest, UpdateCarriesOldKeyAsBeforeOnlyWhenSent) {
  auto out =
      Feed({Begin(0x500, 0, 7), OrdersRelation(), Update(kOrders, 0, {}, {T("1"), T("b")}),
            Update(kOrders, 'K', {T("1"), N()}, {T("2"), T("b")}),
            Update(kOrders, 'O', {T("2"), T("b")}, {T("2"), T("c")}), Commit(0x500, 0x530, 0)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_FALSE(out[0].change.before.has_value());
  ASSERT_TRUE(out[1].change.before.has_value());
  EXPECT_EQ((*out[1].change.before)[0].text, "1");
  EXPECT_EQ((*out[1].change.before)[1].state, CellState::kNull);
  EXPECT_EQ((*out[2].change.before)[1].text, "b");
  EXPECT_EQ(out[2].change.op, ChangeOp::kUpdate);
}

TEST_F(DecoderTest, DeleteCarriesOldKeyAsBefore) {
  auto out = Feed({Begin(0x500, 0, 7), OrdersRelation(), Delete(kOrders, 'K', {T("1"), N()}),
                   Commit(0x500, 0x530, 0)});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].change.op, ChangeOp::kDelete);
  EXPECT_FALSE(out[0].change.after.has_value());
  EXPECT_EQ((*out[0].change.before)[0].text, "1");
}

TEST_F(DecoderTest, TruncateYieldsOneChangePerRelation) {
  auto out = Feed({Begin(0x500, 0, 7), OrdersRelation(),
                   Relation(kItems, "public", "items", {{"id", 23, true}}),
                   Truncate({kOrders, kItems}, 1), Commit(0x500, 0x530, 0)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].change.op, ChangeOp::kTruncate);
  EXPECT_EQ(out[0].change.relation->name, "orders");
  EXPECT_EQ(out[1].change.relation->name, "items");
  EXPECT_FALSE(out[1].change.before.has_value());
  EXPECT_FALSE(out[1].change.after.has_value());
  EXPECT_EQ(out[1].change.ordinal, 1u);
}

TEST_F(DecoderTest, RelationChangeMidStreamLeavesEarlierChangesWithTheOldColumns) {
  auto out =
      Feed({Begin(0x500, 0, 7), OrdersRelation(), Insert(kOrders, {T("1"), T("a")}),
            Relation(kOrders, "public", "orders", {{"id", 20, true}, {"note", 25}, {"qty", 23}}),
            Insert(kOrders, {T("2"), T("b"), T("5")}), Commit(0x500, 0x530, 0)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].change.relation->columns.size(), 2u);
  EXPECT_EQ(out[1].change.relation->columns.size(), 3u);
  EXPECT_EQ(out[1].change.relation->columns[2].name, "qty");
  EXPECT_EQ(decoder_.FindRelation(kOrders)->columns.size(), 3u);
}

// The server sends a relation again with every streamed transaction and session: unchanged,
// it stays the same object (per-relation caches downstream are keyed by it).
TEST_F(DecoderTest, ARelationSentAgainUnchangedKeepsItsObject) {
  Feed({OrdersRelation()});
  RelationPtr first = decoder_.FindRelation(kOrders);
  Feed({OrdersRelation()});
  EXPECT_EQ(decoder_.FindRelation(kOrders), first);
  Feed({Relation(kOrders, "public", "orders", {{"id", 20, true}, {"note", 25}, {"qty", 23}})});
  EXPECT_NE(decoder_.FindRelation(kOrders), first);
}

TEST_F(DecoderTest, TypeOriginAndLogicalMessagesYieldNoChanges) {
  auto out = Feed({Message(false, 0x400, "app", "hello"), Begin(0x500, 0, 7),
                   Origin(0x100, "upstream"), Type(70000, "public", "mood"),
                   Message(true, 0x510, "app", "x"), Commit(0x500, 0x530, 0)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, TxnEvent::Kind::kCommit);
}

TEST_F(DecoderTest, CommitOutsideATransactionIsDataLoss) {
  Status s = FeedUntilError({Commit(0x500, 0x530, 0)});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("outside a transaction"), std::string::npos) << s.message();
}

TEST_F(DecoderTest, BeginInsideATransactionIsDataLoss) {
  EXPECT_EQ(FeedUntilError({Begin(0x500, 0, 7), Begin(0x600, 0, 8)}).code(), StatusCode::kDataLoss);
}

TEST_F(DecoderTest, CommitOfAnotherTransactionIsDataLoss) {
  EXPECT_EQ(FeedUntilError({Begin(0x500, 0, 7), Commit(0x600, 0x630, 0)}).code(),
            StatusCode::kDataLoss);
}

TEST_F(DecoderTest, ChangeOutsideATransactionIsDataLoss) {
  EXPECT_EQ(FeedUntilError({OrdersRelation(), Insert(kOrders, {T("1"), N()})}).code(),
            StatusCode::kDataLoss);
}

TEST_F(DecoderTest, UnknownRelationIdIsDataLoss) {
  Status s = FeedUntilError({Begin(0x500, 0, 7), Insert(999, {T("1")})});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("999"), std::string::npos) << s.message();
}

TEST_F(DecoderTest, TruncateOfAnUnknownRelationIsDataLoss) {
  Status s = FeedUntilError({Begin(0x500, 0, 7), Truncate({kOrders})});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("Truncate for relation id"), std::string::npos) << s.message();
}

TEST_F(DecoderTest, TupleArityMismatchIsDataLoss) {
  Status s = FeedUntilError({Begin(0x500, 0, 7), OrdersRelation(), Insert(kOrders, {T("1")})});
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("1 columns; the relation has 2"), std::string::npos) << s.message();
}

TEST_F(DecoderTest, OldTupleArityMismatchIsDataLoss) {
  PgoutputDecoder d;
  std::vector<TxnEvent> out;
  ASSERT_OK(d.Decode(Begin(0x500, 0, 7), out));
  ASSERT_OK(d.Decode(OrdersRelation(), out));
  EXPECT_EQ(d.Decode(Update(kOrders, 'K', {T("1")}, {T("1"), T("x")}), out).code(),
            StatusCode::kDataLoss);
}

TEST_F(DecoderTest, MalformedMessageIsDataLoss) {
  std::string insert = Insert(kOrders, {T("1"), T("abc")});
  EXPECT_EQ(
      FeedUntilError({Begin(0x500, 0, 7), OrdersRelation(), insert.substr(0, insert.size() - 1)})
          .code(),
      StatusCode::kDataLoss);
}

// Streamed transactions (protocol 2): xid 900 streams in two segments, a small transaction
// commits in between, then 900 commits.
TEST_F(DecoderTest, StreamedTransactionIsEmittedOnlyAtStreamCommit) {
  auto out = Feed({
      StreamStart(900, true),
      OrdersRelation(900),
      Insert(kOrders, {T("1"), T("a")}, 900),
      Insert(kOrders, {T("2"), T("b")}, 900),
      StreamStop(),
      // A regular transaction commits while 900 is open; it has its own Relation message.
      Begin(0x700, kPgTime, 901),
      OrdersRelation(),
      Insert(kOrders, {T("10"), N()}),
      Commit(0x700, 0x730, kPgTime),
      StreamStart(900, false),
      Delete(kOrders, 'K', {T("1"), N()}, 900),
      StreamStop(),
  });
  ASSERT_EQ(out.size(), 2u);  // only the regular transaction
  EXPECT_EQ((*out[0].change.after)[0].text, "10");
  EXPECT_EQ(decoder_.open_streams(), 1u);
  EXPECT_FALSE(decoder_.in_transaction());

  out = Feed({StreamCommit(900, 0x800, 0x830, kPgTime)});
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(decoder_.replaying());
  EXPECT_TRUE(decoder_.in_transaction());
  out = ReplayAll(/*slice=*/1);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].change.op, ChangeOp::kInsert);
  EXPECT_EQ((*out[1].change.after)[0].text, "2");
  EXPECT_EQ(out[2].change.op, ChangeOp::kDelete);
  EXPECT_EQ(out[2].change.commit_position, 0x800u);
  EXPECT_EQ(out[2].change.commit_time_us, kUnixTime);
  EXPECT_EQ(out[2].change.ordinal, 2u);
  EXPECT_EQ(out[3].kind, TxnEvent::Kind::kCommit);
  EXPECT_EQ(out[3].end_lsn, Lsn(0x830));
  EXPECT_EQ(decoder_.open_streams(), 0u);
  EXPECT_FALSE(decoder_.in_transaction());
}

TEST_F(DecoderTest, StreamedTransactionWithAbortYieldsNothing) {
  auto out = Feed({StreamStart(900, true), OrdersRelation(900),
                   Insert(kOrders, {T("1"), T("a")}, 900), StreamStop(), StreamAbort(900, 900)});
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(decoder_.open_streams(), 0u);
  EXPECT_FALSE(decoder_.replaying());
  // The xid is gone: a later segment of it would be a protocol violation.
  EXPECT_EQ(FeedUntilError({StreamStart(900, false)}).code(), StatusCode::kDataLoss);
}

TEST_F(DecoderTest, SubtransactionAbortDropsOnlyItsChangesButKeepsItsSchema) {
  // Subtransaction 902 sends the relation (first to touch it) and a row, then rolls back to
  // its savepoint; the top-level transaction's later rows rely on that Relation message.
  auto out =
      Feed({StreamStart(900, true), OrdersRelation(902),
            Insert(kOrders, {T("1"), T("rolled back")}, 902), StreamStop(), StreamAbort(900, 902),
            StreamStart(900, false), Insert(kOrders, {T("2"), T("kept")}, 900), StreamStop(),
            StreamCommit(900, 0x800, 0x830, 0)});
  EXPECT_TRUE(out.empty());
  out = ReplayAll();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ((*out[0].change.after)[1].text, "kept");
  EXPECT_EQ(out[0].change.ordinal, 0u);
}

TEST_F(DecoderTest, StreamedTransactionSpillsWholePastTheMemoryBudgetAndReplaysInOrder) {
  PgoutputDecoder d(DecoderOptions{/*stream_memory_bytes=*/2 << 20, ""});
  std::vector<TxnEvent> out;
  ASSERT_OK(d.Decode(StreamStart(900, true), out));
  ASSERT_OK(d.Decode(OrdersRelation(900), out));
  const std::string filler(1000, 'x');
  const int kRows = 5000;  // ~5 MB: more than twice the budget
  for (int i = 0; i < kRows; ++i) {
    ASSERT_OK(d.Decode(Insert(kOrders, {T(std::to_string(i)), T(filler)}, 900), out));
  }
  ASSERT_OK(d.Decode(StreamStop(), out));
  // Spilled whole: what it had in memory went to the file before its later messages.
  EXPECT_EQ(d.stream_buffer().memory_bytes(), 0u);
  EXPECT_GT(d.stream_buffer().spilled_bytes(), uint64_t{kRows} * filler.size());
  ASSERT_OK(d.Decode(StreamCommit(900, 0x800, 0x830, 0), out));
  int next = 0;
  while (d.replaying()) {
    out.clear();
    ASSERT_OK(d.Replay(333, out));
    for (const TxnEvent& e : out) {
      if (e.kind == TxnEvent::Kind::kCommit) continue;
      ASSERT_EQ((*e.change.after)[0].text, std::to_string(next));
      ++next;
    }
  }
  EXPECT_EQ(next, kRows);
}

TEST_F(DecoderTest, ConcurrentStreamsAreKeptApart) {
  auto out =
      Feed({StreamStart(900, true), OrdersRelation(900), Insert(kOrders, {T("a"), N()}, 900),
            StreamStop(), StreamStart(950, true), OrdersRelation(950),
            Insert(kOrders, {T("b"), N()}, 950), StreamStop(), StreamStart(900, false),
            Insert(kOrders, {T("c"), N()}, 900), StreamStop(), StreamCommit(950, 0x900, 0x930, 0)});
  out = ReplayAll();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ((*out[0].change.after)[0].text, "b");
  EXPECT_EQ(out[1].end_lsn, Lsn(0x930));
  EXPECT_EQ(decoder_.open_streams(), 1u);
  Feed({StreamCommit(900, 0xA00, 0xA30, 0)});
  out = ReplayAll();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ((*out[0].change.after)[0].text, "a");
  EXPECT_EQ((*out[1].change.after)[0].text, "c");
}

TEST_F(DecoderTest, OriginAndLogicalMessagesInsideAStreamAreAccepted) {
  Feed({StreamStart(900, true), Origin(0x10, "upstream"), OrdersRelation(900),
        Message(true, 0x20, "app", "x", 900), Insert(kOrders, {T("1"), N()}, 900), StreamStop(),
        StreamCommit(900, 0x800, 0x830, 0)});
  auto out = ReplayAll();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].change.op, ChangeOp::kInsert);
}

TEST_F(DecoderTest, StreamSegmentWhoseStartWasNeverSeenIsDataLoss) {
  EXPECT_EQ(FeedUntilError({StreamStart(900, false)}).code(), StatusCode::kDataLoss);
}

TEST_F(DecoderTest, StreamCommitOfUnknownTransactionIsDataLoss) {
  EXPECT_EQ(FeedUntilError({StreamCommit(900, 1, 2, 0)}).code(), StatusCode::kDataLoss);
}

TEST_F(DecoderTest, StreamStopOutsideABlockIsDataLoss) {
  EXPECT_EQ(FeedUntilError({StreamStop()}).code(), StatusCode::kDataLoss);
}

TEST_F(DecoderTest, BeginInsideAStreamBlockIsDataLoss) {
  EXPECT_EQ(FeedUntilError({StreamStart(900, true), Begin(0x500, 0, 7)}).code(),
            StatusCode::kDataLoss);
}

TEST_F(DecoderTest, StreamStartInsideATransactionIsDataLoss) {
  EXPECT_EQ(FeedUntilError({Begin(0x500, 0, 7), StreamStart(900, true)}).code(),
            StatusCode::kDataLoss);
}

TEST_F(DecoderTest, FirstSegmentTwiceIsDataLoss) {
  EXPECT_EQ(FeedUntilError({StreamStart(900, true), StreamStop(), StreamStart(900, true)}).code(),
            StatusCode::kDataLoss);
}

TEST_F(DecoderTest, UnknownRelationInAStreamFailsAtReplay) {
  Feed({StreamStart(900, true), Insert(4242, {T("1")}, 900), StreamStop(),
        StreamCommit(900, 0x800, 0x830, 0)});
  std::vector<TxnEvent> out;
  EXPECT_EQ(decoder_.Replay(10, out).code(), StatusCode::kDataLoss);
}

TEST_F(DecoderTest, DecodeWhileReplayingIsInternal) {
  Feed({StreamStart(900, true), StreamStop(), StreamCommit(900, 0x800, 0x830, 0)});
  std::vector<TxnEvent> out;
  EXPECT_EQ(decoder_.Decode(Begin(0x900, 0, 1), out).code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace faucet::postgres
