// The torture workload: one writer thread with its own libpq connection that changes the source
// table continuously (inserts, updates with and without TOAST-sized values, primary-key
// changes, deletes; single-row, small and 10,000-row transactions; some rolled back) and keeps
// an exact log of what it committed.
//
// Every change is identifiable: ids come from a sequence and are never reused (a primary-key
// change moves the row to a fresh id), and `version` starts at 1 and is incremented by every
// update, so (op, id, version) names one committed change.
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

namespace faucet::torture {

// One committed change. op 'c' insert (version 1), 'u' update (old_id != id: the key changed),
// 'd' delete (version 0).
struct Event {
  char op = 0;
  int64_t id = 0;
  int64_t version = 0;
  int64_t old_id = 0;
};

struct WorkloadOptions {
  std::string url;    // the source database
  std::string table;  // public.<table>: id int8 PK, version int8, small text, big text
  std::string sequence;
  std::string slot;  // the writer starts once this slot has a confirmed position
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

  // Creates the source table, its sequence and `publication`, and inserts `rows` rows (a tenth
  // with TOAST-sized values), before the mirror starts: the snapshot's share.
  void CreateSource(const std::string& publication, int rows);
  // Starts the writer thread. It waits until the slot exists with a confirmed position, so
  // that every change it commits comes after the mirror's captured position P.
  void Start();
  // Stops the writer after its current transaction and joins it.
  void Stop();

  bool started() const { return started_.load(); }
  int64_t changes() const { return changes_.load(); }
  int64_t transactions() const { return transactions_.load(); }
  int64_t bulk_transactions() const { return bulk_.load(); }
  int64_t rollbacks() const { return rollbacks_.load(); }
  int64_t max_txn_changes() const { return max_txn_.load(); }
  // Valid after Stop.
  const std::vector<Event>& committed() const { return committed_; }
  // Why the writer thread stopped early; empty while it runs or after a clean stop.
  std::string error() const {
    MutexLock lock(error_mu_);
    return error_;
  }

 private:
  void Run();
  void WaitForSlot();
  void SmallTransaction(int ops);
  void RolledBackTransaction();
  void BulkTransaction();
  // One random operation inside the open transaction, appended to `txn`.
  void RandomOp(std::vector<Event>& txn);
  void Insert(std::vector<Event>& txn);
  void Update(std::vector<Event>& txn);
  void ChangeKey(std::vector<Event>& txn);
  void Delete(std::vector<Event>& txn);
  void Commit(std::vector<Event>& txn);

  int64_t PickId();
  void AddLive(int64_t id, int64_t version);
  void RemoveLive(int64_t id);
  std::string SmallValue();
  std::string BigValue();
  Param SmallParam();
  std::string IdArray(const std::vector<int64_t>& ids);

  const WorkloadOptions o_;
  std::unique_ptr<PgConn> conn_;
  std::mt19937_64 rng_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> started_{false};
  std::atomic<int64_t> changes_{0}, transactions_{0}, bulk_{0}, rollbacks_{0}, max_txn_{0};
  mutable Mutex error_mu_;
  std::string error_ GUARDED_BY(error_mu_);  // written by the writer thread, read by any

  // The live rows: id -> version, and the ids in a vector for random picks.
  std::unordered_map<int64_t, std::pair<size_t, int64_t>> live_;
  std::vector<int64_t> ids_;
  std::vector<Event> committed_;
  std::string table_;  // qualified
  int bulk_kind_ = 0;
  int64_t bulk_changes_ = 0;
};

}  // namespace faucet::torture
