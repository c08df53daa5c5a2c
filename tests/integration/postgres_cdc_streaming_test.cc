// Large transactions with protocol 2 (streaming 'on'), against a real server: they arrive
// complete, in page-sized chunks of which only the last carries the bookmark; concurrent small
// transactions are not held back; aborted (sub)transactions vanish; past the memory budget
// the chunks spill to disk; and a million-row transaction streams in bounded memory.
//
// The walsender streams a transaction once its decoded changes exceed logical_decoding_work_mem
// — a setting of the walsender's own session, so the tests lower it through the replication
// connection's startup options rather than in the writing session.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/pipeline.h"
#include "sinks/file/jsonl_sink.h"
#include "sources/postgres/pg_test_support.h"
#include "sources/postgres/postgres_cdc_source.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using namespace std::chrono_literals;
using testing::CollectingSink;
using testing::LockedStateStore;
using testing::TestDb;

std::string WithSmallDecodingMemory(const std::string& url) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") +
         "options=-c%20logical_decoding_work_mem%3D64kB";
}

class PostgresCdcStreamingTest : public testing::CdcTest {
 protected:
  void SetUp() override {
    Name("stream", WithSmallDecodingMemory(db_.url()));
    Publish("id int PRIMARY KEY, v text");
    CreateSlot();
  }

  Result<PipelineStats> Run(PostgresCdcSource& source, CollectingSink& sink) {
    return RunPipeline(source, sink, state_);
  }

  LockedStateStore state_;
};

TEST_F(PostgresCdcStreamingTest, LargeTransactionArrivesChunkedWithTheBookmarkOnlyOnItsLastChunk) {
  // While the large transaction is open and streaming, a small one commits: it must come out
  // first, whole, with its own bookmark.
  TestDb writer;
  writer.Exec("BEGIN");
  writer.Exec("INSERT INTO " + table_ + " SELECT g, 'row ' || g FROM generate_series(1, 10000) g");
  db_.Exec("INSERT INTO " + table_ + " VALUES (-1, 'small')");
  writer.Exec("INSERT INTO " + table_ +
              " SELECT g, 'row ' || g FROM generate_series(10001, 20000) g");
  writer.Exec("COMMIT");

  config_.stream_memory_bytes = 256 << 10;  // and spill to disk past 256 KiB
  PostgresCdcSource source(config_);
  CollectingSink sink;
  Result<PipelineStats> run = Run(source, sink);
  ASSERT_OK(run);
  // At least ours: WAL is server-wide, and a large transaction of a concurrent test streams
  // too (empty for our publication, it yields only a commit).
  EXPECT_GE(source.stats().streamed_transactions, 1u);
  EXPECT_GT(source.stats().spilled_bytes, 256u << 10);

  // Pages are either the small transaction or chunks of the large one.
  std::vector<const Page*> large;
  bool small_seen = false;
  for (const Page& p : sink.pages) {
    if (p.changes.empty()) continue;  // an idle page
    if ((*p.changes[0].after)[0].text == "-1") {
      EXPECT_FALSE(small_seen);
      EXPECT_TRUE(large.empty()) << "the small transaction committed first";
      EXPECT_TRUE(p.bookmark.has_value());
      small_seen = true;
      continue;
    }
    large.push_back(&p);
  }
  ASSERT_TRUE(small_seen);
  ASSERT_EQ(large.size(), 20u) << "20000 rows in pages of batch_size 1000";
  int next = 1;
  for (size_t i = 0; i < large.size(); ++i) {
    EXPECT_EQ(large[i]->bookmark.has_value(), i + 1 == large.size()) << "chunk " << i;
    for (const Change& c : large[i]->changes) {
      ASSERT_EQ((*c.after)[0].text, std::to_string(next)) << "chunk " << i;
      ++next;
    }
  }
  EXPECT_EQ(next, 20001);
  // The persisted position is at or past the large transaction's end, never inside it.
  EXPECT_GE(state_.PersistedLsn("pgtest::" + slot_).value(),
            *Lsn::Parse(large.back()->bookmark->value["last_lsn"].get<std::string>()));
}

