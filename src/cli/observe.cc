#include "cli/observe.h"

namespace faucet::cli {

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
