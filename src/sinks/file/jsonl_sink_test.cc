#include "sinks/file/jsonl_sink.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include "core/crash_point.h"
#include "sinks/file/test_util.h"
#include "testing/fault_injection_fs.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet {
namespace {

using testing::ConfigBlock;
using testing::ItemsPage;
using testing::ReadAll;
using testing::RecordingFileSystem;
using testing::TempDir;
using testing::WriteAll;

constexpr char kOld[] = "{\"old\":true}\n";

std::string Lines(int first, int n) {
  std::string s;
  for (int id = first; id < first + n; ++id) {
    s += "{\"id\":" + std::to_string(id) + ",\"name\":\"n" + std::to_string(id) + "\"}\n";
  }
  return s;
}

// Opens a sink on `path`, writes ids [1, 1 + rows) in one page and flushes.
void RunOnce(const std::string& path, bool append, bool resuming, int rows = 2) {
  JsonlSink sink({path, append});
  ASSERT_OK(sink.Open(resuming));
  ASSERT_OK(sink.Write(ItemsPage(1, rows)));
  ASSERT_OK(sink.Flush());
}

TEST(JsonlSink, FreshRunWithoutAppendTruncates) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  WriteAll(path, kOld);
  RunOnce(path, /*append=*/false, /*resuming=*/false);
  EXPECT_EQ(ReadAll(path), Lines(1, 2));
}

TEST(JsonlSink, ResumingRunNeverTruncates) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  WriteAll(path, kOld);
  RunOnce(path, /*append=*/false, /*resuming=*/true);
  EXPECT_EQ(ReadAll(path), kOld + Lines(1, 2));
}

TEST(JsonlSink, AppendKeepsExistingLines) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  WriteAll(path, kOld);
  RunOnce(path, /*append=*/true, /*resuming=*/false);
  EXPECT_EQ(ReadAll(path), kOld + Lines(1, 2));
}

TEST(JsonlSink, OpenCreatesParentDirectories) {
  std::string path = TempDir("file_sink") + "/a/b/out.jsonl";
  RunOnce(path, /*append=*/false, /*resuming=*/false);
  EXPECT_EQ(ReadAll(path), Lines(1, 2));
}

TEST(JsonlSink, WriteDoesNotSyncAndFlushDoes) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  RecordingFileSystem fs;
  JsonlSink sink({path, false}, fs);
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(ItemsPage(1, 3)));
  ASSERT_OK(sink.Write(ItemsPage(4, 3)));
  EXPECT_EQ(fs.syncs, 0);
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(fs.syncs, 1);
  EXPECT_EQ(ReadAll(path), Lines(1, 6));
}

TEST(JsonlSink, OnlyFlushedLinesSurviveAPowerCut) {
  testing::FaultInjectionFileSystem fs;
  std::string path = fs.root() + "/out/changes.jsonl";
  {
    JsonlSink sink({path, false}, fs);
    ASSERT_OK(sink.Open(false));
    ASSERT_OK(sink.Write(ItemsPage(1, 2)));
    ASSERT_OK(sink.Flush());
    ASSERT_OK(sink.Write(ItemsPage(3, 2)));
  }
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_EQ(ReadAll(path), Lines(1, 2));

  JsonlSink resumed({path, false}, fs);
  ASSERT_OK(resumed.Open(/*resuming=*/true));
  ASSERT_OK(resumed.Write(ItemsPage(3, 2)));
  ASSERT_OK(resumed.Flush());
  EXPECT_EQ(ReadAll(path), Lines(1, 4));
}

TEST(JsonlSink, FirstFlushOfARunSyncsTheDirectoryOnce) {
  std::string dir = TempDir("file_sink");
  WriteAll(dir + "/out.jsonl", kOld);  // its entry may never have been synced
  RecordingFileSystem fs;
  JsonlSink sink({dir + "/out.jsonl", true}, fs);
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(ItemsPage(1, 1)));
  ASSERT_OK(sink.Flush());
  ASSERT_OK(sink.Write(ItemsPage(2, 1)));
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(fs.synced_dirs, std::vector<std::string>{dir});
}

