// The postgres sink (`type: postgres`): writes pages into one existing table. See README.md.
#pragma once

#include <memory>

#include "config/block.h"
#include "core/sink.h"

namespace faucet {

// Reads the sink's `config:` block (spec/reference-faucet-stream.md §1.5): connection_url,
// table_name, schema (default public), column_mapping (auto_map, or {jsonb: {column: data}}, the
// default), write_mode, key, delete_marker, batch_size, max_connections, write_method. No I/O
// happens until Open, which connects and reads the table's columns from the catalog.
Result<std::unique_ptr<Sink>> MakePostgresSink(const config::Block& cfg);

}  // namespace faucet
