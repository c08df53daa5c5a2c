#include "sources/postgres/pg_test_support.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "sources/postgres/postgres_cdc_source.h"
#include "sources/postgres/slot.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::postgres::testing {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "pg test support: %s\n", what.c_str());
  std::abort();
}

}  // namespace

TestDb::TestDb() : TestDb(faucet::testing::RequireEnv("FAUCET_TEST_PG_URL")) {}

TestDb::TestDb(std::string url) : url_(std::move(url)) {
  Result<ConnPtr> c = Connect(url_, PostgresTls{}, ConnectionKind::kSql);
  if (!c.ok()) Die(c.status().ToString());
  conn_ = std::move(c).value();
  Exec("SET client_min_messages = warning");
}

void TestDb::Exec(const std::string& sql) {
  ResultPtr r(PQexec(conn_.get(), sql.c_str()));
  ExecStatusType s = PQresultStatus(r.get());
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    Die(sql.substr(0, 200) + ": " + PQresultErrorMessage(r.get()));
  }
}

std::vector<std::optional<std::string>> TestDb::Column(const std::string& sql) {
  ResultPtr r(PQexec(conn_.get(), sql.c_str()));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
    Die(sql.substr(0, 200) + ": " + PQresultErrorMessage(r.get()));
  }
  std::vector<std::optional<std::string>> out;
  for (int i = 0; i < PQntuples(r.get()); ++i) out.push_back(Value(r.get(), i, 0));
  return out;
}

std::optional<std::string> TestDb::Scalar(const std::string& sql) {
  std::vector<std::optional<std::string>> c = Column(sql);
  return c.empty() ? std::nullopt : c[0];
}

std::optional<Lsn> TestDb::ConfirmedFlush(const std::string& slot) {
  std::optional<std::string> v = Scalar(
      "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
  if (!v) return std::nullopt;
  return *Lsn::Parse(*v);
}

Lsn TestDb::CurrentWal() { return *Lsn::Parse(*Scalar("SELECT pg_current_wal_lsn()")); }

void TestDb::CreateTableAndPublication(const std::string& table, const std::string& columns,
                                       const std::string& publication) {
  Exec("CREATE TABLE " + table + " (" + columns + ")");
  Exec("CREATE PUBLICATION " + publication + " FOR TABLE " + table);
}

PostgresCdcConfig TestCdcConfig(const std::string& url, const std::string& slot,
                                const std::string& publication) {
  PostgresCdcConfig c;
  c.connection_url = url;
  c.slot_name = slot;
  c.publication_name = publication;
  c.idle_timeout = std::chrono::milliseconds(1500);
  c.status_update_interval = std::chrono::milliseconds(250);
  c.max_cycle_duration = std::chrono::minutes(5);
  return c;
}

CdcTable::CdcTable(TestDb& db, const std::string& name, const std::string& columns)
    : url_(db.url()), name_(name), guard_(db.url(), slot()) {
  db.CreateTableAndPublication(name, columns, name + "_pub");
}

std::string CdcTable::SourceYaml(const std::string& extra, int idle_seconds) const {
  return "{type: postgres-cdc, config: {connection_url: '" + url_ + "', slot_name: " + slot() +
         ", publication_name: " + name_ + "_pub, idle_timeout: " + std::to_string(idle_seconds) +
         ", status_update_interval: 1" + extra + "}}";
}

void CdcTest::Name(const std::string& prefix, const std::string& url) {
  const std::string name = faucet::testing::UniqueName(prefix);
  table_ = name + "_t";
  publication_ = name + "_pub";
  slot_ = name + "_slot";
  guard_ = std::make_unique<SlotGuard>(db_.url(), slot_);
  config_ = TestCdcConfig(url.empty() ? db_.url() : url, slot_, publication_);
}

void CdcTest::Publish(const std::string& columns) {
  db_.CreateTableAndPublication(table_, columns, publication_);
}

Lsn CdcTest::CreateSlot() {
  PostgresCdcSource source(config_);
  Result<Bookmark> p = source.CapturePosition();
  EXPECT_OK(p);
  if (!p.ok()) return Lsn();
  return *Lsn::Parse(p->value["last_lsn"].get<std::string>());
}

Result<PipelineStats> CdcTest::RunPipeline(Source& source, Sink& sink, StateStore& state) {
  PipelineOptions options;
  options.state_key = "pgtest::" + slot_;
  Pipeline pipeline(source, {}, sink, state, options);
  return pipeline.Run();
}

SlotGuard::~SlotGuard() {
  PostgresCdcConfig c;
  c.connection_url = url_;
  c.slot_name = slot_;
  Status s = DropSlot(c);
  if (!s.ok() && s.code() != StatusCode::kNotFound) {
    std::fprintf(stderr, "could not drop slot %s: %s\n", slot_.c_str(), s.ToString().c_str());
  }
}

Status CollectingSink::Open(bool) { return Status::Ok(); }

Status CollectingSink::Write(const Page& page) {
  change_count += page.changes.size();
  if (keep_changes) {
    pages.push_back(page);
  } else {
    pages.push_back(Page{{}, page.bookmark});
  }
  return Status::Ok();
}

Status CollectingSink::Flush() {
  ++flushes;
  return Status::Ok();
}

std::vector<Change> CollectingSink::Changes() const {
  std::vector<Change> out;
  for (const Page& p : pages) out.insert(out.end(), p.changes.begin(), p.changes.end());
  return out;
}

Result<std::optional<Json>> LockedStateStore::Get(const std::string& key) {
  MutexLock lock(mu_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::optional<Json>();
  return std::optional<Json>(it->second);
}

Status LockedStateStore::Put(const std::string& key, const Json& value) {
  if (fail_put && fail_put()) return Unavailable("injected put failure");
  MutexLock lock(mu_);
  values_[key] = value;
  return Status::Ok();
}

Status LockedStateStore::Delete(const std::string& key) {
  MutexLock lock(mu_);
  values_.erase(key);
  return Status::Ok();
}

std::optional<Lsn> LockedStateStore::PersistedLsn(const std::string& key) {
  MutexLock lock(mu_);
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return *Lsn::Parse(it->second["last_lsn"].get<std::string>());
}

}  // namespace faucet::postgres::testing