TEST(JsonlSink, BigPagesReachTheFileInBoundedChunks) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  RecordingFileSystem fs;
  JsonlSink sink({path, false}, fs);
  ASSERT_OK(sink.Open(false));
  const int rows = 200000;  // about 6 MiB of lines
  ASSERT_OK(sink.Write(ItemsPage(1, rows)));
  EXPECT_GT(ReadAll(path).size(), 4u << 20);  // spilled before any Flush
  EXPECT_LE(fs.largest_append, BufferedFile::kSpillBytes + 100);
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(ReadAll(path), Lines(1, rows));
}

TEST(JsonlSink, EmptyPageWritesNothing) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  JsonlSink sink({path, false});
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(Page{}));
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(ReadAll(path), "");
}

TEST(JsonlSink, ResumingRunCutsOffATornLastLine) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  WriteAll(path, std::string(kOld) + "{\"id\":9,\"na");
  RunOnce(path, /*append=*/false, /*resuming=*/true, /*rows=*/1);
  EXPECT_EQ(ReadAll(path), kOld + Lines(1, 1));
}

TEST(JsonlSink, ResumingRunCutsOffATornLineLongerThanOneReadAndAWholeTornFile) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  const std::string torn = "{\"id\":9,\"name\":\"" + std::string(200000, 'x');
  WriteAll(path, kOld + torn);
  RunOnce(path, /*append=*/true, /*resuming=*/true, /*rows=*/1);
  EXPECT_EQ(ReadAll(path), kOld + Lines(1, 1));

  WriteAll(path, torn);  // the first line of the file was torn
  RunOnce(path, /*append=*/false, /*resuming=*/true, /*rows=*/1);
  EXPECT_EQ(ReadAll(path), Lines(1, 1));
}

TEST(JsonlSink, AppendingRunEndsTheUsersLastLineDurablyAndAResumeKeepsIt) {
  testing::FaultInjectionFileSystem fs;
  const std::string path = fs.root() + "/changes.jsonl";
  {
    Result<std::unique_ptr<WritableFile>> user = fs.OpenForAppend(path, true);
    ASSERT_OK(user.status());
    ASSERT_OK((*user)->Append("a line of the user's"));
    ASSERT_OK((*user)->Sync());
    ASSERT_OK(fs.SyncDir(fs.root()));
  }
  {
    JsonlSink sink({path, /*append=*/true}, fs);
    ASSERT_OK(sink.Open(/*resuming=*/false));
    ASSERT_OK(sink.Write(ItemsPage(1, 2)));  // never flushed: a power cut takes it
  }
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_EQ(ReadAll(path), "a line of the user's\n");

  JsonlSink resumed({path, true}, fs);
  ASSERT_OK(resumed.Open(/*resuming=*/true));
  ASSERT_OK(resumed.Write(ItemsPage(1, 2)));
  ASSERT_OK(resumed.Flush());
  EXPECT_EQ(ReadAll(path), "a line of the user's\n" + Lines(1, 2));
}

TEST(JsonlSink, WriteErrorsNameThePath) {
  std::string path = TempDir("file_sink") + "/out.jsonl";
  RecordingFileSystem fs;
  JsonlSink sink({path, false}, fs);
  ASSERT_OK(sink.Open(false));
  fs.fail_appends = true;
  // A small page may wait in the buffer: the failed append surfaces at the latest at Flush.
  Status st = sink.Write(ItemsPage(1, 4));
  if (st.ok()) st = sink.Flush();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
}

TEST(JsonlSink, OpenErrorsNameThePath) {
  std::string dir = TempDir("file_sink");
  WriteAll(dir + "/file", "x");
  JsonlSink sink({dir + "/file/out.jsonl", false});
  Status st = sink.Open(false);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find(dir + "/file"), std::string::npos) << st.message();
}

