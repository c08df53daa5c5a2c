#include "core/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "core/dlq.h"
#include "core/json_render.h"
#include "testing/fakes.h"
#include "testing/status_matchers.h"

namespace faucet {
namespace {

using testing::FakeSink;
using testing::FakeSource;
using testing::FakeStateStore;
using testing::MakePage;

struct Harness {
  FakeSink sink;
  FakeStateStore state;
  PipelineOptions options;
  Harness() {
    options.state_key = "p::row-0";
    state.call_log = &sink.calls;
  }
  Result<PipelineStats> Run(FakeSource& source) {
    Pipeline pipeline(source, {}, sink, state, options);
    return pipeline.Run();
  }
};

TEST(Pipeline, PersistsBookmarkOnlyAfterSinkFlush) {
  Harness h;
  FakeSource source({MakePage(2, Json{{"n", 1}}), MakePage(3, Json{{"n", 2}})});
  ASSERT_OK(h.Run(source));
  std::vector<std::string> expected = {"write:2", "flush", "put",  "write:3",
                                       "flush",   "put",   "flush"};
  EXPECT_EQ(h.sink.calls, expected);
  EXPECT_EQ(h.state.values["p::row-0"], (Json{{"n", 2}}));
}

// A source that records AllowStaging, and a sink that stages and logs its steps.
class StagingSource : public FakeSource {
 public:
  using FakeSource::FakeSource;
  void AllowStaging() override { allowed = true; }
  bool allowed = false;
};

class StagingSink : public FakeSink {
 public:
  SinkCapabilities Capabilities() const override {
    SinkCapabilities caps;
    caps.stages = true;
    return caps;
  }
  Status Stage(const Page& page) override {
    calls.push_back("stage:" + std::to_string(static_cast<int>(page.staged->kind)) + ":" +
                    std::to_string(page.changes.size()));
    return Status::Ok();
  }
};

class NoOpTransform : public Transform {
 public:
  Status Apply(Page& page) override {
    (void)page;
    return Status::Ok();
  }
};

TEST(Pipeline, StagedStepsGoToStageAndOnlyTheCommitIsCheckpointed) {
  Page changes = MakePage(3, std::nullopt);
  changes.staged = StagedStep{StagedStep::Kind::kChanges, 7, 7, 0, 0};
  Page commit = MakePage(0, Json{{"n", 1}});
  commit.staged = StagedStep{StagedStep::Kind::kCommit, 7, 7, 0x100, 0};
  StagingSource source({changes, commit});
  StagingSink sink;
  FakeStateStore state;
  state.call_log = &sink.calls;
  PipelineOptions options;
  options.state_key = "p::row-0";
  ASSERT_OK(Pipeline(source, {}, sink, state, options).Run());
  EXPECT_TRUE(source.allowed);
  std::vector<std::string> expected = {"stage:0:3", "stage:2:0", "flush", "put", "flush"};
  EXPECT_EQ(sink.calls, expected);
}

TEST(Pipeline, OnlyAPlainPipelineLetsItsSourceStage) {
  NoOpTransform transform;
  FakeSink dlq;
  for (int variant = 0; variant < 4; ++variant) {
    StagingSource source(std::vector<Page>{});
    StagingSink sink;
    FakeStateStore state;
    PipelineOptions options;
    options.state_key = "p::row-0";
    std::vector<Transform*> transforms;
    if (variant == 0) transforms.push_back(&transform);
    if (variant == 1) options.dlq = DlqOptions{&dlq};
    if (variant == 2) options.delivery = Delivery::kAtomicWatermark;
    if (variant == 3) options.bulk_load = true;
    ASSERT_OK(Pipeline(source, transforms, sink, state, options).Run());
    EXPECT_FALSE(source.allowed) << "variant " << variant;
  }
  StagingSource source(std::vector<Page>{});
  FakeSink not_staging;
  FakeStateStore state;
  PipelineOptions options;
  options.state_key = "p::row-0";
  ASSERT_OK(Pipeline(source, {}, not_staging, state, options).Run());
  EXPECT_FALSE(source.allowed) << "a sink that does not stage";
}

// A one-shot signal between the source and sink threads of a test.
class Latch {
 public:
  void Open() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    open_ = true;
    cv_.NotifyAll();
  }
  void Wait() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (!open_) cv_.Wait(mu_);
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool open_ GUARDED_BY(mu_) = false;
};

// A sink behind its source: the source hands out its first page, then waits until the sink is
// writing it; the sink's first write returns only once the source has queued every other page.
// So the first page is written alone and the rest wait in the queue together.
class BacklogSource : public FakeSource {
 public:
  BacklogSource(std::vector<Page> pages, Latch& writing, Latch& queued)
      : FakeSource(std::move(pages)), writing_(writing), queued_(queued) {}
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override {
    if (calls_++ == 1) writing_.Wait();
    Result<SourceEvent> event = FakeSource::Next(wait);
    if (event.ok() && event->kind == SourceEvent::Kind::kEnd) queued_.Open();
    return event;
  }

