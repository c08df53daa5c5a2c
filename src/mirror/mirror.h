// The mirror: capture the CDC position P first, snapshot the table into the sink, then stream
// changes from P (DESIGN.md §5, spec/003). An upsert sink makes the overlap between the
// snapshot and the stream converge (last write wins by key). When the CDC source exports the
// database at P (Postgres: a fresh slot created with an exported snapshot) and the snapshot
// source can read inside it, there is no overlap at all: the snapshot is the database exactly
// at P. A redo after a crash cannot have that snapshot any more and falls back to P plus upsert.
// The mirror knows connectors only through their capabilities (core/source.h, core/sink.h).
//
// Durable progress, all in the pipeline's state store:
//   {name}::__replication__   {"phase": "snapshot"|"cdc", "snapshot_done": bool, "position": P,
//                             "snapshot_id": the snapshot's attempt (ours, snapshot_pass.h)}
//   {name}::cdc               the CDC bookmark, seeded with P
//   {name}::__mirror_status__ progress and last error, for `faucet mirror status`
// and, held while it runs, the lease {name}::__lease__ (StateStore::Lease): a second process
// running the same mirror fails at once with kFailedPrecondition.
// A crash during the snapshot redoes it from the same P (under the atomic watermark, unless the
// snapshot had committed in the sink: SnapshotCommitted); a crash during CDC resumes from the
// bookmark. With `continuous`, a failed snapshot or CDC cycle is retried with capped
// exponential backoff (1 s doubling to 60 s, reset after a good cycle; a snapshot is redone
// whole); errors that a retry cannot fix (config, a refused row, resync needed, data loss) end
// the mirror.
#pragma once

#include <atomic>

#include "assembly/pipeline_builder.h"
#include "core/mutex.h"
#include "core/state_store.h"
#include "mirror/mirror_config.h"
#include "mirror/mirror_status.h"
#include "observability/exporter.h"

namespace faucet::mirror {

class Mirror {
 public:
  // Borrows all; they must outlive the mirror. `stop` is set by SIGINT/SIGTERM.
  Mirror(const assembly::BuiltPipeline& built, MirrorConfig config, StateStore& state,
         const std::atomic<bool>& stop);

  // Runs until the stream ends (continuous: false), a stop request (ok), or an error that
  // retrying cannot fix.
  Status Run();

  // Metrics of the CDC pipeline and of retries. Borrowed; set before Run.
  void Observe(observability::Exporter* exporter) { exporter_ = exporter; }
  // The status as it is now (snapshot rows and the last commit as they happen, not as last
  // saved). Thread-safe.
  MirrorStatus LiveStatus() EXCLUDES(live_mu_);

 private:
  // Captures P, with the database exactly at P when the CDC source can export it now
  // (Source::CapturePositionWithSnapshot); the snapshot source reads inside it.
  Result<Bookmark> Bootstrap();
  // False when a stop request interrupted the snapshot. Under the atomic watermark, an attempt
  // that committed before (SnapshotCommitted) is recorded as done instead of read again.
  Result<bool> Snapshot(const Bookmark& position);
  // Snapshot, redone after a transient failure under `continuous` (from P, plus upsert).
  Result<bool> SnapshotUntilDone(const Bookmark& position);
  Status Stream();
  // Records a failed attempt in the status. Under `continuous`, when waiting may help
  // (RetryableInMirror), sleeps `backoff` (doubling it, capped) and returns true.
  bool RetryAfter(const Status& failure, std::chrono::milliseconds& backoff);
  Status RunCdcCycle();
  // kDataLoss when the stored CDC bookmark orders before P (Source::PositionOf): it starts at P
  // and only moves forward, so one of them was changed by hand.
  Status CheckBookmarkNotBehind(const Bookmark& position);
  Status PutMarker(const char* phase, bool snapshot_done, const Bookmark& position);
  // The snapshot's one transaction under the atomic watermark (empty scope otherwise).
  AtomicLoad SnapshotAtomic() const;
  void SaveStatus();
  // Sleeps `d`, waking early on a stop request.
  void Sleep(std::chrono::milliseconds d) const;

  const assembly::BuiltPipeline& built_;
  MirrorConfig config_;
  StateStore& state_;
  const std::atomic<bool>& stop_;
  MirrorStatus status_;      // the run's thread only
  std::string snapshot_id_;  // the marker's: names the snapshot's attempt (NewSnapshotId)
  // status_ as last saved, plus the fields that change with every page (LiveStatus).
  Mutex live_mu_;
  MirrorStatus live_ GUARDED_BY(live_mu_);
  observability::Exporter* exporter_ = nullptr;
  // Set by a bootstrap that exported one: the database at P, read by the snapshot phase (an
  // exact cut), released once the snapshot is read.
  std::unique_ptr<ConsistentSnapshot> exported_;
};

// Classifies a failed CDC cycle: true when waiting and retrying may succeed (a dropped
// connection, a restarting server, an unavailable destination).
bool RetryableInMirror(const Status& status);

}  // namespace faucet::mirror
