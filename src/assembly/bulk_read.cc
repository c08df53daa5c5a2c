#include "assembly/bulk_read.h"

#include <spdlog/spdlog.h>

#include "core/sink.h"

namespace faucet::assembly {

Result<PipelineStats> RunBulkRead(
    const config::Document& doc, const std::string& label,
    const std::function<Result<PipelineStats>(ReadAttempt)>& attempt) {
  if (doc.dlq.has_value()) return attempt({});
  Result<PipelineStats> stats = attempt({.bulk = true});
  if (stats.ok() || !IsBulkLoadRefusal(stats.status())) return stats;
  spdlog::warn("{}: the bulk load was refused ({}); redoing it page by page", label,
               stats.status().message());
  return attempt({.bulk = false, .redo = true});
}

}  // namespace faucet::assembly
