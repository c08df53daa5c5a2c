// The multi-table mirror (`mirror.tables`): every selected table of the snapshot source's
// database, replicated over ONE change stream (one Postgres slot), each table its own
// pipeline with its own sink, state key {name}::{id} and phase in the marker
// {name}::__replication__ (table_states.h). DESIGN.md §11; the reference's behaviour is
// ../shared/spec/reference-multitable.md §2.
//
// The driver (Run, on the calling thread) discovers tables, starts snapshots and stream
// cycles, and records what they report:
//   - Bootstrap (no marker yet): the stream's position P is captured with the database
//     exported at P when the slot is created now, and every table is read inside that export
//     (up to `concurrency` at once): the initial load is an exact cut, so even append tables
//     get each row once. Each table's state is seeded with P before its read.
//   - Tables that join later (pending, retried, followed new tables) are snapshotted at the
//     stream's acknowledged position (the slot's confirmed position, which no table is
//     behind), captured while no cycle runs; the overlap with the stream converges by key.
//   - A stream cycle (stream_cycle.h) streams every active table; tables being snapshotted
//     are floors, so the log they need is kept. When a snapshot finishes, or one is due, the
//     cycle ends (every table persists the stream's position) and the next one starts.
//   - A table whose pipeline fails is retried in the next cycle; after max_table_failures in
//     a row it is paused (its position no longer holds the log back) and re-snapshotted after
//     retry_paused_secs; with on_table_error: fail the mirror stops instead.
//   - Discovery runs at start and every discover_interval_secs, and when the stream carries
//     a change of a table it does not know (new_tables: follow). Tables gone from the source
//     are dropped (their destination is left as it is).
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "assembly/pipeline_builder.h"
#include "core/mutex.h"
#include "core/pending_work.h"
#include "core/state_store.h"
#include "mirror/mirror_config.h"
#include "mirror/stream_cycle.h"
#include "mirror/table_plan.h"
#include "mirror/table_states.h"
#include "observability/exporter.h"
#include "observability/progress.h"

namespace faucet::mirror {

class MultiMirror {
 public:
  // Borrows all; they must outlive the mirror. REQUIRES: config.tables.
  MultiMirror(const assembly::BuiltPipeline& built, MirrorConfig config, StateStore& state,
              const std::atomic<bool>& stop);
  ~MultiMirror();

  // Runs until a stop request (ok), or, with continuous: false, until every table has
  // snapshotted and the stream has caught up once (an error naming every table that did not
  // complete); or until an error that retrying cannot fix.
  Status Run();

  // Metrics for each table's pipeline (labels pipeline, table). Borrowed; set before Run.
  void Observe(observability::Exporter* exporter) { exporter_ = exporter; }
  // The status `faucet mirror status --json` shows, from this process's memory (snapshot
  // progress and lag as they are now, not as last saved). Thread-safe.
  Result<Json> LiveStatus() EXCLUDES(mu_);
  // True while a stream cycle runs (not between cycles, not in backoff). Thread-safe.
  bool streaming() const { return streaming_.load(); }

 private:
  // What discovery resolved for a table (driver thread only).
  struct Resolved {
    TablePlan plan;
    DiscoveredTable discovered;
    std::vector<std::string> names;  // the names its changes arrive under
  };
  // A running snapshot.
  struct SnapshotJob {
    std::string table;
    int64_t shard = -1;  // the part of a split read; -1: the whole table
    std::thread thread;
    std::atomic<bool> done{false};
    Status status;  // written by the job before `done`
    bool stopped = false;
  };
  // The running stream cycle.
  struct CycleJob {
    std::unique_ptr<Source> source;  // the change stream
    std::vector<CycleTable> tables;
    std::vector<std::string> names;  // the tables' names, in the cycle's order
    std::vector<CycleFloor> floors;
    CycleOptions options;
    std::thread thread;
    std::atomic<bool> done{false};
    std::atomic<bool> end{false};
    Result<CycleResult> result = CycleResult{};  // written by the thread before `done`
  };

