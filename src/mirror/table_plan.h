// The plan of a multi-table mirror (`mirror.tables`, `mirror.per_table`): which discovered
// tables it mirrors, and for each one the sink config, write mode, key and snapshot read. Pure
// functions of the config and the discovered tables, no I/O. The grammar, defaults and refusal
// texts are the reference system's (../shared/spec/reference-multitable.md §1).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/document.h"
#include "core/source.h"

namespace faucet::mirror {

enum class NewTables { kFollow, kIgnore };
enum class WithoutPrimaryKey { kRefuse, kAppend };
enum class OnTableError { kPause, kFail };

// `mirror.per_table.<table>`: overrides for one discovered table.
struct TableOverride {
  std::optional<std::vector<std::string>> key;
  std::optional<std::string> write_mode;
  YAML::Node sink;      // a sink-config patch (a mapping), or null
  YAML::Node snapshot;  // a snapshot-source-config patch (a mapping), or null
  std::optional<config::SchemaSpec> schema_drift;  // replaces pipeline.schema for the table
};

struct TablesConfig {
  std::vector<std::string> include{"*"};
  std::vector<std::string> exclude;
  NewTables new_tables = NewTables::kFollow;
  int64_t discover_interval_secs = 300;  // 0: no periodic discovery
  WithoutPrimaryKey without_primary_key = WithoutPrimaryKey::kRefuse;
  YAML::Node destination;  // a mapping of sink-config fields, or null: the sink's default
  OnTableError on_table_error = OnTableError::kPause;
  int64_t max_table_failures = 3;   // 0 acts as 1
  int64_t retry_paused_secs = 300;  // 0: paused until the mirror restarts
  int64_t lag_warning_secs = 300;   // 0: no lag warning
  int64_t concurrency = 4;          // mirror.snapshot.concurrency: tables snapshotted at once
  int64_t shards = 0;               // mirror.snapshot.shards: key ranges per table; 0/1 whole
  std::map<std::string, TableOverride> per_table;  // keyed by discovered name
};

// Reads `mirror.tables`, `mirror.per_table` and `mirror.snapshot.{concurrency,shards}` of the
// `mirror:` block. nullopt when there is no `tables:` (a single-table mirror); then
// `per_table` and `shards > 1` are errors. Unknown keys are errors. Every error names the
// file, line and key, with the reference's text.
Result<std::optional<TablesConfig>> ParseTablesConfig(const config::Block& mirror);

// `*` matches any run of characters (also '.' and none), `?` exactly one; case-sensitive, no
// classes, no escapes.
bool GlobMatch(const std::string& glob, const std::string& name);

// Some include matches and no exclude does.
bool Selected(const TablesConfig& config, const std::string& table);

// The table's id in state keys ({name}::{id}): every character outside [A-Za-z0-9_.-]
// becomes '_', a leading '.' becomes '_', and a leading "__" gets a 't' prefix (so no table
// takes the mirror's own "__replication__" key).
std::string NodeId(const std::string& table);

// A deep copy of `node` with {table_name} (after the last '.'), {schema} (before it, "" when
// none) and {table} (the whole name) replaced in that order in every string scalar,
// recursively through mappings and sequences.
YAML::Node RenderPlaceholders(const YAML::Node& node, const std::string& table);

// A deep copy of `base` with `patch` merged in: mappings merge key by key recursively,
// anything else in `patch` replaces. A null patch leaves `base`.
YAML::Node DeepMerge(const YAML::Node& base, const YAML::Node& patch);

// The sink-config field a sink type names its destination with by default (postgres, mysql,
// sqlite: "table_name"); "" when the type has none (file sinks).
std::string DefaultDestinationField(const std::string& sink_type);

// One table's resolved pipeline.
struct TablePlan {
  std::string table;  // the discovered name
  std::string id;     // NodeId(table)
  // pipeline.sink with its config = template, merged with the rendered destination (or the
  // default {field: "{table_name}"}), then the rendered per_table.sink; `write_mode` and
  // `key` then forced to the values below (`key` and `delete_marker` removed without a key).
  config::ConnectorSpec sink;
  // The snapshot source with its config = template, merged with the discovered read_patch,
  // then the rendered per_table.snapshot.
  config::ConnectorSpec snapshot;
  std::string write_mode;        // per_table, else the template's, else upsert/append
  std::vector<std::string> key;  // per_table, else the discovered key; empty under append
  std::string refused;           // why it cannot be mirrored ("" when it can)
  // per_table.schema_drift, else pipeline.schema; absent: the default policy.
  std::optional<config::SchemaSpec> schema;
};

// Resolves one discovered table. `sink_upserts`: the sink type supports write_mode upsert.
// Refusal texts are the reference's (no primary key; no default destination).
TablePlan PlanTable(const TablesConfig& config, const config::Document& doc,
                    const config::ConnectorSpec& snapshot_template, const DiscoveredTable& table,
                    bool sink_upserts);

// The plan's sink writing a whole new copy of its destination, swapped in when the run
// completes (write_mode overwrite; no key, no delete marker): a re-snapshot that replaces.
// `doc` is the config the plan was made from.
config::ConnectorSpec OverwriteSink(const TablePlan& plan, const config::Document& doc);

// The plan's snapshot read with `patch` (a part of it: Source::PlanShards) set over its config.
config::ConnectorSpec ShardRead(const TablePlan& plan,
                                const std::map<std::string, std::string>& patch,
                                const config::Document& doc);

// The destination a plan writes: its rendered sink config without `key` and `write_mode`,
// as canonical text (equal text = same destination).
std::string DestinationOf(const TablePlan& plan);

// Refuses every plan (not yet refused) that writes the same destination as another one:
// "writes the same destination as '{other}' — set mirror.tables.destination (e.g. {
// table_name: \"{schema}_{table_name}\" })". A table in `incumbents` keeps its destination;
// among newcomers the first in name order keeps it.
void RefuseCollisions(std::vector<TablePlan>& plans, const std::set<std::string>& incumbents);

}  // namespace faucet::mirror
