#include "observability/pipeline_metrics.h"

#include <chrono>

namespace faucet::observability {
namespace {

const char* const kStageNames[] = {"received", "written", "flushed", "persisted", "acknowledged"};
const char* const kOpNames[] = {"insert", "update", "delete", "read", "truncate"};

Labels With(Labels labels, const std::string& name, const std::string& value) {
  labels.emplace_back(name, value);
  return labels;
}

double Seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

PipelineMetrics::PipelineMetrics(Registry& registry, const Source& source, Labels labels)
    : source_(source),
      labels_(std::move(labels)),
      up_(registry.GetGauge("faucet_pipeline_up",
                            "1 while the pipeline runs (its source and sink open), else 0",
                            labels_)),
      pages_(registry.GetCounter("faucet_pages_total", "Pages written to the sink", labels_)),
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
  for (int op = 0; op < 5; ++op) {
    changes_[op] = &registry.GetCounter("faucet_changes_total",
                                        "Changes received from the source, by operation",
                                        With(labels_, "op", kOpNames[op]));
    bytes_[op] = &registry.GetCounter("faucet_change_bytes_total",
                                      "Bytes of changes received from the source (in memory), "
                                      "by operation",
                                      With(labels_, "op", kOpNames[op]));
  }
  for (int stage = 0; stage < kStages; ++stage) {
    lag_bytes_[stage] = &registry.GetGauge(
        "faucet_lag_bytes", "Bytes of the source's log between a stage's position and the head",
        With(labels_, "stage", kStageNames[stage]));
    lag_seconds_[stage] = nullptr;
    if (stage == kWritten || stage == kFlushed || stage == kPersisted) {
      lag_seconds_[stage] = &registry.GetGauge(
          "faucet_lag_seconds",
          "Seconds since the source committed the newest change a stage holds; 0 when the "
          "stage holds everything received",
          With(labels_, "stage", kStageNames[stage]));
    }
  }
}

void PipelineMetrics::Reached(Stage stage, const Page& page) {
  StageState& s = stages_[stage];
  if (stage <= kWritten) {
    ++s.pages;
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
  for (auto it = page.changes.rbegin(); it != page.changes.rend(); ++it) {
    if (it->commit_time_us > 0) {
      s.last_commit_us = it->commit_time_us;
      break;
    }
  }
}

void PipelineMetrics::Received(const Page& page) {
  uint64_t changes[5] = {};
  uint64_t bytes[5] = {};
  for (const Change& c : page.changes) {
    const auto op = static_cast<size_t>(c.op);
    if (op >= 5) continue;
    ++changes[op];
    bytes[op] += c.ApproxBytes();
  }
  for (size_t op = 0; op < 5; ++op) {
    if (changes[op] == 0) continue;
    changes_[op]->Add(changes[op]);
    bytes_[op]->Add(bytes[op]);
  }
  MutexLock lock(mu_);
  if (first_commit_us_ == 0 && !page.changes.empty()) {
    first_commit_us_ = page.changes.front().commit_time_us;
  }
  Reached(kReceived, page);
}

void PipelineMetrics::Written(const Page& page, std::chrono::nanoseconds took) {
  pages_.Add();
  write_seconds_.Observe(Seconds(took));
  MutexLock lock(mu_);
  Reached(kWritten, page);
}

void PipelineMetrics::Flushed(const Page& page, std::chrono::nanoseconds took) {
  flush_seconds_.Observe(Seconds(took));
  MutexLock lock(mu_);
  Reached(kFlushed, page);
}

void PipelineMetrics::Persisted(const Page& page, std::chrono::nanoseconds took) {
  checkpoints_.Add();
  put_seconds_.Observe(Seconds(took));
  MutexLock lock(mu_);
  Reached(kPersisted, page);
}

void PipelineMetrics::Acknowledged(const Page& page) {
  MutexLock lock(mu_);
  Reached(kAcknowledged, page);
}

void PipelineMetrics::Refresh(const LogStatus& log, int64_t now_us) {
  MutexLock lock(mu_);
  for (int stage = 0; stage < kStages; ++stage) {
    const StageState& s = stages_[stage];
    if (log.head && s.position) {
      std::optional<int64_t> behind = source_.BytesBetween(*s.position, *log.head);
      if (behind) lag_bytes_[stage]->Set(static_cast<double>(*behind));
    }
    if (lag_seconds_[stage] == nullptr) continue;
    double secs = 0;
    if (s.pages < stages_[kReceived].pages) {
      const int64_t since = s.last_commit_us > 0 ? s.last_commit_us : first_commit_us_;
      if (since > 0 && now_us > since) secs = static_cast<double>(now_us - since) / 1e6;
    }
    lag_seconds_[stage]->Set(secs);
  }
}

}  // namespace faucet::observability
