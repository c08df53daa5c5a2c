#include "mirror/stream_cycle.h"

#include <spdlog/spdlog.h>

#include <deque>
#include <map>
#include <thread>

#include "core/mutex.h"

namespace faucet::mirror {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Acknowledges the stream at the minimum position every table persisted and every floor: the
// only caller of the stream's Acknowledge. Called from the tables' sink threads.
class AckMerger {
 public:
  AckMerger(Source& stream, size_t tables) : stream_(stream), tables_(tables) {}

  // Before the stream opens: what each table starts from (or, for a table not streaming, the
  // position it still needs), and the floors.
  void Hold(size_t index, Position position, Bookmark bookmark) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    tables_[index] = Entry{std::move(position), std::move(bookmark)};
  }
  void Floor(Position position, Bookmark bookmark) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    floors_.push_back(Entry{std::move(position), std::move(bookmark)});
  }

  // The minimum of everything held; nullopt when nothing is.
  std::optional<Bookmark> Minimum() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    const Entry* min = MinEntry();
    if (min == nullptr) return std::nullopt;
    return min->bookmark;
  }

  // Table `index` persisted `durable`. Acknowledges the stream when the minimum moved.
  Status Acknowledge(size_t index, const Bookmark& durable) EXCLUDES(mu_) {
    ASSIGN_OR_RETURN(Position position, stream_.PositionOf(durable));
    MutexLock lock(mu_);
    std::optional<Entry>& entry = tables_[index];
    if (entry && position <= entry->position) return Status::Ok();
    entry = Entry{std::move(position), durable};
    const Entry* min = MinEntry();
    if (min == nullptr || (acked_ && min->position <= acked_->position)) return Status::Ok();
    acked_ = *min;
    // Under the lock, so the stream sees its acknowledgements in increasing order.
    return stream_.Acknowledge(min->bookmark);
  }

  std::optional<Bookmark> Acknowledged() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (!acked_) return std::nullopt;
    return acked_->bookmark;
  }

 private:
  struct Entry {
    Position position;
    Bookmark bookmark;
  };
  const Entry* MinEntry() const REQUIRES(mu_) {
    const Entry* min = nullptr;
    auto consider = [&](const Entry& e) {
      if (min == nullptr || e.position < min->position) min = &e;
    };
    for (const std::optional<Entry>& e : tables_) {
      if (e) consider(*e);
    }
    for (const Entry& e : floors_) consider(e);
    return min;
  }

  Source& stream_;
  mutable Mutex mu_;
  std::vector<std::optional<Entry>> tables_ GUARDED_BY(mu_);
  std::vector<Entry> floors_ GUARDED_BY(mu_);
  std::optional<Entry> acked_ GUARDED_BY(mu_);
};

// The source of one table's pipeline: pages the router pushes, bounded in bytes. Its Open
// reports where the pipeline starts (the router waits for it); its Acknowledge goes to the
// merger.
class TableFeed final : public Source {
 public:
  TableFeed(AckMerger& merger, size_t index, size_t max_bytes)
      : index_(index), max_bytes_(max_bytes), merger_(&merger) {}

