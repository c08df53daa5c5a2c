// The mirror: capture the CDC position P first, snapshot the table into the sink, then stream
// changes from P (DESIGN.md §5, spec/003). An upsert sink makes the overlap between the
// snapshot and the stream converge (last write wins by key). On a fresh Postgres bootstrap
// there is no overlap at all: the slot is created with an exported snapshot and the table is
// read inside it, so the snapshot is the database exactly at P. A redo after a crash cannot
// have that snapshot any more and falls back to P plus upsert.
//
// Durable progress, all in the pipeline's state store:
//   {name}::__replication__   {"phase": "snapshot"|"cdc", "snapshot_done": bool, "position": P}
//   {name}::cdc               the CDC bookmark, seeded with P
//   {name}::__mirror_status__ progress and last error, for `faucet mirror status`
// A crash during the snapshot redoes it from the same P; a crash during CDC resumes from the
// bookmark. With `continuous`, a failed snapshot or CDC cycle is retried with capped
// exponential backoff (1 s doubling to 60 s, reset after a good cycle; a snapshot is redone
// whole); errors that a retry cannot fix (config, a refused row, resync needed, data loss) end
// the mirror.
#pragma once

#include <atomic>

#include "assembly/pipeline_builder.h"
#include "core/state_store.h"
#include "mirror/mirror_config.h"
#include "mirror/mirror_status.h"
#include "sources/postgres/slot.h"

namespace faucet::mirror {

class Mirror {
 public:
  // Borrows all; they must outlive the mirror. `stop` is set by SIGINT/SIGTERM.
  Mirror(const assembly::BuiltPipeline& built, MirrorConfig config, StateStore& state,
         const std::atomic<bool>& stop);

  // Runs until the stream ends (continuous: false), a stop request (ok), or an error that
  // retrying cannot fix.
  Status Run();

 private:
  // A new slot with an exported snapshot when the source is Postgres and the slot does not
  // exist yet; nullopt otherwise (the position is then captured from the existing slot).
  Result<std::optional<postgres::ExportedSnapshot>> ExportSnapshot();
  Result<Bookmark> Bootstrap();
  // False when a stop request interrupted the snapshot.
  Result<bool> Snapshot(const Bookmark& position);
  // One pipeline run of the snapshot; `bulk` makes it one bulk load (Sink::BeginBulkLoad).
  Result<PipelineStats> SnapshotPass(const Bookmark& position, bool bulk);
  // Snapshot, redone after a transient failure under `continuous` (from P, plus upsert).
  Result<bool> SnapshotUntilDone(const Bookmark& position);
  Status Stream();
  // Records a failed attempt in the status. Under `continuous`, when waiting may help
  // (RetryableInMirror), sleeps `backoff` (doubling it, capped) and returns true.
  bool RetryAfter(const Status& failure, std::chrono::milliseconds& backoff);
  Status RunCdcCycle();
  Status PutMarker(const char* phase, bool snapshot_done, const Bookmark& position);
  void SaveStatus();
  // Sleeps `d`, waking early on a stop request.
  void Sleep(std::chrono::milliseconds d) const;

  const assembly::BuiltPipeline& built_;
  MirrorConfig config_;
  StateStore& state_;
  const std::atomic<bool>& stop_;
  MirrorStatus status_;
  // Set by a fresh Postgres bootstrap: the snapshot the slot was created with, read by the
  // snapshot phase (an exact cut), released once the snapshot is read.
  std::optional<postgres::ExportedSnapshot> exported_;
};

// Classifies a failed CDC cycle: true when waiting and retrying may succeed (a dropped
// connection, a restarting server, an unavailable destination).
bool RetryableInMirror(const Status& status);

}  // namespace faucet::mirror
