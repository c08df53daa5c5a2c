#include "mirror/table_plan.h"

#include <algorithm>
#include <memory>
#include <string_view>

namespace faucet::mirror {
namespace {

const std::vector<std::string> kSnapshotKeys = {"source", "concurrency", "shards"};
const std::vector<std::string> kTablesKeys = {"include",
                                              "exclude",
                                              "new_tables",
                                              "discover_interval_secs",
                                              "without_primary_key",
                                              "destination",
                                              "on_table_error",
                                              "max_table_failures",
                                              "retry_paused_secs",
                                              "lag_warning_secs"};
const std::vector<std::string> kOverrideKeys = {"key", "write_mode", "sink", "snapshot",
                                                "schema_drift"};

// Rejects keys outside `allowed`.
Status CheckKeys(const config::Block& block, const std::vector<std::string>& allowed) {
  for (const std::string& key : block.Keys()) {
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    std::string list;
    for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
    return block.KeyError(key, "unknown key '" + key + "' (expected one of: " + list + ")");
  }
  return Status::Ok();
}

// The value at `key` of a mapping, or an undefined node; never inserts (a non-const
// operator[] would).
YAML::Node Find(const YAML::Node& map, const std::string& key) {
  if (map.IsMap()) {
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (it->first.Scalar() == key) return it->second;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool Present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

// A deep copy, so that later edits never reach the document's shared nodes (yaml-cpp nodes
// are references). Keeps tags; yaml-cpp's Clone does not keep marks. Null for an undefined
// node.
YAML::Node Copy(const YAML::Node& node) {
  return node.IsDefined() ? YAML::Clone(node) : YAML::Node();
}

Result<TableOverride> ParseOverride(const config::Block& block) {
  RETURN_IF_ERROR(CheckKeys(block, kOverrideKeys));
  TableOverride out;
  ASSIGN_OR_RETURN(std::vector<std::string> key, block.StringList("key"));
  if (Present(Find(block.node(), "key"))) out.key = std::move(key);
  ASSIGN_OR_RETURN(out.write_mode, block.OptionalString("write_mode"));
  if (out.write_mode) {
    ASSIGN_OR_RETURN(out.write_mode, block.Enum("write_mode", "", {"append", "upsert", "delete"}));
  }
  ASSIGN_OR_RETURN(std::optional<config::Block> sink, block.OptionalChild("sink"));
  if (sink) out.sink = Copy(sink->node());
  ASSIGN_OR_RETURN(std::optional<config::Block> snapshot, block.OptionalChild("snapshot"));
  if (snapshot) out.snapshot = Copy(snapshot->node());
  ASSIGN_OR_RETURN(std::optional<config::Block> drift, block.OptionalChild("schema_drift"));
  if (drift) {
    ASSIGN_OR_RETURN(out.schema_drift, config::ParseSchemaSpec(*drift));
  }
  return out;
}

Result<TablesConfig> ParseTables(const config::Block& tables) {
  RETURN_IF_ERROR(CheckKeys(tables, kTablesKeys));
  TablesConfig out;
  if (tables.Has("include")) {
    ASSIGN_OR_RETURN(out.include, tables.StringList("include"));
    if (out.include.empty()) {
      return tables.Error("include", "mirror.tables.include must name at least one glob");
    }
  }
  ASSIGN_OR_RETURN(out.exclude, tables.StringList("exclude"));
  ASSIGN_OR_RETURN(std::string new_tables,
                   tables.Enum("new_tables", "follow", {"follow", "ignore"}));
  out.new_tables = new_tables == "ignore" ? NewTables::kIgnore : NewTables::kFollow;
  ASSIGN_OR_RETURN(out.discover_interval_secs, tables.Int("discover_interval_secs", 300, 0));
  ASSIGN_OR_RETURN(std::string without_pk,
                   tables.Enum("without_primary_key", "refuse", {"refuse", "append"}));
  out.without_primary_key =
      without_pk == "append" ? WithoutPrimaryKey::kAppend : WithoutPrimaryKey::kRefuse;
  tables.MarkRead("destination");
  YAML::Node destination = Find(tables.node(), "destination");
  if (Present(destination)) {
    if (!destination.IsMap()) {
      return tables.Error("destination",
                          "mirror.tables.destination must be a mapping of sink-config fields");
    }
    out.destination = Copy(destination);
  }
  ASSIGN_OR_RETURN(std::string on_error, tables.Enum("on_table_error", "pause", {"pause", "fail"}));
  out.on_table_error = on_error == "fail" ? OnTableError::kFail : OnTableError::kPause;
  ASSIGN_OR_RETURN(out.max_table_failures, tables.Int("max_table_failures", 3, 0));
  ASSIGN_OR_RETURN(out.retry_paused_secs, tables.Int("retry_paused_secs", 300, 0));
  ASSIGN_OR_RETURN(out.lag_warning_secs, tables.Int("lag_warning_secs", 300, 0));
  return out;
}

// `s` split into UTF-8 characters (a lead byte and its continuation bytes), so that `?` and
// NodeId treat a character as one, as the reference does.
std::vector<std::string_view> Chars(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= s.size(); ++i) {
    if (i == s.size() || (static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      out.push_back(s.substr(start, i - start));
      start = i;
    }
  }
  return out;
}

void ReplaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
}

// Renders the scalars of `node` in place (it is a private copy).
void Render(YAML::Node node, const std::string& table_name, const std::string& schema,
            const std::string& table) {
  if (node.IsScalar()) {
    std::string text = node.Scalar();
    ReplaceAll(text, "{table_name}", table_name);
    ReplaceAll(text, "{schema}", schema);
    ReplaceAll(text, "{table}", table);
    if (text != node.Scalar()) node = text;  // keeps the node's tag
  } else if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      Render(it->second, table_name, schema, table);
    }
  } else if (node.IsSequence()) {
    for (auto it = node.begin(); it != node.end(); ++it) Render(*it, table_name, schema, table);
  }
}

// `base` with `patch` merged in, editing `base` (a private copy). Within a mapping a null
// value replaces too; only a null patch as a whole leaves `base`.
YAML::Node MergeInto(YAML::Node base, const YAML::Node& patch) {
  if (!Present(patch)) return base;
  if (!base.IsMap() || !patch.IsMap()) return Copy(patch);
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& key = it->first.Scalar();
    YAML::Node current = Find(base, key);
    // Copied before the edit: an alias in the file may share `current` with another key.
    base[key] = current.IsMap() && it->second.IsMap() ? MergeInto(Copy(current), it->second)
                                                      : Copy(it->second);
  }
  return base;
}