  Status Open(const std::optional<Bookmark>& start) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    start_ = start;
    opened_ = true;
    changed_.NotifyAll();
    return Status::Ok();
  }

  Result<SourceEvent> Next(std::chrono::milliseconds wait) override EXCLUDES(mu_) {
    const auto deadline = Clock::now() + wait;
    MutexLock lock(mu_);
    while (pages_.empty() && !closed_ && changed_.WaitUntil(mu_, deadline)) {
    }
    SourceEvent event;
    if (!pages_.empty()) {
      event.kind = SourceEvent::Kind::kPage;
      event.page = std::move(pages_.front().first);
      bytes_ -= pages_.front().second;
      pages_.pop_front();
      changed_.NotifyAll();
    } else if (closed_) {
      event.kind = SourceEvent::Kind::kEnd;
    }
    return event;
  }

  // Held under the feed's lock, so Detach waits for a call in progress.
  Status Acknowledge(const Bookmark& durable) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (merger_ == nullptr) return Status::Ok();
    return merger_->Acknowledge(index_, durable);
  }

  // Router side. Waits until the pipeline opened this feed, or gave up (Abandon), or
  // `deadline`; the start bookmark when it opened.
  std::optional<std::optional<Bookmark>> WaitOpened(Clock::time_point deadline) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    while (!opened_ && !abandoned_ && changed_.WaitUntil(mu_, deadline)) {
    }
    if (!opened_ || abandoned_) return std::nullopt;
    return start_;
  }

  enum class Pushed { kYes, kFull, kGone };
  // Adds `page` unless the feed holds max_bytes (waiting until `deadline` for room) or its
  // pipeline has ended.
  Pushed Push(Page& page, Clock::time_point deadline) EXCLUDES(mu_) {
    const size_t bytes = page.ApproxBytes();
    MutexLock lock(mu_);
    while (!abandoned_ && !HasRoom(bytes) && changed_.WaitUntil(mu_, deadline)) {
    }
    if (abandoned_) return Pushed::kGone;
    if (!HasRoom(bytes)) return Pushed::kFull;
    pages_.emplace_back(std::move(page), bytes);
    bytes_ += bytes;
    changed_.NotifyAll();
    return Pushed::kYes;
  }

  // No more pages: the pipeline ends once it has taken what is queued.
  void Close() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    closed_ = true;
    changed_.NotifyAll();
  }

  // Close, and its acknowledgements no longer reach the stream (which may end before this
  // feed's pipeline does): what it persists from now on is read back by the next cycle.
  void Detach() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    closed_ = true;
    merger_ = nullptr;
    changed_.NotifyAll();
  }

  // The pipeline has ended, or must: pushes fail from now on and Next ends.
  void Abandon() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    abandoned_ = true;
    closed_ = true;
    pages_.clear();
    bytes_ = 0;
    changed_.NotifyAll();
  }

  bool Abandoned() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return abandoned_;
  }

 private:
  bool HasRoom(size_t bytes) const REQUIRES(mu_) {
    return pages_.empty() || bytes_ + bytes <= max_bytes_;
  }

  const size_t index_;
  const size_t max_bytes_;
  mutable Mutex mu_;
  CondVar changed_;
  std::deque<std::pair<Page, size_t>> pages_ GUARDED_BY(mu_);
  size_t bytes_ GUARDED_BY(mu_) = 0;
  bool opened_ GUARDED_BY(mu_) = false;
  std::optional<Bookmark> start_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  bool abandoned_ GUARDED_BY(mu_) = false;
  AckMerger* merger_ GUARDED_BY(mu_);
};

// One table's pipeline on its own thread, fed by a TableFeed. Owns everything the thread
// touches, so a detached one can outlive its cycle.
class TableRun final : public DrainingTable {
 public:
  TableRun(CycleTable table, AckMerger& merger, size_t index, size_t feed_bytes)
      : table_(std::move(table)), feed_(merger, index, feed_bytes) {}
  ~TableRun() override {
    if (thread_.joinable()) thread_.join();
  }

  void Start(StateStore& state, const CycleOptions& options, size_t index) {
    PipelineOptions opts = table_.options;
    opts.stop = options.stop;
    opts.queue_bytes = options.queue_bytes;
    if (options.on_applied) {
      opts.on_page = [index, on_applied = options.on_applied](const Page& page,
                                                              const PipelineStats& stats) {
        on_applied(index, page, stats);
      };
    }
    thread_ = std::thread([this, &state, opts, index, on_failed = options.on_table_failed] {
      Pipeline pipeline(feed_, table_.parts.TransformPtrs(), *table_.parts.sink, state, opts);
      Result<PipelineStats> stats = pipeline.Run();
      if (stats.ok()) {
        outcome_.stats = *stats;
      } else {
        outcome_.status = stats.status();
        if (on_failed) on_failed(index, stats.status());
      }
      feed_.Abandon();
      done_ = true;
    });
  }

  TableFeed& feed() { return feed_; }
  const CycleTable& cycle_table() const { return table_; }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  const std::string& table() const override { return table_.table; }
  bool Finished() const override { return done_.load(); }
  const TableOutcome& Outcome() const override { return outcome_; }

 private:
  CycleTable table_;
  TableFeed feed_;
  std::thread thread_;
  TableOutcome outcome_;  // written by the thread before `done_`
  std::atomic<bool> done_{false};
};

// The router's view of one table.
struct Route {
  bool streaming = false;
  Position start;                         // what its start already covers
  Clock::time_point last_sent;            // when it last got a page
  bool open_chunk = false;                // got chunks of a transaction whose bookmark is to come
  std::optional<Position> last_bookmark;  // the last position it was given
  std::vector<Change> bucket;             // this page's changes for it
};

