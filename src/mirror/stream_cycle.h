// One stream cycle of a multi-table mirror: ONE change stream read once and routed to a
// pipeline per table (DESIGN.md §11: reader → router → apply loop per table → ack merger).
//
// Each table's pipeline is an ordinary Pipeline (write → flush → persist → acknowledge) with
// its own sink, state key, delivery and DLQ; its source is a feed the router fills. So:
//   - a table persists a stream position only after its own sink flushed;
//   - the stream is opened at the minimum of every table's start (its persisted bookmark, or
//     the sink's commit token under exactly-once) and of the floors (positions of tables that
//     are not streaming but still need the log from there), and each table drops, change by
//     change, what its own start already covers (Source::ChangePosition), so a replay cut at
//     other points than the run that committed it applies nothing twice;
//   - the stream is acknowledged (Source::Acknowledge, called only here) at the minimum
//     position every table has persisted and every floor, never beyond: WAL a table still
//     needs is never released.
// A table whose sink falls behind does not stall the others for long: when the router has
// waited `detach_after` to hand it a page, the table is detached (it writes what it holds,
// persists and stops, on its own time: the cycle does not wait for it; its position stays in
// the acknowledged minimum, and it catches up from its own position in a later cycle). A
// table whose pipeline fails ends alone; the others go on.
//
// Memory: each feed holds at most `feed_bytes` of pages (at least one), and each table's
// pipeline queue `queue_bytes`; idle tables hold nothing. The driver sizes both as shares of
// one budget for all the cycle's tables.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "assembly/pipeline_builder.h"
#include "core/pipeline.h"
#include "core/source.h"
#include "core/state_store.h"

namespace faucet::mirror {

// A table that streams in this cycle.
struct CycleTable {
  std::string table;               // its discovered name, for logs
  std::vector<std::string> names;  // the names its changes arrive under (itself, partitions)
  assembly::PipelineParts parts;   // its sink, transforms and DLQ (parts.source is unused)
  PipelineOptions options;         // state_key, delivery, dlq; `stop` and `on_page` are set here
};

// A position the stream must keep (a table being snapshotted joins there later; a table
// that could not be built resumes there).
struct CycleFloor {
  std::string table;
  Bookmark position;
};

struct CycleOptions {
  const std::atomic<bool>* stop = nullptr;  // SIGINT/SIGTERM: end at a page boundary
  // Set by the driver (another thread) to end the cycle: a table finished its snapshot, one
  // is due for a retry. The cycle then ends like an idle stream: every table gets the last
  // position and persists it.
  const std::atomic<bool>* end = nullptr;
  // Called on the router thread with the name of a change's table that no cycle table has
  // (a table created since discovery, or not selected).
  std::function<void(const std::string&)> on_unknown_table;
  // Called when table `index`'s pipeline failed (it ends alone; the cycle goes on).
  std::function<void(size_t index, const Status&)> on_table_failed;
  // Called on the router thread when table `index` is about to be handed a page with changes
  // (before it can write it): the first change's commit time and the last change's position
  // (Source::ChangePosition), for lag (on_applied later reports what its sink committed).
  std::function<void(size_t index, int64_t first_commit_us, const Position& last)> on_routed;
  // Called on table `index`'s sink thread after a page was written (and checkpointed).
  std::function<void(size_t index, const Page&, const PipelineStats&)> on_applied;
  // How often a table without changes gets the stream's position, so its persisted position
  // (and the acknowledged minimum) follows the stream.
  std::chrono::milliseconds idle_flush{1000};
  std::chrono::milliseconds detach_after{10000};
  std::chrono::milliseconds open_timeout{60000};  // for each table's pipeline to open
  size_t feed_bytes = 8 << 20;
  size_t queue_bytes = 4 << 20;
};

struct TableOutcome {
  Status status;  // the pipeline's result (ok when it ended with the cycle)
  PipelineStats stats;
  bool detached = false;  // its sink fell behind: see CycleResult::draining
};

// A detached table's pipeline, still writing (and persisting) what it was given when the
// cycle ended. It acknowledges nothing to the stream; the next cycles must hold its persisted
// position as a floor until it has finished, and then stream it again from there.
class DrainingTable {
 public:
  virtual ~DrainingTable() = default;  // waits for the pipeline to end
  virtual const std::string& table() const = 0;
  virtual bool Finished() const = 0;
  virtual const TableOutcome& Outcome() const = 0;  // REQUIRES: Finished()
};

struct CycleResult {
  Status source;                         // the change stream's own error, if it failed
  std::vector<TableOutcome> tables;      // in the order of the cycle's tables
  std::optional<Bookmark> acknowledged;  // the last position acknowledged to the stream
  std::vector<std::unique_ptr<DrainingTable>> draining;  // the detached tables
};

// Runs one cycle; takes the tables' parts. `source` is a fresh, unopened change stream
// (routes_tables); `state` (which must outlive the draining tables) holds each table's
// bookmark under its options.state_key. Ends when the stream ends (idle
// timeout), on `stop` or `end`, or when the stream fails (every table still persists what it
// was given). An error is returned only when the cycle could not start (no positions).
Result<CycleResult> RunStreamCycle(Source& source, StateStore& state,
                                   std::vector<CycleTable>& tables,
                                   const std::vector<CycleFloor>& floors,
                                   const CycleOptions& options);

}  // namespace faucet::mirror