void AppendQuoted(const std::string& text, std::string& out) {
  out += '"';
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

// Canonical text of a node: mappings with sorted keys, every scalar quoted and escaped, so
// that equal configs give equal text whatever their key order or quoting.
void Canonical(const YAML::Node& node, std::string& out) {
  if (node.IsMap()) {
    std::map<std::string, YAML::Node> sorted;
    for (auto it = node.begin(); it != node.end(); ++it) sorted[it->first.Scalar()] = it->second;
    out += '{';
    bool first = true;
    for (const auto& [key, value] : sorted) {
      if (!first) out += ',';
      first = false;
      AppendQuoted(key, out);
      out += ':';
      Canonical(value, out);
    }
    out += '}';
  } else if (node.IsSequence()) {
    out += '[';
    for (std::size_t i = 0; i < node.size(); ++i) {
      if (i > 0) out += ',';
      Canonical(node[i], out);
    }
    out += ']';
  } else if (node.IsScalar()) {
    AppendQuoted(node.Scalar(), out);
  } else {
    out += "null";
  }
}

// A spec whose config is `config`: the template's spec mapping with its `config` replaced,
// at the template's paths in `file`.
config::ConnectorSpec WithConfig(const config::ConnectorSpec& tmpl, const YAML::Node& config,
                                 const std::shared_ptr<const std::string>& file) {
  YAML::Node spec = Copy(tmpl.spec.node());
  if (!spec.IsMap()) spec = YAML::Node(YAML::NodeType::Map);
  spec["config"] = config;
  config::ConnectorSpec out;
  out.type = tmpl.type;
  out.config = config::Block(config, file, tmpl.config.path());
  out.spec = config::Block(spec, file, tmpl.spec.path());
  return out;
}

}  // namespace

