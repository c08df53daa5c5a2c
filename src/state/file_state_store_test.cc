#include "state/file_state_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "core/crash_point.h"
#include "testing/fault_injection_fs.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet {
namespace {

const Json kOld = {{"last_lsn", "0/16B3748"}};
const Json kNew = {{"last_lsn", "0/16B9F20"}};

std::vector<std::string> FilesIn(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  return names;
}

void WriteRaw(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Forwards to `base` but skips the fsyncs the store asks for: a store with that bug must be
// caught by the fault-injection harness, which these tests prove.
class SkippingFileSystem : public FileSystem {
 public:
  SkippingFileSystem(FileSystem& base, bool skip_file_sync, bool skip_dir_sync)
      : base_(base), skip_file_sync_(skip_file_sync), skip_dir_sync_(skip_dir_sync) {}

  Result<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path,
                                                      bool truncate) override {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, base_.OpenForAppend(path, truncate));
    if (!skip_file_sync_) return file;
    return std::unique_ptr<WritableFile>(new NoSyncFile(std::move(file)));
  }
  Result<std::string> ReadFile(const std::string& path) override { return base_.ReadFile(path); }
  bool Exists(const std::string& path) override { return base_.Exists(path); }
  Status Rename(const std::string& from, const std::string& to) override {
    return base_.Rename(from, to);
  }
  Status Remove(const std::string& path) override { return base_.Remove(path); }
  Status CreateDirs(const std::string& path) override { return base_.CreateDirs(path); }
  Status SyncDir(const std::string& path) override {
    return skip_dir_sync_ ? Status::Ok() : base_.SyncDir(path);
  }

 private:
  class NoSyncFile : public WritableFile {
   public:
    explicit NoSyncFile(std::unique_ptr<WritableFile> base) : base_(std::move(base)) {}
    Status Append(std::string_view data) override { return base_->Append(data); }
    Status Sync() override { return Status::Ok(); }
    Status Truncate(uint64_t size) override { return base_->Truncate(size); }
    Status Close() override { return base_->Close(); }

   private:
    std::unique_ptr<WritableFile> base_;
  };

  FileSystem& base_;
  const bool skip_file_sync_;
  const bool skip_dir_sync_;
};

class FileStateStoreTest : public ::testing::Test {
 protected:
  std::string dir_ = testing::TempDir("filestate");
  FileStateStore store_{PosixFileSystem(), dir_};
};

TEST_F(FileStateStoreTest, PutValueIsReturnedByGet) {
  ASSERT_OK(store_.Put("orders::row-0", kOld));
  Result<std::optional<Json>> got = store_.Get("orders::row-0");
  ASSERT_OK(got);
  EXPECT_EQ(*got, kOld);
}

TEST_F(FileStateStoreTest, PutReplacesThePreviousValue) {
  ASSERT_OK(store_.Put("orders::row-0", kOld));
  ASSERT_OK(store_.Put("orders::row-0", kNew));
  EXPECT_EQ(*store_.Get("orders::row-0"), kNew);
}

TEST_F(FileStateStoreTest, MissingKeyReadsAsNothing) {
  Result<std::optional<Json>> got = store_.Get("never::written");
  ASSERT_OK(got);
  EXPECT_FALSE(got->has_value());
}

TEST_F(FileStateStoreTest, DeleteRemovesTheValueAndItsFile) {
  ASSERT_OK(store_.Put("orders::row-0", kOld));
  ASSERT_OK(store_.Delete("orders::row-0"));
  EXPECT_FALSE(store_.Get("orders::row-0")->has_value());
  EXPECT_TRUE(FilesIn(dir_).empty());
}

TEST_F(FileStateStoreTest, DeletingAMissingKeyIsOk) { EXPECT_OK(store_.Delete("never::written")); }

TEST_F(FileStateStoreTest, ColonsInTheKeyAreWrittenAsPercent3AInTheFileName) {
  ASSERT_OK(store_.Put("orders::__replication__", kOld));
  std::string path = dir_ + "/orders%3A%3A__replication__.json";
  EXPECT_EQ(store_.PathOf("orders::__replication__"), path);
  EXPECT_EQ(FilesIn(dir_), std::vector<std::string>{"orders%3A%3A__replication__.json"});
  // Plain compact JSON, as the reference writes it.
  EXPECT_EQ(*PosixFileSystem().ReadFile(path), R"({"last_lsn":"0/16B3748"})");
}

