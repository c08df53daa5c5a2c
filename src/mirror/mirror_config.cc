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
  for (const std::string& key : block.Keys()) {
    if (key != "mode" && key != "continuous" && key != "snapshot" && key != "tables" &&
        key != "per_table") {
      return block.KeyError(key, "unknown key '" + key +
                                     "' (expected one of: mode, continuous, snapshot, tables, "
                                     "per_table)");
    }
  }
  ASSIGN_OR_RETURN(config::Block snapshot, block.Child("snapshot"));
  for (const std::string& key : snapshot.Keys()) {
    if (key != "source" && key != "concurrency" && key != "shards") {
      return snapshot.KeyError(
          key, "unknown key '" + key + "' (expected one of: source, concurrency, shards)");
    }
  }
  return ParseTablesConfig(block).status();
}

// A multi-table config's sink is a template: renders it for a sample table.
Status RenderSampleSink(config::Document& doc) {
  ASSIGN_OR_RETURN(std::optional<TablesConfig> tables, ParseTablesConfig(*doc.mirror));
  if (!tables) return Status::Ok();
  if (tables->destination.IsNull() && DefaultDestinationField(doc.sink.type).empty()) {
    return doc.sink.spec.Error(
        "type", "sink '" + doc.sink.type +
                    "' has no default per-table destination — set mirror.tables.destination "
                    "(string values may use {table}, {table_name}, {schema})");
  }
  std::vector<std::string> warnings;  // reported when the pipeline is built
  ASSIGN_OR_RETURN(config::Block snapshot, doc.mirror->Child("snapshot"));
  ASSIGN_OR_RETURN(config::ConnectorSpec source,
                   config::ParseSourceSpec(snapshot, "source", warnings));
  DiscoveredTable sample;
  sample.name = "sample_schema.sample_table";
  sample.schema = "sample_schema";
  sample.table = "sample_table";
  sample.key = {"id"};
  TablePlan plan =
      PlanTable(*tables, doc, source, sample, assembly::SinkWritesByKey(doc.sink.type));
  if (!plan.refused.empty()) return doc.sink.spec.Error("config", plan.refused);
  doc.sink = plan.sink;
  return Status::Ok();
}

}  // namespace

Result<assembly::BuiltPipeline> BuildMirrorPipeline(const std::string& path) {
  ASSIGN_OR_RETURN(config::Document doc, config::LoadDocument(path));
  if (doc.mirror) {
    RETURN_IF_ERROR(CheckMirrorBlock(doc));
    RETURN_IF_ERROR(RenderSampleSink(doc));
  }
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
  ASSIGN_OR_RETURN(cfg.tables, ParseTablesConfig(block));

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
    return doc.source.spec.Error(
        "config", "a mirror needs a position that survives a restart: " + cdc.position_not_durable);
  }
  if (cfg.tables) {
    if (!cdc.routes_tables) {
      return doc.source.spec.Error("type",
                                   "a multi-table mirror needs a CDC source that routes records "
                                   "to tables (postgres-cdc, mysql-cdc); got '" +
                                       doc.source.type + "'");
    }
    if (!reader->Capabilities().discovers_tables) {
      return cfg.snapshot_source.spec.Error(
          "type", "mirror.snapshot.source '" + cfg.snapshot_source.type +
                      "' cannot discover tables; a multi-table mirror resolves its table set "
                      "from the snapshot source's discovery");
    }
    // MultiMirror::StartSnapshots reads append tables whole (those per_table makes append,
    // and keyless ones, are only known there).
    const YAML::Node mode = doc.sink.config.node()["write_mode"];  // const: reads only
    const bool appends = !assembly::SinkWritesByKey(doc.sink.type) ||
                         (mode.IsDefined() && mode.IsScalar() && mode.Scalar() == "append");
    if (cfg.tables->shards > 1 && appends &&
        assembly::PipelineDelivery(built.guarantee) == Delivery::kAtomicWatermark) {
      warnings.push_back(snapshot.Where("shards") +
                         ": mirror.snapshot.shards: the tables are read whole, not in parts: "
                         "their " +
                         doc.sink.type +
                         " destination is appended to, and under delivery exactly_once a split "
                         "read redone after a crash would send the parts read before it twice");
    }
    return cfg;
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
