// The text form every state store writes: compact JSON, the same bytes the reference system
// writes, so that either engine reads the other's state.
#pragma once

#include <string>
#include <string_view>

#include "core/bookmark.h"
#include "core/status.h"

namespace faucet {

// Compact JSON of `value`. kInvalidArgument when it cannot be serialised (a string that is not
// valid UTF-8): storing a lossy copy would resume from a position nobody wrote.
Result<std::string> DumpStateValue(const Json& value);

// Parses stored state. Text that is not JSON is kDataLoss naming `where` (a file, a table row, a
// redis key): a bookmark that exists but cannot be read must stop the run, never read as "no
// bookmark", which would silently replay or skip everything.
Result<Json> ParseStateValue(std::string_view text, const std::string& where);

}  // namespace faucet