TEST_F(FileStateStoreTest, ReadsAFileTheReferenceWrote) {
  WriteRaw(dir_ + "/pipe%3A%3Arow-0.json", "{\"file\": \"binlog.000123\", \"pos\": 4567}\n");
  Json expected = {{"file", "binlog.000123"}, {"pos", 4567}};
  EXPECT_EQ(*store_.Get("pipe::row-0"), expected);
}

TEST_F(FileStateStoreTest, CorruptFileIsDataLossNamingTheFile) {
  std::string path = store_.PathOf("orders::row-0");
  WriteRaw(path, "{\"last_lsn\": \"0/16B");
  Result<std::optional<Json>> got = store_.Get("orders::row-0");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(got.status().message().find(path), std::string::npos) << got.status().message();
}

TEST_F(FileStateStoreTest, EmptyFileIsDataLossNotNothing) {
  WriteRaw(store_.PathOf("orders::row-0"), "");
  EXPECT_EQ(store_.Get("orders::row-0").status().code(), StatusCode::kDataLoss);
}

TEST_F(FileStateStoreTest, PutsLeaveNoTempFiles) {
  for (int i = 0; i < 20; ++i) {
    ASSERT_OK(store_.Put("k" + std::to_string(i % 3), Json{{"n", i}}));
  }
  for (const std::string& name : FilesIn(dir_)) {
    EXPECT_TRUE(name.ends_with(".json")) << name;
  }
  EXPECT_EQ(FilesIn(dir_).size(), 3u);
}

TEST_F(FileStateStoreTest, ConcurrentPutsNeverCorruptTheValue) {
  constexpr int kThreads = 6;
  constexpr int kPuts = 40;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPuts; ++i) {
        if (!store_.Put("shared", Json{{"thread", t}, {"i", i}}).ok()) ++failures;
        // Readers race the writers: they must see a whole old or new value, never a torn one.
        Result<std::optional<Json>> got = store_.Get("shared");
        if (!got.ok() || !got->has_value() || !(**got).contains("thread")) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  Json last = **store_.Get("shared");
  EXPECT_EQ(last["i"], kPuts - 1);
  EXPECT_EQ(FilesIn(dir_), std::vector<std::string>{"shared.json"});
}

