// The `mirror:` block (alias `replication:`): snapshot a table, then stream its changes from a
// position captured before the snapshot. Parsed and gated at load time, so `faucet validate`
// reports a config that cannot mirror.
#pragma once

#include <string>
#include <vector>

#include "assembly/pipeline_builder.h"
#include "config/document.h"

namespace faucet::mirror {

struct MirrorConfig {
  bool continuous = true;                 // keep streaming after the snapshot
  config::ConnectorSpec snapshot_source;  // a query source reading the table(s)
};

// Loads `path` and builds its pipeline (assembly::BuildPipeline), checking a `mirror:` block
// first for what needs no built parts: only known keys, nothing this build lacks (a
// multi-table mirror, parallel snapshots). Such a config is then refused for what its mirror
// asks, not for a sink config written for it (a destination template has no table_name).
Result<assembly::BuiltPipeline> BuildMirrorPipeline(const std::string& path);

// Reads built.doc.mirror (required) and checks the gates, from what the built
// connectors declare: the pipeline source captures positions that survive a restart (e.g. a
// permanent slot), the snapshot source reads tables, the state store is durable. A non-upsert
// sink is a warning (the snapshot/stream overlap may then duplicate rows). Errors name the
// file, line and key.
Result<MirrorConfig> ParseMirrorConfig(const assembly::BuiltPipeline& built,
                                       std::vector<std::string>& warnings);

}  // namespace faucet::mirror
