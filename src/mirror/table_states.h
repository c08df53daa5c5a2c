// The durable state of a multi-table mirror: the marker {name}::__replication__ in its
// version-2 shape (the reference system's, ../shared/spec/reference-multitable.md §2.4), one
// entry per table with its phase, and the pure transitions between phases. Each table's
// stream position lives under its own key {name}::{id}; the marker holds only the join point
// of its latest snapshot.
//
// Phases: pending (to snapshot) → snapshotting → active (streaming) ⇄ paused (its sink kept
// failing); dropped (gone from the source; its destination is left alone) and refused (it
// cannot be mirrored as configured; `last_error` says why).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/bookmark.h"
#include "core/status.h"

namespace faucet::mirror {

enum class TablePhase { kPending, kSnapshotting, kActive, kPaused, kDropped, kRefused };
const char* PhaseName(TablePhase phase);

struct TableSnapshotProgress {
  int64_t started_ms = 0;   // 0: never started
  int64_t finished_ms = 0;  // 0: not finished
  int64_t rows = 0;
  int64_t shards_total = 0;
  int64_t shards_done = 0;
  int64_t attempts = 0;
  // Ours: names the latest attempt (snapshot_pass.h NewSnapshotId), the token its reads commit
  // under the atomic watermark.
  std::string id;
  // Ours: the parts of a split read (each a config patch, Source::PlanShards) and those
  // finished: a failed part is retried alone while the read's snapshot lives; after a crash
  // every part is read again, from the same join point.
  std::vector<std::map<std::string, std::string>> shard_plan;
  std::vector<int64_t> shards_finished;  // ascending
};

struct TableState {
  TablePhase phase = TablePhase::kPending;
  int64_t since_ms = 0;              // when it entered the phase
  std::optional<Bookmark> position;  // the join point of its latest snapshot
  TableSnapshotProgress snapshot;
  uint64_t changes = 0;         // applied by its sink (counted after the write)
  int64_t last_applied_ms = 0;  // when its sink last applied a page
  int64_t last_commit_ms = 0;   // source commit time of the last change it applied
  // Ours: the source commit time of the oldest change routed to it that its sink has not yet
  // committed; 0 when it has everything routed to it (its lag is now minus this).
  int64_t behind_since_ms = 0;
  int64_t consecutive_failures = 0;
  std::string last_error;
  std::vector<std::string> key;
  std::string write_mode;
  std::string id;  // NodeId of the table
  std::optional<int64_t> estimated_rows;
  std::string resync_required;  // why its destination may hold stale rows
};

struct Marker {
  std::map<std::string, TableState> tables;  // by discovered name
  int64_t discovered_ms = 0;
  int64_t updated_ms = 0;

  // {"version": 2, "tables": {...}, "discovered_at", "updated_at"}; times as RFC 3339 UTC.
  Json ToJson() const;
  // A version-2 marker. A single-table marker ({"phase", "snapshot_done", "position"}) is
  // kFailedPrecondition with the reference's text; anything else is kDataLoss naming `key`.
  static Result<Marker> FromJson(const Json& json, const std::string& key);
};

// Milliseconds since the Unix epoch as "2026-12-01T21:45:01.123Z", and back (nullopt when
// the text is not that shape).
std::string Rfc3339(int64_t ms);
std::optional<int64_t> ParseRfc3339(const std::string& text);

// Transitions (all take `now_ms` for `since`):

// Enters `phase` (no-op when already there).
void EnterPhase(TableState& t, TablePhase phase, int64_t now_ms);

// Attempt `id` of a snapshot starts at join point `position`: snapshotting, progress (and shard
// plan) reset, attempts + 1.
void StartSnapshot(TableState& t, const Bookmark& position, const std::string& id, int64_t now_ms);

// Part `shard` of a split snapshot finished (kept once, in order).
void FinishShard(TableState& t, int64_t shard);

// The snapshot finished: active, failures reset.
void FinishSnapshot(TableState& t, int64_t now_ms);

// A failure of the table's snapshot or stream. The error is kept redacted and cut to 500
// characters. Returns true when it reaches max(max_failures, 1) consecutive failures: the
// table is then paused.
bool RecordFailure(TableState& t, const std::string& error, int64_t max_failures, int64_t now_ms);

// Its sink applied a page: failures reset.
void RecordSuccess(TableState& t);

// True for a paused table whose retry is due (retry_secs > 0 and it has waited that long).
bool RetryDue(const TableState& t, int64_t retry_secs, int64_t now_ms);

}  // namespace faucet::mirror
