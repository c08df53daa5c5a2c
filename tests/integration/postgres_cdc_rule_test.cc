// The one rule against a real server (spec/000 §3, DESIGN.md §1): the position reported to
// Postgres originates only from a persisted bookmark. A crash before persist re-delivers; a
// resume skips what was persisted; keepalives and decoding never move the slot; the slot
// follows the state store and is never ahead of it; an idle database still lets it advance.
#include <gtest/gtest.h>

#include <thread>

#include "core/pipeline.h"
#include "sources/postgres/pg_test_support.h"
#include "sources/postgres/postgres_cdc_source.h"
#include "testing/services.h"
#include "testing/status_matchers.h"
#include "testing/wait.h"

namespace faucet::postgres {
namespace {

using namespace std::chrono_literals;
using testing::CollectingSink;
using testing::LockedStateStore;
using testing::TestDb;

class PostgresCdcRuleTest : public testing::CdcTest {
 protected:
  void SetUp() override {
    Name("rule");
    Publish("id int PRIMARY KEY, v text");
  }

  std::vector<std::string> Ids(const std::vector<Change>& changes) {
    std::vector<std::string> ids;
    for (const Change& c : changes) ids.push_back((*c.after)[0].text);
    return ids;
  }
};

TEST_F(PostgresCdcRuleTest, CrashBeforeFlushAndPersistRedeliversTheRow) {
  CreateSlot();
  db_.Exec("INSERT INTO " + table_ + " VALUES (1, 'only')");
  {
    // Decoded and handed out, never persisted: then the process "crashes" (the source goes
    // away without any acknowledgement).
    PostgresCdcSource source(config_);
    ASSERT_OK(source.Open(std::nullopt));
    auto pages = testing::ReadPages(
        source, [](auto& p) { return testing::CountChanges(p) >= 1; }, 10s);
    ASSERT_EQ(testing::CountChanges(pages), 1u);
    EXPECT_EQ(source.reported_position(), Lsn());
  }
  {
    // The pipeline's own failure path: written and flushed, but the persist fails.
    PostgresCdcSource source(config_);
    CollectingSink sink;
    LockedStateStore state;
    state.fail_put = [&] { return sink.change_count > 0; };
    Result<PipelineStats> run = RunPipeline(source, sink, state);
    EXPECT_FALSE(run.ok());
    ASSERT_EQ(sink.Changes().size(), 1u);
  }
  PostgresCdcSource source(config_);
  CollectingSink sink;
  LockedStateStore state;
  Result<PipelineStats> run = RunPipeline(source, sink, state);
  ASSERT_OK(run);
  EXPECT_EQ(Ids(sink.Changes()), std::vector<std::string>{"1"});
}

TEST_F(PostgresCdcRuleTest, ResumingFromABookmarkSkipsConsumedChanges) {
  CreateSlot();
  LockedStateStore state;
  db_.Exec("INSERT INTO " + table_ + " VALUES (1, 'a'), (2, 'b')");
  db_.Exec("INSERT INTO " + table_ + " VALUES (3, 'c')");
  {
    PostgresCdcSource source(config_);
    CollectingSink sink;
    ASSERT_OK(RunPipeline(source, sink, state));
    EXPECT_EQ(Ids(sink.Changes()), (std::vector<std::string>{"1", "2", "3"}));
  }
  db_.Exec("INSERT INTO " + table_ + " VALUES (4, 'd')");
  db_.Exec("UPDATE " + table_ + " SET v = 'e' WHERE id = 4");
  PostgresCdcSource source(config_);
  CollectingSink sink;
  ASSERT_OK(RunPipeline(source, sink, state));
  std::vector<Change> changes = sink.Changes();
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].op, ChangeOp::kInsert);
  EXPECT_EQ(changes[1].op, ChangeOp::kUpdate);
  EXPECT_EQ((*changes[1].after)[1].text, "e");
}

TEST_F(PostgresCdcRuleTest, KeepalivesAndDecodingNeverMoveTheSlotWithoutAPersist) {
  const Lsn created = CreateSlot();
  PostgresCdcSource source(config_);
  ASSERT_OK(source.Open(std::nullopt));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    TestDb w;
    for (int i = 0; !stop; ++i) {
      w.Exec("INSERT INTO " + table_ + " VALUES (" + std::to_string(i) + ", 'x')");
      std::this_thread::sleep_for(50ms);  // paces the load
    }
  });
  size_t changes = 0;
  // A fixed 4 s of reading under load: the slot must not move during any of it.
  auto until = std::chrono::steady_clock::now() + 4s;
  while (std::chrono::steady_clock::now() < until) {
    Result<SourceEvent> e = source.Next(100ms);
    ASSERT_OK(e);
    if (e->kind == SourceEvent::Kind::kPage) changes += e->page.changes.size();
    // Sampled from another connection: the slot stays where it was created.
    ASSERT_EQ(db_.ConfirmedFlush(slot_), created);
  }
  stop = true;
  writer.join();
  EXPECT_GT(changes, 10u);
  EXPECT_GT(source.stats().keepalives, 0u) << "the test saw no keepalive";
  EXPECT_GT(source.stats().status_updates, 4u);
  EXPECT_EQ(source.reported_position(), Lsn());
  EXPECT_EQ(db_.ConfirmedFlush(slot_), created);
}

