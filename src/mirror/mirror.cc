#include "mirror/mirror.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <thread>

#include "assembly/registry.h"
#include "core/crash_point.h"
#include "core/pipeline.h"
#include "mirror/snapshot_pass.h"
#include "observability/progress.h"

namespace faucet::mirror {
namespace {

using namespace std::chrono_literals;

constexpr auto kFirstBackoff = 1s;
constexpr auto kMaxBackoff = 60s;

}  // namespace

bool RetryableInMirror(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:     // the config: a person must fix it
    case StatusCode::kFailedPrecondition:  // e.g. resync needed: retrying would loop forever
    case StatusCode::kDataLoss:
    case StatusCode::kNotFound:  // a missing publication or table does not appear by waiting
      return false;
    default:
      return true;
  }
}

Mirror::Mirror(const assembly::BuiltPipeline& built, MirrorConfig config, StateStore& state,
               const std::atomic<bool>& stop)
    : built_(built), config_(std::move(config)), state_(state), stop_(stop) {}

Status Mirror::PutMarker(const char* phase, bool snapshot_done, const Bookmark& position) {
  Json marker = {{"phase", phase},
                 {"snapshot_done", snapshot_done},
                 {"position", position.value},
                 {"snapshot_id", snapshot_id_}};
  return state_.Put(MarkerKey(built_.doc.name), marker);
}

AtomicLoad Mirror::SnapshotAtomic() const {
  return SnapshotLoad(assembly::PipelineDelivery(built_.guarantee), CdcKey(built_.doc.name),
                      snapshot_id_);
}

MirrorStatus Mirror::LiveStatus() {
  MutexLock lock(live_mu_);
  return live_;
}

void Mirror::SaveStatus() {
  status_.updated_ms = NowMs();
  {
    MutexLock lock(live_mu_);
    live_ = status_;
  }
  // Status is for people; failing to save it must not stop the data.
  Status st = state_.Put(StatusKey(built_.doc.name), status_.ToJson());
  if (!st.ok()) spdlog::warn("cannot save mirror status: {}", st.message());
}

void Mirror::Sleep(std::chrono::milliseconds d) const {
  auto until = std::chrono::steady_clock::now() + d;
  while (!stop_.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(100ms);
  }
}

Result<Bookmark> Mirror::Bootstrap() {
  const std::string& name = built_.doc.name;
  // P first: everything committed after it is retained by the source and replayed by the
  // stream, so nothing the snapshot misses is lost.
  // The snapshot source reads inside what this exports (ParseMirrorConfig's gate).
  std::vector<std::string> warnings;  // already reported by validation
  ASSIGN_OR_RETURN(std::unique_ptr<Source> source,
                   assembly::MakeSource(built_.doc.source, warnings));
  ASSIGN_OR_RETURN(CapturedPosition captured, source->CapturePositionWithSnapshot());
  exported_ = std::move(captured.snapshot);
  const Bookmark& position = captured.position;
  spdlog::info("mirror {}: captured position {}", name, position.ToString());
  RETURN_IF_ERROR(state_.Put(CdcKey(name), position.value));
  snapshot_id_ = NewSnapshotId();
  RETURN_IF_ERROR(PutMarker("snapshot", false, position));
  return position;
}

