#include "sources/postgres/pgoutput.h"

#include <gtest/gtest.h>

#include "sources/postgres/pgoutput_test_messages.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using namespace testmsg;

template <typename M>
M ParseAs(const std::string& bytes, bool in_stream = false) {
  Result<PgoutputMessage> r = ParsePgoutputMessage(bytes, in_stream);
  EXPECT_OK(r);
  EXPECT_TRUE(std::holds_alternative<M>(*r));
  return std::get<M>(*r);
}

TEST(Pgoutput, BeginCarriesFinalLsnTimeAndXid) {
  auto m = ParseAs<BeginMessage>(Begin(0x1'0000'00A0, 12345, 77));
  EXPECT_EQ(m.final_lsn, Lsn(0x1'0000'00A0));
  EXPECT_EQ(m.commit_time, 12345);
  EXPECT_EQ(m.xid, 77u);
}

TEST(Pgoutput, CommitCarriesCommitAndEndLsn) {
  auto m = ParseAs<CommitMessage>(Commit(0x10, 0x48, -5));
  EXPECT_EQ(m.commit_lsn, Lsn(0x10));
  EXPECT_EQ(m.end_lsn, Lsn(0x48));
  EXPECT_EQ(m.commit_time, -5);
}

TEST(Pgoutput, RelationColumnsAreTypedFromTheirOid) {
  auto m = ParseAs<RelationMessage>(Relation(
      16384, "public", "orders",
      {{"id", 20, true}, {"note", 25}, {"tags", 1009}, {"mood", 99999, false, 7}}, {}, 'f'));
  EXPECT_EQ(m.relation.id, 16384u);
  EXPECT_EQ(m.relation.schema, "public");
  EXPECT_EQ(m.relation.name, "orders");
  EXPECT_EQ(m.replica_identity, 'f');
  ASSERT_EQ(m.relation.columns.size(), 4u);
  EXPECT_TRUE(m.relation.columns[0].key);
  EXPECT_EQ(m.relation.columns[0].type, ValueType::kInt);
  EXPECT_FALSE(m.relation.columns[1].key);
  EXPECT_EQ(m.relation.columns[1].type, ValueType::kText);
  EXPECT_EQ(m.relation.columns[2].type, ValueType::kArray);
  EXPECT_EQ(m.relation.columns[3].type, ValueType::kOther);
  EXPECT_EQ(m.relation.columns[3].type_oid, 99999u);
  EXPECT_EQ(m.relation.columns[3].type_modifier, 7);
}

TEST(Pgoutput, StreamedRelationCarriesItsXid) {
  auto m = ParseAs<RelationMessage>(Relation(1, "s", "t", {{"a", 23}}, 900), true);
  EXPECT_EQ(m.xid, 900u);
  EXPECT_EQ(m.relation.id, 1u);
}

TEST(Pgoutput, TypeAndOriginAndMessageParse) {
  auto y = ParseAs<TypeMessage>(Type(70000, "public", "mood"));
  EXPECT_EQ(y.oid, 70000u);
  EXPECT_EQ(y.name, "mood");
  auto o = ParseAs<OriginMessage>(Origin(0x99, "node_a"));
  EXPECT_EQ(o.commit_lsn, Lsn(0x99));
  EXPECT_EQ(o.name, "node_a");
  auto m = ParseAs<LogicalMessage>(Message(true, 0x42, "app", std::string("a\0b", 3)));
  EXPECT_TRUE(m.transactional);
  EXPECT_EQ(m.prefix, "app");
  EXPECT_EQ(m.content, std::string("a\0b", 3));
}

TEST(Pgoutput, TupleCellsKeepNullUnchangedToastAndText) {
  auto m = ParseAs<InsertMessage>(Insert(5, {T("1"), N(), U(), T("")}));
  ASSERT_EQ(m.new_tuple.size(), 4u);
  EXPECT_EQ(m.new_tuple[0].state, CellState::kValue);
  EXPECT_EQ(m.new_tuple[0].text, "1");
  EXPECT_EQ(m.new_tuple[1].state, CellState::kNull);
  EXPECT_EQ(m.new_tuple[2].state, CellState::kUnchangedToast);
  EXPECT_EQ(m.new_tuple[3].state, CellState::kValue);
  EXPECT_EQ(m.new_tuple[3].text, "");
}

TEST(Pgoutput, UpdateWithoutOldTupleHasNoBefore) {
  auto m = ParseAs<UpdateMessage>(Update(5, 0, {}, {T("1"), T("x")}));
  EXPECT_FALSE(m.old_tuple.has_value());
  EXPECT_EQ(m.new_tuple.size(), 2u);
}

TEST(Pgoutput, UpdateWithOldKeyOrOldTuple) {
  auto k = ParseAs<UpdateMessage>(Update(5, 'K', {T("1"), N()}, {T("2"), T("x")}));
  ASSERT_TRUE(k.old_tuple.has_value());
  EXPECT_EQ(k.old_kind, 'K');
  EXPECT_EQ((*k.old_tuple)[0].text, "1");
  auto o = ParseAs<UpdateMessage>(Update(5, 'O', {T("1"), T("w")}, {T("1"), T("x")}));
  EXPECT_EQ(o.old_kind, 'O');
  EXPECT_EQ((*o.old_tuple)[1].text, "w");
}

