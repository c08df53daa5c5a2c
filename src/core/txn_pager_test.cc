#include "core/txn_pager.h"

#include <gtest/gtest.h>

namespace faucet {
namespace {

Change Row(int i) {
  Change c;
  c.op = ChangeOp::kInsert;
  c.after = faucet::Row{Cell::Value(std::to_string(i))};
  return c;
}

Bookmark At(int n) { return Bookmark{Json{{"pos", n}}}; }

TxnPager::Options Small() { return {.batch_size = 3, .page_bytes = 1 << 20, .linger = {}}; }

TEST(TxnPager, SmallTransactionsShareAPageUntilItIsFull) {
  TxnPager pager({.batch_size = 3, .page_bytes = 1 << 20, .linger = std::chrono::hours(1)});
  pager.AddChange(Row(1));
  pager.Commit(At(10));
  pager.AddChange(Row(2));
  pager.Commit(At(20));
  EXPECT_FALSE(pager.has_ready());  // lingering for more
  pager.AddChange(Row(3));
  pager.Commit(At(30));  // three rows: full
  ASSERT_TRUE(pager.has_ready());
  Page page = pager.PopReady();
  EXPECT_EQ(page.changes.size(), 3u);
  EXPECT_EQ(page.bookmark, At(30));
  EXPECT_TRUE(pager.empty());
}

TEST(TxnPager, ALargeTransactionGoesOutInChunksOnlyTheLastWithItsBookmark) {
  TxnPager pager(Small());
  for (int i = 0; i < 7; ++i) pager.AddChange(Row(i));
  pager.Commit(At(70));
  pager.Tick(TxnPager::Clock::now());
  std::vector<Page> pages;
  while (pager.has_ready()) pages.push_back(pager.PopReady());
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[0].changes.size(), 3u);
  EXPECT_FALSE(pages[0].bookmark);
  EXPECT_EQ(pages[1].changes.size(), 3u);
  EXPECT_FALSE(pages[1].bookmark);
  EXPECT_EQ(pages[2].changes.size(), 1u);
  EXPECT_EQ(pages[2].bookmark, At(70));
}

TEST(TxnPager, CompleteTransactionsLeaveBeforeTheOpenOne) {
  TxnPager pager(Small());
  pager.AddChange(Row(1));
  pager.Commit(At(10));
  pager.AddChange(Row(2));
  pager.AddChange(Row(3));
  pager.AddChange(Row(4));  // the page is full: the complete transaction leaves alone
  ASSERT_TRUE(pager.has_ready());
  Page first = pager.PopReady();
  EXPECT_EQ(first.changes.size(), 1u);
  EXPECT_EQ(first.bookmark, At(10));
  EXPECT_TRUE(pager.open());
  pager.DropOpen();  // the cycle ends before the commit
  EXPECT_TRUE(pager.empty());
}

TEST(TxnPager, AnEmptyCommitStillMovesTheBookmarkAfterItsLinger) {
  TxnPager pager({.batch_size = 3,
                  .page_bytes = 1 << 20,
                  .linger = std::chrono::milliseconds(5),
                  .empty_linger = std::chrono::hours(1)});
  pager.Commit(At(5), /*empty=*/true);
  ASSERT_TRUE(pager.deadline());
  EXPECT_GT(*pager.deadline(), TxnPager::Clock::now() + std::chrono::minutes(59));
  pager.AddChange(Row(6));
  pager.Commit(At(6));  // a change joins: the short linger again
  ASSERT_TRUE(pager.deadline());
  pager.Tick(*pager.deadline());
  ASSERT_TRUE(pager.has_ready());
  Page page = pager.PopReady();
  EXPECT_EQ(page.changes.size(), 1u);
  EXPECT_EQ(page.bookmark, At(6));
  EXPECT_FALSE(pager.deadline());
}

TEST(TxnPager, FlushChangesSendsCompleteTransactionsWithAChangeOnly) {
  TxnPager pager({.batch_size = 3, .page_bytes = 1 << 20, .linger = std::chrono::hours(1)});
  pager.Commit(At(1), /*empty=*/true);
  EXPECT_FALSE(pager.complete_changes());
  pager.FlushChanges();  // only an empty transaction: it keeps its linger
  EXPECT_FALSE(pager.has_ready());
  pager.AddChange(Row(2));
  EXPECT_FALSE(pager.complete_changes());  // not committed yet
  pager.Commit(At(2));
  pager.AddChange(Row(3));  // the open transaction stays
  EXPECT_TRUE(pager.complete_changes());
  pager.FlushChanges();
  ASSERT_TRUE(pager.has_ready());
  Page page = pager.PopReady();
  EXPECT_EQ(page.changes.size(), 1u);
  EXPECT_EQ(page.bookmark, At(2));
  EXPECT_TRUE(pager.open());
  pager.FlushChanges();  // nothing complete
  EXPECT_FALSE(pager.has_ready());
}

}  // namespace
}  // namespace faucet