Result<bool> Mirror::Snapshot(const Bookmark& position) {
  const std::string& name = built_.doc.name;
  // The attempt this one would redo (cut short by a crash, or by a failure that may have come
  // after its commit) may have committed after all: then its rows are not sent again.
  ASSIGN_OR_RETURN(bool committed, SnapshotCommitted(built_.doc.sink, SnapshotAtomic()));
  if (committed) {
    spdlog::info(
        "mirror {}: the snapshot committed, though its end was not recorded (its token is in the "
        "sink); not read again, streaming from {}",
        name, position.ToString());
    status_.snapshot_finished_ms = NowMs();
    RETURN_IF_ERROR(PutMarker("cdc", true, position));
    return true;
  }
  status_.phase = "snapshot";
  status_.snapshot_rows = 0;
  status_.snapshot_started_ms = NowMs();
  status_.snapshot_estimate.reset();  // asked of the snapshot source by the read
  SaveStatus();

  std::optional<observability::Progress> progress;
  SnapshotRead read;
  read.doc = &built_.doc;
  read.source = &config_.snapshot_source;
  read.exported = exported_.get();
  read.label = name;
  read.stop = &stop_;
  read.atomic = SnapshotAtomic();
  read.on_estimate = [&](std::optional<int64_t> estimate) {
    if (!status_.snapshot_estimate) status_.snapshot_estimate = estimate;
    progress.emplace("snapshot", status_.snapshot_estimate, isatty(STDERR_FILENO) != 0);
  };
  read.on_rows = [&](uint64_t rows) {
    status_.snapshot_rows = rows;
    {
      MutexLock lock(live_mu_);
      live_.snapshot_rows = rows;
    }
    if (progress && progress->Tick(rows)) SaveStatus();
  };
  Result<PipelineStats> stats = ReadSnapshot(read);
  // The read is done (or failed): release the exporting session. A redo reads the table as
  // it is then, P plus upsert.
  exported_.reset();
  if (progress) progress->Finish(stats.ok() ? stats->changes : status_.snapshot_rows);
  if (!stats.ok()) return stats.status().WithContext("mirror snapshot phase failed");
  if (stats->stopped) {
    spdlog::info("mirror {}: stopped during the snapshot; the next run redoes it from {}", name,
                 position.ToString());
    return false;
  }
  status_.snapshot_rows = stats->changes;
  status_.snapshot_finished_ms = NowMs();
  CrashPoint("mirror.snapshot_committed");
  RETURN_IF_ERROR(PutMarker("cdc", true, position));
  spdlog::info("mirror {}: snapshot done, {} rows; streaming from {}", name, stats->changes,
               position.ToString());
  return true;
}

Status Mirror::RunCdcCycle() {
  std::vector<std::string> warnings;  // already reported by validation
  ASSIGN_OR_RETURN(assembly::PipelineParts parts,
                   assembly::MakeParts(built_.doc, built_.doc.source, false, warnings));
  PipelineOptions options;
  options.state_key = CdcKey(built_.doc.name);
  assembly::ApplyGuarantee(built_.guarantee, options);
  options.stop = &stop_;
  options.dlq = assembly::DlqOptionsFor(built_.doc, parts.dlq_sink.get());
  if (exporter_ != nullptr) options.observer = &exporter_->Pipeline();
  int64_t last_save = 0;
  options.on_page = [&](const Page& page, const PipelineStats&) {
    if (!page.changes.empty() && page.changes.back().commit_time_us > 0) {
      status_.last_commit_ms = page.changes.back().commit_time_us / 1000;
      MutexLock lock(live_mu_);
      live_.last_commit_ms = status_.last_commit_ms;
    }
    int64_t now = NowMs();
    if (now - last_save >= 2000) {
      last_save = now;
      SaveStatus();
    }
  };
  Pipeline pipeline(*parts.source, parts.TransformPtrs(), *parts.sink, state_, options);
  Result<PipelineStats> stats = pipeline.Run();
  if (!stats.ok()) return stats.status();
  if (stats->changes > 0) {
    spdlog::info("mirror {}: {} changes applied, position {}", built_.doc.name, stats->changes,
                 stats->last_bookmark ? stats->last_bookmark->ToString() : "unchanged");
  }
  return Status::Ok();
}

bool Mirror::RetryAfter(const Status& failure, std::chrono::milliseconds& backoff) {
  status_.last_error = failure.message();
  status_.last_error_ms = NowMs();
  SaveStatus();
  if (!config_.continuous || !RetryableInMirror(failure)) return false;
  if (exporter_ != nullptr) exporter_->CountRetry("", failure);
  spdlog::warn("mirror {}: {}; retrying in {} s", built_.doc.name, failure.message(),
               backoff.count() / 1000.0);
  Sleep(backoff);
  backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
  return true;
}

