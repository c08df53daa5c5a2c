#include "core/pipeline.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <thread>

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
};

bool StopRequested(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

constexpr const char* kEoMarker = "__faucet_eo";

}  // namespace

std::optional<Bookmark> StateBookmark(const Json& state) {
  if (!state.is_object() || !state.contains(kEoMarker)) return Bookmark{state};
  const Json& bm = state["bookmark"];
  if (bm.is_null()) return std::nullopt;
  return Bookmark{bm};
}

std::string FormatCommitToken(uint64_t seq, const Bookmark& bookmark) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020" PRIu64, seq);
  return std::string(buf) + "#" + bookmark.ToString();
}

Result<CommitToken> ParseCommitToken(const std::string& token) {
  size_t hash = token.find('#');
  std::string digits = token.substr(0, hash);
  if (digits.empty() || digits.size() > 20 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    return DataLoss("commit token '" + token + "' does not start with a sequence number");
  }
  CommitToken t;
  t.seq = std::stoull(digits);
  if (hash != std::string::npos) {
    Json bookmark = Json::parse(token.substr(hash + 1), nullptr, /*allow_exceptions=*/false);
    if (!bookmark.is_discarded() && !bookmark.is_null()) t.bookmark = Bookmark{bookmark};
  }
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
  if (token) {
    ASSIGN_OR_RETURN(CommitToken committed, ParseCommitToken(*token));
    start.committed_seq = committed.seq;
    // The sink committed pages whose bookmark never reached the state store (a crash between
    // the sink commit and the persist): resume after what the sink has.
    if (committed.seq > start.seq && committed.bookmark) {
      spdlog::info("re-anchoring at the sink's commit token (seq {} > state seq {})", committed.seq,
                   start.seq);
      start.bookmark = committed.bookmark;
      start.seq = committed.seq;
    }
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

Status Pipeline::WritePage(const Page& page, uint64_t* seq, const Start& start,
                           PipelineStats& stats) {
  Status budget_error;
  if (options_.delivery == Delivery::kAtomicWatermark && page.bookmark) {
    ++*seq;
    if (*seq <= start.committed_seq) {
      ++stats.pages_skipped;
    } else {
      RETURN_IF_ERROR(
          sink_.WriteIdempotent(page, options_.state_key, FormatCommitToken(*seq, *page.bookmark)));
    }
  } else if (options_.dlq) {
    RETURN_IF_ERROR(WriteWithDlq(page, stats, budget_error));
  } else {
    RETURN_IF_ERROR(sink_.Write(page));
  }
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

  RETURN_IF_ERROR(sink_.Flush());
  RETURN_IF_ERROR(FlushDlq());
  CrashPoint("pipeline.after_flush");
  RETURN_IF_ERROR(Checkpoint(*page.bookmark, *seq));
  CrashPoint("pipeline.after_persist");
  source_.Acknowledge(*page.bookmark);
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
  RETURN_IF_ERROR(source_.Open(start.bookmark));
  RETURN_IF_ERROR(sink_.Open(start.bookmark.has_value()));
  if (options_.dlq) RETURN_IF_ERROR(options_.dlq->sink->Open(/*resuming=*/true));
  if (start.bookmark) spdlog::info("resuming after {}", start.bookmark->ToString());

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
      Item item{Item::Kind::kPage, std::move(page), {}};
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
  uint64_t seq = start.seq;
  Status source_error;
  Status sink_error;
  while (true) {
    if (StopRequested(options_.stop)) {
      stats.stopped = true;
      break;
    }
    std::optional<Item> item = queue.Pop();
    if (!item || item->kind == Item::Kind::kEnd) break;
    if (item->kind == Item::Kind::kError) {
      source_error = item->status;
      break;
    }
    sink_error = WritePage(item->page, &seq, start, stats);
    if (!sink_error.ok()) break;
  }
  sink_failed = !sink_error.ok();
  queue.Close();
  producer.join();

  // A failed sink persists nothing more; it is not flushed either, as its state is unknown.
  if (!sink_error.ok()) {
    Status aborted = sink_.Finish(false);
    if (!aborted.ok()) spdlog::error("discarding the sink's run failed: {}", aborted.ToString());
    return sink_error;
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