 private:
  Latch& writing_;
  Latch& queued_;
  int calls_ = 0;
};

class BacklogSink : public FakeSink {
 public:
  BacklogSink(Latch& writing, Latch& queued) : writing_(writing), queued_(queued) {}
  Status Write(const Page& page) override {
    Hold();
    return FakeSink::Write(page);
  }
  Status WriteIdempotent(const Page& page, const std::string& scope,
                         const std::string& token) override {
    Hold();
    return FakeSink::WriteIdempotent(page, scope, token);
  }
  Status WriteIsolating(const Page& page, std::vector<RejectedRow>* rejected) override {
    Hold();
    return FakeSink::WriteIsolating(page, rejected);
  }

 private:
  void Hold() {
    if (std::exchange(first_, false)) {
      writing_.Open();
      queued_.Wait();
    }
  }
  Latch& writing_;
  Latch& queued_;
  bool first_ = true;
};

// Runs `pages` through a pipeline whose sink is behind its source (above); the sink's calls.
std::vector<std::string> RunBehind(std::vector<Page> pages, PipelineOptions options,
                                   FakeStateStore& state, std::vector<Bookmark>* acked = nullptr) {
  Latch writing, queued;
  BacklogSource source(std::move(pages), writing, queued);
  BacklogSink sink(writing, queued);
  FakeSink dlq;
  if (options.dlq) options.dlq->sink = &dlq;
  options.state_key = "p::row-0";
  state.call_log = &sink.calls;
  Status run = Pipeline(source, {}, sink, state, options).Run().status();
  EXPECT_OK(run);
  if (acked != nullptr) *acked = source.Acknowledged();
  return sink.calls;
}

PipelineOptions Grouping(size_t bytes = kGroupCommitBytes) {
  PipelineOptions options;
  options.group_bytes = bytes;
  return options;
}

TEST(Pipeline, GroupCommitWritesThePagesWaitingBehindABusySinkAsOne) {
  FakeStateStore state;
  std::vector<Bookmark> acked;
  std::vector<std::string> calls =
      RunBehind({MakePage(1, Json{{"n", 1}}), MakePage(2, Json{{"n", 2}}),
                 MakePage(3, Json{{"n", 3}}), MakePage(4, Json{{"n", 4}})},
                Grouping(), state, &acked);
  // One write, flush and checkpoint for the three waiting pages, at the last one's bookmark.
  std::vector<std::string> expected = {"write:1", "flush", "put",  "write:9",
                                       "flush",   "put",   "flush"};
  EXPECT_EQ(calls, expected);
  EXPECT_EQ(state.values["p::row-0"], (Json{{"n", 4}}));
  ASSERT_EQ(acked.size(), 2u);
  EXPECT_EQ(acked[1].value, (Json{{"n", 4}}));
}

TEST(Pipeline, GroupCommitStopsAtAChunkAndWithinItsBudget) {
  FakeStateStore state;
  // A chunk of a large transaction (no bookmark) ends the group and is written on its own;
  // the page after it is all that waits then.
  std::vector<std::string> calls = RunBehind(
      {MakePage(1, Json{{"n", 1}}), MakePage(2, Json{{"n", 2}}), MakePage(3, Json{{"n", 3}}),
       MakePage(4, std::nullopt), MakePage(5, Json{{"n", 5}})},
      Grouping(), state);
  std::vector<std::string> expected = {"write:1", "flush",   "put",   "write:5", "flush", "put",
                                       "write:4", "write:5", "flush", "put",     "flush"};
  EXPECT_EQ(calls, expected);

  // A budget of two pages of 2 and 3 rows: the third waiting page goes on its own.
  PipelineOptions options =
      Grouping(MakePage(2, Json{}).ApproxBytes() + MakePage(3, Json{}).ApproxBytes());
  calls = RunBehind({MakePage(1, Json{{"n", 1}}), MakePage(2, Json{{"n", 2}}),
                     MakePage(3, Json{{"n", 3}}), MakePage(4, Json{{"n", 4}})},
                    options, state);
  expected = {"write:1", "flush",   "put",   "write:5", "flush",
              "put",     "write:4", "flush", "put",     "flush"};
  EXPECT_EQ(calls, expected);
  EXPECT_EQ(state.values["p::row-0"], (Json{{"n", 4}}));
}

TEST(Pipeline, NoGroupCommitUnderTheWatermarkADlqOrABulkLoadOrByDefault) {
  auto pages = [] {
    return std::vector<Page>{MakePage(1, Json{{"n", 1}}), MakePage(2, Json{{"n", 2}}),
                             MakePage(3, Json{{"n", 3}})};
  };
  auto writes = [](const std::vector<std::string>& calls) {
    return std::count_if(calls.begin(), calls.end(),
                         [](const std::string& c) { return c.rfind("write", 0) == 0; });
  };
  FakeStateStore state;
  PipelineOptions watermark = Grouping();
  watermark.delivery = Delivery::kAtomicWatermark;
  EXPECT_EQ(writes(RunBehind(pages(), watermark, state)), 3) << "a token per page";
  PipelineOptions dlq = Grouping();
  dlq.dlq = DlqOptions{nullptr};
  EXPECT_EQ(writes(RunBehind(pages(), dlq, state)), 3) << "failure budgets per page";
  PipelineOptions bulk = Grouping();
  bulk.bulk_load = true;
  EXPECT_EQ(writes(RunBehind(pages(), bulk, state)), 3) << "a bulk load";
  EXPECT_EQ(writes(RunBehind(pages(), PipelineOptions{}, state)), 3) << "off by default";
}

TEST(Pipeline, AcknowledgesOnlyPersistedBookmarks) {
  Harness h;
  FakeSource source({MakePage(1, Json{{"n", 1}}), MakePage(1, Json{{"n", 2}})});
  ASSERT_OK(h.Run(source));
  ASSERT_EQ(source.Acknowledged().size(), 2u);
  EXPECT_EQ(source.Acknowledged()[1].value, (Json{{"n", 2}}));
}

TEST(Pipeline, FailedWritePersistsNothing) {
  Harness h;
  h.sink.fail_write_at = 1;
  FakeSource source({MakePage(1, Json{{"n", 1}}), MakePage(1, Json{{"n", 2}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.state.values["p::row-0"], (Json{{"n", 1}}));
  EXPECT_EQ(source.Acknowledged().size(), 1u);
}

TEST(Pipeline, FailedFlushPersistsNothingAndAcknowledgesNothing) {
  Harness h;
  h.sink.fail_flush = true;
  FakeSource source({MakePage(1, Json{{"n", 1}})});
  EXPECT_FALSE(h.Run(source).ok());
  EXPECT_TRUE(h.state.values.empty());
  EXPECT_TRUE(source.Acknowledged().empty());
}

TEST(Pipeline, FailedPutIsNotAcknowledged) {
  Harness h;
  h.state.fail_put = true;
  FakeSource source({MakePage(1, Json{{"n", 1}})});
  EXPECT_FALSE(h.Run(source).ok());
  EXPECT_TRUE(source.Acknowledged().empty());
}

TEST(Pipeline, SourceErrorStillFlushesWhatWasWritten) {
  Harness h;
  FakeSource source({MakePage(1, Json{{"n", 1}}), MakePage(4, std::nullopt)});
  source.final_error = Unavailable("connection reset");
  Result<PipelineStats> r = h.Run(source);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "connection reset");
  EXPECT_EQ(h.sink.rows_flushed, 5u);
  // The bookmark-less chunk is flushed but its position is not claimed.
  EXPECT_EQ(h.state.values["p::row-0"], (Json{{"n", 1}}));
}

TEST(Pipeline, EmptyPageWithBookmarkIsCheckpointed) {
  Harness h;
  FakeSource source({MakePage(0, Json{{"n", 7}})});
  ASSERT_OK(h.Run(source));
  EXPECT_EQ(h.state.values["p::row-0"], (Json{{"n", 7}}));
}

TEST(Pipeline, ChunkWithoutBookmarkIsWrittenButNotCheckpointed) {
  Harness h;
  FakeSource source({MakePage(2, std::nullopt), MakePage(2, Json{{"n", 1}})});
  ASSERT_OK(h.Run(source));
  std::vector<std::string> expected = {"write:2", "write:2", "flush", "put", "flush"};
  EXPECT_EQ(h.sink.calls, expected);
}

TEST(Pipeline, ResumesFromStoredBookmark) {
  Harness h;
  h.state.values["p::row-0"] = Json{{"n", 41}};
  FakeSource source({});
  ASSERT_OK(h.Run(source));
  ASSERT_TRUE(source.opened_at.has_value());
  EXPECT_EQ(source.opened_at->value, (Json{{"n", 41}}));
  EXPECT_TRUE(h.sink.opened_resuming);
}

TEST(Pipeline, FreshRunOpensSinkWithoutResuming) {
  Harness h;
  FakeSource source({});
  ASSERT_OK(h.Run(source));
  EXPECT_FALSE(source.opened_at.has_value());
  EXPECT_FALSE(h.sink.opened_resuming);
}

TEST(Pipeline, StopRequestEndsAtPageBoundaryAfterFlush) {
  Harness h;
  std::atomic<bool> stop{false};
  h.options.stop = &stop;
  // The request arrives while the first page is being completed: it is persisted, the second
  // page is not written, and the run ends with a flush.
  h.options.on_page = [&](const Page&, const PipelineStats&) { stop = true; };
  FakeSource source({MakePage(1, Json{{"n", 1}}), MakePage(1, Json{{"n", 2}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_OK(r);
  EXPECT_TRUE(r->stopped);
  EXPECT_EQ(h.sink.calls, (std::vector<std::string>{"write:1", "flush", "put", "flush"}));
  EXPECT_EQ(h.state.values["p::row-0"], (Json{{"n", 1}}));
}

TEST(Pipeline, AtomicWatermarkCommitsTokenWithRowsAndWrapsState) {
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  FakeSource source({MakePage(1, Json{{"n", 1}}), MakePage(1, Json{{"n", 2}})});
  ASSERT_OK(h.Run(source));
  EXPECT_EQ(h.sink.tokens["p::row-0"], "00000000000000000002#{\"n\":2}");
  EXPECT_EQ(h.state.values["p::row-0"],
            (Json{{"__faucet_eo", 1}, {"bookmark", {{"n", 2}}}, {"seq", 2}}));
}

// A source whose parts advance apart (Kafka partitions) keeps a token per part, and reads them
// back itself through the reader the pipeline gives it.
TEST(Pipeline, AtomicWatermarkKeepsATokenPerPartOfTheSource) {
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  std::vector<Page> pages = {MakePage(1, Json{{"n", 1}}), MakePage(1, Json{{"n", 2}}),
                             MakePage(1, Json{{"n", 3}})};
  pages[0].token_scope = ":t:0";
  pages[1].token_scope = ":t:1";
  pages[2].token_scope = ":t:0";
  h.sink.tokens["p::row-0:t:9"] = FormatCommitToken(7, Bookmark{Json{{"n", 9}}});
  FakeSource source(std::move(pages));
  source.read_token_of = ":t:9";
  ASSERT_OK(h.Run(source));
  EXPECT_EQ(h.sink.tokens["p::row-0:t:0"], "00000000000000000003#{\"n\":3}");
  EXPECT_EQ(h.sink.tokens["p::row-0:t:1"], "00000000000000000002#{\"n\":2}");
  EXPECT_EQ(h.sink.tokens.count("p::row-0"), 0u);
  EXPECT_EQ(source.token_read, "00000000000000000007#{\"n\":9}");
}

TEST(Pipeline, AtLeastOnceGivesTheSourceNoTokenReader) {
  Harness h;
  FakeSource source({MakePage(1, Json{{"n", 1}})});
  ASSERT_OK(h.Run(source));
  EXPECT_FALSE(source.token_reader);
}

TEST(Pipeline, AtomicWatermarkReanchorsAtSinkTokenAheadOfState) {
  // Crash between the sink commit of seq 5 and the persist: state still says seq 4.
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  h.state.values["p::row-0"] = Json{{"__faucet_eo", 1}, {"bookmark", {{"n", 4}}}, {"seq", 4}};
  h.sink.tokens["p::row-0"] = FormatCommitToken(5, Bookmark{Json{{"n", 5}}});
  FakeSource source({MakePage(1, Json{{"n", 6}})});
  ASSERT_OK(h.Run(source));
  EXPECT_EQ(source.opened_at->value, (Json{{"n", 5}}));
  EXPECT_EQ(h.sink.tokens["p::row-0"], "00000000000000000006#{\"n\":6}");
}

TEST(Pipeline, AReanchoredPositionIsPersistedBeforeTheSourceOpensThere) {
  // The source may acknowledge where it opens: the state must not lag behind that, even when
  // the run then fails before any page.
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  h.state.values["p::row-0"] = Json{{"__faucet_eo", 1}, {"bookmark", {{"n", 4}}}, {"seq", 4}};
  h.sink.tokens["p::row-0"] = FormatCommitToken(5, Bookmark{Json{{"n", 5}}});
  FakeSource source({});
  source.final_error = Unavailable("source gone");
  EXPECT_EQ(h.Run(source).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(h.state.values["p::row-0"],
            (Json{{"__faucet_eo", 1}, {"bookmark", {{"n", 5}}}, {"seq", 5}}));
}

TEST(Pipeline, AtomicWatermarkSkipsPagesTheSinkAlreadyCommitted) {
  // A legacy token without a bookmark cannot re-anchor; the pages are replayed and skipped.
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  h.sink.tokens["p::row-0"] = "00000000000000000001";
  FakeSource source({MakePage(1, Json{{"n", 1}}), MakePage(1, Json{{"n", 2}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_OK(r);
  EXPECT_EQ(r->pages_skipped, 1u);
  EXPECT_EQ(h.sink.rows_written, 1u);
}

// A transaction larger than a page: every chunk commits a token counting the changes after
// the last bookmark, so a crash after any chunk replays nothing the sink has.
TEST(Pipeline, AtomicWatermarkChunksCommitTokensThatCountTheirChanges) {
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  FakeSource source({MakePage(3, std::nullopt), MakePage(3, std::nullopt),
                     MakePage(2, Json{{"n", 1}}), MakePage(3, std::nullopt),
                     MakePage(1, Json{{"n", 2}})});
  ASSERT_OK(h.Run(source));
  EXPECT_EQ(h.sink.calls,
            (std::vector<std::string>{"write_idempotent:00000000000000000000#null+3",
                                      "write_idempotent:00000000000000000000#null+6",
                                      "write_idempotent:00000000000000000001#{\"n\":1}", "flush",
                                      "put", "write_idempotent:00000000000000000001#{\"n\":1}+3",
                                      "write_idempotent:00000000000000000002#{\"n\":2}", "flush",
                                      "put", "flush"}));
}

TEST(Pipeline, AtomicWatermarkSkipsTheChangesChunkTokensCountWhereverTheReplayCutsPages) {
  // An earlier run committed 4 changes of the transaction in chunks, then died; the replay
  // cuts the transaction into pages of 3.
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  h.sink.tokens["p::row-0"] = "00000000000000000000#null+4";
  FakeSource source(
      {MakePage(3, std::nullopt), MakePage(3, std::nullopt), MakePage(2, Json{{"n", 1}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_OK(r);
  EXPECT_FALSE(source.opened_at.has_value());
  EXPECT_EQ(r->changes_skipped, 4u);
  EXPECT_EQ(r->pages_skipped, 1u);
  EXPECT_EQ(h.sink.rows_written, 4u);
  EXPECT_EQ(h.sink.calls,
            (std::vector<std::string>{"write_idempotent:00000000000000000000#null+6",
                                      "write_idempotent:00000000000000000001#{\"n\":1}", "flush",
                                      "put", "flush"}));
}

TEST(Pipeline, AtomicWatermarkReanchorsAtAChunkTokenAheadOfState) {
  // The sink committed page 5 and 2 changes after it; the state still says page 4.
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  h.state.values["p::row-0"] = Json{{"__faucet_eo", 1}, {"bookmark", {{"n", 4}}}, {"seq", 4}};
  h.sink.tokens["p::row-0"] = FormatChunkToken(5, Bookmark{Json{{"n", 5}}}, 2);
  FakeSource source({MakePage(5, Json{{"n", 6}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_OK(r);
  EXPECT_EQ(source.opened_at->value, (Json{{"n", 5}}));
  EXPECT_EQ(r->changes_skipped, 2u);
  EXPECT_EQ(h.sink.rows_written, 3u);
  EXPECT_EQ(h.sink.tokens["p::row-0"], "00000000000000000006#{\"n\":6}");
}

TEST(Pipeline, AChunkTokenThatDisagreesWithTheStateIsDataLoss) {
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  h.state.values["p::row-0"] = Json{{"__faucet_eo", 1}, {"bookmark", {{"n", 1}}}, {"seq", 1}};
  h.sink.tokens["p::row-0"] = FormatChunkToken(1, Bookmark{Json{{"n", 9}}}, 2);
  FakeSource source({MakePage(1, Json{{"n", 2}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("p::row-0"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(h.sink.rows_written, 0u);
}

TEST(Pipeline, ACorruptSinkTokenIsDataLossNamingTheStateKey) {
  Harness h;
  h.options.delivery = Delivery::kAtomicWatermark;
  h.sink.tokens["p::row-0"] = "00000000000000000003#{\"n\":";
  FakeSource source({MakePage(1, Json{{"n", 2}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("commit token for 'p::row-0'"), std::string::npos)
      << r.status().ToString();
}

TEST(Pipeline, ABookmarkTheSourceCannotAcknowledgeEndsTheRun) {
  Harness h;
  FakeSource source({MakePage(1, Json{{"n", 1}}), MakePage(1, Json{{"n", 2}})});
  source.acknowledge_error = DataLoss("bookmark {\"n\":1} is not a fake bookmark");
  Result<PipelineStats> r = h.Run(source);
  ASSERT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("state 'p::row-0'"), std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(h.sink.rows_written, 1u);
}

TEST(CommitToken, ChunkTokensRoundTrip) {
  Result<CommitToken> t = ParseCommitToken(FormatChunkToken(7, Bookmark{Json{{"a", "x+1"}}}, 2500));
  ASSERT_OK(t);
  EXPECT_EQ(t->seq, 7u);
  EXPECT_EQ(t->bookmark->value, (Json{{"a", "x+1"}}));
  EXPECT_EQ(t->chunk_changes, 2500u);

  t = ParseCommitToken(FormatChunkToken(0, std::nullopt, 3));
  ASSERT_OK(t);
  EXPECT_FALSE(t->bookmark.has_value());
  EXPECT_EQ(t->chunk_changes, 3u);

  t = ParseCommitToken("00000000000000000001#5+3");  // a bare number as the bookmark
  ASSERT_OK(t);
  EXPECT_EQ(t->bookmark->value, Json(5));
  EXPECT_EQ(t->chunk_changes, 3u);
  t = ParseCommitToken("00000000000000000001#1e+5");
  ASSERT_OK(t);
  EXPECT_EQ(t->bookmark->value, Json(1e5));
  EXPECT_FALSE(t->chunk_changes.has_value());
}

TEST(CommitToken, CorruptTokensAreDataLossNotExceptions) {
  for (const char* bad : {"99999999999999999999#{}", "123456789012345678901", "", "#{}", "-1#{}",
                          "1#{\"a\":", "1#{}+", "1#{}+x", "1#{+2"}) {
    Result<CommitToken> t = ParseCommitToken(bad);
    EXPECT_EQ(t.status().code(), StatusCode::kDataLoss) << bad;
    EXPECT_NE(t.status().message().find(bad), std::string::npos) << t.status().ToString();
  }
  EXPECT_EQ(ParseCommitToken("18446744073709551615")->seq, UINT64_MAX);
}

TEST(CommitToken, RoundTrips) {
  Result<CommitToken> t =
      ParseCommitToken(FormatCommitToken(42, Bookmark{Json{{"last_lsn", "0/16"}}}));
  ASSERT_OK(t);
  EXPECT_EQ(t->seq, 42u);
  EXPECT_EQ(t->bookmark->value, (Json{{"last_lsn", "0/16"}}));
}

TEST(CommitToken, GarbageIsDataLoss) {
  EXPECT_EQ(ParseCommitToken("abc#{}").status().code(), StatusCode::kDataLoss);
}

struct DlqHarness : Harness {
  FakeSink dlq;
  DlqHarness() {
    dlq.prefix = "dlq.";
    dlq.log = &sink.calls;
    DlqOptions o;
    o.sink = &dlq;
    o.pipeline_name = "p";
    o.sink_type = "fake";
    options.dlq = o;
  }
};

TEST(PipelineDlq, RejectedRowsGoToTheDlqWhichIsFlushedBeforeThePersist) {
  DlqHarness h;
  h.sink.reject = {1};
  FakeSource source({MakePage(3, Json{{"n", 1}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_OK(r);
  EXPECT_EQ(r->dead_lettered, 1u);
  // The final flush finds nothing new in the DLQ: no second fsync.
  std::vector<std::string> expected = {"write_isolating:2", "dlq.write:1", "flush",
                                       "dlq.flush",         "put",         "flush"};
  EXPECT_EQ(h.sink.calls, expected);
  EXPECT_EQ(h.state.values["p::row-0"], (Json{{"n", 1}}));
}

// A page whose rows all went to the sink costs the DLQ nothing: no flush (fsync) per page.
TEST(PipelineDlq, AnUntouchedDlqIsNotFlushed) {
  DlqHarness h;
  FakeSource source({MakePage(2, Json{{"n", 1}}), MakePage(2, Json{{"n", 2}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_OK(r);
  std::vector<std::string> expected = {
      "write_isolating:2", "flush", "put", "write_isolating:2", "flush", "put", "flush"};
  EXPECT_EQ(h.sink.calls, expected);
}

TEST(PipelineDlq, PageFailureSendsEveryRowWithDlqAll) {
  DlqHarness h;
  h.sink.fail_isolating = true;
  h.options.dlq->dlq_all_on_batch_error = true;
  FakeSource source({MakePage(3, Json{{"n", 1}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_OK(r);
  EXPECT_EQ(r->dead_lettered, 3u);
}

TEST(PipelineDlq, PageFailurePropagatesByDefault) {
  DlqHarness h;
  h.sink.fail_isolating = true;
  FakeSource source({MakePage(3, Json{{"n", 1}})});
  EXPECT_FALSE(h.Run(source).ok());
  EXPECT_TRUE(h.state.values.empty());
}

TEST(PipelineDlq, BudgetExceededFailsTheRunAfterPersistingWhatWasDone) {
  DlqHarness h;
  h.sink.reject = {0, 1};
  h.options.dlq->max_failures_per_page = 1;
  FakeSource source({MakePage(3, Json{{"n", 1}}), MakePage(3, Json{{"n", 2}})});
  Result<PipelineStats> r = h.Run(source);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("max_failures_per_page"), std::string::npos);
  // The rejected rows are in the DLQ and the page is complete, so its position is kept.
  EXPECT_EQ(h.state.values["p::row-0"], (Json{{"n", 1}}));
}

TEST(PipelineDlq, EnvelopeCarriesErrorAndPayload) {
  DlqOptions o;
  o.pipeline_name = "orders";
  o.sink_type = "postgres";
  Page page = MakePage(1, std::nullopt);
  Change env = MakeDlqEnvelope(page.changes[0], 0, InvalidArgument("bad key"), o);
  std::string line;
  AppendChangeJson(env, line);
  Json j = Json::parse(line);
  EXPECT_EQ(j["error"]["kind"], "invalid argument");
  EXPECT_EQ(j["error"]["message"], "bad key");
  EXPECT_EQ(j["payload"]["op"], "c");
  EXPECT_EQ(j["pipeline"], "orders");
  EXPECT_EQ(j["sink"], "postgres");
  EXPECT_EQ(j["record_index"], 0);
}

}  // namespace
}  // namespace faucet