TEST(JsonlSinkDeathTest, MidPageCrashLeavesTheFirstHalfOfThePageInTheFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The child re-runs this body in a new process; it must write where the parent will look.
  constexpr char kDirVar[] = "FAUCET_TEST_MID_PAGE_DIR";
  if (std::getenv(kDirVar) == nullptr) setenv(kDirVar, TempDir("file_sink").c_str(), 1);
  std::string path = std::string(std::getenv(kDirVar)) + "/out.jsonl";
  EXPECT_EXIT(
      {
        setenv("FAUCET_CRASH_AT", "sink.jsonl.mid_page:2", 1);
        JsonlSink sink({path, false});
        if (!sink.Open(false).ok()) std::exit(1);
        if (!sink.Write(ItemsPage(1, 4)).ok()) std::exit(1);
        if (!sink.Write(ItemsPage(5, 5)).ok()) std::exit(1);
        std::exit(0);
      },
      ::testing::ExitedWithCode(kCrashExitCode), "sink.jsonl.mid_page");
  EXPECT_EQ(ReadAll(path), Lines(1, 4) + Lines(5, 3));
}

TEST(JsonlSinkOptions, ReadsEveryKey) {
  config::Block cfg = ConfigBlock("{path: out.jsonl, append: true, pretty: false, batch_size: 5}");
  Result<JsonlSinkOptions> o = JsonlSinkOptions::FromConfig(cfg);
  ASSERT_OK(o);
  EXPECT_EQ(o->path, "out.jsonl");
  EXPECT_TRUE(o->append);
  EXPECT_TRUE(cfg.UnreadKeys().empty());
}

TEST(JsonlSinkOptions, AppendDefaultsToFalse) {
  Result<JsonlSinkOptions> o = JsonlSinkOptions::FromConfig(ConfigBlock("{path: out.jsonl}"));
  ASSERT_OK(o);
  EXPECT_FALSE(o->append);
}

TEST(JsonlSinkOptions, ModeAppendIsAppend) {
  config::Block cfg = ConfigBlock("{path: out.jsonl, mode: append}");
  Result<JsonlSinkOptions> o = JsonlSinkOptions::FromConfig(cfg);
  ASSERT_OK(o);
  EXPECT_TRUE(o->append);
  EXPECT_TRUE(cfg.UnreadKeys().empty());
  o = JsonlSinkOptions::FromConfig(ConfigBlock("{path: out.jsonl, mode: overwrite}"));
  ASSERT_OK(o);
  EXPECT_FALSE(o->append);
}

void ExpectErrorAt(const std::string& yaml, const std::string& key_path) {
  Result<std::unique_ptr<Sink>> sink = MakeJsonlSink(ConfigBlock(yaml));
  ASSERT_FALSE(sink.ok()) << yaml;
  EXPECT_EQ(sink.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sink.status().message().find("pipe.yaml:1:"), std::string::npos)
      << sink.status().message();
  EXPECT_NE(sink.status().message().find(key_path), std::string::npos) << sink.status().message();
}

TEST(MakeJsonlSink, ConfigErrorsNameTheKey) {
  ExpectErrorAt("{append: true}", "sink.config.path");
  ExpectErrorAt("{path: out.jsonl, append: maybe}", "sink.config.append");
  ExpectErrorAt("{path: out.jsonl, mode: sideways}", "sink.config.mode");
  ExpectErrorAt("{path: out.jsonl, mode: overwrite, append: true}", "sink.config.mode");
  ExpectErrorAt("{path: out.jsonl, pretty: true}", "sink.config.pretty");
  ExpectErrorAt("{path: out.jsonl, batch_size: 0}", "sink.config.batch_size");
}

TEST(MakeJsonlSink, DoesNoIo) {
  std::string path = TempDir("file_sink") + "/never/out.jsonl";
  Result<std::unique_ptr<Sink>> sink = MakeJsonlSink(ConfigBlock("{path: '" + path + "'}"));
  ASSERT_OK(sink);
  EXPECT_FALSE(PosixFileSystem().Exists(path));
}

// Changes of public.items inserted with ids [first, first + n), committed at `lsn` (0: not yet).
Page Inserts(int first, int n, uint64_t lsn) {
  Page page = ItemsPage(first, n);
  for (Change& c : page.changes) {
    c.op = ChangeOp::kInsert;
    c.commit_position = lsn;
    c.commit_time_us = lsn == 0 ? 0 : 1700000000123456;
  }
  return page;
}