Result<bool> Mirror::SnapshotUntilDone(const Bookmark& position) {
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (true) {
    Result<bool> finished = Snapshot(position);
    if (finished.ok()) return finished;
    if (!RetryAfter(finished.status(), backoff)) return finished.status();
    if (stop_.load()) return false;
  }
}

Status Mirror::Stream() {
  status_.phase = "cdc";
  SaveStatus();
  std::chrono::milliseconds backoff = kFirstBackoff;
  while (!stop_.load()) {
    Status cycle = RunCdcCycle();
    if (cycle.ok()) {
      backoff = kFirstBackoff;
      if (!config_.continuous) break;
      continue;
    }
    if (!RetryAfter(cycle, backoff)) return cycle;
  }
  return Status::Ok();
}

Status Mirror::CheckBookmarkNotBehind(const Bookmark& position) {
  const std::string key = CdcKey(built_.doc.name);
  ASSIGN_OR_RETURN(std::optional<Json> stored, state_.Get(key));
  std::optional<Bookmark> bookmark = stored ? StateBookmark(*stored) : std::nullopt;
  const Source& source = *built_.parts.source;
  Result<Position> captured = source.PositionOf(position);
  if (!bookmark || captured.status().code() == StatusCode::kFailedPrecondition) {
    return Status::Ok();  // not yet persisted (an old layout), or a source without an order
  }
  if (!captured.ok()) {
    return DataLoss("mirror marker " + MarkerKey(built_.doc.name) + ": " +
                    captured.status().message());
  }
  ASSIGN_OR_RETURN(Position resume, source.PositionOf(*bookmark));
  if (resume < *captured) {
    return DataLoss("the CDC bookmark " + key + " = " + bookmark->ToString() +
                    " is before the position the mirror captured, " + position.ToString() + " (" +
                    MarkerKey(built_.doc.name) +
                    "): one of them was changed by hand; resync the mirror");
  }
  return Status::Ok();
}

Status Mirror::Run() {
  const std::string& name = built_.doc.name;
  // One process per mirror: a second one would stream from the same slot and write the same
  // state. The lease dies with this process, however it ends.
  ASSIGN_OR_RETURN(std::unique_ptr<StateLease> lease, TakeMirrorLease(state_, name));
  ASSIGN_OR_RETURN(std::optional<Json> marker, state_.Get(MarkerKey(name)));
  if (Result<std::optional<Json>> s = state_.Get(StatusKey(name)); s.ok() && *s) {
    status_ = MirrorStatus::FromJson(**s);
    MutexLock lock(live_mu_);
    live_ = status_;
  }

  Bookmark position;
  bool snapshot_done = false;
  if (!marker) {
    ASSIGN_OR_RETURN(position, Bootstrap());
  } else {
    if (!marker->is_object() || !marker->contains("position") ||
        !(*marker)["snapshot_done"].is_boolean()) {
      return DataLoss("mirror marker " + MarkerKey(name) + " is malformed: " + marker->dump());
    }
    position = Bookmark{(*marker)["position"]};
    snapshot_done = (*marker)["snapshot_done"].get<bool>();
    if (auto id = marker->find("snapshot_id"); id != marker->end() && id->is_string()) {
      snapshot_id_ = id->get<std::string>();
    }
    RETURN_IF_ERROR(CheckBookmarkNotBehind(position));
    if (!snapshot_done && snapshot_id_.empty()) {  // written by an older version
      snapshot_id_ = NewSnapshotId();
      RETURN_IF_ERROR(PutMarker("snapshot", false, position));
    }
  }
  if (!snapshot_done) {
    ASSIGN_OR_RETURN(bool finished, SnapshotUntilDone(position));
    if (!finished) return Status::Ok();
  }
  Status streamed = Stream();
  status_.phase = streamed.ok() ? "stopped" : "failed";
  SaveStatus();
  return streamed;
}

}  // namespace faucet::mirror