TEST(Pgoutput, DeleteCarriesOldKey) {
  auto m = ParseAs<DeleteMessage>(Delete(5, 'K', {T("9"), N()}));
  EXPECT_EQ(m.old_kind, 'K');
  EXPECT_EQ(m.old_tuple[0].text, "9");
}

TEST(Pgoutput, TruncateListsRelationsAndOptions) {
  auto m = ParseAs<TruncateMessage>(Truncate({5, 6, 7}, 3));
  EXPECT_EQ(m.relation_ids, (std::vector<uint32_t>{5, 6, 7}));
  EXPECT_EQ(m.options, 3);
}

TEST(Pgoutput, StreamMessagesParse) {
  auto s = ParseAs<StreamStartMessage>(StreamStart(700, true));
  EXPECT_EQ(s.xid, 700u);
  EXPECT_TRUE(s.first_segment);
  ParseAs<StreamStopMessage>(StreamStop());
  auto c = ParseAs<StreamCommitMessage>(StreamCommit(700, 0x100, 0x130, 3));
  EXPECT_EQ(c.end_lsn, Lsn(0x130));
  auto a = ParseAs<StreamAbortMessage>(StreamAbort(700, 701));
  EXPECT_EQ(a.subxid, 701u);
}

Status ParseError(const std::string& bytes, bool in_stream = false) {
  return ParsePgoutputMessage(bytes, in_stream).status();
}

TEST(Pgoutput, EmptyMessageIsDataLoss) { EXPECT_EQ(ParseError("").code(), StatusCode::kDataLoss); }

TEST(Pgoutput, UnknownTagIsDataLossNamingTheTag) {
  Status s = ParseError("Zabc");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("0x5a"), std::string::npos) << s.message();
}

TEST(Pgoutput, EveryTruncationOfEveryMessageIsDataLoss) {
  const std::vector<std::string> messages = {
      Begin(1, 2, 3),
      Commit(1, 2, 3),
      Origin(1, "o"),
      Relation(1, "s", "t", {{"a", 23}, {"b", 25}}),
      Type(1, "s", "t"),
      Insert(1, {T("abc"), N()}),
      Update(1, 'O', {T("a")}, {T("b")}),
      Delete(1, 'K', {T("a")}),
      Truncate({1, 2}),
      Message(false, 1, "p", "content"),
      StreamStart(1, true),
      StreamCommit(1, 2, 3, 4),
      StreamAbort(1, 2),
  };
  for (const std::string& m : messages) {
    for (size_t len = 1; len < m.size(); ++len) {
      Status s = ParseError(m.substr(0, len));
      EXPECT_EQ(s.code(), StatusCode::kDataLoss)
          << PgoutputMessageName(m[0]) << " cut at " << len << ": " << s.ToString();
    }
  }
}

TEST(Pgoutput, TrailingBytesAreDataLoss) {
  Status s = ParseError(Begin(1, 2, 3) + "x");
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("trailing"), std::string::npos) << s.message();
}

TEST(Pgoutput, BinaryCellIsInternal) {
  Status s = ParseError(Insert(1, {{'b', "\x01\x02"}}));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("binary"), std::string::npos) << s.message();
}

TEST(Pgoutput, UnknownCellKindIsDataLoss) {
  EXPECT_EQ(ParseError(Insert(1, {{'x', ""}})).code(), StatusCode::kDataLoss);
}

TEST(Pgoutput, WrongTupleMarkerIsDataLoss) {
  std::string m = Insert(1, {T("a")});
  m[5] = 'K';  // Insert allows only 'N'
  EXPECT_EQ(ParseError(m).code(), StatusCode::kDataLoss);
}

TEST(Pgoutput, HugeCountsAreRejectedWithoutAllocating) {
  // 65535 columns / 2^32-1 relations claimed in a few bytes.
  EXPECT_EQ(ParseError(Bytes('I').U32(1).U8('N').U16(0xffff).str()).code(), StatusCode::kDataLoss);
  EXPECT_EQ(ParseError(Bytes('T').U32(0xffffffff).U8(0).U32(1).str()).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseError(Bytes('R').U32(1).Str("s").Str("t").U8('d').U16(0xffff).str()).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseError(Bytes('I').U32(1).U8('N').U16(1).U8('t').U32(0x7fffffff).str()).code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseError(Bytes('I').U32(1).U8('N').U16(1).U8('t').U32(0xffffffff).str()).code(),
            StatusCode::kDataLoss);
}

TEST(Pgoutput, MissingXidInsideAStreamIsDataLoss) {
  // The same bytes are valid outside a stream block and one field short inside it.
  std::string m = Delete(1, 'K', {T("a")});
  EXPECT_OK(ParsePgoutputMessage(m, false));
  EXPECT_EQ(ParseError(m, true).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace faucet::postgres