TEST_F(PostgresCdcStreamingTest, AbortedStreamedTransactionsAndRolledBackSavepointsVanish) {
  TestDb writer;
  writer.Exec("BEGIN");
  writer.Exec("INSERT INTO " + table_ + " SELECT g, 'aborted' FROM generate_series(1, 5000) g");
  writer.Exec("ROLLBACK");
  writer.Exec("BEGIN");
  writer.Exec("INSERT INTO " + table_ + " SELECT g, 'kept' FROM generate_series(1, 5000) g");
  writer.Exec("SAVEPOINT s");
  writer.Exec("INSERT INTO " + table_ +
              " SELECT g, 'rolled back' FROM generate_series(100001, 105000) g");
  writer.Exec("ROLLBACK TO SAVEPOINT s");
  writer.Exec("INSERT INTO " + table_ + " SELECT g, 'kept' FROM generate_series(5001, 5010) g");
  writer.Exec("COMMIT");

  PostgresCdcSource source(config_);
  CollectingSink sink;
  Result<PipelineStats> run = Run(source, sink);
  ASSERT_OK(run);
  EXPECT_GE(source.stats().streamed_transactions, 1u);
  std::vector<Change> changes = sink.Changes();
  ASSERT_EQ(changes.size(), 5010u);
  for (size_t i = 0; i < changes.size(); ++i) {
    ASSERT_EQ((*changes[i].after)[1].text, "kept");
    ASSERT_EQ((*changes[i].after)[0].text, std::to_string(i + 1));
  }
}

std::string ReadAll(const std::string& path) {
  Result<std::string> content = PosixFileSystem().ReadFile(path);
  EXPECT_OK(content);
  return content.ok() ? *content : "";
}

// A jsonl sink that does not stage: the source then buffers streamed transactions and replays
// them at their commit, the path staging replaces.
class UnstagedJsonl : public JsonlSink {
 public:
  using JsonlSink::JsonlSink;
  SinkCapabilities Capabilities() const override { return {}; }
};

TEST_F(PostgresCdcStreamingTest, AStagingSinkWritesWhatTheReplayWouldHave) {
  // A second slot at the same position reads the same transactions through the replay path.
  const std::string replay_slot = slot_ + "_replay";
  PostgresCdcConfig replay_config = config_;
  replay_config.slot_name = replay_slot;
  testing::SlotGuard replay_guard(db_.url(), replay_slot);
  ASSERT_OK(PostgresCdcSource(replay_config).CapturePosition().status());

  TestDb writer;
  TestDb other;
  writer.Exec("BEGIN");
  writer.Exec("INSERT INTO " + table_ + " SELECT g, 'aborted' FROM generate_series(1, 3000) g");
  writer.Exec("ROLLBACK");
  writer.Exec("BEGIN");
  writer.Exec("INSERT INTO " + table_ + " SELECT g, 'kept' FROM generate_series(1, 5000) g");
  writer.Exec("SAVEPOINT s");
  writer.Exec("INSERT INTO " + table_ +
              " SELECT g, 'rolled back' FROM generate_series(100001, 103000) g");
  writer.Exec("SAVEPOINT s2");
  writer.Exec("UPDATE " + table_ + " SET v = 'rolled back too' WHERE id <= 2000");
  writer.Exec("ROLLBACK TO SAVEPOINT s");
  // A small transaction commits while the large one is open: it goes first.
  other.Exec("INSERT INTO " + table_ + " VALUES (200000, 'small')");
  writer.Exec("UPDATE " + table_ + " SET v = 'updated' WHERE id % 2 = 0");
  writer.Exec("DELETE FROM " + table_ + " WHERE id % 3 = 0");
  writer.Exec("SAVEPOINT s3");
  writer.Exec("INSERT INTO " + table_ + " SELECT g, 'sub kept' FROM generate_series(6001, 6500) g");
  writer.Exec("RELEASE SAVEPOINT s3");
  writer.Exec("COMMIT");

  const std::string dir = faucet::testing::TempDir("staging");
  PostgresCdcSource staging_source(config_);
  JsonlSink staging_sink({dir + "/staged.jsonl", false});
  ASSERT_OK(RunPipeline(staging_source, staging_sink, state_));
  EXPECT_GE(staging_source.stats().streamed_transactions, 1u);

  PostgresCdcSource replay_source(replay_config);
  UnstagedJsonl replay_sink({dir + "/replayed.jsonl", false});
  LockedStateStore replay_state;
  ASSERT_OK(RunPipeline(replay_source, replay_sink, replay_state));
  EXPECT_GE(replay_source.stats().streamed_transactions, 1u);

  const std::string staged = ReadAll(dir + "/staged.jsonl");
  // The small row, 5,000 inserts, 2,501 updates (the small row is even and committed before
  // the UPDATE ran), 1,666 deletes and the released savepoint's 500 inserts.
  EXPECT_EQ(std::count(staged.begin(), staged.end(), '\n'), 1 + 5000 + 2501 + 1666 + 500);
  EXPECT_EQ(staged.find("rolled back"), std::string::npos);
  EXPECT_EQ(staged.find("aborted"), std::string::npos);
  EXPECT_TRUE(staged == ReadAll(dir + "/replayed.jsonl"))
      << "the staged output differs from the replayed one";
}