TEST_F(PostgresCdcRuleTest, SlotFollowsThePersistedBookmarkAndIsNeverAheadOfIt) {
  const Lsn created = CreateSlot();
  LockedStateStore state;
  const std::string key = "pgtest::" + slot_;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    TestDb w;
    for (int i = 0; i < 60; ++i) {
      w.Exec("INSERT INTO " + table_ + " VALUES (" + std::to_string(i) + ", 'x')");
      std::this_thread::sleep_for(40ms);  // paces the load: 60 rows over a few seconds
    }
  });
  std::atomic<int> samples{0};
  std::atomic<int> violations{0};
  std::thread sampler([&] {
    TestDb s;
    while (!stop) {
      // Slot first, then state: the state only grows, so C(t1) <= P(t1) <= P(t2).
      std::optional<Lsn> confirmed = s.ConfirmedFlush(slot_);
      std::optional<Lsn> persisted = state.PersistedLsn(key);
      if (confirmed && *confirmed != created && (!persisted || *confirmed > *persisted)) {
        ++violations;
      }
      ++samples;
      std::this_thread::sleep_for(5ms);  // the sampling rate
    }
  });
  CollectingSink sink;
  {
    PostgresCdcSource source(config_);
    Result<PipelineStats> run = RunPipeline(source, sink, state);
    ASSERT_OK(run);
    writer.join();
  }
  std::optional<Lsn> persisted = state.PersistedLsn(key);
  ASSERT_TRUE(persisted.has_value());
  EXPECT_GT(*persisted, created);
  // The last update (sent when the source closes) reaches the walsender asynchronously.
  EXPECT_TRUE(faucet::testing::WaitFor([&] { return db_.ConfirmedFlush(slot_) == persisted; }, 5s,
                                       "the slot to reach " + persisted->ToString()));
  stop = true;
  sampler.join();
  EXPECT_EQ(violations.load(), 0) << "of " << samples.load() << " samples";
  EXPECT_GT(samples.load(), 50);
  EXPECT_EQ(sink.Changes().size(), 60u);
}

TEST_F(PostgresCdcRuleTest, IdleDatabaseLetsTheSlotAdvance) {
  const Lsn created = CreateSlot();
  // WAL that the publication does not cover: nothing to deliver, but the slot must not pin it.
  const std::string other = faucet::testing::UniqueName("rule_other");
  db_.Exec("CREATE TABLE " + other + " (x int)");
  db_.Exec("INSERT INTO " + other + " SELECT generate_series(1, 1000)");
  const Lsn wal = db_.CurrentWal();
  LockedStateStore state;
  CollectingSink sink;
  {
    PostgresCdcSource source(config_);
    Result<PipelineStats> run = RunPipeline(source, sink, state);
    ASSERT_OK(run);
    EXPECT_GT(run->checkpoints, 0u);
  }
  EXPECT_TRUE(sink.Changes().empty());
  std::optional<Lsn> persisted = state.PersistedLsn("pgtest::" + slot_);
  ASSERT_TRUE(persisted.has_value());
  EXPECT_GE(*persisted, wal);
  ASSERT_TRUE(faucet::testing::WaitFor([&] { return db_.ConfirmedFlush(slot_) == persisted; }, 5s,
                                       "the slot to reach " + persisted->ToString()));
  EXPECT_GT(*db_.ConfirmedFlush(slot_), created);
}

TEST_F(PostgresCdcRuleTest, CycleEndsAfterIdleTimeoutThoughKeepalivesArrive) {
  CreateSlot();
  config_.idle_timeout = 2s;
  PostgresCdcSource source(config_);
  CollectingSink sink;
  LockedStateStore state;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK(RunPipeline(source, sink, state));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, 2s);
  EXPECT_LT(took, 5s);
  EXPECT_GT(source.stats().keepalives, 0u);
}

TEST_F(PostgresCdcRuleTest, LongCycleEndsAtATransactionBoundaryAfterMaxCycleDuration) {
  CreateSlot();
  config_.max_cycle_duration = 1s;
  config_.idle_timeout = 30s;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    TestDb w;
    for (int i = 0; !stop; ++i) {
      w.Exec("INSERT INTO " + table_ + " SELECT g, 'x' FROM generate_series(" +
             std::to_string(i * 100) + ", " + std::to_string(i * 100 + 99) + ") g");
      std::this_thread::sleep_for(20ms);  // paces the load
    }
  });
  PostgresCdcSource source(config_);
  CollectingSink sink;
  LockedStateStore state;
  const auto start = std::chrono::steady_clock::now();
  Result<PipelineStats> run = RunPipeline(source, sink, state);
  const auto took = std::chrono::steady_clock::now() - start;
  stop = true;
  writer.join();
  ASSERT_OK(run);
  EXPECT_GE(took, 1s);
  EXPECT_LT(took, 10s);
  // Every row delivered belongs to a complete transaction: whole hundreds, and the last page
  // carries the bookmark.
  EXPECT_GT(sink.change_count, 0u);
  EXPECT_EQ(sink.change_count % 100, 0u);
  ASSERT_FALSE(sink.pages.empty());
  EXPECT_TRUE(sink.pages.back().bookmark.has_value());
}

}  // namespace
}  // namespace faucet::postgres
