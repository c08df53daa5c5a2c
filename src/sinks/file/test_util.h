// Helpers shared by the file sink tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/block.h"
#include "core/file_system.h"
#include "core/page.h"

namespace faucet::testing {

// The real file system, recording what tests need to tell written data from durable data, and
// failing appends on request.
class RecordingFileSystem : public FileSystem {
 public:
  int syncs = 0;                         // WritableFile::Sync calls
  std::vector<std::string> synced_dirs;  // SyncDir calls, in order
  size_t largest_append = 0;             // bytes of the largest WritableFile::Append
  bool fail_appends = false;             // Append fails with kUnavailable, naming no path

  Result<std::unique_ptr<WritableFile>> OpenForAppend(const std::string& path,
                                                      bool truncate) override {
    ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file, real_.OpenForAppend(path, truncate));
    return std::unique_ptr<WritableFile>(std::make_unique<File>(std::move(file), *this));
  }
  Result<std::string> ReadFile(const std::string& path) override { return real_.ReadFile(path); }
  bool Exists(const std::string& path) override { return real_.Exists(path); }
  Status Rename(const std::string& from, const std::string& to) override {
    return real_.Rename(from, to);
  }
  Status Remove(const std::string& path) override { return real_.Remove(path); }
  Status CreateDirs(const std::string& path) override { return real_.CreateDirs(path); }
  Status SyncDir(const std::string& path) override {
    synced_dirs.push_back(path);
    return real_.SyncDir(path);
  }

 private:
  class File : public WritableFile {
   public:
    File(std::unique_ptr<WritableFile> file, RecordingFileSystem& fs)
        : file_(std::move(file)), fs_(fs) {}
    Status Append(std::string_view data) override {
      if (fs_.fail_appends) return Unavailable("injected append failure");
      fs_.largest_append = std::max(fs_.largest_append, data.size());
      return file_->Append(data);
    }
    Status Sync() override {
      ++fs_.syncs;
      return file_->Sync();
    }
    Status Truncate(uint64_t size) override { return file_->Truncate(size); }
    Status Close() override { return file_->Close(); }

   private:
    std::unique_ptr<WritableFile> file_;
    RecordingFileSystem& fs_;
  };

  FileSystem& real_ = PosixFileSystem();
};

inline std::string ReadAll(const std::string& path) {
  Result<std::string> content = PosixFileSystem().ReadFile(path);
  EXPECT_TRUE(content.ok()) << content.status().ToString();
  return content.ok() ? *content : "";
}

inline void WriteAll(const std::string& path, const std::string& content) {
  Result<std::unique_ptr<WritableFile>> f = PosixFileSystem().OpenForAppend(path, true);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE((*f)->Append(content).ok());
  ASSERT_TRUE((*f)->Close().ok());
}

// Relation public.items (id int, name text).
inline RelationPtr Items() {
  auto r = std::make_shared<Relation>();
  r->schema = "public";
  r->name = "items";
  r->columns = {{"id", ValueType::kInt}, {"name", ValueType::kText}};
  return r;
}

// A page of kRead rows of public.items with ids [first, first + n) named "n<id>".
inline Page ItemsPage(int first, int n) {
  RelationPtr relation = Items();
  Page page;
  for (int id = first; id < first + n; ++id) {
    Change c;
    c.relation = relation;
    c.after = Row{Cell::Value(std::to_string(id)), Cell::Value("n" + std::to_string(id))};
    page.changes.push_back(std::move(c));
  }
  return page;
}

// A config block parsed from `yaml`, as file "pipe.yaml" at path "sink.config".
inline config::Block ConfigBlock(const std::string& yaml) {
  return config::Block(YAML::Load(yaml), std::make_shared<const std::string>("pipe.yaml"),
                       "sink.config");
}

}  // namespace faucet::testing