TEST_F(FileStateStoreTest, InvalidKeysAreRejectedWithoutTouchingTheDisk) {
  for (const char* key : {"../escape", ".hidden", "a/b", "", "has space"}) {
    EXPECT_EQ(store_.Put(key, kOld).code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(store_.Get(key).status().code(), StatusCode::kInvalidArgument) << key;
    EXPECT_EQ(store_.Delete(key).code(), StatusCode::kInvalidArgument) << key;
  }
  EXPECT_TRUE(FilesIn(dir_).empty());
}

TEST_F(FileStateStoreTest, ValueThatIsNotValidUtf8IsRejected) {
  EXPECT_EQ(store_.Put("k", Json("\xff\xfe")).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(FilesIn(dir_).empty());
}

TEST(FileStateStorePowerCut, CompletedPutSurvives) {
  testing::FaultInjectionFileSystem fs;
  FileStateStore store(fs, fs.root());
  ASSERT_OK(store.Put("orders::row-0", kOld));
  ASSERT_OK(store.Put("orders::row-0", kNew));
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_EQ(*store.Get("orders::row-0"), kNew);
}

TEST(FileStateStorePowerCut, CompletedDeleteSurvives) {
  testing::FaultInjectionFileSystem fs;
  FileStateStore store(fs, fs.root());
  ASSERT_OK(store.Put("orders::row-0", kOld));
  ASSERT_OK(store.Delete("orders::row-0"));
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_FALSE(store.Get("orders::row-0")->has_value());
}

// Cuts the power after each file system operation of a Put in turn (open, append, sync, close,
// rename, sync directory) and checks the key then holds the old value or the new one, whole.
void ExpectPutIsAtomicAcrossPowerCuts(const std::optional<Json>& old_value) {
  bool completed = false;
  for (int ops = 0; !completed; ++ops) {
    ASSERT_LT(ops, 20) << "Put never completed";
    testing::FaultInjectionFileSystem fs;
    FileStateStore store(fs, fs.root());
    if (old_value) {
      ASSERT_OK(store.Put("orders::row-0", *old_value));
    }
    fs.FailAfter(ops);
    completed = store.Put("orders::row-0", kNew).ok();
    ASSERT_OK(fs.DropUnsyncedData());

    Result<std::optional<Json>> got = store.Get("orders::row-0");
    ASSERT_OK(got) << "power cut after " << ops << " ops: " << got.status().ToString();
    if (completed) {
      EXPECT_EQ(*got, kNew) << "a Put that returned ok was lost, cut after " << ops << " ops";
    } else {
      EXPECT_TRUE(*got == old_value || *got == kNew) << "cut after " << ops << " ops";
    }
    // The store keeps working after the reboot, whatever was left behind.
    ASSERT_OK(store.Put("orders::row-0", kOld));
    EXPECT_EQ(*store.Get("orders::row-0"), kOld);
  }
}

TEST(FileStateStorePowerCut, InterruptedPutLeavesTheOldOrTheNewValue) {
  ExpectPutIsAtomicAcrossPowerCuts(kOld);
}

TEST(FileStateStorePowerCut, InterruptedFirstPutLeavesNothingOrTheNewValue) {
  ExpectPutIsAtomicAcrossPowerCuts(std::nullopt);
}

// The harness itself: each rule of its model, checked directly.
std::string ReadOrMissing(FileSystem& fs, const std::string& path) {
  Result<std::string> text = fs.ReadFile(path);
  return text.ok() ? *text : "<missing>";
}

Status WriteFile(FileSystem& fs, const std::string& path, const std::string& data, bool sync) {
  ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, fs.OpenForAppend(path, true));
  RETURN_IF_ERROR(file->Append(data));
  if (sync) RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

TEST(FaultInjectionFileSystem, PowerCutKeepsOnlyTheSyncedPrefixOfAFile) {
  testing::FaultInjectionFileSystem fs;
  std::string path = fs.root() + "/log";
  ASSERT_OK(WriteFile(fs, path, "synced", /*sync=*/true));
  {
    Result<std::unique_ptr<WritableFile>> file = fs.OpenForAppend(path, false);
    ASSERT_OK(file);
    ASSERT_OK((*file)->Append("+unsynced"));
    ASSERT_OK((*file)->Close());
  }
  ASSERT_OK(fs.SyncDir(fs.root()));
  EXPECT_EQ(ReadOrMissing(fs, path), "synced+unsynced");
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_EQ(ReadOrMissing(fs, path), "synced");
}

TEST(FaultInjectionFileSystem, PowerCutRemovesAFileWhoseDirectoryWasNotSynced) {
  testing::FaultInjectionFileSystem fs;
  std::string path = fs.root() + "/new";
  ASSERT_OK(WriteFile(fs, path, "data", /*sync=*/true));
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_FALSE(fs.Exists(path));
}

TEST(FaultInjectionFileSystem, PowerCutUndoesARenameOverAFile) {
  testing::FaultInjectionFileSystem fs;
  std::string target = fs.root() + "/current";
  std::string tmp = fs.root() + "/current.tmp";
  ASSERT_OK(WriteFile(fs, target, "old", /*sync=*/true));
  ASSERT_OK(fs.SyncDir(fs.root()));
  ASSERT_OK(WriteFile(fs, tmp, "new", /*sync=*/true));
  ASSERT_OK(fs.Rename(tmp, target));
  EXPECT_EQ(ReadOrMissing(fs, target), "new");
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_EQ(ReadOrMissing(fs, target), "old");
  EXPECT_FALSE(fs.Exists(tmp));
}

TEST(FaultInjectionFileSystem, PowerCutUndoesARemoval) {
  testing::FaultInjectionFileSystem fs;
  std::string path = fs.root() + "/kept";
  ASSERT_OK(WriteFile(fs, path, "data", /*sync=*/true));
  ASSERT_OK(fs.SyncDir(fs.root()));
  ASSERT_OK(fs.Remove(path));
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_EQ(ReadOrMissing(fs, path), "data");
}

TEST(FaultInjectionFileSystem, SyncedRenameAndRemovalSurvive) {
  testing::FaultInjectionFileSystem fs;
  std::string a = fs.root() + "/a";
  std::string b = fs.root() + "/b";
  ASSERT_OK(WriteFile(fs, a, "a", /*sync=*/true));
  ASSERT_OK(WriteFile(fs, b, "b", /*sync=*/true));
  ASSERT_OK(fs.SyncDir(fs.root()));
  ASSERT_OK(fs.Remove(b));
  ASSERT_OK(fs.Rename(a, b));
  ASSERT_OK(fs.SyncDir(fs.root()));
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_FALSE(fs.Exists(a));
  EXPECT_EQ(ReadOrMissing(fs, b), "a");
}

TEST(FaultInjectionFileSystem, FailAfterStopsEveryLaterOperationUntilThePowerCut) {
  testing::FaultInjectionFileSystem fs;
  std::string path = fs.root() + "/f";
  fs.FailAfter(1);
  Result<std::unique_ptr<WritableFile>> file = fs.OpenForAppend(path, true);
  ASSERT_OK(file);
  EXPECT_EQ((*file)->Append("lost").code(), StatusCode::kUnavailable);
  EXPECT_EQ(fs.SyncDir(fs.root()).code(), StatusCode::kUnavailable);
  EXPECT_EQ(ReadOrMissing(fs, path), "");
  ASSERT_OK(fs.DropUnsyncedData());
  EXPECT_OK(WriteFile(fs, path, "after", /*sync=*/true));
}

// Negative controls: the harness must catch a store that skips either fsync, or the tests above
// would prove nothing.
TEST(FileStateStorePowerCut, HarnessDetectsAPutThatSkipsTheFileSync) {
  testing::FaultInjectionFileSystem fs;
  SkippingFileSystem no_file_sync(fs, /*skip_file_sync=*/true, /*skip_dir_sync=*/false);
  FileStateStore store(no_file_sync, fs.root());
  ASSERT_OK(store.Put("orders::row-0", kNew));
  ASSERT_OK(fs.DropUnsyncedData());
  // The rename was durable, the data was not: an empty file, which must read as corruption.
  EXPECT_EQ(store.Get("orders::row-0").status().code(), StatusCode::kDataLoss);
}

TEST(FileStateStorePowerCut, HarnessDetectsAPutThatSkipsTheDirectorySync) {
  testing::FaultInjectionFileSystem fs;
  SkippingFileSystem no_dir_sync(fs, /*skip_file_sync=*/false, /*skip_dir_sync=*/true);
  FileStateStore store(no_dir_sync, fs.root());
  ASSERT_OK(store.Put("orders::row-0", kNew));
  ASSERT_OK(fs.DropUnsyncedData());
  Result<std::optional<Json>> got = store.Get("orders::row-0");
  ASSERT_OK(got);
  EXPECT_FALSE(got->has_value()) << "the rename should have been undone";
}

// A real process exit at each of the store's crash points (no fsync simulation here: the page
// cache survives, so this checks that each point leaves a readable state and that the point is
// reached at all).
class FileStateStoreCrashTest : public ::testing::TestWithParam<const char*> {};

TEST_P(FileStateStoreCrashTest, CrashDuringPutLeavesTheOldOrTheNewValue) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The death test's child re-runs this test from its start in a new process. It must use the
  // parent's directory, which the parent hands over in the environment, and must not run the
  // setup: its first crash point has to come after FAUCET_CRASH_AT is set, since the variable
  // is read once per process.
  const char* kDirVar = "FAUCET_STATE_CRASH_TEST_DIR";
  const char* inherited = std::getenv(kDirVar);
  std::string dir = inherited != nullptr ? inherited : testing::TempDir("crash");
  FileStateStore store(PosixFileSystem(), dir);
  if (inherited == nullptr) {
    ASSERT_OK(store.Put("orders::row-0", kOld));
    setenv(kDirVar, dir.c_str(), 1);
  }

  EXPECT_EXIT(
      {
        setenv("FAUCET_CRASH_AT", GetParam(), 1);
        (void)store.Put("orders::row-0", kNew);
        std::exit(0);
      },
      ::testing::ExitedWithCode(kCrashExitCode), "crash point hit");
  unsetenv(kDirVar);

  Result<std::optional<Json>> got = store.Get("orders::row-0");
  ASSERT_OK(got);
  EXPECT_TRUE(*got == kOld || *got == kNew) << **got;
  ASSERT_OK(store.Put("orders::row-0", kNew));
  EXPECT_EQ(*store.Get("orders::row-0"), kNew);
}

std::vector<const char*> FileStateCrashPoints() {
  std::vector<const char*> names;
  for (const CrashPointInfo& p : RegisteredCrashPoints()) {
    if (std::string(p.name).starts_with("state.file.")) names.push_back(p.name);
  }
  return names;
}

INSTANTIATE_TEST_SUITE_P(EveryRegisteredPoint, FileStateStoreCrashTest,
                         ::testing::ValuesIn(FileStateCrashPoints()),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == '.') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace faucet
