// PipelineMetrics: the metrics of one pipeline, or of one table of a multi-table mirror
// (labels {pipeline} or {pipeline, table}), as a PipelineObserver:
//   faucet_changes_total{op}        changes received from the source
//   faucet_queued_bytes_total       their pages' size in memory, past the transforms
//   faucet_pages_total, faucet_checkpoints_total, faucet_dlq_rows_total
//   faucet_sink_write_seconds, faucet_sink_flush_seconds, faucet_state_put_seconds (histograms)
// and the lag ladder, set by Refresh from the source's log read at one moment:
//   faucet_lag_bytes{stage}    head − the stage's position, for stage received, written,
//                              flushed, persisted, acknowledged (what this process released);
//                              absent until known, NaN while the log cannot be read
//   faucet_lag_seconds{stage}  for written, flushed, persisted: 0 when the stage holds every
//                              change received, else the time since the source committed the
//                              oldest change received that the stage does not hold yet: true
//                              replication lag from commit timestamps, not time since enqueue
//   faucet_pipeline_up         1 while the pipeline runs (source and sink open), else 0
// docs/observability.md lists them with their meaning.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "core/change.h"
#include "core/mutex.h"
#include "core/pending_work.h"
#include "core/pipeline_observer.h"
#include "core/source.h"
#include "observability/metrics.h"

namespace faucet::observability {

class PipelineMetrics final : public PipelineObserver {
 public:
  // `source` turns bookmarks into positions (for a mirror table: the stream's source); both it
  // and `registry` outlive this.
  PipelineMetrics(Registry& registry, const Source& source, Labels labels);

  // A new run: what an earlier run received but never wrote (a failed run drops it) is not
  // waiting any more.
  void Opened() override;
  void Closed() override { up_.Set(0); }
  void Received(const Page& page) override;
  void Queued(size_t bytes) override { bytes_.Add(bytes); }
  void Written(const Page& page, size_t received, std::chrono::nanoseconds took) override;
  void Flushed(const Page& page, std::chrono::nanoseconds took) override;
  void Persisted(const Page& page, std::chrono::nanoseconds took) override;
  void Acknowledged(const Page& page) override;
  void DeadLettered(size_t rows) override { dlq_rows_.Add(rows); }

  bool running() const { return up_.Value() > 0; }

  // Sets the ladder's gauges from `log` (the stream's log, read once for all its pipelines)
  // at `now_us` (microseconds since the Unix epoch).
  void Refresh(const LogStatus& log, int64_t now_us);

 private:
  enum Stage { kReceived, kWritten, kFlushed, kPersisted, kAcknowledged, kStages };
  struct StageState {
    uint64_t pages = 0;                // of the run's received pages, how many it holds
    std::optional<Position> position;  // of the last page with a bookmark that reached it
  };
  // `page` reached `stage`: for received and written, the stage's next `received` received
  // pages (group commit writes several as one); flushed and later hold everything written and
  // ignore `received`.
  void Reached(Stage stage, const Page& page, size_t received) REQUIRES(mu_);
  // The commit time of the oldest change received that `stage` does not hold (0: none).
  int64_t OldestNotAt(Stage stage) const REQUIRES(mu_);

  const Source& source_;
  Registry& registry_;
  const Labels labels_;
  Gauge& up_;
  Counter& pages_;
  Counter& bytes_;
  Counter& checkpoints_;
  Counter& dlq_rows_;
  Histogram& write_seconds_;
  Histogram& flush_seconds_;
  Histogram& put_seconds_;
  Counter* changes_[kChangeOps.size()];  // by ChangeOp
  Gauge* lag_bytes_[kStages] = {};       // created once known
  Gauge* lag_seconds_[kStages] = {};     // written, flushed, persisted only

  Mutex mu_;
  StageState stages_[kStages] GUARDED_BY(mu_);
  // Received pages with changes not yet persisted, oldest first: (the number of the entry's
  // last page among the received ones, the first commit time of its first page). At most
  // kMaxWaiting entries: the newest two merge, which can only make a lag read longer, never
  // shorter.
  static constexpr size_t kMaxWaiting = 4096;
  PendingWork<uint64_t> waiting_ GUARDED_BY(mu_){kMaxWaiting};
  bool ordered_ GUARDED_BY(mu_) = true;  // the source's bookmarks have positions
};

}  // namespace faucet::observability
