// The sqlite sink (`type: sqlite`): writes pages into one existing table of a SQLite database
// file. See README.md.
#pragma once

#include <memory>
#include <string>

#include "config/block.h"
#include "core/sink.h"

namespace faucet {

// Reads the sink's `config:` block (spec/reference-faucet-stream.md §1.5): database_url
// (sqlite:///abs/path, sqlite://rel/path, sqlite:path or a plain path), table_name,
// column_mapping (required: auto_map or {json: {column: name}}), write_mode, key,
// delete_marker, batch_size, max_connections. No I/O happens until Open.
Result<std::unique_ptr<Sink>> MakeSqliteSink(const config::Block& cfg);

// The file path a database_url names; kInvalidArgument for an empty one or ":memory:" (a sink
// must write somewhere durable).
Result<std::string> SqlitePath(const std::string& database_url);

}  // namespace faucet
