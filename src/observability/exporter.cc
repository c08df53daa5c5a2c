#include "observability/exporter.h"

#include <chrono>

namespace faucet::observability {
namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr int64_t kLogReadEveryUs = 1'000'000;

}  // namespace

Exporter::Exporter(const std::string& pipeline, const Source& stream, std::vector<double> buckets)
    : pipeline_(pipeline), stream_(stream), registry_(std::move(buckets)) {
  registry_.OnCollect([this] { Collect(); });
}

PipelineMetrics& Exporter::Pipeline(const std::string& table) {
  MutexLock lock(mu_);
  std::unique_ptr<PipelineMetrics>& slot = pipelines_[table];
  if (!slot) {
    Labels labels{{"pipeline", pipeline_}};
    if (!table.empty()) labels.emplace_back("table", table);
    slot = std::make_unique<PipelineMetrics>(registry_, stream_, labels);
  }
  return *slot;
}

void Exporter::Collect() {
  const int64_t now = NowUs();
  if (now - log_read_us_ >= kLogReadEveryUs) {
    log_ = stream_.ReadLogStatus();
    log_read_us_ = now;
    const Labels labels{{"pipeline", pipeline_}};
    if (log_.head && log_.acknowledged) {
      if (std::optional<int64_t> behind = stream_.BytesBetween(*log_.acknowledged, *log_.head)) {
        Labels confirmed = labels;
        confirmed.emplace_back("stage", "confirmed");
        registry_
            .GetGauge("faucet_lag_bytes",
                      "Bytes of the source's log between a stage's position and the head",
                      confirmed)
            .Set(static_cast<double>(*behind));
      }
    }
    if (log_.retained_bytes) {
      registry_
          .GetGauge("faucet_source_retained_bytes",
                    "Bytes of log the source's server keeps for this stream", labels)
          .Set(static_cast<double>(*log_.retained_bytes));
    }
    if (log_.headroom_bytes) {
      registry_
          .GetGauge("faucet_source_headroom_bytes",
                    "Bytes of log the server may still write before it drops some this stream "
                    "needs (max_slot_wal_keep_size)",
                    labels)
          .Set(static_cast<double>(*log_.headroom_bytes));
    }
  }
  MutexLock lock(mu_);
  for (auto& [table, metrics] : pipelines_) metrics->Refresh(log_, now);
}

void Exporter::CountRetry(const std::string& table, const Status& cause) {
  Labels labels{{"pipeline", pipeline_}};
  if (!table.empty()) labels.emplace_back("table", table);
  labels.emplace_back("cause", StatusCodeName(cause.code()));
  registry_
      .GetCounter("faucet_retries_total",
                  "Failures retried after a backoff (a stream, a table, a snapshot), by cause",
                  labels)
      .Add();
}

Result<std::unique_ptr<Server>> Exporter::Serve(const ServerOptions& options,
                                                const StatusSource& status) {
  return Server::Start(options, registry_, status);
}

}  // namespace faucet::observability
