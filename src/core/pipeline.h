// Pipeline: runs one source into one sink and enforces, in this one place, the rule every
// guarantee rests on (DESIGN.md §1):
//
//   1. write the page to the sink;
//   2. flush the sink;
//   3. persist the page's bookmark to the state store;
//   4. only then acknowledge the bookmark to the source.
//
// A sink or state failure persists nothing and ends the run with that error. A source error
// still flushes what was written, then ends the run with the source's error. A stop request
// (SIGINT/SIGTERM) ends the run at a page boundary after flushing.
//
// Decoding and writing overlap: the source and transforms run on their own thread and hand
// pages to the calling (sink) thread through a queue bounded in bytes.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/pipeline_observer.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/state_store.h"
#include "core/transform.h"

namespace faucet {

enum class Delivery {
  kAtLeastOnce,
  // Atomic watermark: the sink commits every page with a commit token in one transaction; the
  // state holds {"__faucet_eo":1,"bookmark":..,"seq":..}. A page with a bookmark commits
  // "{seq:020}#{bookmark}"; a chunk of a transaction larger than a page (no bookmark) commits
  // "{seq:020}#{anchor}+{n}": n changes after the last bookmark `anchor` are in the sink. On
  // start the source is re-anchored at the sink's token when it is ahead of the state, and the
  // n changes a chunk token counts are skipped, wherever the replay cuts its pages; so no
  // change is written twice or lost whatever the transaction's size. See
  // docs/state-format.md.
  kAtomicWatermark,
};

struct PipelineStats;

// Where rows a sink cannot take go instead of failing the page (the `dlq:` block).
struct DlqOptions {
  Sink* sink = nullptr;  // borrowed; must outlive the pipeline
  // A failure of the whole page write (not of single rows): fail the run (propagate), or send
  // every row of the page to the DLQ (dlq_all).
  bool dlq_all_on_batch_error = false;
  std::optional<uint64_t> max_failures_per_page;
  std::optional<uint64_t> max_failures_total;
  bool include_original_payload = true;
  // For the envelope.
  std::string pipeline_name;
  std::string sink_type;
};

// The group commit budget of a keyed-upsert pipeline (PipelineOptions::group_bytes). A sink
// that is behind then holds the group, the queue's budget behind it (8 MiB) and at most one
// page taken from the queue that did not join.
inline constexpr size_t kGroupCommitBytes = 8 << 20;

struct PipelineOptions {
  // Key of this pipeline's bookmark in the state store, e.g. "orders::row-0".
  std::string state_key;
  Delivery delivery = Delivery::kAtLeastOnce;
  // Budget of the decode -> write queue: enough for the source to run ahead of the sink by a
  // few pages, not a store (memory stays bounded whatever the transaction or table size).
  // 16 MiB was no faster and held 8 MiB more where the sink is the slower side (BENCHMARKS.md,
  // "Memory: a spilled stream leaves memory whole, and an 8 MiB queue").
  size_t queue_bytes = 8 << 20;
  // The run is one bulk load: the sink is told so (Sink::BeginBulkLoad) before it opens, and
  // unless the run completes nothing of it is made durable: a stopped run or a failed source
  // ends with Finish(false), which abandons the load, instead of the final Flush.
  bool bulk_load = false;
  // A bulk load under the atomic watermark: its one transaction (Sink::BeginBulkLoad); an
  // empty scope otherwise.
  AtomicLoad bulk_atomic;
  // Set (by a signal handler) to stop at the next page boundary. May be null.
  const std::atomic<bool>* stop = nullptr;
  // Called on the sink thread after each page is written (and, if it has a bookmark,
  // checkpointed), for progress reporting. Must be cheap. May be empty.
  std::function<void(const Page&, const PipelineStats&)> on_page;
  // Group commit: under at-least-once delivery (no DLQ, no bulk load), the complete pages
  // already waiting in the queue when the sink thread takes one (the sink is behind) are
  // written with it as one page: one sink write, one flush, one checkpoint for all of them,
  // up to this many bytes (Page::ApproxBytes) in all. A page is never held back to wait for
  // others. A crash between the write and the checkpoint then replays the group, not one page:
  // for a sink whose replayed rows overwrite themselves (keyed upsert; kGroupCommitBytes).
  // 0: every page is written on its own.
  size_t group_bytes = 0;
  // Told of every page's stages, for metrics. Borrowed; may be null.
  PipelineObserver* observer = nullptr;
  // Set when the pipeline has a DLQ. Rows the sink rejects are written there as envelopes
  // {"error":{"kind","message"},"reason","payload","ts_ms","sink","pipeline","row",
  //  "record_index"} and the rest of the page is written; the DLQ is flushed before the page's
  // bookmark is persisted, so a rejected row is never lost. A budget exceeded fails the run
  // after that persist.
  std::optional<DlqOptions> dlq;
};

struct PipelineStats {
  uint64_t pages = 0;
  uint64_t changes = 0;          // written, or staged (Sink::Stage; also when rolled back later)
  uint64_t pages_skipped = 0;    // already committed by an atomic-watermark sink
  uint64_t changes_skipped = 0;  // of chunks already committed by an atomic-watermark sink
  uint64_t checkpoints = 0;      // bookmarks persisted
  uint64_t dead_lettered = 0;    // rows sent to the DLQ
  std::optional<Bookmark> last_bookmark;
  bool stopped = false;  // ended by a stop request
};

class Pipeline {
 public:
  // Borrows all parts; they must outlive the pipeline.
  Pipeline(Source& source, std::vector<Transform*> transforms, Sink& sink, StateStore& state,
           PipelineOptions options);

