// Fakes for unit tests of engine logic only. Anything a real server can do is tested against
// the real server (tests/integration).
#pragma once

#include <map>
#include <set>
#include <vector>

#include "core/mutex.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/state_store.h"

namespace faucet::testing {

// Emits the pages it was given, in order, then kEnd (or `final_error` if set). Each page's
// bookmark is {"n": index+1} unless the test gave one.
class FakeSource : public Source {
 public:
  explicit FakeSource(std::vector<Page> pages) : pages_(std::move(pages)) {}

  Status Open(const std::optional<Bookmark>& start) override;
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override;
  Status Acknowledge(const Bookmark& durable) override;
  void UseCommittedTokens(CommittedTokenReader read) override { token_reader = std::move(read); }

  std::optional<Bookmark> opened_at;
  CommittedTokenReader token_reader;  // what UseCommittedTokens gave
  // When set, the token of this part is read (token_reader) after the last page, into
  // token_read.
  std::string read_token_of;
  std::optional<std::string> token_read;
  Status final_error;
  Status acknowledge_error;  // what Acknowledge answers
  std::vector<Bookmark> Acknowledged();

 private:
  std::vector<Page> pages_;
  size_t next_ = 0;
  Mutex mu_;
  std::vector<Bookmark> acknowledged_ GUARDED_BY(mu_);
};

// Records every call; Write/Flush fail when told to.
class FakeSink : public Sink {
 public:
  Status Open(bool resuming) override;
  Status Write(const Page& page) override;
  Status Flush() override;
  Status WriteIdempotent(const Page& page, const std::string& scope,
                         const std::string& token) override;
  Result<std::optional<std::string>> CommittedToken(const std::string& scope) override;
  Status WriteIsolating(const Page& page, std::vector<RejectedRow>* rejected) override;

  bool opened_resuming = false;
  std::set<size_t> reject;                 // indexes WriteIsolating rejects
  bool fail_isolating = false;             // WriteIsolating fails as a whole
  std::string prefix;                      // put before each logged call ("dlq.")
  std::vector<std::string>* log = &calls;  // where calls are logged (a shared log for order)
  int fail_write_at = -1;                  // the nth Write (0-based) fails
  bool fail_flush = false;
  std::vector<std::string> calls;  // "write:<n changes>", "flush", "write_idempotent:<token>"
  std::map<std::string, std::string> tokens;
  size_t rows_written = 0;
  size_t rows_flushed = 0;

 private:
  int writes_ = 0;
};

// A StateStore in memory that can be told to fail, and logs every call.
class FakeStateStore : public StateStore {
 public:
  Result<std::optional<Json>> Get(const std::string& key) override;
  Status Put(const std::string& key, const Json& value) override;
  Status Delete(const std::string& key) override;
  Durability durability() const override { return Durability::kDurable; }

  bool fail_put = false;
  std::map<std::string, Json> values;
  std::vector<std::string>* call_log = nullptr;  // if set, "put" is appended on each Put
};

// A page of `rows` kInsert changes on table "t" with one int column, carrying `bookmark` if set.
Page MakePage(int rows, std::optional<Json> bookmark);

}  // namespace faucet::testing