Result<std::optional<TablesConfig>> ParseTablesConfig(const config::Block& mirror) {
  ASSIGN_OR_RETURN(config::Block snapshot, mirror.Child("snapshot"));
  RETURN_IF_ERROR(CheckKeys(snapshot, kSnapshotKeys));
  snapshot.MarkRead("source");
  ASSIGN_OR_RETURN(int64_t concurrency, snapshot.Int("concurrency", 4));
  ASSIGN_OR_RETURN(int64_t shards, snapshot.Int("shards", 0, 0));

  ASSIGN_OR_RETURN(std::optional<config::Block> tables, mirror.OptionalChild("tables"));
  if (!tables) {
    if (mirror.Has("per_table")) {
      return mirror.KeyError("per_table",
                             "mirror.per_table needs mirror.tables (a multi-table mirror)");
    }
    if (shards > 1) {
      return snapshot.Error("shards",
                            "mirror.snapshot.shards applies to a multi-table mirror "
                            "(mirror.tables)");
    }
    return std::optional<TablesConfig>();
  }
  ASSIGN_OR_RETURN(TablesConfig out, ParseTables(*tables));
  if (concurrency < 1) {
    return snapshot.Error("concurrency", "mirror.snapshot.concurrency must be at least 1");
  }
  out.concurrency = concurrency;
  out.shards = shards;
  ASSIGN_OR_RETURN(config::Block per_table, mirror.Child("per_table"));
  for (const std::string& name : per_table.Keys()) {
    ASSIGN_OR_RETURN(config::Block block, per_table.Child(name));
    ASSIGN_OR_RETURN(out.per_table[name], ParseOverride(block));
  }
  return std::optional<TablesConfig>(std::move(out));
}

bool GlobMatch(const std::string& glob, const std::string& name) {
  const std::vector<std::string_view> g = Chars(glob);
  const std::vector<std::string_view> n = Chars(name);
  // Greedy with backtracking to the last '*': it absorbs one more character per retry.
  std::size_t gi = 0, ni = 0;
  std::optional<std::size_t> star;
  std::size_t star_ni = 0;
  while (ni < n.size()) {
    if (gi < g.size() && g[gi] == "*") {
      star = gi++;
      star_ni = ni;
    } else if (gi < g.size() && (g[gi] == "?" || g[gi] == n[ni])) {
      ++gi;
      ++ni;
    } else if (star) {
      gi = *star + 1;
      ni = ++star_ni;
    } else {
      return false;
    }
  }
  while (gi < g.size() && g[gi] == "*") ++gi;
  return gi == g.size();
}

bool Selected(const TablesConfig& config, const std::string& table) {
  auto matches = [&](const std::vector<std::string>& globs) {
    return std::any_of(globs.begin(), globs.end(),
                       [&](const std::string& glob) { return GlobMatch(glob, table); });
  };
  return matches(config.include) && !matches(config.exclude);
}