  // Runs until the source ends, an error occurs or a stop is requested.
  Result<PipelineStats> Run();

 private:
  struct Start {
    std::optional<Bookmark> bookmark;
    uint64_t seq = 0;            // last sequence number persisted (atomic watermark)
    uint64_t committed_seq = 0;  // last sequence number the sink committed
    uint64_t skip_changes = 0;   // changes after `bookmark` the sink committed in chunks
  };
  // Where the atomic watermark stands on the sink thread during a run.
  struct Watermark {
    uint64_t seq = 0;                // of the last page with a bookmark
    std::optional<Bookmark> anchor;  // that page's bookmark (the start's, before one)
    uint64_t chunk_changes = 0;      // changes after `anchor` committed (or skipped) in chunks
    uint64_t skip = 0;               // changes still to skip: committed by an earlier run
  };
  Result<Start> LoadStart();
  Status Checkpoint(const Bookmark& bookmark, uint64_t seq);
  // Writes `page` the way the delivery mode says, then (for a page with a bookmark) flushes,
  // persists and acknowledges. May drop already-committed changes from the page's front.
  // `received`: how many of the source's pages `page` holds (group commit).
  Status WritePage(Page& page, size_t received, Watermark& mark, const Start& start,
                   PipelineStats& stats);
  // The atomic-watermark write of WritePage. Sets `written` false when the sink already had
  // the whole page.
  Status WriteWatermarked(Page& page, Watermark& mark, const Start& start, PipelineStats& stats,
                          bool& written);
  // The DLQ write path of WritePage. Sets `budget_error` when a failure budget is exceeded:
  // the page is still completed and persisted, then the run fails with it.
  Status WriteWithDlq(const Page& page, PipelineStats& stats, Status& budget_error);
  // Makes the DLQ durable if rows went there since its last flush (an empty DLQ costs no
  // fsync per page).
  Status FlushDlq();

  Source& source_;
  std::vector<Transform*> transforms_;
  Sink& sink_;
  StateStore& state_;
  PipelineOptions options_;
  bool dlq_unflushed_ = false;  // rows were written to the DLQ since its last Flush
  // Held by the sink thread while it writes a page, and by a source reading a committed token
  // (Source::UseCommittedTokens) from its thread: the sink is never called from both at once.
  Mutex sink_mu_;
};

// The bookmark a pipeline's state value holds: the value itself, or the "bookmark" inside the
// {"__faucet_eo":1,...} wrapper of the atomic watermark; absent when that wrapper holds none.
std::optional<Bookmark> StateBookmark(const Json& state);

// The token an atomic-watermark sink stores with a page that carries a bookmark:
// "{seq:020}#{compact bookmark json}" (the reference system's format).
std::string FormatCommitToken(uint64_t seq, const Bookmark& bookmark);

// The token stored with a chunk (a page without a bookmark): "{seq:020}#{anchor json}+{n}",
// where `anchor` is the last bookmark before the chunk ("null" when the run started without
// one) and n counts the changes after it that the sink now holds.
std::string FormatChunkToken(uint64_t seq, const std::optional<Bookmark>& anchor, uint64_t changes);

struct CommitToken {
  uint64_t seq = 0;
  // The bookmark (or a chunk's anchor). Absent for a legacy bare "{seq:020}" token, a part
  // after '#' that is not JSON (the reference reads only the sequence then), or a chunk
  // anchored at the source's start.
  std::optional<Bookmark> bookmark;
  // Set on a chunk token: the changes after `bookmark` that are committed.
  std::optional<uint64_t> chunk_changes;
};
// Parses a token. A token that does not start with a sequence number that fits 64 bits is
// kDataLoss quoting it.
Result<CommitToken> ParseCommitToken(const std::string& token);

}  // namespace faucet
