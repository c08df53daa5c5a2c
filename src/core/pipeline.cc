#include "core/pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <string_view>
#include <thread>
#include <utility>

#include "core/bounded_queue.h"
#include "core/crash_point.h"
#include "core/dlq.h"

namespace faucet {
namespace {

using namespace std::chrono_literals;

// How long the source thread waits for data before it looks at the stop flag again.
constexpr auto kPollWait = 100ms;
// How often a source blocked on a full queue gets to keep its session alive.
constexpr auto kKeepAliveEvery = 1s;

// What the source thread hands to the sink thread.
struct Item {
  enum class Kind { kPage, kEnd, kError };
  Kind kind = Kind::kEnd;
  Page page;
  Status status;
  size_t bytes = 0;  // the page's ApproxBytes
};

// A page group commit may extend, or add to another: complete transactions, not a chunk or a
// staged step.
bool Groupable(const Item& item) {
  return item.kind == Item::Kind::kPage && item.page.bookmark && !item.page.staged;
}

// Group commit: appends to `into` the complete pages of its scope already waiting in `queue`
// (none is waited for), while the group stays within `max_bytes`. The first item taken that
// cannot join is left in `ahead`. Returns how many pages joined.
size_t GroupWaiting(BoundedQueue<Item>& queue, size_t max_bytes, Item& into,
                    std::optional<Item>& ahead) {
  if (!Groupable(into)) return 0;
  size_t joined = 0;
  Item next;
  while (into.bytes < max_bytes && queue.PopUntil(next, std::chrono::steady_clock::now()) ==
                                       BoundedQueue<Item>::PopResult::kPopped) {
    if (!Groupable(next) || next.page.token_scope != into.page.token_scope ||
        into.bytes + next.bytes > max_bytes) {
      ahead = std::move(next);
      break;
    }
    std::vector<Change>& changes = into.page.changes;
    changes.insert(changes.end(), std::make_move_iterator(next.page.changes.begin()),
                   std::make_move_iterator(next.page.changes.end()));
    into.page.bookmark = std::move(next.page.bookmark);
    into.bytes += next.bytes;
    ++joined;
  }
  return joined;
}

bool StopRequested(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

constexpr const char* kEoMarker = "__faucet_eo";

}  // namespace

std::optional<Bookmark> StateBookmark(const Json& state) {
  if (!state.is_object() || !state.contains(kEoMarker)) return Bookmark{state};
  // find, not operator[]: a const json asserts on a missing key (a damaged wrapper).
  auto bm = state.find("bookmark");
  if (bm == state.end() || bm->is_null()) return std::nullopt;
  return Bookmark{*bm};
}

namespace {

std::string SeqText(uint64_t seq) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020" PRIu64, seq);
  return buf;
}

// A whole decimal number of at most 20 digits that fits 64 bits.
std::optional<uint64_t> ParseCount(std::string_view digits) {
  uint64_t n = 0;
  if (digits.empty() || digits.size() > 20) return std::nullopt;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return n;
}

}  // namespace

std::string FormatCommitToken(uint64_t seq, const Bookmark& bookmark) {
  return SeqText(seq) + "#" + bookmark.ToString();
}

std::string FormatChunkToken(uint64_t seq, const std::optional<Bookmark>& anchor,
                             uint64_t changes) {
  return SeqText(seq) + "#" + (anchor ? anchor->ToString() : "null") + "+" +
         std::to_string(changes);
}

Result<CommitToken> ParseCommitToken(const std::string& token) {
  const size_t hash = token.find('#');
  CommitToken t;
  std::optional<uint64_t> seq = ParseCount(std::string_view(token).substr(0, hash));
  if (!seq) return DataLoss("commit token '" + token + "' does not start with a sequence number");
  t.seq = *seq;
  if (hash == std::string::npos) return t;  // legacy: the sequence number only

  const std::string rest = token.substr(hash + 1);
  Json bookmark = Json::parse(rest, nullptr, /*allow_exceptions=*/false);
  if (bookmark.is_discarded()) {  // a chunk token: "{anchor}+{n}"
    const size_t plus = rest.rfind('+');
    std::optional<uint64_t> changes;
    if (plus != std::string::npos) {
      changes = ParseCount(std::string_view(rest).substr(plus + 1));
      bookmark = Json::parse(rest.substr(0, plus), nullptr, /*allow_exceptions=*/false);
    }
    if (!changes || bookmark.is_discarded()) {
      return DataLoss("commit token '" + token +
                      "' is corrupt: after '#' comes neither a bookmark nor a bookmark+count");
    }
    t.chunk_changes = changes;
  }
  if (!bookmark.is_null()) t.bookmark = Bookmark{bookmark};
  return t;
}

Pipeline::Pipeline(Source& source, std::vector<Transform*> transforms, Sink& sink,
                   StateStore& state, PipelineOptions options)
    : source_(source),
      transforms_(std::move(transforms)),
      sink_(sink),
      state_(state),
      options_(std::move(options)) {}

Result<Pipeline::Start> Pipeline::LoadStart() {
  Start start;
  ASSIGN_OR_RETURN(std::optional<Json> prior, state_.Get(options_.state_key));
  if (prior) {
    // A wrapped value is unwrapped in both modes, so switching delivery modes keeps the
    // position; a bare bookmark reads as sequence 0.
    start.bookmark = StateBookmark(*prior);
    if (prior->is_object() && prior->contains(kEoMarker)) {
      const Json& seq = (*prior)["seq"];
      if (!seq.is_number_integer() || seq.get<int64_t>() < 0) {
        return DataLoss("state '" + options_.state_key + "' has no valid \"seq\"");
      }
      start.seq = (*prior)["seq"].get<uint64_t>();
    }
  }
  if (options_.delivery != Delivery::kAtomicWatermark) return start;

  ASSIGN_OR_RETURN(std::optional<std::string> token, sink_.CommittedToken(options_.state_key));
  if (!token) return start;
  Result<CommitToken> parsed = ParseCommitToken(*token);
  if (!parsed.ok()) {
    return DataLoss("the sink's commit token for '" + options_.state_key +
                    "': " + parsed.status().message());
  }
  const CommitToken& committed = *parsed;
  start.committed_seq = committed.seq;
  const bool chunk = committed.chunk_changes.has_value();
  // The sink committed pages whose bookmark never reached the state store (a crash between
  // the sink commit and the persist): resume after what the sink has.
  if (committed.seq > start.seq && (committed.bookmark || chunk)) {
    spdlog::info("re-anchoring at the sink's commit token (seq {} > state seq {})", committed.seq,
                 start.seq);
    start.bookmark = committed.bookmark;
    start.seq = committed.seq;
    // Persisted before the source opens there (and may acknowledge it): the state never lags
    // behind what the source has acknowledged.
    if (start.bookmark) RETURN_IF_ERROR(Checkpoint(*start.bookmark, start.seq));
  }
  if (chunk && committed.seq == start.seq) {
    // Both stores name the same page: its bookmark must be the chunk's anchor.
    if (!(committed.bookmark == start.bookmark)) {
      return DataLoss("the sink's commit token for '" + options_.state_key + "' ('" + *token +
                      "') and the state (" +
                      (start.bookmark ? start.bookmark->ToString() : "no bookmark") +
                      ") disagree at sequence " + std::to_string(start.seq) +
                      ": one of them was changed by hand");
    }
    start.skip_changes = *committed.chunk_changes;
    spdlog::info("the sink holds the first {} changes after the resume position: skipping them",
                 start.skip_changes);
  }
  return start;
}

Status Pipeline::Checkpoint(const Bookmark& bookmark, uint64_t seq) {
  if (options_.delivery == Delivery::kAtomicWatermark) {
    Json wrapped = {{kEoMarker, 1}, {"bookmark", bookmark.value}, {"seq", seq}};
    return state_.Put(options_.state_key, wrapped);
  }
  return state_.Put(options_.state_key, bookmark.value);
}

Status Pipeline::WriteWatermarked(Page& page, Watermark& mark, const Start& start,
                                  PipelineStats& stats, bool& written) {
  written = true;
  if (mark.skip > 0) {  // the sink holds these from an earlier run's chunks
    const size_t n = static_cast<size_t>(std::min<uint64_t>(mark.skip, page.changes.size()));
    page.changes.erase(page.changes.begin(), page.changes.begin() + static_cast<ptrdiff_t>(n));
    mark.skip -= n;
    mark.chunk_changes += n;
    stats.changes_skipped += n;
    if (!page.bookmark && page.changes.empty()) {
      written = false;
      ++stats.pages_skipped;
      return Status::Ok();
    }
  }
  if (page.bookmark) {
    ++mark.seq;
    mark.anchor = page.bookmark;
    mark.chunk_changes = 0;
    if (mark.seq <= start.committed_seq) {  // a legacy token without a bookmark
      ++stats.pages_skipped;
      return Status::Ok();
    }
    return sink_.WriteIdempotent(page, options_.state_key + page.token_scope,
                                 FormatCommitToken(mark.seq, *page.bookmark));
  }
  if (mark.seq < start.committed_seq) {  // a chunk of a page a legacy token says is committed
    written = false;
    ++stats.pages_skipped;
    return Status::Ok();
  }
  mark.chunk_changes += page.changes.size();
  return sink_.WriteIdempotent(page, options_.state_key + page.token_scope,
                               FormatChunkToken(mark.seq, mark.anchor, mark.chunk_changes));
}

Status Pipeline::WritePage(Page& page, size_t received, Watermark& mark, const Start& start,
                           PipelineStats& stats) {
  PipelineObserver* observer = options_.observer;
  Status budget_error;
  auto began = std::chrono::steady_clock::now();
  // The time since `began`, restarting it.
  auto lap = [&began] {
    const auto now = std::chrono::steady_clock::now();
    return now - std::exchange(began, now);
  };
  if (page.staged) {
    RETURN_IF_ERROR(sink_.Stage(page));
  } else if (options_.delivery == Delivery::kAtomicWatermark) {
    bool written = true;
    RETURN_IF_ERROR(WriteWatermarked(page, mark, start, stats, written));
    if (!written) {  // the sink already holds it
      if (observer != nullptr) observer->Written(page, received, lap());
      return Status::Ok();
    }
  } else if (options_.dlq) {
    RETURN_IF_ERROR(WriteWithDlq(page, stats, budget_error));
  } else {
    RETURN_IF_ERROR(sink_.Write(page));
  }
  if (observer != nullptr) observer->Written(page, received, lap());
  CrashPoint("pipeline.after_write");
  ++stats.pages;
  stats.changes += page.changes.size();
  if (!page.bookmark) {
    if (options_.on_page) options_.on_page(page, stats);
    if (!budget_error.ok()) {
      // Nothing to persist on a chunk; make what reached the DLQ durable before failing.
      RETURN_IF_ERROR(FlushDlq());
    }
    return budget_error;
  }

  lap();
  RETURN_IF_ERROR(sink_.Flush());
  RETURN_IF_ERROR(FlushDlq());
  if (observer != nullptr) observer->Flushed(page, lap());
  CrashPoint("pipeline.after_flush");
  RETURN_IF_ERROR(Checkpoint(*page.bookmark, mark.seq));
  if (observer != nullptr) observer->Persisted(page, lap());
  CrashPoint("pipeline.after_persist");
  if (Status acked = source_.Acknowledge(*page.bookmark); !acked.ok()) {
    return Status(acked.code(), "state '" + options_.state_key + "': " + acked.message());
  }
  if (observer != nullptr) observer->Acknowledged(page);
  ++stats.checkpoints;
  stats.last_bookmark = page.bookmark;
  if (options_.on_page) options_.on_page(page, stats);
  return budget_error;
}

Status Pipeline::FlushDlq() {
  if (!dlq_unflushed_) return Status::Ok();
  RETURN_IF_ERROR(options_.dlq->sink->Flush());
  dlq_unflushed_ = false;
  return Status::Ok();
}

Status Pipeline::WriteWithDlq(const Page& page, PipelineStats& stats, Status& budget_error) {
  const DlqOptions& dlq = *options_.dlq;
  std::vector<Sink::RejectedRow> rejected;
  Status written = sink_.WriteIsolating(page, &rejected);
  if (!written.ok()) {
    if (!dlq.dlq_all_on_batch_error) return written;
    rejected.clear();
    for (size_t i = 0; i < page.changes.size(); ++i) rejected.push_back({i, written});
  }
  if (rejected.empty()) return Status::Ok();

  Page envelopes;
  envelopes.changes.reserve(rejected.size());
  for (const Sink::RejectedRow& r : rejected) {
    envelopes.changes.push_back(MakeDlqEnvelope(page.changes[r.index], r.index, r.error, dlq));
  }
  RETURN_IF_ERROR(dlq.sink->Write(envelopes));
  dlq_unflushed_ = true;
  stats.dead_lettered += rejected.size();
  if (options_.observer != nullptr) options_.observer->DeadLettered(rejected.size());
  spdlog::warn("{} rows sent to the DLQ; first: {}", rejected.size(),
               rejected.front().error.message());
  if (dlq.max_failures_per_page && rejected.size() > *dlq.max_failures_per_page) {
    budget_error = FailedPrecondition(
        std::to_string(rejected.size()) +
        " rows of one page failed, more than "
        "dlq.max_failures_per_page (" +
        std::to_string(*dlq.max_failures_per_page) +
        "); they are in the DLQ. First error: " + rejected.front().error.message());
  } else if (dlq.max_failures_total && stats.dead_lettered > *dlq.max_failures_total) {
    budget_error = FailedPrecondition(
        std::to_string(stats.dead_lettered) +
        " rows failed in this run, more than "
        "dlq.max_failures_total (" +
        std::to_string(*dlq.max_failures_total) +
        "); they are in the DLQ. Last error: " + rejected.back().error.message());
  }
  return Status::Ok();
}

Result<PipelineStats> Pipeline::Run() {
  RETURN_IF_ERROR(ValidateStateKey(options_.state_key));
  ASSIGN_OR_RETURN(Start start, LoadStart());
  if (options_.delivery == Delivery::kAtomicWatermark) {
    source_.UseCommittedTokens([this](const std::string& part) {
      MutexLock lock(sink_mu_);
      return sink_.CommittedToken(options_.state_key + part);
    });
  }
  // Transforms, a DLQ's row isolation, the watermark's tokens and a bulk load all take pages as
  // committed changes: only a plain pipeline stages.
  if (sink_.Capabilities().stages && transforms_.empty() && !options_.dlq &&
      options_.delivery == Delivery::kAtLeastOnce && !options_.bulk_load) {
    source_.AllowStaging();
  }
  RETURN_IF_ERROR(source_.Open(start.bookmark));
  if (options_.bulk_load) sink_.BeginBulkLoad(options_.bulk_atomic);
  RETURN_IF_ERROR(sink_.Open(start.bookmark.has_value()));
  if (options_.dlq) RETURN_IF_ERROR(options_.dlq->sink->Open(/*resuming=*/true));
  if (start.bookmark) spdlog::info("resuming after {}", start.bookmark->ToString());
  struct Reporter {
    PipelineObserver* observer;
    explicit Reporter(PipelineObserver* o) : observer(o) {
      if (observer != nullptr) observer->Opened();
    }
    ~Reporter() {
      if (observer != nullptr) observer->Closed();
    }
    Reporter(const Reporter&) = delete;
    Reporter& operator=(const Reporter&) = delete;
  } reporter(options_.observer);

  BoundedQueue<Item> queue(options_.queue_bytes);
  std::atomic<bool> sink_failed{false};  // written by the sink thread, read by the source thread

  std::thread producer([&] {
    Item last;  // kEnd unless an error ends the stream
    while (!StopRequested(options_.stop) && !sink_failed.load()) {
      Result<SourceEvent> event = source_.Next(kPollWait);
      if (!event.ok()) {
        last = {Item::Kind::kError, {}, event.status()};
        break;
      }
      if (event->kind == SourceEvent::Kind::kIdle) continue;
      if (event->kind == SourceEvent::Kind::kEnd) break;
      Page page = std::move(event->page);
      CrashPoint("source.after_page");
      if (options_.observer != nullptr) options_.observer->Received(page);
      Status st;
      for (Transform* t : transforms_) {
        st = t->Apply(page);
        if (!st.ok()) break;
      }
      if (!st.ok()) {
        last = {Item::Kind::kError, {}, st};
        break;
      }
      size_t bytes = page.ApproxBytes();
      if (options_.observer != nullptr) options_.observer->Queued(bytes);
      Item item{Item::Kind::kPage, std::move(page), {}, bytes};
      auto pushed = queue.PushFor(item, bytes, kKeepAliveEvery);
      while (pushed == BoundedQueue<Item>::PushResult::kTimedOut) {
        if (Status alive = source_.KeepAlive(); !alive.ok()) {
          spdlog::warn("source keepalive failed: {}", alive.message());
        }
        pushed = queue.PushFor(item, bytes, kKeepAliveEvery);
      }
      if (pushed == BoundedQueue<Item>::PushResult::kClosed) return;
    }
    queue.Push(std::move(last), 0);
  });

  PipelineStats stats;
  Watermark mark{start.seq, start.bookmark, 0, start.skip_changes};
  Status source_error;
  Status sink_error;
  // Group commit joins pages only where a page is not its own unit: not under the atomic
  // watermark (a token per page), a DLQ (failure budgets per page) or a bulk load.
  const bool grouping = options_.group_bytes > 0 && options_.delivery == Delivery::kAtLeastOnce &&
                        !options_.dlq && !options_.bulk_load;
  std::optional<Item> ahead;  // taken from the queue by group commit without joining
  while (true) {
    if (StopRequested(options_.stop)) {
      stats.stopped = true;
      break;
    }
    std::optional<Item> item = ahead ? std::exchange(ahead, std::nullopt) : queue.Pop();
    if (!item || item->kind == Item::Kind::kEnd) break;
    if (item->kind == Item::Kind::kError) {
      source_error = item->status;
      break;
    }
    size_t received = 1;
    if (grouping) received += GroupWaiting(queue, options_.group_bytes, *item, ahead);
    {
      MutexLock lock(sink_mu_);
      sink_error = WritePage(item->page, received, mark, start, stats);
    }
    if (!sink_error.ok()) break;
  }
  sink_failed = !sink_error.ok();
  queue.Close();
  producer.join();
  // The reader refers to this pipeline, which the source may outlive.
  if (options_.delivery == Delivery::kAtomicWatermark) source_.UseCommittedTokens({});

  // A failed sink persists nothing more; it is not flushed either, as its state is unknown.
  if (!sink_error.ok()) {
    Status aborted = sink_.Finish(false);
    if (!aborted.ok()) spdlog::error("discarding the sink's run failed: {}", aborted.ToString());
    return sink_error;
  }
  if (options_.bulk_load && (!source_error.ok() || stats.stopped)) {
    Status abandoned = sink_.Finish(false);
    if (!abandoned.ok()) spdlog::error("abandoning the load failed: {}", abandoned.ToString());
    if (!source_error.ok()) return source_error;
    return stats;
  }
  // Pages without a bookmark (chunks of a split transaction) are made durable too; their
  // bookmark was not persisted, so a later run replays them.
  Status flushed = sink_.Flush();
  if (flushed.ok()) flushed = FlushDlq();
  Status finished = sink_.Finish(flushed.ok() && source_error.ok() && !stats.stopped);
  if (!source_error.ok()) {
    if (!flushed.ok()) spdlog::error("final flush failed: {}", flushed.ToString());
    return source_error;
  }
  if (!flushed.ok()) return flushed;
  if (!finished.ok()) return finished;
  return stats;
}

}  // namespace faucet
