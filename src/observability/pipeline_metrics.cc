#include "observability/pipeline_metrics.h"

#include <chrono>
#include <limits>

namespace faucet::observability {
namespace {

const char* const kStageNames[] = {"received", "written", "flushed", "persisted", "acknowledged"};

Labels With(Labels labels, const std::string& name, const std::string& value) {
  labels.emplace_back(name, value);
  return labels;
}

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

PipelineMetrics::PipelineMetrics(Registry& registry, const Source& source, Labels labels)
    : source_(source),
      registry_(registry),
      labels_(std::move(labels)),
      up_(registry.GetGauge("faucet_pipeline_up",
                            "1 while the pipeline runs (its source and sink open), else 0",
                            labels_)),
      pages_(registry.GetCounter("faucet_pages_total", "Pages written to the sink", labels_)),
      bytes_(registry.GetCounter("faucet_queued_bytes_total",
                                 "Bytes in memory of the pages received, past the transforms",
                                 labels_)),
      checkpoints_(registry.GetCounter("faucet_checkpoints_total",
                                       "Positions persisted to the state store after a flush",
                                       labels_)),
      dlq_rows_(registry.GetCounter("faucet_dlq_rows_total",
                                    "Rows the sink rejected, written to the dead-letter queue",
                                    labels_)),
      write_seconds_(registry.GetHistogram("faucet_sink_write_seconds",
                                           "Time to write one page to the sink", labels_)),
      flush_seconds_(registry.GetHistogram("faucet_sink_flush_seconds",
                                           "Time to make the sink durable after a page", labels_)),
      put_seconds_(registry.GetHistogram(
          "faucet_state_put_seconds", "Time to persist a position to the state store", labels_)) {
  for (ChangeOp op : kChangeOps) {
    changes_[static_cast<size_t>(op)] = &registry.GetCounter(
        "faucet_changes_total", "Changes received from the source, by operation",
        With(labels_, "op", ChangeOpName(op)));
  }
  for (Stage stage : {kWritten, kFlushed, kPersisted}) {
    lag_seconds_[stage] = &registry.GetGauge(
        "faucet_lag_seconds",
        "Seconds since the source committed the oldest change received that a stage does not "
        "hold yet; 0 when it holds every change received",
        With(labels_, "stage", kStageNames[stage]));
  }
}

void PipelineMetrics::Opened() {
  {
    MutexLock lock(mu_);
    for (StageState& s : stages_) s.pages = 0;
    waiting_.Clear();
  }
  up_.Set(1);
}

void PipelineMetrics::Reached(Stage stage, const Page& page, size_t received) {
  StageState& s = stages_[stage];
  if (stage <= kWritten) {
    s.pages += received;  // every received page is written once (transforms may empty it)
  } else {
    s.pages = stages_[kWritten].pages;  // a flush covers everything written
  }
  if (page.bookmark && ordered_) {
    Result<Position> p = source_.PositionOf(*page.bookmark);
    if (p.ok()) {
      s.position = *p;
    } else if (p.status().code() == StatusCode::kFailedPrecondition) {
      ordered_ = false;  // a source without positions (a generator, a query): never ask again
    }
  }
  if (stage == kPersisted) {
    const uint64_t persisted = s.pages;  // read under the lock, not inside the lambda
    waiting_.Retire([persisted](uint64_t last_page) { return last_page <= persisted; });
  }
}

int64_t PipelineMetrics::OldestNotAt(Stage stage) const {
  const uint64_t reached = stages_[stage].pages;  // read under the lock, not inside the lambda
  return waiting_.OldestNot([reached](uint64_t last_page) { return last_page <= reached; });
}

void PipelineMetrics::Received(const Page& page) {
  uint64_t changes[kChangeOps.size()] = {};
  for (const Change& c : page.changes) {
    const auto op = static_cast<size_t>(c.op);
    if (op < kChangeOps.size()) ++changes[op];
  }
  for (size_t op = 0; op < kChangeOps.size(); ++op) {
    if (changes[op] > 0) changes_[op]->Add(changes[op]);
  }
  MutexLock lock(mu_);
  Reached(kReceived, page, 1);
  if (page.changes.empty()) return;
  int64_t first_commit_us = 0;
  for (const Change& c : page.changes) {
    if (c.commit_time_us > 0) {
      first_commit_us = c.commit_time_us;
      break;
    }
  }
  waiting_.Add(stages_[kReceived].pages, first_commit_us);
}

void PipelineMetrics::Written(const Page& page, size_t received, std::chrono::nanoseconds took) {
  pages_.Add();
  write_seconds_.Observe(Seconds(took));
  MutexLock lock(mu_);
  Reached(kWritten, page, received);
}

void PipelineMetrics::Flushed(const Page& page, std::chrono::nanoseconds took) {
  flush_seconds_.Observe(Seconds(took));
  MutexLock lock(mu_);
  Reached(kFlushed, page, 0);
}

void PipelineMetrics::Persisted(const Page& page, std::chrono::nanoseconds took) {
  checkpoints_.Add();
  put_seconds_.Observe(Seconds(took));
  MutexLock lock(mu_);
  Reached(kPersisted, page, 0);
}

void PipelineMetrics::Acknowledged(const Page& page) {
  MutexLock lock(mu_);
  Reached(kAcknowledged, page, 0);
}

void PipelineMetrics::Refresh(const LogStatus& log, int64_t now_us) {
  MutexLock lock(mu_);
  for (int stage = 0; stage < kStages; ++stage) {
    const StageState& s = stages_[stage];
    std::optional<int64_t> behind;
    if (log.head && s.position) behind = source_.BytesBetween(*s.position, *log.head);
    if (behind && lag_bytes_[stage] == nullptr) {
      lag_bytes_[stage] = &registry_.GetGauge(
          "faucet_lag_bytes", "Bytes of the source's log between a stage's position and the head",
          With(labels_, "stage", kStageNames[stage]));
    }
    if (lag_bytes_[stage] != nullptr) {
      lag_bytes_[stage]->Set(behind ? static_cast<double>(*behind)
                                    : std::numeric_limits<double>::quiet_NaN());
    }
    if (lag_seconds_[stage] == nullptr) continue;
    const int64_t oldest = OldestNotAt(static_cast<Stage>(stage));
    lag_seconds_[stage]->Set(
        oldest > 0 && now_us > oldest ? static_cast<double>(now_us - oldest) / 1e6 : 0.0);
  }
}

}  // namespace faucet::observability
