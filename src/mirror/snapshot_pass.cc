#include "mirror/snapshot_pass.h"

#include <spdlog/spdlog.h>

#include <random>

#include "assembly/bulk_read.h"
#include "assembly/pipeline_builder.h"
#include "assembly/registry.h"
#include "state/memory_state_store.h"

namespace faucet::mirror {
namespace {

Result<PipelineStats> Pass(const SnapshotRead& read, bool bulk, bool in_exported) {
  std::vector<std::string> warnings;  // already reported by validation
  ASSIGN_OR_RETURN(assembly::PipelineParts parts,
                   assembly::MakeParts(*read.doc, *read.source, true, warnings));
  if (read.on_estimate) read.on_estimate(parts.source->EstimateRows());
  if (in_exported) {
    RETURN_IF_ERROR(parts.source->ReadInSnapshot(*read.exported));
    spdlog::info("mirror {}: reading inside snapshot {} (an exact cut)", read.label,
                 read.exported->id());
  }
  MemoryStateStore scratch;
  PipelineOptions options;
  options.state_key = "snapshot";
  options.stop = read.stop;
  options.bulk_load = bulk;
  options.bulk_atomic = read.atomic;  // used by a bulk load only
  options.dlq = assembly::DlqOptionsFor(*read.doc, parts.dlq_sink.get());
  options.on_page = [&](const Page&, const PipelineStats& stats) {
    if (read.on_rows) read.on_rows(stats.changes);
  };
  Pipeline pipeline(*parts.source, parts.TransformPtrs(), *parts.sink, scratch, options);
  return pipeline.Run();
}

}  // namespace

AtomicLoad SnapshotLoad(Delivery delivery, const std::string& stream_scope, const std::string& id,
                        int64_t shard) {
  if (delivery != Delivery::kAtomicWatermark) return {};
  return {stream_scope + "::snapshot" + (shard >= 0 ? "-" + std::to_string(shard) : ""), id};
}

std::string NewSnapshotId() {
  std::random_device random;
  std::uniform_int_distribution<uint64_t> bits;
  return fmt::format("{:016x}{:016x}", bits(random), bits(random));
}

Result<bool> SnapshotCommitted(const config::ConnectorSpec& sink, const AtomicLoad& load) {
  if (load.scope.empty() || load.token.empty()) return false;
  std::vector<std::string> warnings;  // already reported by validation
  ASSIGN_OR_RETURN(std::unique_ptr<Sink> reader, assembly::MakeSink(sink, warnings));
  ASSIGN_OR_RETURN(std::optional<std::string> token, reader->CommittedToken(load.scope));
  return token == load.token;
}

Result<PipelineStats> ReadSnapshot(const SnapshotRead& read) {
  // The redo reads outside `exported`: a redo cannot have it any more.
  return assembly::RunBulkRead(*read.doc, "mirror " + read.label, [&](assembly::ReadAttempt a) {
    return Pass(read, a.bulk, read.exported != nullptr && !a.redo);
  });
}

}  // namespace faucet::mirror