  Status Discover(bool first);
  // Starts snapshots of `due` tables (as many as `concurrency` has room for) joining at
  // `position`: each table's state is seeded with it, its read split in parts when
  // mirror.snapshot.shards asks; then SpawnReads. A table whose interrupted attempt committed
  // (FinishCommittedSnapshot) is not read again; one for which that is not known is retried later.
  Status StartSnapshots(const Bookmark& position, std::vector<std::string> due);
  // Starts reads (whole tables or parts) of the snapshots under way, up to `concurrency`.
  void SpawnReads(int64_t now_ms) EXCLUDES(mu_);
  // Tables whose snapshot must start (again): pending, paused and due a retry, or
  // interrupted by a crash (unless split).
  std::vector<std::string> DueTables(int64_t now_ms) EXCLUDES(mu_);
  // The body of a snapshot job: reads the table with `plan` (inside `exported` when set).
  void SnapshotTable(SnapshotJob& job, TablePlan plan, const ConsistentSnapshot* exported);
  // Records finished snapshots; true when one finished (the cycle must restart).
  Result<bool> ReapSnapshots();
  // Starts a cycle over the active tables (none when there is no active table).
  // The snapshot a split read starts in: the bootstrap's exact cut while there is one, else
  // one exported now (after the join point was captured).
  Result<std::shared_ptr<const ConsistentSnapshot>> SplitSnapshot();
  // Before a whole-table snapshot is redone (after a crash, or a failure that may have come
  // after its commit): true when the attempt it replaces committed in the sink after all
  // (SnapshotCommitted, under the atomic watermark), which then records the table as
  // snapshotted instead.
  Result<bool> FinishCommittedSnapshot(const std::string& table) EXCLUDES(mu_);
  // The bulk load of attempt `id` of the table's snapshot (part `shard`, -1: whole) under the
  // atomic watermark (SnapshotLoad; an empty scope otherwise).
  AtomicLoad TableLoad(const TablePlan& plan, const std::string& id, int64_t shard) const;
  // After a crash: every table whose split snapshot was under way reads all its parts again,
  // in one new snapshot, from its join point (or, when no snapshot can be exported, whole,
  // from a new one).
  Status RecoverSplitSnapshots() EXCLUDES(mu_);
  // The table's snapshot read is over (done, paused or to start again).
  void StopReading(const std::string& table);
  // The snapshots' progress line (observability/progress.h), while any table is read.
  void ReportProgress() EXCLUDES(mu_);
  Status StartCycle();
  // Ends the running cycle (if any) and records its outcome.
  Status FinishCycle();
  // A table failure: recorded, maybe pausing it. Returns its failures in a row, 0 when it is
  // now paused; an error when it paused the table under on_table_error: fail. Called from any
  // thread.
  Result<int64_t> Fail(const std::string& table, const Status& error) EXCLUDES(mu_);
  // Lag bookkeeping: a page routed to `table`, and one its sink committed.
  void Routed(const std::string& table, int64_t first_commit_us, const Position& last)
      EXCLUDES(mu_);
  void Applied(const std::string& table, const Page& page) EXCLUDES(mu_);
  // The marker as it stands, with each table's behind_since from the routed pages.
  Marker CurrentMarker() EXCLUDES(mu_);
  Status Persist() EXCLUDES(mu_);
  // Wakes the driver (a snapshot finished); WaitForWork waits at most `d` for that.
  void Wake() EXCLUDES(mu_);
  void WaitForWork(std::chrono::milliseconds d) EXCLUDES(mu_);

  const assembly::BuiltPipeline& built_;
  MirrorConfig config_;
  const TablesConfig& tables_;  // config_.tables
  StateStore& state_;
  const std::atomic<bool>& stop_;

  Mutex mu_;
  CondVar wake_;
  bool woken_ GUARDED_BY(mu_) = false;
  Marker marker_ GUARDED_BY(mu_);
  std::map<std::string, Resolved> resolved_;  // driver thread only
  // The tables being snapshotted by this process, with the plan their reads use (its sink
  // may overwrite). Driver thread only.
  std::map<std::string, TablePlan> reading_;
  std::atomic<bool> rediscover_{false};  // set by the router on an unknown table
  std::atomic<bool> streaming_{false};   // a cycle runs
  observability::Exporter* exporter_ = nullptr;
  // When to restart the cycle so that a failed table is retried (ms; 0: none due).
  int64_t retry_cycle_at_ms_ GUARDED_BY(mu_) = 0;
  Status fatal_ GUARDED_BY(mu_);             // on_table_error: fail, from a cycle's thread
  Status last_source_error_;                 // of the last cycle's stream
  std::optional<Bookmark> acknowledged_;     // the last position a cycle acknowledged
  std::map<std::string, int64_t> retry_at_;  // a failed snapshot's next try (ms)
  std::vector<std::unique_ptr<SnapshotJob>> snapshots_;
  std::unique_ptr<CycleJob> cycle_;
  // Detached tables of earlier cycles still writing what they were given.
  std::vector<std::unique_ptr<DrainingTable>> draining_;
  // The database at the bootstrap position, read by the initial snapshots; released once
  // they all finished.
  std::shared_ptr<const ConsistentSnapshot> exported_;
  std::optional<Bookmark> bootstrap_position_;
  // The snapshot each split read is in: its parts must all read one moment, or a row an
  // update moves from an unread part to a read one is missed (and its update, streamed later,
  // may lack unchanged TOAST values). Driver thread only.
  std::map<std::string, std::shared_ptr<const ConsistentSnapshot>> split_in_;
  // The snapshots' progress while tables are read, and the tables it counts: every table read
  // since it started (driver thread).
  std::optional<observability::Progress> progress_;
  std::set<std::string> progress_tables_;
  // Per streaming table, the pages routed to it that its sink has not committed yet: the last
  // change's position and the first change's commit time (ms), oldest first; at most
  // kMaxUnapplied entries (the newest merge). The front is the table's behind_since, written
  // into the marker when it is saved.
  std::map<std::string, PendingWork<Position>> unapplied_ GUARDED_BY(mu_);
  // Tables whose latest snapshot or cycle failed, with the error: a one-shot run's error.
  std::map<std::string, std::string> failed_this_run_ GUARDED_BY(mu_);
};

// The state key of a table's stream position: "{name}::{id}".
std::string TableKey(const std::string& name, const std::string& id);

}  // namespace faucet::mirror
