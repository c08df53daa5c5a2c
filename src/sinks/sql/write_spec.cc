#include "sinks/sql/write_spec.h"

#include <cstdio>

namespace faucet::sql {

const char* WriteModeName(WriteMode mode) {
  switch (mode) {
    case WriteMode::kAppend:
      return "append";
    case WriteMode::kUpsert:
      return "upsert";
    case WriteMode::kDelete:
      return "delete";
    case WriteMode::kOverwrite:
      return "overwrite";
  }
  return "";
}

namespace {

std::string Expected(const MappingGrammar& grammar) {
  std::string out = "expected auto_map";
  for (const std::string& k : grammar.json_keys) out += " or {" + k + ": {column: <name>}}";
  return out;
}

Status ParseMapping(const config::Block& cfg, const MappingGrammar& grammar, WriteSpec& spec) {
  const std::string key = "column_mapping";
  YAML::Node node = cfg.node()[key];
  if (!node.IsDefined() || node.IsNull()) {
    if (grammar.required) return cfg.Error(key, "is required: " + Expected(grammar));
    // Writes by key map columns by name: the JSON default would contradict the mode.
    spec.auto_map = spec.mode == WriteMode::kUpsert || spec.mode == WriteMode::kDelete;
    return Status::Ok();
  }
  if (node.IsScalar()) {
    ASSIGN_OR_RETURN(std::string v, cfg.String(key, ""));
    if (v != "auto_map") return cfg.Error(key, Expected(grammar) + ", got '" + v + "'");
    spec.auto_map = true;
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(config::Block mapping, cfg.Child(key));
  std::vector<std::string> keys = mapping.Keys();
  if (keys.size() != 1) return cfg.Error(key, Expected(grammar));
  bool known = false;
  for (const std::string& k : grammar.json_keys) known = known || k == keys[0];
  if (!known) return cfg.Error(key, Expected(grammar) + ", got '" + keys[0] + "'");
  ASSIGN_OR_RETURN(config::Block json, mapping.Child(keys[0]));
  ASSIGN_OR_RETURN(spec.json_column, json.String("column", "data"));
  if (spec.json_column.empty()) return json.Error("column", "must not be empty");
  spec.auto_map = false;
  return Status::Ok();
}

}  // namespace

Result<WriteSpec> ParseWriteSpec(const config::Block& cfg, const MappingGrammar& grammar) {
  WriteSpec spec;
  // A delete marker is an upsert's: it makes upsert the default mode.
  ASSIGN_OR_RETURN(std::string mode,
                   cfg.Enum("write_mode", cfg.Has("delete_marker") ? "upsert" : "append",
                            {"append", "upsert", "delete", "overwrite"}));
  if (mode == "upsert") spec.mode = WriteMode::kUpsert;
  if (mode == "delete") spec.mode = WriteMode::kDelete;
  if (mode == "overwrite") spec.mode = WriteMode::kOverwrite;
  ASSIGN_OR_RETURN(spec.key, cfg.StringList("key"));
  for (const std::string& k : spec.key) {
    if (k.empty()) return cfg.Error("key", "column names must not be empty");
  }
  // batch_size is accepted for compatibility and checked, not used: a page is written in one
  // transaction, whatever its size, because a page is the unit of durability.
  RETURN_IF_ERROR(cfg.Int("batch_size", 1000, 1, 1000000).status());
  RETURN_IF_ERROR(ParseMapping(cfg, grammar, spec));

  bool keyed = spec.mode == WriteMode::kUpsert || spec.mode == WriteMode::kDelete;
  if (keyed && spec.key.empty()) {
    return cfg.Error(cfg.Has("key") ? "key" : "write_mode",
                     std::string("write_mode ") + mode + " needs a non-empty key: [columns]");
  }
  if (keyed && !spec.auto_map) {
    return cfg.Error("column_mapping",
                     std::string("write_mode ") + mode + " needs column_mapping: auto_map");
  }

  ASSIGN_OR_RETURN(std::optional<config::Block> marker, cfg.OptionalChild("delete_marker"));
  if (marker) {
    if (spec.mode != WriteMode::kUpsert) {
      return cfg.Error("delete_marker", "is only valid with write_mode: upsert");
    }
    DeleteMarker m;
    ASSIGN_OR_RETURN(m.field, marker->RequiredString("field"));
    if (m.field.empty()) return marker->Error("field", "must not be empty");
    ASSIGN_OR_RETURN(m.values, marker->StringList("values"));
    if (m.values.empty()) return marker->Error("values", "needs at least one value");
    spec.delete_marker = std::move(m);
  }
  return spec;
}

std::string Fnv1aHex(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::string ScopeKey(const std::string& scope, size_t width) {
  if (scope.size() <= width) return scope;
  std::string suffix = "__h:" + Fnv1aHex(scope);
  return scope.substr(0, width - suffix.size()) + suffix;
}

}  // namespace faucet::sql
