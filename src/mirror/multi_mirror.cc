#include "mirror/multi_mirror.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>

#include "assembly/registry.h"
#include "core/crash_point.h"
#include "mirror/mirror.h"
#include "mirror/mirror_status.h"
#include "mirror/multi_status.h"
#include "mirror/snapshot_pass.h"

namespace faucet::mirror {
namespace {

using namespace std::chrono_literals;

// How often the marker is saved while tables stream (their counters), and while snapshots
// run (their progress).
constexpr int64_t kPersistEveryMs = 10'000;
constexpr int64_t kPersistSnapshotsEveryMs = 2'000;
constexpr auto kFirstBackoff = 1s;
constexpr auto kMaxBackoff = 60s;
constexpr int64_t kMaxRetryMs = 30'000;
constexpr size_t kMaxUnapplied = 256;
// Buffers of a stream cycle, for all its tables together (feeds, pipeline queues), and the
// bounds of one table's share.
constexpr size_t kFeedBudget = 64 << 20;
constexpr size_t kQueueBudget = 32 << 20;
constexpr size_t kMinTableBuffer = 256 << 10;
constexpr size_t kMaxTableFeed = 8 << 20;
constexpr size_t kMaxTableQueue = 4 << 20;

bool Holds(TablePhase phase) {
  return phase == TablePhase::kPending || phase == TablePhase::kSnapshotting ||
         phase == TablePhase::kActive || phase == TablePhase::kPaused;
}

// The state value that seeds a table's stream position at `position`; under exactly-once the
// stored sequence is kept, so the sink's commit tokens stay monotonic across re-snapshots.
Json SeedValue(const std::optional<Json>& stored, const Bookmark& position) {
  if (stored && stored->is_object() && stored->contains("__faucet_eo")) {
    Json eo = *stored;
    eo["bookmark"] = position.value;
    return eo;
  }
  return position.value;
}

config::Document TableDocument(const config::Document& doc, const TablePlan& plan) {
  config::Document table_doc = doc;
  table_doc.sink = plan.sink;
  table_doc.schema = plan.schema;
  return table_doc;
}

// A failed table is retried after 1 s, doubling with each failure in a row, up to 30 s.
int64_t RetryDelayMs(int64_t failures) {
  return std::min<int64_t>(kMaxRetryMs, 1000LL << std::clamp<int64_t>(failures - 1, 0, 5));
}

}  // namespace

std::string TableKey(const std::string& name, const std::string& id) { return name + "::" + id; }

MultiMirror::MultiMirror(const assembly::BuiltPipeline& built, MirrorConfig config,
                         StateStore& state, const std::atomic<bool>& stop)
    : built_(built),
      config_(std::move(config)),
      tables_(*config_.tables),
      state_(state),
      stop_(stop) {}

MultiMirror::~MultiMirror() {
  if (cycle_) {
    cycle_->end = true;
    cycle_->thread.join();
  }
  for (auto& job : snapshots_) job->thread.join();
  // Detached tables (also those of a cycle never finished) report to this object until they
  // end: wait for them before its members go.
  cycle_.reset();
  draining_.clear();
}

void MultiMirror::Wake() {
  MutexLock lock(mu_);
  woken_ = true;
  wake_.NotifyAll();
}

void MultiMirror::WaitForWork(std::chrono::milliseconds d) {
  const auto until = std::chrono::steady_clock::now() + d;
  MutexLock lock(mu_);
  while (!woken_ && !stop_.load() && wake_.WaitUntil(mu_, until)) {
  }
  woken_ = false;
}

Marker MultiMirror::CurrentMarker() {
  MutexLock lock(mu_);
  Marker marker = marker_;
  marker.updated_ms = NowMs();
  for (auto& [table, t] : marker.tables) {
    auto pages = unapplied_.find(table);
    t.behind_since_ms = pages == unapplied_.end() ? 0 : pages->second.Oldest();
  }
  return marker;
}

Status MultiMirror::Persist() {
  return state_.Put(MarkerKey(built_.doc.name), CurrentMarker().ToJson());
}

Result<Json> MultiMirror::LiveStatus() {
  return MultiStatus(built_, tables_, CurrentMarker(), state_);
}

Status MultiMirror::Discover(bool first) {
  std::vector<std::string> warnings;  // reported by validation
  ASSIGN_OR_RETURN(std::unique_ptr<Source> reader,
                   assembly::MakeSource(config_.snapshot_source, warnings));
  ASSIGN_OR_RETURN(std::vector<DiscoveredTable> found, reader->DiscoverTables());
  std::vector<DiscoveredTable> selected;
  std::vector<std::string> names;
  for (DiscoveredTable& t : found) {
    if (!Selected(tables_, t.name)) continue;
    names.push_back(t.name);
    selected.push_back(std::move(t));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Source> stream,
                   assembly::MakeSource(built_.doc.source, warnings));
  ASSIGN_OR_RETURN(auto not_streamed, stream->TablesNotStreamed(names));

  const bool upserts = assembly::SinkWritesByKey(built_.doc.sink.type);
  std::vector<TablePlan> plans;
  for (const DiscoveredTable& t : selected) {
    TablePlan plan = PlanTable(tables_, built_.doc, config_.snapshot_source, t, upserts);
    if (plan.refused.empty()) {
      // The table's sink as its pipeline will build it: a config it refuses refuses the table.
      std::vector<std::string> sink_warnings;
      Result<std::unique_ptr<Sink>> sink = assembly::MakeSink(plan.sink, sink_warnings);
      Status usable = sink.status();
      if (usable.ok()) {
        usable = assembly::CheckSchemaPolicy(TableDocument(built_.doc, plan),
                                             (*sink)->Capabilities(), sink_warnings);
      }
      if (!usable.ok()) plan.refused = "table '" + t.name + "': " + usable.message();
    }
    if (plan.refused.empty()) {
      if (auto it = not_streamed.find(t.name); it != not_streamed.end()) {
        plan.refused = "table '" + t.name + "' is " + it->second;
      }
    }
    plans.push_back(std::move(plan));
  }
  std::set<std::string> incumbents;
  {
    MutexLock lock(mu_);
    for (const auto& [name, t] : marker_.tables) {
      if (Holds(t.phase)) incumbents.insert(name);
    }
  }
  RefuseCollisions(plans, incumbents);

  const int64_t now = NowMs();
  const bool follow = first || tables_.new_tables == NewTables::kFollow;
  std::set<std::string> present;
  {
    MutexLock lock(mu_);
    for (size_t i = 0; i < plans.size(); ++i) {
      TablePlan& plan = plans[i];
      const DiscoveredTable& d = selected[i];
      present.insert(plan.table);
      auto it = marker_.tables.find(plan.table);
      if (it == marker_.tables.end() && !follow) continue;
      TableState& t = marker_.tables[plan.table];
      const bool known = it != marker_.tables.end();
      if (!known) t.since_ms = now;
      t.id = plan.id;
      t.estimated_rows = d.estimated_rows;
      if (!known || (t.phase == TablePhase::kPending && !plan.refused.empty()) ||
          ((t.phase == TablePhase::kRefused || t.phase == TablePhase::kDropped) && follow)) {
        // New, or not yet holding anything: it takes what this discovery says. An active
        // table is never refused later (its destination and position stand).
        if (!plan.refused.empty()) {
          if (t.phase != TablePhase::kRefused || t.last_error != plan.refused) {
            spdlog::warn("mirror {}: {}", built_.doc.name, plan.refused);
          }
          EnterPhase(t, TablePhase::kRefused, now);
          t.last_error = plan.refused;
        } else if (!known || t.phase != TablePhase::kPending) {
          if (d.key.empty()) {
            spdlog::warn(
                "mirror {}: table '{}' has no primary key: its inserts are appended "
                "(without_primary_key: append); its updates and deletes reach the "
                "stream only with REPLICA IDENTITY FULL, as appended change rows",
                built_.doc.name, plan.table);
          }
          if (known)
            spdlog::info("mirror {}: table '{}' is back; it is snapshotted again", built_.doc.name,
                         plan.table);
          EnterPhase(t, TablePhase::kPending, now);
          t.last_error.clear();
        }
      }
      if (plan.refused.empty()) {
        t.key = plan.key;
        t.write_mode = plan.write_mode;
      }
      Resolved& r = resolved_[plan.table];
      r.plan = std::move(plan);
      r.discovered = d;
      r.names = d.partitions;
      r.names.push_back(d.name);
    }
    for (auto& [name, t] : marker_.tables) {
      if (present.count(name) || t.phase == TablePhase::kDropped) continue;
      spdlog::warn(
          "mirror {}: table '{}' dropped at the source (or no longer selected); no "
          "longer routed (destination left untouched)",
          built_.doc.name, name);
      EnterPhase(t, TablePhase::kDropped, now);
      resolved_.erase(name);
    }
    marker_.discovered_ms = now;
  }
  if (first) {
    for (const auto& [name, _] : tables_.per_table) {
      if (!resolved_.count(name)) {
        spdlog::warn("mirror {}: mirror.per_table names '{}', which discovery did not find",
                     built_.doc.name, name);
      }
    }
  }
  return Persist();
}

std::vector<std::string> MultiMirror::DueTables(int64_t now_ms) {
  std::vector<std::string> due;
  MutexLock lock(mu_);
  for (const auto& [name, t] : marker_.tables) {
    if (reading_.count(name) || !resolved_.count(name)) continue;
    auto retry = retry_at_.find(name);
    if (retry != retry_at_.end() && retry->second > now_ms) continue;
    const bool retry_paused = config_.continuous && RetryDue(t, tables_.retry_paused_secs, now_ms);
    // A snapshot interrupted by a crash starts again, unless it was split: its unfinished
    // parts resume (Run).
    if (t.phase == TablePhase::kPending || retry_paused ||
        (t.phase == TablePhase::kSnapshotting && t.snapshot.shard_plan.empty())) {
      due.push_back(name);
    }
  }
  return due;
}

Status MultiMirror::StartSnapshots(const Bookmark& position, std::vector<std::string> due) {
  const size_t room = static_cast<size_t>(tables_.concurrency) - snapshots_.size();
  if (due.size() > room) due.resize(room);
  const int64_t now = NowMs();
  for (const std::string& table : due) {
    Result<bool> committed = FinishCommittedSnapshot(table);
    if (!committed.ok()) {  // not known: it must not be redone yet
      ASSIGN_OR_RETURN(int64_t failures,
                       Fail(table, committed.status().WithContext("snapshot of '" + table + "'")));
      retry_at_[table] = now + RetryDelayMs(failures);
      continue;
    }
    if (*committed) continue;
    const Resolved& resolved = resolved_.at(table);
    const TablePlan& plan = resolved.plan;
    const std::string key = TableKey(built_.doc.name, plan.id);
    ASSIGN_OR_RETURN(std::optional<Json> stored, state_.Get(key));
    RETURN_IF_ERROR(state_.Put(key, SeedValue(stored, position)));
    // Split the read when asked, unless per_table gave the table its own query.
    std::vector<std::map<std::string, std::string>> shards;
    const auto over = tables_.per_table.find(table);
    const YAML::Node& own = over == tables_.per_table.end() ? YAML::Node() : over->second.snapshot;
    const bool own_query = own.IsMap() && own["query"];
    // A split read redone after a crash reads every part again: into an append destination
    // the parts read before it would be there twice, which exactly_once must not allow.
    const bool exactly_once =
        assembly::PipelineDelivery(built_.guarantee) == Delivery::kAtomicWatermark;
    if (tables_.shards > 1 && !own_query && exactly_once && plan.write_mode == "append") {
      spdlog::warn(
          "mirror {}: table '{}' is read whole, not in parts (mirror.snapshot.shards): under "
          "delivery exactly_once its append destination would get the parts read before a crash "
          "twice",
          built_.doc.name, table);
    } else if (tables_.shards > 1 && !own_query) {
      std::vector<std::string> warnings;
      ASSIGN_OR_RETURN(std::unique_ptr<Source> reader,
                       assembly::MakeSource(plan.snapshot, warnings));
      Result<std::vector<std::map<std::string, std::string>>> planned =
          reader->PlanShards(resolved.discovered, tables_.shards);
      if (planned.ok() && planned->size() > 1) shards = std::move(*planned);
      Result<std::shared_ptr<const ConsistentSnapshot>> in =
          shards.empty() ? Result<std::shared_ptr<const ConsistentSnapshot>>(nullptr)
                         : SplitSnapshot();
      if (!planned.ok() || !in.ok()) {
        spdlog::warn("mirror {}: table '{}' is read whole: {}", built_.doc.name, table,
                     (planned.ok() ? in.status() : planned.status()).message());
        shards.clear();
      } else if (!shards.empty()) {
        split_in_[table] = *in;
      }
    }
    // A re-snapshot replaces the destination when its sink can write a whole new copy in one
    // run; elsewhere it writes over what is there, and rows deleted meanwhile may remain.
    TablePlan read_plan = plan;
    bool again;
    {
      MutexLock lock(mu_);
      again = marker_.tables[table].snapshot.attempts > 0;
    }
    if (again && shards.empty()) {
      std::vector<std::string> warnings;
      config::ConnectorSpec overwrite = OverwriteSink(plan, built_.doc);
      Result<std::unique_ptr<Sink>> sink = assembly::MakeSink(overwrite, warnings);
      if (sink.ok() && (*sink)->Capabilities().overwrites) read_plan.sink = overwrite;
    }
    {
      MutexLock lock(mu_);
      TableState& t = marker_.tables[table];
      StartSnapshot(t, position, NewSnapshotId(), now);
      t.snapshot.shard_plan = shards;
      t.snapshot.shards_total = static_cast<int64_t>(shards.size());
      // const: reads only (a sink without write modes, kafka or jsonl, has no such key).
      const YAML::Node mode = read_plan.sink.config.node()["write_mode"];
      if (t.snapshot.attempts > 1 &&
          !(mode.IsDefined() && mode.IsScalar() && mode.Scalar() == "overwrite")) {
        t.resync_required =
            "re-snapshotted into a " + plan.sink.type +
            " destination that is not replaced: rows deleted at the source since its earlier "
            "snapshot may remain — empty the destination and re-snapshot the table to resync";
        spdlog::warn("mirror {}: table '{}': {}", built_.doc.name, table, t.resync_required);
      } else {
        t.resync_required.clear();
      }
      reading_[table] = read_plan;
      progress_tables_.insert(table);
    }
    spdlog::info("mirror {}: snapshotting table '{}'{} (joins the stream at {})", built_.doc.name,
                 table, shards.empty() ? "" : " in " + std::to_string(shards.size()) + " parts",
                 position.ToString());
  }
  RETURN_IF_ERROR(Persist());
  SpawnReads(NowMs());
  return Status::Ok();
}

Result<std::shared_ptr<const ConsistentSnapshot>> MultiMirror::SplitSnapshot() {
  if (bootstrap_position_ && exported_) return exported_;  // the exact cut: every table in it
  std::vector<std::string> warnings;
  ASSIGN_OR_RETURN(std::unique_ptr<Source> stream,
                   assembly::MakeSource(built_.doc.source, warnings));
  ASSIGN_OR_RETURN(std::unique_ptr<ConsistentSnapshot> exported, stream->ExportSnapshot());
  return std::shared_ptr<const ConsistentSnapshot>(std::move(exported));
}

void MultiMirror::StopReading(const std::string& table) {
  reading_.erase(table);
  split_in_.erase(table);
}

Status MultiMirror::RecoverSplitSnapshots() {
  const std::string& name = built_.doc.name;
  std::vector<std::string> recovered;
  {
    MutexLock lock(mu_);
    for (const auto& [table, t] : marker_.tables) {
      if (t.phase == TablePhase::kSnapshotting && !t.snapshot.shard_plan.empty() &&
          resolved_.count(table)) {
        recovered.push_back(table);
      }
    }
  }
  if (recovered.empty()) return Status::Ok();
  // One snapshot for them all, exported after every join point (they are in the marker).
  Result<std::shared_ptr<const ConsistentSnapshot>> in = SplitSnapshot();
  const int64_t now = NowMs();
  MutexLock lock(mu_);
  for (const std::string& table : recovered) {
    TableState& t = marker_.tables[table];
    if (!in.ok()) {
      // Read whole instead, from a new join point (DueTables takes it).
      spdlog::warn("mirror {}: table '{}' is read whole again: {}", name, table,
                   in.status().message());
      t.snapshot.shard_plan.clear();
      continue;
    }
    spdlog::info(
        "mirror {}: table '{}' reads its split snapshot again from its join point {} "
        "({} of {} parts were read by a process that stopped: their snapshot is gone)",
        name, table, t.position ? t.position->ToString() : "?", t.snapshot.shards_done,
        t.snapshot.shards_total);
    if (t.write_mode == "append" && t.resync_required.empty()) {
      // Rows of the parts read before are written again: not by key, so twice.
      t.resync_required =
          "its split snapshot was read again after a crash into an append destination: rows "
          "of the parts read before the crash are there twice — empty the destination and "
          "re-snapshot the table to resync";
      spdlog::warn("mirror {}: table '{}': {}", name, table, t.resync_required);
    }
    t.snapshot.shards_finished.clear();
    t.snapshot.shards_done = 0;
    t.snapshot.rows = 0;
    t.snapshot.started_ms = now;
    reading_[table] = resolved_.at(table).plan;
    progress_tables_.insert(table);
    split_in_[table] = *in;
  }
  return Status::Ok();
}

AtomicLoad MultiMirror::TableLoad(const TablePlan& plan, const std::string& id,
                                  int64_t shard) const {
  return SnapshotLoad(assembly::PipelineDelivery(built_.guarantee),
                      TableKey(built_.doc.name, plan.id), id, shard);
}

Result<bool> MultiMirror::FinishCommittedSnapshot(const std::string& table) {
  const TablePlan& plan = resolved_.at(table).plan;
  AtomicLoad load;
  {
    MutexLock lock(mu_);
    const TableState& t = marker_.tables[table];
    if (t.phase != TablePhase::kSnapshotting || !t.snapshot.shard_plan.empty()) return false;
    load = TableLoad(plan, t.snapshot.id, -1);
  }
  ASSIGN_OR_RETURN(bool committed, SnapshotCommitted(plan.sink, load));
  if (!committed) return false;
  MutexLock lock(mu_);
  TableState& t = marker_.tables[table];
  FinishSnapshot(t, NowMs());
  spdlog::info(
      "mirror {}: table '{}': its snapshot committed, though its end was not recorded (its token "
      "is in the sink); not read again, it streams from {}",
      built_.doc.name, table, t.position ? t.position->ToString() : "?");
  return true;
}

void MultiMirror::ReportProgress() {
  if (progress_tables_.empty()) return;
  constexpr size_t kShown = 2;  // tables described one by one; the line stays readable
  const int64_t now = NowMs();
  uint64_t rows = 0;
  int64_t estimate = 0;
  size_t done = 0;
  size_t reading = 0;
  std::string tables;
  {
    MutexLock lock(mu_);
    for (const std::string& table : progress_tables_) {
      const TableState& t = marker_.tables[table];
      const auto table_rows = static_cast<uint64_t>(std::max<int64_t>(0, t.snapshot.rows));
      rows += table_rows;
      estimate += std::max(t.snapshot.rows, t.estimated_rows.value_or(0));
      if (!reading_.count(table)) {
        ++done;
      } else if (reading++ < kShown) {
        const double secs = static_cast<double>(now - t.snapshot.started_ms) / 1000;
        tables += "; " + table + " " +
                  observability::Progress::Describe(
                      table_rows, secs > 0 ? static_cast<double>(table_rows) / secs : 0,
                      t.estimated_rows);
      }
    }
  }
  if (reading > kShown) tables += "; " + std::to_string(reading - kShown) + " more reading";
  const std::string detail = std::to_string(done) + " of " +
                             std::to_string(progress_tables_.size()) + " tables done" + tables +
                             "; in all";
  if (!progress_) progress_.emplace("snapshot", std::nullopt, isatty(STDERR_FILENO) != 0);
  progress_->SetEstimate(estimate > 0 ? std::optional<int64_t>(estimate) : std::nullopt);
  if (reading_.empty()) {
    progress_->Finish(rows, detail);
    progress_.reset();
    progress_tables_.clear();
    return;
  }
  progress_->Tick(rows, detail);
}

void MultiMirror::SpawnReads(int64_t now_ms) {
  std::set<std::pair<std::string, int64_t>> running;
  for (const auto& job : snapshots_) running.insert({job->table, job->shard});
  for (const auto& [table, plan] : reading_) {
    // A split read in its parts' snapshot; a whole one in the bootstrap's exact cut while
    // there is one, else in a transaction of its own.
    auto split = split_in_.find(table);
    std::shared_ptr<const ConsistentSnapshot> exported =
        split != split_in_.end() ? split->second : (bootstrap_position_ ? exported_ : nullptr);
    auto retry = retry_at_.find(table);
    if (retry != retry_at_.end() && retry->second > now_ms) continue;
    std::vector<std::pair<int64_t, std::map<std::string, std::string>>> parts;
    {
      MutexLock lock(mu_);
      const TableSnapshotProgress& progress = marker_.tables[table].snapshot;
      if (progress.shard_plan.empty()) parts.push_back({-1, {}});
      for (size_t i = 0; i < progress.shard_plan.size(); ++i) {
        const int64_t shard = static_cast<int64_t>(i);
        if (!std::binary_search(progress.shards_finished.begin(), progress.shards_finished.end(),
                                shard)) {
          parts.push_back({shard, progress.shard_plan[i]});
        }
      }
    }
    for (const auto& [shard, patch] : parts) {
      if (snapshots_.size() >= static_cast<size_t>(tables_.concurrency)) return;
      if (running.count({table, shard})) continue;
      TablePlan read = plan;
      if (shard >= 0) read.snapshot = ShardRead(plan, patch, built_.doc);
      auto job = std::make_unique<SnapshotJob>();
      job->table = table;
      job->shard = shard;
      SnapshotJob* raw = job.get();
      job->thread =
          std::thread([this, raw, read, exported] { SnapshotTable(*raw, read, exported.get()); });
      snapshots_.push_back(std::move(job));
    }
  }
}

void MultiMirror::SnapshotTable(SnapshotJob& job, TablePlan plan,
                                const ConsistentSnapshot* exported) {
  const config::Document doc = TableDocument(built_.doc, plan);
  SnapshotRead read;
  read.doc = &doc;
  read.source = &plan.snapshot;
  read.exported = exported;
  read.label = built_.doc.name + "/" + plan.table +
               (job.shard >= 0 ? " part " + std::to_string(job.shard) : "");
  read.stop = &stop_;
  {
    MutexLock lock(mu_);
    read.atomic = TableLoad(plan, marker_.tables[plan.table].snapshot.id, job.shard);
  }
  uint64_t counted = 0;  // of this read, in the table's rows
  read.on_rows = [&](uint64_t rows) {
    {
      MutexLock lock(mu_);
      marker_.tables[plan.table].snapshot.rows += static_cast<int64_t>(rows - counted);
    }
    counted = rows;
    CrashPoint("mirror.table_snapshot_page");
  };
  Result<PipelineStats> stats = ReadSnapshot(read);
  if (!stats.ok()) {
    job.status = stats.status();
  } else {
    job.stopped = stats->stopped;
    if (!job.stopped) CrashPoint("mirror.snapshot_committed");
  }
  job.done = true;
  Wake();
}

Result<bool> MultiMirror::ReapSnapshots() {
  bool joined = false;
  bool progressed = false;
  const int64_t now = NowMs();
  for (auto it = snapshots_.begin(); it != snapshots_.end();) {
    SnapshotJob& job = **it;
    if (!job.done.load()) {
      ++it;
      continue;
    }
    job.thread.join();
    const bool current = reading_.count(job.table) > 0;  // not given up meanwhile
    if (current && job.status.ok() && !job.stopped) {
      MutexLock lock(mu_);
      TableState& t = marker_.tables[job.table];
      if (job.shard >= 0) {
        FinishShard(t, job.shard);
        progressed = true;  // a checkpoint, for status
      }
      const bool whole = t.snapshot.shards_done >= t.snapshot.shards_total;
      if (t.phase == TablePhase::kSnapshotting && whole) {
        FinishSnapshot(t, now);
        joined = true;
        spdlog::info("mirror {}: table '{}' snapshotted, {} rows; it streams from {}",
                     built_.doc.name, job.table, t.snapshot.rows,
                     t.position ? t.position->ToString() : "?");
      }
      if (whole || t.phase != TablePhase::kSnapshotting) StopReading(job.table);
      retry_at_.erase(job.table);
    } else if (current && !job.stopped) {
      Status failed = job.status.WithContext("snapshot of '" + job.table + "' failed");
      ASSIGN_OR_RETURN(int64_t failures, Fail(job.table, failed));
      retry_at_[job.table] = now + RetryDelayMs(failures);
      // A paused table stops reading; a whole read starts again (a new join point, and a
      // destination replaced when it can be); a split one retries its unfinished parts.
      if (failures == 0 || job.shard < 0) StopReading(job.table);
    }
    it = snapshots_.erase(it);
  }
  SpawnReads(now);
  if (bootstrap_position_ && snapshots_.empty() && DueTables(now).empty()) {
    // The initial load is done (what is left waits for a retry, from the same join point):
    // release the exported snapshot and its session.
    exported_.reset();
    bootstrap_position_.reset();
  }
  if (joined || progressed) RETURN_IF_ERROR(Persist());
  return joined;
}

Result<int64_t> MultiMirror::Fail(const std::string& table, const Status& error) {
  bool paused;
  int64_t failures;
  {
    MutexLock lock(mu_);
    TableState& t = marker_.tables[table];
    paused = RecordFailure(t, error.message(), tables_.max_table_failures, NowMs());
    failures = t.consecutive_failures;
    failed_this_run_[table] = t.last_error;
  }
  if (!paused) {
    if (exporter_ != nullptr) exporter_->CountRetry(table, error);
    spdlog::warn("mirror {}: table '{}' failed ({} in a row; retried in {} s): {}", built_.doc.name,
                 table, failures, RetryDelayMs(failures) / 1000.0, error.message());
    return failures;
  }
  if (tables_.on_table_error == OnTableError::kFail) {
    return FailedPrecondition("mirror: table '" + table + "' failed " + std::to_string(failures) +
                              " times: " + error.message());
  }
  spdlog::warn(
      "mirror {}: table '{}' paused after {} failures in a row ({}); the rest of the "
      "stream continues",
      built_.doc.name, table, failures, error.message());
  return 0;
}

void MultiMirror::Routed(const std::string& table, int64_t first_commit_us, const Position& last) {
  MutexLock lock(mu_);
  unapplied_.try_emplace(table, kMaxUnapplied).first->second.Add(last, first_commit_us / 1000);
}

void MultiMirror::Applied(const std::string& table, const Page& page) {
  // What the page covers: the changes before its bookmark. A chunk of a transaction (no
  // bookmark) covers nothing yet: its transaction's later chunks share its position, and the
  // last chunk's bookmark covers them all.
  std::optional<Position> covered;
  if (page.bookmark) {
    Result<Position> p = built_.parts.source->PositionOf(*page.bookmark);
    if (p.ok()) covered = *p;
  }
  MutexLock lock(mu_);
  TableState& t = marker_.tables[table];
  t.changes += page.changes.size();
  t.last_applied_ms = NowMs();
  if (!page.changes.empty() && page.changes.back().commit_time_us > 0) {
    t.last_commit_ms = page.changes.back().commit_time_us / 1000;
  }
  auto pages = unapplied_.find(table);
  if (covered && pages != unapplied_.end()) {
    pages->second.Retire([&](const Position& last) { return last < *covered; });
  }
}

Status MultiMirror::StartCycle() {
  auto job = std::make_unique<CycleJob>();
  std::vector<std::string> warnings;  // reported by validation
  ASSIGN_OR_RETURN(job->source, assembly::MakeSource(built_.doc.source, warnings));
  std::set<std::string> draining;
  for (const auto& d : draining_) draining.insert(d->table());
  std::vector<std::string> active;
  {
    MutexLock lock(mu_);
    for (const auto& [name, t] : marker_.tables) {
      if (t.phase == TablePhase::kSnapshotting && t.position) {
        job->floors.push_back(CycleFloor{name, *t.position});
      } else if (t.phase == TablePhase::kActive && resolved_.count(name)) {
        active.push_back(name);
      }
    }
  }
  for (const std::string& name : active) {
    const TablePlan& plan = resolved_.at(name).plan;
    if (draining.count(name)) {
      // Still writing what an earlier cycle gave it: it holds the log from what it persisted.
      ASSIGN_OR_RETURN(std::optional<Json> stored, state_.Get(TableKey(built_.doc.name, plan.id)));
      std::optional<Bookmark> held = stored ? StateBookmark(*stored) : std::nullopt;
      if (held) job->floors.push_back(CycleFloor{name, *held});
      continue;
    }
    const config::Document doc = TableDocument(built_.doc, plan);
    Result<assembly::PipelineParts> parts =
        assembly::MakeParts(doc, built_.doc.source, false, warnings);
    if (!parts.ok()) {
      RETURN_IF_ERROR(Fail(name, parts.status()).status());
      ASSIGN_OR_RETURN(std::optional<Json> stored, state_.Get(TableKey(built_.doc.name, plan.id)));
      std::optional<Bookmark> held = stored ? StateBookmark(*stored) : std::nullopt;
      if (held) job->floors.push_back(CycleFloor{name, *held});
      continue;
    }
    {
      // It resumes from what it persisted: what an earlier cycle routed is routed again.
      MutexLock lock(mu_);
      unapplied_.erase(name);
    }
    CycleTable table;
    table.table = name;
    table.names = resolved_.at(name).names;
    table.options.state_key = TableKey(built_.doc.name, plan.id);
    assembly::ApplyGuarantee(built_.guarantee, table.options);
    table.options.dlq = assembly::DlqOptionsFor(doc, parts->dlq_sink.get());
    if (exporter_ != nullptr) table.options.observer = &exporter_->Pipeline(name);
    table.parts = std::move(*parts);
    job->tables.push_back(std::move(table));
    job->names.push_back(name);
  }
  if (job->tables.empty()) return Status::Ok();

  CycleJob* raw = job.get();
  // The callbacks may outlive the job (a detached table drains on): they hold the names.
  auto names = std::make_shared<const std::vector<std::string>>(job->names);
  job->options.stop = &stop_;
  // The tables share one buffer budget, so memory does not grow with their number: each gets
  // its share, at least enough to batch and at most what a single table uses.
  const size_t n = std::max<size_t>(1, job->tables.size());
  job->options.feed_bytes = std::clamp(kFeedBudget / n, kMinTableBuffer, kMaxTableFeed);
  job->options.queue_bytes = std::clamp(kQueueBudget / n, kMinTableBuffer, kMaxTableQueue);
  job->options.end = &job->end;
  job->options.on_unknown_table = [this](const std::string& table) {
    if (tables_.new_tables == NewTables::kFollow && Selected(tables_, table)) {
      rediscover_ = true;
    }
  };
  job->options.on_routed = [this, names](size_t i, int64_t first_commit_us, const Position& last) {
    Routed((*names)[i], first_commit_us, last);
  };
  job->options.on_applied = [this, names](size_t i, const Page& page, const PipelineStats&) {
    Applied((*names)[i], page);
  };
  job->options.on_table_failed = [this, names](size_t i, const Status& error) {
    Result<int64_t> failures = Fail((*names)[i], error);
    MutexLock lock(mu_);
    if (!failures.ok()) {
      if (fatal_.ok()) fatal_ = failures.status();
      return;
    }
    // The table resumes from its position in a new cycle: after a backoff (the others are
    // rewound to it and skip what they applied), or at once when it was paused (its position
    // then no longer holds the stream back).
    const int64_t at = NowMs() + (*failures == 0 ? 0 : RetryDelayMs(*failures));
    if (retry_cycle_at_ms_ == 0 || at < retry_cycle_at_ms_) retry_cycle_at_ms_ = at;
  };
  job->thread = std::thread([raw, this] {
    raw->result = RunStreamCycle(*raw->source, state_, raw->tables, raw->floors, raw->options);
    raw->done = true;
    Wake();
  });
  cycle_ = std::move(job);
  streaming_ = true;
  return Status::Ok();
}

Status MultiMirror::FinishCycle() {
  if (!cycle_) return Status::Ok();
  cycle_->end = true;
  cycle_->thread.join();
  std::unique_ptr<CycleJob> job = std::move(cycle_);
  streaming_ = false;
  if (!job->result.ok()) {
    spdlog::warn("mirror {}: {}", built_.doc.name, job->result.status().message());
    return Status::Ok();
  }
  CycleResult& result = *job->result;
  uint64_t changes = 0;
  for (size_t i = 0; i < result.tables.size(); ++i) {
    const TableOutcome& outcome = result.tables[i];
    if (!outcome.status.ok() || outcome.detached) continue;
    changes += outcome.stats.changes;
    MutexLock lock(mu_);
    RecordSuccess(marker_.tables[job->names[i]]);
    failed_this_run_.erase(job->names[i]);
  }
  if (result.acknowledged) acknowledged_ = result.acknowledged;
  if (changes > 0 || result.acknowledged) {
    spdlog::info(
        "mirror {}: cycle ended, {} changes applied over {} tables, stream "
        "acknowledged at {}",
        built_.doc.name, changes, result.tables.size(),
        result.acknowledged ? result.acknowledged->ToString() : "its start");
  }
  for (auto& d : result.draining) draining_.push_back(std::move(d));
  last_source_error_ = result.source;
  return Persist();
}

Status MultiMirror::Run() {
  const std::string& name = built_.doc.name;
  ASSIGN_OR_RETURN(std::unique_ptr<StateLease> lease, TakeMirrorLease(state_, name));
  ASSIGN_OR_RETURN(std::optional<Json> stored, state_.Get(MarkerKey(name)));
  const bool fresh = !stored;
  if (stored) {
    ASSIGN_OR_RETURN(Marker marker, Marker::FromJson(*stored, MarkerKey(name)));
    MutexLock lock(mu_);
    marker_ = std::move(marker);
    // A restart retries paused tables (retry_paused_secs: 0 means "until the mirror
    // restarts").
    for (auto& [table, t] : marker_.tables) {
      if (t.phase == TablePhase::kPaused) {
        EnterPhase(t, TablePhase::kPending, NowMs());
        t.consecutive_failures = 0;
      }
    }
  }
  RETURN_IF_ERROR(Discover(true).WithContext("mirror " + name + ": discovering tables"));
  RETURN_IF_ERROR(RecoverSplitSnapshots());
  if (fresh) {
    // The initial load: P with the database exactly at P when the slot is created now.
    std::vector<std::string> warnings;
    ASSIGN_OR_RETURN(std::unique_ptr<Source> stream,
                     assembly::MakeSource(built_.doc.source, warnings));
    ASSIGN_OR_RETURN(CapturedPosition captured, stream->CapturePositionWithSnapshot());
    exported_ = std::move(captured.snapshot);
    bootstrap_position_ = captured.position;
    spdlog::info("mirror {}: captured position {}{}", name, captured.position.ToString(),
                 exported_ ? " with the database exported there (an exact cut)" : "");
  }

  std::chrono::milliseconds backoff = kFirstBackoff;
  auto next_cycle = std::chrono::steady_clock::now();
  int64_t last_persist = NowMs();
  int64_t last_discovery = NowMs();
  Status outcome;
  while (!stop_.load()) {
    {
      MutexLock lock(mu_);
      if (!fatal_.ok()) {
        outcome = fatal_;
        break;
      }
    }
    const int64_t now = NowMs();
    const bool discovery_due = tables_.discover_interval_secs > 0 &&
                               now - last_discovery >= tables_.discover_interval_secs * 1000;
    if (rediscover_.exchange(false) || discovery_due) {
      last_discovery = now;
      if (Status found = Discover(false); !found.ok()) {
        spdlog::warn("mirror {}: discovery failed ({}); keeping the current table set", name,
                     found.message());
      }
    }
    ASSIGN_OR_RETURN(bool joined, ReapSnapshots());
    ReportProgress();
    bool retry_due = false;
    {
      MutexLock lock(mu_);
      if (retry_cycle_at_ms_ != 0 && retry_cycle_at_ms_ <= now) {
        retry_due = true;
        retry_cycle_at_ms_ = 0;
      }
    }
    // A detached table that has written what it was given streams again from its position.
    const size_t before = draining_.size();
    std::erase_if(draining_, [](const auto& d) { return d->Finished(); });
    const bool drained = draining_.size() < before;
    if ((joined || retry_due || drained) && cycle_) cycle_->end = true;
    std::vector<std::string> due = DueTables(now);
    if (!due.empty() && snapshots_.size() < static_cast<size_t>(tables_.concurrency)) {
      if (bootstrap_position_) {
        RETURN_IF_ERROR(StartSnapshots(*bootstrap_position_, due));
      } else {
        // A joining table's position must be one the running cycle cannot acknowledge past:
        // capture it between cycles.
        RETURN_IF_ERROR(FinishCycle());
        std::vector<std::string> warnings;
        ASSIGN_OR_RETURN(std::unique_ptr<Source> stream,
                         assembly::MakeSource(built_.doc.source, warnings));
        ASSIGN_OR_RETURN(Bookmark position, stream->CapturePosition());
        // The slot may not show the finished cycle's last acknowledgement yet (the server
        // applies it after the session closed): a join point before it would be behind the
        // slot once it does, and the table could not resume.
        if (acknowledged_) {
          Result<Position> captured = stream->PositionOf(position);
          Result<Position> acked = stream->PositionOf(*acknowledged_);
          if (captured.ok() && acked.ok() && *captured < *acked) position = *acknowledged_;
        }
        RETURN_IF_ERROR(StartSnapshots(position, due));
      }
    }
    if (cycle_ && cycle_->done.load()) {
      RETURN_IF_ERROR(FinishCycle());
      if (!last_source_error_.ok()) {
        if (!config_.continuous || !RetryableInMirror(last_source_error_)) {
          outcome = last_source_error_.WithContext("mirror CDC phase failed");
          break;
        }
        if (exporter_ != nullptr) exporter_->CountRetry("", last_source_error_);
        spdlog::warn("mirror {}: the stream failed ({}); retrying in {} s", name,
                     last_source_error_.message(), backoff.count() / 1000.0);
        next_cycle = std::chrono::steady_clock::now() + backoff;
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
      } else {
        backoff = kFirstBackoff;
        bool retry_pending;
        {
          MutexLock lock(mu_);
          retry_pending = retry_cycle_at_ms_ != 0;
        }
        if (!config_.continuous && snapshots_.empty() && DueTables(NowMs()).empty() &&
            !retry_pending) {
          break;  // one-shot: every table loaded and the stream caught up once
        }
      }
    }
    if (!cycle_ && !bootstrap_position_ && std::chrono::steady_clock::now() >= next_cycle) {
      RETURN_IF_ERROR(StartCycle());
      if (!cycle_ && !config_.continuous && snapshots_.empty() && DueTables(NowMs()).empty()) {
        break;  // one-shot with nothing to stream
      }
    }
    if (NowMs() - last_persist >=
        (snapshots_.empty() ? kPersistEveryMs : kPersistSnapshotsEveryMs)) {
      last_persist = NowMs();
      if (Status saved = Persist(); !saved.ok()) {
        spdlog::warn("mirror {}: cannot save the marker: {}", name, saved.message());
      }
    }
    WaitForWork(100ms);
  }
  if (cycle_) {
    cycle_->end = true;
    RETURN_IF_ERROR(FinishCycle());
  }
  for (auto& job : snapshots_) job->thread.join();
  snapshots_.clear();
  draining_.clear();  // waits for them
  RETURN_IF_ERROR(Persist());
  if (!outcome.ok()) return outcome;
  MutexLock lock(mu_);
  if (!config_.continuous && !stop_.load() && !failed_this_run_.empty()) {
    std::string list;
    for (const auto& [table, error] : failed_this_run_) {
      list += (list.empty() ? "" : "; ") + table + ": " + error;
    }
    return FailedPrecondition("mirror: " + std::to_string(failed_this_run_.size()) +
                              " table(s) did not complete this run — " + list);
  }
  return Status::Ok();
}

}  // namespace faucet::mirror