bool Stopping(const std::atomic<bool>* flag) { return flag != nullptr && flag->load(); }

}  // namespace

Result<CycleResult> RunStreamCycle(Source& source, StateStore& state,
                                   std::vector<CycleTable>& tables,
                                   const std::vector<CycleFloor>& floors,
                                   const CycleOptions& options) {
  const size_t n = tables.size();
  CycleResult result;
  result.tables.resize(n);
  AckMerger merger(source, n);
  for (const CycleFloor& floor : floors) {
    Result<Position> position = source.PositionOf(floor.position);
    if (!position.ok()) {
      return position.status().WithContext("the join position of table '" + floor.table + "'");
    }
    merger.Floor(*position, floor.position);
  }

  std::vector<std::unique_ptr<TableRun>> runs;
  for (size_t i = 0; i < n; ++i) {
    runs.push_back(std::make_unique<TableRun>(std::move(tables[i]), merger, i, options.feed_bytes));
  }
  for (size_t i = 0; i < n; ++i) runs[i]->Start(state, options, i);
  auto feed = [&](size_t i) -> TableFeed& { return runs[i]->feed(); };
  auto table = [&](size_t i) -> const CycleTable& { return runs[i]->cycle_table(); };
  // Why the router did not stream a table (set on the router thread only).
  std::vector<Status> refused(n);
  std::vector<bool> detached(n, false);
  // Every pipeline ends (a detached one goes on draining, owned by the result); then the
  // outcomes are collected.
  auto finish = [&] {
    for (size_t i = 0; i < n; ++i) {
      if (!detached[i]) feed(i).Close();
    }
    for (size_t i = 0; i < n; ++i) {
      if (detached[i]) continue;
      runs[i]->Join();
      result.tables[i] = runs[i]->Outcome();
      if (result.tables[i].status.ok() && !refused[i].ok()) result.tables[i].status = refused[i];
    }
    for (size_t i = 0; i < n; ++i) {
      if (!detached[i]) continue;
      result.tables[i].detached = true;
      result.draining.push_back(std::move(runs[i]));
    }
    result.acknowledged = merger.Acknowledged();
  };

  // Where each table starts. One that does not open in time keeps the position it has
  // persisted (a floor); the others stream.
  std::vector<Route> routes(n);
  std::map<std::string, size_t> by_name;
  const Clock::time_point open_deadline = Clock::now() + options.open_timeout;
  for (size_t i = 0; i < n; ++i) {
    std::optional<std::optional<Bookmark>> start = feed(i).WaitOpened(open_deadline);
    std::optional<Bookmark> held;
    if (start && *start) {
      held = **start;
    } else {
      // Not opened (failed, or too slow): it still needs the log from what it persisted.
      Result<std::optional<Json>> stored = state.Get(table(i).options.state_key);
      if (stored.ok() && *stored) held = StateBookmark(**stored);
      Status failed;
      if (start) {
        failed = FailedPrecondition("table '" + table(i).table +
                                    "' has no stream position (its snapshot never finished)");
      } else if (!feed(i).Abandoned()) {
        failed = Unavailable("table '" + table(i).table + "': its pipeline did not open within " +
                             std::to_string(options.open_timeout.count() / 1000) + " s");
      }
      if (!failed.ok()) {
        refused[i] = failed;
        if (options.on_table_failed) options.on_table_failed(i, failed);
      }
      feed(i).Abandon();
    }
    if (!held) continue;
    Result<Position> position = source.PositionOf(*held);
    if (!position.ok()) {
      refused[i] = position.status().WithContext("table '" + table(i).table + "'");
      if (options.on_table_failed) options.on_table_failed(i, refused[i]);
      feed(i).Abandon();
      continue;
    }
    merger.Hold(i, *position, *held);
    if (feed(i).Abandoned()) continue;
    routes[i].streaming = true;
    routes[i].start = *position;
    routes[i].last_sent = Clock::now();
    for (const std::string& name : table(i).names) by_name[name] = i;
  }
  std::optional<Bookmark> from = merger.Minimum();
  if (!from) {
    finish();
    return FailedPrecondition("no table has a stream position to resume from");
  }
  if (Status opened = source.Open(from); !opened.ok()) {
    result.source = opened;
    finish();
    return result;
  }

  // Hands `page` to table i; detaches the table when its sink has not made room within
  // detach_after (keeping the stream's session alive meanwhile).
  auto push = [&](size_t i, Page page) {
    Route& route = routes[i];
    // Reported before the push: once pushed, the table may write the page at once.
    if (options.on_routed && !page.changes.empty()) {
      if (std::optional<Position> last = source.ChangePosition(page.changes.back())) {
        options.on_routed(i, page.changes.front().commit_time_us, *last);
      }
    }
    const Clock::time_point give_up = Clock::now() + options.detach_after;
    while (true) {
      TableFeed::Pushed pushed = feed(i).Push(page, std::min(give_up, Clock::now() + 1s));
      if (pushed == TableFeed::Pushed::kYes) break;
      if (pushed == TableFeed::Pushed::kGone) {
        route.streaming = false;
        return;
      }
      if (Clock::now() >= give_up) {
        spdlog::warn(
            "mirror: table '{}' fell behind ({} s without room for the next page); "
            "detached for this cycle: it catches up from its own position next cycle",
            table(i).table, options.detach_after.count() / 1000.0);
        route.streaming = false;
        detached[i] = true;
        feed(i).Detach();
        return;
      }
      if (Status alive = source.KeepAlive(); !alive.ok()) {
        spdlog::warn("source keepalive failed: {}", alive.message());
      }
    }
    route.last_sent = Clock::now();
  };

  // The table of each relation seen (nullopt: not a table of this cycle).
  struct RelationRoute {
    RelationPtr keep;
    std::optional<size_t> index;
  };
  std::map<const Relation*, RelationRoute> by_relation;
  std::optional<Bookmark> latest;  // the stream's last bookmark
  std::optional<Position> latest_position;
  // Gives every streaming table the stream's position when it lacks it and `due` says so.
  auto flush_idle = [&](bool all) {
    if (!latest) return;
    const Clock::time_point now = Clock::now();
    for (size_t i = 0; i < n; ++i) {
      Route& route = routes[i];
      if (!route.streaming || *latest_position <= route.start) continue;
      if (route.last_bookmark && *route.last_bookmark >= *latest_position) continue;
      if (!all && !route.open_chunk && now - route.last_sent < options.idle_flush) continue;
      route.last_bookmark = latest_position;
      route.open_chunk = false;
      push(i, Page{{}, latest});
    }
  };
  while (!Stopping(options.stop) && !Stopping(options.end)) {
    Result<SourceEvent> event = source.Next(100ms);
    if (!event.ok()) {
      result.source = event.status();
      break;
    }
    if (event->kind == SourceEvent::Kind::kEnd) break;
    if (event->kind == SourceEvent::Kind::kIdle) {
      flush_idle(false);
      continue;
    }
    Page& page = event->page;
    for (Change& change : page.changes) {
      // A change's table, resolved once per relation the stream describes (not per change).
      auto [known, added] = by_relation.try_emplace(change.relation.get());
      if (added) {
        const Relation& rel = *change.relation;
        const std::string name = rel.schema.empty() ? rel.name : rel.schema + "." + rel.name;
        known->second.keep = change.relation;  // so its address is not reused meanwhile
        if (auto it = by_name.find(name); it != by_name.end()) {
          known->second.index = it->second;
        } else if (options.on_unknown_table) {
          options.on_unknown_table(name);
        }
      }
      if (!known->second.index) continue;
      Route& route = routes[*known->second.index];
      if (!route.streaming) continue;
      std::optional<Position> at = source.ChangePosition(change);
      if (at && *at < route.start) continue;  // its start already covers it
      route.bucket.push_back(std::move(change));
    }
    if (page.bookmark) {
      Result<Position> position = source.PositionOf(*page.bookmark);
      if (!position.ok()) {
        result.source = position.status();
        break;
      }
      latest = page.bookmark;
      latest_position = *position;
    }
    for (size_t i = 0; i < n; ++i) {
      Route& route = routes[i];
      if (!route.streaming || route.bucket.empty()) {
        route.bucket.clear();
        continue;
      }
      Page out{std::move(route.bucket), std::nullopt};
      route.bucket.clear();
      if (page.bookmark && *latest_position > route.start) {
        out.bookmark = page.bookmark;
        route.last_bookmark = latest_position;
        route.open_chunk = false;
      } else if (!page.bookmark) {
        route.open_chunk = true;
      }
      push(i, std::move(out));
    }
    // A table with a transaction's chunks gets its end now; idle ones now and then.
    if (page.bookmark) flush_idle(false);
  }
  if (!Stopping(options.stop)) flush_idle(true);
  finish();
  return result;
}

}  // namespace faucet::mirror
