#include "mirror/mirror_config.h"

#include "assembly/registry.h"

namespace faucet::mirror {
namespace {

// The checks of BuildMirrorPipeline; also that the block exists.
Status CheckMirrorBlock(const config::Document& doc) {
  if (!doc.mirror) {
    return doc.root.Error("",
                          "has no mirror: block (faucet mirror needs mode and snapshot.source)");
  }
  const config::Block& block = *doc.mirror;
  for (const char* key : {"tables", "per_table"}) {
    if (block.Has(key)) {
      return block.Error(key,
                         "a multi-table mirror is not available in this build (mirror one "
                         "table per config)");
    }
  }
  for (const std::string& key : block.Keys()) {
    if (key != "mode" && key != "continuous" && key != "snapshot") {
      return block.Error(key, "unknown key (expected mode, continuous, snapshot)");
    }
  }
  ASSIGN_OR_RETURN(config::Block snapshot, block.Child("snapshot"));
  for (const std::string& key : snapshot.Keys()) {
    if (key == "concurrency" || key == "shards") {
      return snapshot.Error(key, "is not available in this build (the snapshot is one stream)");
    }
    if (key != "source") return snapshot.Error(key, "unknown key (expected source)");
  }
  return Status::Ok();
}

}  // namespace

Result<assembly::BuiltPipeline> BuildMirrorPipeline(const std::string& path) {
  ASSIGN_OR_RETURN(config::Document doc, config::LoadDocument(path));
  if (doc.mirror) RETURN_IF_ERROR(CheckMirrorBlock(doc));
  return assembly::BuildPipeline(std::move(doc));
}

Result<MirrorConfig> ParseMirrorConfig(const assembly::BuiltPipeline& built,
                                       std::vector<std::string>& warnings) {
  const config::Document& doc = built.doc;
  RETURN_IF_ERROR(CheckMirrorBlock(doc));
  const config::Block& block = *doc.mirror;
  MirrorConfig cfg;
  ASSIGN_OR_RETURN(std::string mode,
                   block.Enum("mode", "snapshot_then_cdc", {"snapshot_then_cdc"}));
  ASSIGN_OR_RETURN(cfg.continuous, block.Bool("continuous", true));
  ASSIGN_OR_RETURN(config::Block snapshot, block.Child("snapshot"));
  ASSIGN_OR_RETURN(cfg.snapshot_source, config::ParseSourceSpec(snapshot, "source", warnings));

  const SourceCapabilities cdc = built.parts.source->Capabilities();
  if (!cdc.captures_position) {
    return doc.source.spec.Error("type",
                                 "a mirror streams from a CDC source (e.g. postgres-cdc), "
                                 "not '" +
                                     doc.source.type + "'");
  }
  std::vector<std::string> snapshot_warnings;
  ASSIGN_OR_RETURN(std::unique_ptr<Source> reader,
                   assembly::MakeSource(cfg.snapshot_source, snapshot_warnings));
  if (!reader->Capabilities().reads_snapshots) {
    return cfg.snapshot_source.spec.Error(
        "type", "the snapshot reads with a query source (e.g. postgres), not '" +
                    cfg.snapshot_source.type + "'");
  }
  warnings.insert(warnings.end(), snapshot_warnings.begin(), snapshot_warnings.end());

  if (!doc.state) {
    return doc.root.Error("pipeline",
                          "a mirror needs a durable state store (pipeline.state: file, "
                          "postgres or redis) to keep its position and phase");
  }
  if (built.state && DurabilityOf(built.state->type) == Durability::kNone) {
    return doc.state->spec.Error("type",
                                 "a mirror needs a durable state store: 'memory' would "
                                 "lose the captured position on restart");
  }
  if (!cdc.position_not_durable.empty()) {
    return doc.source.spec.Error("config", "a mirror needs a position that survives a restart: " +
                                               cdc.position_not_durable);
  }
  if (!built.parts.sink->Capabilities().dedups_by_key) {
    warnings.push_back(doc.sink.spec.Where("type") +
                       ": pipeline.sink: does not write by key (write_mode: upsert and a key), "
                       "so changes in the overlap of the snapshot and the stream may be applied "
                       "twice (duplicates)");
  }
  return cfg;
}

}  // namespace faucet::mirror
