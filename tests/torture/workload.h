// The torture workload: one writer thread with its own connection that changes the source
// tables continuously (inserts, updates with and without TOAST-sized values, primary-key
// changes, deletes; single-row, small and 10,000-row transactions; some rolled back) and keeps
// an exact log of what it committed. The choices are made here; the SQL that carries them out is
// the source's dialect (source_sql.h: Postgres, or MariaDB for the mysql-cdc run).
//
// Every change is identifiable: ids come from one sequence shared by every table (MariaDB: a
// counter of the writer) and are never reused (a primary-key change moves the row to a fresh id),
// and `version` starts at 1 and is incremented by every update, so (op, id, version) names one
// committed change.
//
// With several tables (the multi-table mirror), every operation picks a table: about half the
// small transactions of 2+ operations touch several tables, and about half the 10,000-row
// transactions are spread over every table (the other half go to one table).
#pragma once

#include <atomic>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/mutex.h"
#include "pg_client.h"
#include "source_sql.h"

namespace faucet::torture {

// One committed change. op 'c' insert (version 1), 'u' update (old_id != id: the key changed),
// 'd' delete (version 0).
struct Event {
  char op = 0;
  int64_t id = 0;
  int64_t version = 0;
  int64_t old_id = 0;
  int table = 0;  // index into WorkloadOptions::tables
};

struct WorkloadOptions {
  SourceKind source = SourceKind::kPostgres;
  std::string url;                // the source database
  std::string schema = "public";  // MariaDB: the URL's database
  // <schema>.<table> each: id int8 PK, version int8, small text, big text. One table: the
  // single-table mirror; several: `schema` is created and published FOR TABLES IN SCHEMA.
  std::vector<std::string> tables;
  std::string sequence;  // Postgres: in `schema`, shared by every table
  std::string slot;      // Postgres: the writer starts once this slot has a confirmed position
  uint64_t seed = 1;
  double rate = 1000;        // changes per second in small transactions
  double bulk_every_s = 10;  // plus a 10,000-row transaction about this often
  int bulk_rows = 10000;
  // Key changes that leave a TOAST-sized value unchanged (so the new row's value is not in the
  // change stream). false: every key change also writes a new `big`.
  bool key_change_keeps_toast = true;
};

class Workload {
 public:
  explicit Workload(WorkloadOptions options);
  ~Workload();

  // Creates the source tables (and their schema when there are several) and, for Postgres, the
  // sequence and `publication`, and inserts `rows` rows in each (a tenth with TOAST-sized values),
  // before the mirror starts: the snapshot's share. Small transactions keep each table between
  // about 0.4 x and 6 x `rows` rows.
  void CreateSource(const std::string& publication, int rows);
  // Drops what CreateSource made.
  void DropSource(const std::string& publication);
  // "<schema>.<table>" of table `index`.
  const std::string& Qualified(int index) const { return models_.at(index).qualified; }
  // Starts the writer thread. Postgres: it waits until the slot exists with a confirmed
  // position, so that every change it commits comes after the mirror's captured position P
  // (SourceSql::WaitUntilCaptured).
  void Start();
  // Stops the writer after its current transaction and joins it.
  void Stop();

  bool started() const { return started_.load(); }
  int64_t changes() const { return changes_.load(); }
  int64_t transactions() const { return transactions_.load(); }
  int64_t bulk_transactions() const { return bulk_.load(); }
  int64_t rollbacks() const { return rollbacks_.load(); }
  int64_t max_txn_changes() const { return max_txn_.load(); }
  // Committed transactions that changed more than one table.
  int64_t multi_table_transactions() const { return multi_table_.load(); }
  // Valid after Stop.
  const std::vector<Event>& committed() const { return committed_; }
  // Why the writer thread stopped early; empty while it runs or after a clean stop.
  std::string error() const {
    MutexLock lock(error_mu_);
    return error_;
  }

 private:
  void Run();
  void SmallTransaction(int ops);
  void RolledBackTransaction();
  void BulkTransaction();
  // The rows of one table as the writer committed them.
  struct TableModel {
    std::string qualified;  // <schema>.<table>
    // The live rows: id -> (index in ids, version), and the ids in a vector for random picks.
    std::unordered_map<int64_t, std::pair<size_t, int64_t>> live;
    std::vector<int64_t> ids;
  };

  // One random operation on table `t` inside the open transaction, appended to `txn`.
  void RandomOp(int t, std::vector<Event>& txn);
  void Insert(int t, std::vector<Event>& txn);
  void Update(int t, std::vector<Event>& txn);
  void ChangeKey(int t, std::vector<Event>& txn);
  void Delete(int t, std::vector<Event>& txn);
  // `count` rows of one kind (bulk_kind_) in table `t`.
  void BulkRows(int t, int count, int kind, std::vector<Event>& txn);
  void Commit(std::vector<Event>& txn);

  int PickTable();
  int64_t PickId(int t);
  void AddLive(int t, int64_t id, int64_t version);
  void RemoveLive(int t, int64_t id);
  std::vector<std::string> Qualified() const;
  std::string SmallValue();
  std::string BigValue();
  Param SmallParam();

  const WorkloadOptions o_;
  // Used by the calling thread until Start, then by the writer thread only, until Stop.
  std::unique_ptr<SourceSql> sql_;
  std::mt19937_64 rng_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> started_{false};
  std::atomic<int64_t> changes_{0}, transactions_{0}, bulk_{0}, rollbacks_{0}, max_txn_{0},
      multi_table_{0};
  mutable Mutex error_mu_;
  std::string error_ GUARDED_BY(error_mu_);  // written by the writer thread, read by any

  std::vector<TableModel> models_;  // one per table
  std::vector<Event> committed_;
  size_t min_rows_ = 2000, max_rows_ = 30000;  // per table, for the small transactions
  int bulk_kind_ = 0;
  int64_t bulk_changes_ = 0;
};

}  // namespace faucet::torture
