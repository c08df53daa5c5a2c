// The text form of stored state values. faucet writes the bare value as compact JSON, the shape
// the reference wrote before its versioned envelope and still reads as legacy. The newest
// reference (faucet-cli 1.17) wraps every value in a versioned envelope,
// {"faucet_state":1,"owner":"postgres-cdc","schema":0,"data":<value>}; faucet reads both shapes,
// so either engine resumes the other's pipelines, and a pipeline faucet has run is left
// un-enveloped (docs/state-format.md).
#pragma once

#include <string>
#include <string_view>

#include "core/bookmark.h"
#include "core/status.h"

namespace faucet {

// Compact JSON of `value`, never enveloped. kInvalidArgument when it cannot be serialised (a
// string that is not valid UTF-8): storing a lossy copy would resume from a position nobody
// wrote.
Result<std::string> DumpStateValue(const Json& value);

// Parses stored state: the value itself, or the `data` of an envelope (an object with a
// `faucet_state` member). kDataLoss naming `where` (a file, a table row, a redis key) when the
// text is not JSON, or is an envelope of a version other than 1 or without `data`: a bookmark
// that exists but cannot be read must stop the run, never read as "no bookmark" or as a bookmark
// of another shape, which would silently replay or skip everything.
Result<Json> ParseStateValue(std::string_view text, const std::string& where);

}  // namespace faucet
