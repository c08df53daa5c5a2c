// The `mirror:` block (alias `replication:`): snapshot a table, then stream its changes from a
// position captured before the snapshot. Parsed and gated at load time, so `faucet validate`
// reports a config that cannot mirror.
#pragma once

#include <string>
#include <vector>

#include "assembly/pipeline_builder.h"
#include "config/document.h"
#include "mirror/table_plan.h"

namespace faucet::mirror {

struct MirrorConfig {
  bool continuous = true;                 // keep streaming after the snapshot
  config::ConnectorSpec snapshot_source;  // a query source reading the table(s)
  std::optional<TablesConfig> tables;     // `mirror.tables`: a multi-table mirror
};

// Loads `path` and builds its pipeline (assembly::BuildPipeline), checking a `mirror:` block
// first for what needs no built parts: only known keys, nothing this build lacks. For a
// multi-table mirror the pipeline is built with the sink rendered for a sample table
// `sample_schema.sample_table` keyed on [id] (as the reference's validate does): the sink
// config is a template (no table_name of its own).
Result<assembly::BuiltPipeline> BuildMirrorPipeline(const std::string& path);

// Reads built.doc.mirror (required) and checks the gates, from what the built
// connectors declare: the pipeline source captures positions that survive a restart (e.g. a
// permanent slot), the snapshot source reads tables, the state store is durable. A
// single-table mirror's non-upsert sink is a warning (the snapshot/stream overlap may then
// duplicate rows). A multi-table mirror also needs a stream that routes changes to tables
// and a snapshot source that discovers them. Errors name the file, line and key.
Result<MirrorConfig> ParseMirrorConfig(const assembly::BuiltPipeline& built,
                                       std::vector<std::string>& warnings);

}  // namespace faucet::mirror
