#include "cli/observe.h"

#include <chrono>
#include <optional>

#include "core/mutex.h"

namespace faucet::cli {

std::function<Result<Json>()> AtMostOncePerSecond(std::function<Result<Json>()> status) {
  struct Cache {
    Mutex mu;
    std::chrono::steady_clock::time_point at GUARDED_BY(mu);
    std::optional<Result<Json>> last GUARDED_BY(mu);
  };
  auto cache = std::make_shared<Cache>();
  return [cache, status = std::move(status)]() -> Result<Json> {
    MutexLock lock(cache->mu);
    const auto now = std::chrono::steady_clock::now();
    if (!cache->last || now - cache->at >= std::chrono::seconds(1)) {
      cache->last = status();
      cache->at = now;
    }
    return *cache->last;
  };
}

std::unique_ptr<observability::Exporter> MakeExporter(const assembly::BuiltPipeline& built) {
  if (!built.doc.observability) return nullptr;
  std::vector<double> buckets = built.doc.observability->buckets;
  if (buckets.empty()) buckets = observability::DefaultLatencyBuckets();
  return std::make_unique<observability::Exporter>(built.doc.name, *built.parts.source,
                                                   std::move(buckets));
}

Result<std::unique_ptr<observability::Server>> Serve(const assembly::BuiltPipeline& built,
                                                     observability::Exporter* exporter,
                                                     observability::StatusSource status) {
  if (exporter == nullptr) return std::unique_ptr<observability::Server>();
  const config::ObservabilitySpec& spec = *built.doc.observability;
  observability::ServerOptions options;
  options.host = spec.host;
  options.port = spec.port;
  options.auth_token = spec.auth_token;
  status.name = built.doc.name;
  return exporter->Serve(options, status);
}

}  // namespace faucet::cli