std::string NodeId(const std::string& table) {
  std::string id;
  for (std::string_view c : Chars(table)) {
    const char b = c[0];
    const bool kept = c.size() == 1 && ((b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') ||
                                        (b >= '0' && b <= '9') || b == '_' || b == '.' || b == '-');
    id += kept ? c[0] : '_';
  }
  if (!id.empty() && id[0] == '.') id[0] = '_';
  if (id.rfind("__", 0) == 0) id = "t" + id;
  return id;
}

YAML::Node RenderPlaceholders(const YAML::Node& node, const std::string& table) {
  YAML::Node out = Copy(node);
  const std::size_t dot = table.rfind('.');
  const std::string table_name = dot == std::string::npos ? table : table.substr(dot + 1);
  const std::string schema = dot == std::string::npos ? "" : table.substr(0, dot);
  Render(out, table_name, schema, table);
  return out;
}

YAML::Node DeepMerge(const YAML::Node& base, const YAML::Node& patch) {
  return MergeInto(Copy(base), patch);
}

std::string DefaultDestinationField(const std::string& sink_type) {
  if (sink_type == "postgres" || sink_type == "mysql" || sink_type == "sqlite") {
    return "table_name";
  }
  return "";
}

TablePlan PlanTable(const TablesConfig& config, const config::Document& doc,
                    const config::ConnectorSpec& snapshot_template, const DiscoveredTable& table,
                    bool sink_upserts) {
  TablePlan plan;
  plan.table = table.name;
  plan.id = NodeId(table.name);
  static const TableOverride kNoOverride;
  auto found = config.per_table.find(table.name);
  const TableOverride& over = found == config.per_table.end() ? kNoOverride : found->second;

  YAML::Node destination;
  if (Present(config.destination)) {
    destination = config.destination;
  } else if (std::string field = DefaultDestinationField(doc.sink.type); !field.empty()) {
    destination = YAML::Node(YAML::NodeType::Map);
    destination[field] = "{table_name}";
  } else {
    plan.refused = "sink '" + doc.sink.type +
                   "' has no default destination field — set mirror.tables.destination (e.g. { "
                   "path: \"out/{table}.jsonl\" })";
  }

  const YAML::Node& sink_template = doc.sink.config.node();
  YAML::Node template_mode = Find(sink_template, "write_mode");
  if (over.write_mode) {
    plan.write_mode = *over.write_mode;
  } else if (template_mode.IsScalar()) {
    plan.write_mode = template_mode.Scalar();
  } else {
    plan.write_mode = sink_upserts ? "upsert" : "append";
  }
  if (plan.write_mode == "upsert" || plan.write_mode == "delete") {
    plan.key = over.key ? *over.key : table.key;
    if (plan.key.empty()) {
      if (config.without_primary_key == WithoutPrimaryKey::kAppend) {
        plan.write_mode = "append";
      } else if (plan.refused.empty()) {
        plan.refused = "table '" + table.name + "' has no primary key — set mirror.per_table.\"" +
                       table.name + "\".key or mirror.tables.without_primary_key: append";
      }
    }
  }

  YAML::Node sink = DeepMerge(sink_template, RenderPlaceholders(destination, table.name));
  sink = MergeInto(sink, RenderPlaceholders(over.sink, table.name));
  // A sink without write modes (jsonl, kafka) only appends: it is told nothing it would not read.
  if (sink_upserts || over.write_mode || template_mode.IsScalar()) {
    sink["write_mode"] = plan.write_mode;
  }
  if (plan.key.empty()) {
    // A keyless table appends: a key, and a delete marker (which deletes by key), do not apply.
    sink.remove("key");
    sink.remove("delete_marker");
  } else {
    YAML::Node key(YAML::NodeType::Sequence);
    for (const std::string& column : plan.key) key.push_back(column);
    sink["key"] = key;
  }
  const auto file = std::make_shared<const std::string>(doc.file);
  plan.sink = WithConfig(doc.sink, sink, file);

  YAML::Node read_patch(YAML::NodeType::Map);
  for (const auto& [key, value] : table.read_patch) read_patch[key] = value;
  YAML::Node snapshot = DeepMerge(snapshot_template.config.node(), read_patch);
  snapshot = MergeInto(snapshot, RenderPlaceholders(over.snapshot, table.name));
  plan.snapshot = WithConfig(snapshot_template, snapshot, file);
  plan.schema = over.schema_drift ? over.schema_drift : doc.schema;
  return plan;
}

config::ConnectorSpec OverwriteSink(const TablePlan& plan, const config::Document& doc) {
  YAML::Node config = Copy(plan.sink.config.node());
  if (!config.IsMap()) config = YAML::Node(YAML::NodeType::Map);
  config["write_mode"] = "overwrite";
  config.remove("key");
  config.remove("delete_marker");
  return WithConfig(plan.sink, config, std::make_shared<const std::string>(doc.file));
}

config::ConnectorSpec ShardRead(const TablePlan& plan,
                                const std::map<std::string, std::string>& patch,
                                const config::Document& doc) {
  YAML::Node config = Copy(plan.snapshot.config.node());
  if (!config.IsMap()) config = YAML::Node(YAML::NodeType::Map);
  for (const auto& [key, value] : patch) config[key] = value;
  return WithConfig(plan.snapshot, config, std::make_shared<const std::string>(doc.file));
}

std::string DestinationOf(const TablePlan& plan) {
  YAML::Node config = Copy(plan.sink.config.node());
  if (config.IsMap()) {
    config.remove("key");
    config.remove("write_mode");
  }
  std::string out;
  Canonical(config, out);
  return out;
}

void RefuseCollisions(std::vector<TablePlan>& plans, const std::set<std::string>& incumbents) {
  // Per destination, the plans writing it, in name order.
  std::map<std::string, std::vector<TablePlan*>> by_destination;
  std::vector<TablePlan*> ordered;
  for (TablePlan& plan : plans) {
    if (plan.refused.empty()) ordered.push_back(&plan);
  }
  std::sort(ordered.begin(), ordered.end(),
            [](const TablePlan* a, const TablePlan* b) { return a->table < b->table; });
  for (TablePlan* plan : ordered) by_destination[DestinationOf(*plan)].push_back(plan);

  for (auto& [destination, writers] : by_destination) {
    if (writers.size() < 2) continue;
    // The first incumbent keeps it, else the first newcomer; other incumbents keep it too.
    auto keeper = std::find_if(writers.begin(), writers.end(),
                               [&](const TablePlan* p) { return incumbents.count(p->table) > 0; });
    if (keeper == writers.end()) keeper = writers.begin();
    const std::string& owner = (*keeper)->table;
    for (TablePlan* plan : writers) {
      if (plan->table == owner || incumbents.count(plan->table)) continue;
      plan->refused = "writes the same destination as '" + owner +
                      "' — set mirror.tables.destination (e.g. { table_name: "
                      "\"{schema}_{table_name}\" })";
    }
  }
}

}  // namespace faucet::mirror
