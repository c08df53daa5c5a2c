// The mysql sink (`type: mysql`): writes pages into one existing table of MariaDB or MySQL.
// See README.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "config/block.h"
#include "core/sink.h"

namespace faucet {

// Reads the sink's `config:` block (spec/reference-faucet-stream.md §1.5): connection_url
// (mysql://user:pass@host:port/db), table_name, column_mapping (auto_map or {json: {column:
// name}}; default the whole row as JSON in `data`), write_mode, key, delete_marker, batch_size,
// max_connections. No I/O happens until Open.
Result<std::unique_ptr<Sink>> MakeMysqlSink(const config::Block& cfg);

}  // namespace faucet
