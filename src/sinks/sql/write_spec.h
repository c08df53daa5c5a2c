// WriteSpec: the write settings every SQL sink shares (the reference's flattened `WriteSpec`,
// spec/reference-faucet-stream.md §1.5): write_mode, key, delete_marker, column_mapping and
// the accepted-but-advisory batch_size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/block.h"
#include "core/status.h"

namespace faucet::sql {

enum class WriteMode {
  kAppend,     // insert every row
  kUpsert,     // insert or update by key; deletes by key
  kDelete,     // delete every row's key
  kOverwrite,  // write a new table, swapped in at the end of a completed run
};

const char* WriteModeName(WriteMode mode);

// Rows whose `field` holds one of `values` are deletes (upsert mode).
struct DeleteMarker {
  std::string field;
  std::vector<std::string> values;
};

// The marker column cdc_unwrap adds by default ("d" for deletes, "u" otherwise).
inline constexpr std::string_view kUnwrapMarker = "__op";

struct WriteSpec {
  WriteMode mode = WriteMode::kAppend;
  std::vector<std::string> key;
  std::optional<DeleteMarker> delete_marker;
  // true: row columns map by name to the target's columns (`auto_map`); false: each row is
  // written whole, as one JSON document, into `json_column` (append only).
  bool auto_map = false;
  std::string json_column = "data";

  // Rows write the target's columns (auto_map, any mode but delete, which writes only keys),
  // so they can drift from the target's schema.
  bool WritesColumns() const { return auto_map && mode != WriteMode::kDelete; }
};

// How a sink spells its JSON column mapping and whether it has a default.
struct MappingGrammar {
  // The mapping keys naming the JSON mode: {"jsonb"} for postgres, {"json"} for the others.
  std::vector<std::string> json_keys;
  // The reference's postgres sink defaults to {jsonb: {column: data}}; sqlite has no default.
  bool required = false;
};

// Reads write_mode, key, delete_marker, column_mapping and batch_size from a sink's `config:`.
// Errors are kInvalidArgument located at the key: upsert and delete need a non-empty key and
// auto_map; delete_marker is for upsert only. Defaults follow what is written: write_mode is
// upsert when a delete_marker is given (else append), and an absent column_mapping is auto_map
// under upsert and delete (else the grammar's JSON column, or an error where it is required).
Result<WriteSpec> ParseWriteSpec(const config::Block& cfg, const MappingGrammar& grammar);

// The scope under which a commit token is stored, fitted to a key column of `width`
// characters: longer scopes become "<head>__h:<16 hex digits of FNV-1a 64 of the scope>",
// exactly `width` long (the reference's scope_key, spec §2.4).
std::string ScopeKey(const std::string& scope, size_t width);

// The 16 lowercase hex digits of the FNV-1a 64 hash of `text`.
std::string Fnv1aHex(std::string_view text);

}  // namespace faucet::sql