Page Staged(StagedStep step, Page page = {}) {
  page.staged = step;
  return page;
}

TEST(JsonlSink, AStagedTransactionAppearsOnlyAtItsCommitAsWriteWouldHaveWrittenIt) {
  const std::string dir = TempDir("file_sink");
  const uint64_t lsn = 0x16B3748;
  const int64_t time = 1700000000123456;
  // 30,000 rows: several MiB, so the scratch file is used and read back.
  JsonlSink sink({dir + "/out.jsonl", false});
  EXPECT_TRUE(sink.Capabilities().stages);
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Write(Inserts(1, 2, 0x100)));
  for (int first = 3; first < 30003; first += 1000) {
    ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kChanges, 7, 7}, Inserts(first, 1000, 0))));
    // Another transaction's changes, interleaved, and one of its subtransactions rolled back.
    ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kChanges, 8, (first / 1000) % 2 == 0 ? 8u : 9u},
                                Inserts(100000 + first, 10, 0))));
  }
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kAbort, 8, 9})));
  ASSERT_OK(sink.Flush());
  const std::string before_commit = ReadAll(dir + "/out.jsonl");
  EXPECT_EQ(std::count(before_commit.begin(), before_commit.end(), '\n'), 2)
      << "only the written page's lines are in the file before the commit";

  Page commit = Staged({StagedStep::Kind::kCommit, 7, 7, lsn, time});
  commit.bookmark = Bookmark{};
  ASSERT_OK(sink.Stage(commit));
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kCommit, 8, 8, lsn + 1, time})));
  ASSERT_OK(sink.Flush());

  JsonlSink expected_sink({dir + "/expected.jsonl", false});
  ASSERT_OK(expected_sink.Open(false));
  ASSERT_OK(expected_sink.Write(Inserts(1, 2, 0x100)));
  ASSERT_OK(expected_sink.Write(Inserts(3, 30000, lsn)));
  for (int first = 3; first < 30003; first += 1000) {
    if ((first / 1000) % 2 == 0) {
      ASSERT_OK(expected_sink.Write(Inserts(100000 + first, 10, lsn + 1)));
    }
  }
  ASSERT_OK(expected_sink.Flush());
  EXPECT_EQ(ReadAll(dir + "/out.jsonl"), ReadAll(dir + "/expected.jsonl"));
}

TEST(JsonlSink, AnOutputThatFailsDuringACommitFailsTheCommit) {
  // The commit of a transaction staged in a scratch file reads it back on a second thread while
  // the sink writes: a failed write must end both and report it, not hang or drop it silently.
  testing::FaultInjectionFileSystem fs;
  JsonlSink sink({fs.root() + "/out.jsonl", false}, fs);
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kChanges, 7, 7}, Inserts(1, 40000, 0))));
  fs.FailAfter(2);  // the first chunk or two reach the file, then the disk "dies"
  Status committed = sink.Stage(Staged({StagedStep::Kind::kCommit, 7, 7, 0x200, 0}));
  EXPECT_EQ(committed.code(), StatusCode::kUnavailable) << committed.ToString();
}

TEST(JsonlSink, ARolledBackOrUnfinishedStagedTransactionLeavesNothing) {
  const std::string dir = TempDir("file_sink");
  JsonlSink sink({dir + "/out.jsonl", false});
  ASSERT_OK(sink.Open(false));
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kChanges, 7, 7}, Inserts(1, 20000, 0))));
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kAbort, 7, 7})));
  // Committing a transaction that was rolled back (or never staged) writes nothing.
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kCommit, 7, 7, 0x200, 0})));
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kChanges, 9, 9}, Inserts(1, 5, 0))));
  // A new run (Open) forgets what an earlier one staged: the source sends it again whole.
  ASSERT_OK(sink.Open(true));
  ASSERT_OK(sink.Stage(Staged({StagedStep::Kind::kCommit, 9, 9, 0x300, 0})));
  ASSERT_OK(sink.Flush());
  EXPECT_EQ(ReadAll(dir + "/out.jsonl"), "");
  // No scratch file is left beside the output.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

}  // namespace
}  // namespace faucet
