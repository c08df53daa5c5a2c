// Exporter: the metrics of one `faucet run` or `faucet mirror` process. It owns the registry
// and the pipelines' metrics, and at each scrape reads the stream's log once (at most once a
// second) to set the lag ladder of every pipeline and the stream's own gauges:
//   faucet_lag_bytes{stage="confirmed"}  head − what the server holds as acknowledged
//   faucet_source_retained_bytes         log the server keeps for this stream
//   faucet_source_headroom_bytes         log the server may still write before it drops some
//                                        this stream needs (absent when unlimited)
// Serve starts the HTTP server (server.h) on it.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/mutex.h"
#include "core/source.h"
#include "observability/metrics.h"
#include "observability/pipeline_metrics.h"
#include "observability/server.h"

namespace faucet::observability {

class Exporter {
 public:
  // `stream` is the change stream's source (borrowed, outlives this): it turns bookmarks into
  // positions and reads the log's state.
  Exporter(const std::string& pipeline, const Source& stream, std::vector<double> buckets);

  Registry& registry() { return registry_; }
  const std::string& pipeline() const { return pipeline_; }

  // The metrics of the pipeline (table "": the whole pipeline) or of one table of a mirror,
  // created on first use and kept for the exporter's lifetime.
  PipelineMetrics& Pipeline(const std::string& table = "");

  // Counts a failure that will be retried, as faucet_retries_total{cause} (the status code's
  // name: unavailable, data_loss, ...), with `table` for a mirror's table ("" for the stream).
  void CountRetry(const std::string& table, const Status& cause);

  // Starts serving `registry()`. REQUIRES: the result is destroyed before anything `status`
  // or a collector refers to, and before this exporter.
  Result<std::unique_ptr<Server>> Serve(const ServerOptions& options, const StatusSource& status);

 private:
  void Collect();

  const std::string pipeline_;
  const Source& stream_;
  Registry registry_;
  Mutex mu_;
  std::map<std::string, std::unique_ptr<PipelineMetrics>> pipelines_ GUARDED_BY(mu_);
  // Touched by Collect only, which the registry runs one scrape at a time.
  LogStatus log_;
  int64_t log_read_us_ = 0;
};

}  // namespace faucet::observability