TEST_F(PostgresCdcStreamingTest, SmallTransactionsShareAPage) {
  for (int i = 1; i <= 50; ++i) {
    db_.Exec("INSERT INTO " + table_ + " VALUES (" + std::to_string(i) + ", 'x')");
  }
  PostgresCdcSource source(config_);
  CollectingSink sink;
  Result<PipelineStats> run = Run(source, sink);
  ASSERT_OK(run);
  EXPECT_EQ(sink.Changes().size(), 50u);
  size_t pages_with_rows = 0;
  for (const Page& p : sink.pages) {
    if (!p.changes.empty()) {
      ++pages_with_rows;
      EXPECT_TRUE(p.bookmark.has_value());
    }
  }
  EXPECT_LT(pages_with_rows, 50u / 5) << "50 committed transactions, already waiting";
}

// A page waits its linger for more transactions only while the stream flows: once nothing has
// arrived for a nap, its complete transactions leave (the last page of a burst is not held
// back by a linger however long).
TEST_F(PostgresCdcStreamingTest, APageLeavesOnceTheStreamIsQuietNotAtItsLinger) {
  config_.linger = std::chrono::hours(1);
  config_.idle_timeout = 60s;
  PostgresCdcSource source(config_);
  ASSERT_OK(source.Open(std::nullopt));
  db_.Exec("INSERT INTO " + table_ + " VALUES (1, 'x')");
  const auto start = std::chrono::steady_clock::now();
  std::vector<Page> pages = testing::ReadPages(
      source, [](auto& p) { return testing::CountChanges(p) >= 1; }, 20s);
  EXPECT_EQ(testing::CountChanges(pages), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  ASSERT_FALSE(pages.empty());
  EXPECT_TRUE(pages.back().bookmark.has_value());
}

TEST_F(PostgresCdcStreamingTest, MillionRowTransactionStreamsInBoundedMemory) {
  // The server's default logical_decoding_work_mem (64 MB): streaming starts once a
  // transaction outgrows it, as in production.
  config_.connection_url = db_.url();
  config_.idle_timeout = 10s;
  // ~150 bytes a row: the streamed transaction (~170 MB of messages) outgrows the source's
  // 16 MiB stream buffer and spills.
  db_.Exec(
      "INSERT INTO " + table_ +
      " SELECT g, 'value number ' || g || repeat('x', 130) FROM generate_series(1, 1000000) g");
  const auto start = std::chrono::steady_clock::now();
  PostgresCdcSource source(config_);
  CollectingSink sink;
  sink.keep_changes = false;
  Result<PipelineStats> run = Run(source, sink);
  ASSERT_OK(run);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(sink.change_count, 1000000u);
  EXPECT_GE(source.stats().streamed_transactions, 1u);
  EXPECT_GT(source.stats().spilled_bytes, 0u);
  size_t with_bookmark = 0;
  for (const Page& p : sink.pages) with_bookmark += p.bookmark.has_value();
  EXPECT_TRUE(sink.pages.back().bookmark.has_value());
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const long peak_mib = usage.ru_maxrss / 1024;
  std::printf(
      "1,000,000-row transaction: %.1f s (incl. %.1f s idle timeout), %zu pages "
      "(%zu with a bookmark), %llu bytes spilled, peak RSS %ld MiB\n",
      seconds, std::chrono::duration<double>(config_.idle_timeout).count(), sink.pages.size(),
      with_bookmark, static_cast<unsigned long long>(source.stats().spilled_bytes), peak_mib);
  EXPECT_LT(peak_mib, 64) << "the issue's bound for any transaction size";
}

}  // namespace
}  // namespace faucet::postgres
