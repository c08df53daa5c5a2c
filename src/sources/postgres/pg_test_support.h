// Test-only helpers for the integration tests of the Postgres sources (tests/integration/
// postgres_*_test.cc), against the server scripts/services.sh starts (FAUCET_TEST_PG_URL).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clients/postgres/connection.h"
#include "core/lsn.h"
#include "core/mutex.h"
#include "core/pipeline.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/state_store.h"
#include "sources/postgres/postgres_config.h"
#include "testing/read_pages.h"

namespace faucet::postgres::testing {

// A plain SQL connection to the test database. Every failure aborts the test with the
// statement and the server's message.
class TestDb {
 public:
  TestDb();
  // A connection to another database (e.g. a mirror's destination).
  explicit TestDb(std::string url);
  const std::string& url() const { return url_; }

  void Exec(const std::string& sql);
  // The first column of the first row, or nullopt for NULL / no row.
  std::optional<std::string> Scalar(const std::string& sql);
  // The first column of every row.
  std::vector<std::optional<std::string>> Column(const std::string& sql);

  std::optional<Lsn> ConfirmedFlush(const std::string& slot);
  Lsn CurrentWal();
  // Creates table `table` (given columns) and publication `publication` for it.
  void CreateTableAndPublication(const std::string& table, const std::string& columns,
                                 const std::string& publication);

 private:
  std::string url_;
  ConnPtr conn_;
};

// Fast timers for tests: idle_timeout 1.5 s, status_update_interval 250 ms.
PostgresCdcConfig TestCdcConfig(const std::string& url, const std::string& slot,
                                const std::string& publication);

// Drops the slot when it goes out of scope (a permanent slot left behind pins WAL).
class SlotGuard {
 public:
  SlotGuard(std::string url, std::string slot) : url_(std::move(url)), slot_(std::move(slot)) {}
  ~SlotGuard();

 private:
  std::string url_;
  std::string slot_;
};

// A source table for the tests that run faucet on it: table `name` with `columns`, created with
// publication "<name>_pub"; its slot "<name>_slot" is created by whoever streams first and
// dropped when this goes out of scope.
class CdcTable {
 public:
  CdcTable(TestDb& db, const std::string& name, const std::string& columns);

  const std::string& name() const { return name_; }
  std::string slot() const { return name_ + "_slot"; }
  // The YAML flow mapping of a postgres-cdc source streaming it, with short timers
  // (idle_timeout `idle_seconds`, status_update_interval 1 s) and then `extra` entries
  // (", batch_size: 700").
  std::string SourceYaml(const std::string& extra = "", int idle_seconds = 2) const;

 private:
  std::string url_, name_;
  SlotGuard guard_;
};

// The fixture most source integration tests share: unique names for a table, its publication
// and a slot (dropped when the test ends), and a fast-timer config for them (TestCdcConfig).
class CdcTest : public ::testing::Test {
 protected:
  // Names the table "<prefix>_N_t", the publication "..._pub" and the slot "..._slot"; the
  // config connects to `url` (default: the test database).
  void Name(const std::string& prefix, const std::string& url = "");
  // Creates the table with `columns` and the publication for it.
  void Publish(const std::string& columns);
  // Creates the slot, so that later writes are retained, and returns its position.
  Lsn CreateSlot();
  // Runs `source` into `sink` through a pipeline with state key "pgtest::<slot>".
  Result<PipelineStats> RunPipeline(Source& source, Sink& sink, StateStore& state);

  TestDb db_;
  std::string table_, publication_, slot_;
  std::unique_ptr<SlotGuard> guard_;
  PostgresCdcConfig config_;
};

// Keeps a copy of every page written and counts flushes.
class CollectingSink : public Sink {
 public:
  Status Open(bool resuming) override;
  Status Write(const Page& page) override;
  Status Flush() override;

  std::vector<Change> Changes() const;
  std::vector<Page> pages;
  int flushes = 0;
  bool keep_changes = true;  // false: count only (memory tests)
  size_t change_count = 0;
};

// A thread-safe in-memory StateStore that reports itself durable, for tests that read the
// persisted position from another thread while the pipeline runs.
class LockedStateStore : public StateStore {
 public:
  Result<std::optional<Json>> Get(const std::string& key) override;
  Status Put(const std::string& key, const Json& value) override;
  Status Delete(const std::string& key) override;
  Durability durability() const override { return Durability::kDurable; }

  // The persisted last_lsn under `key`, or nullopt.
  std::optional<Lsn> PersistedLsn(const std::string& key);
  // When set and true, Put fails (kUnavailable) and stores nothing.
  std::function<bool()> fail_put;

 private:
  Mutex mu_;
  std::map<std::string, Json> values_ GUARDED_BY(mu_);
};

// Shared with every source's tests (testing/read_pages.h).
using faucet::testing::CountChanges;
using faucet::testing::ReadPages;

}  // namespace faucet::postgres::testing
