// Parsing of one row of COPY ... TO STDOUT in text format (PostgreSQL docs, COPY, "Text
// Format"): columns separated by tab, \N for NULL, backslash escapes for the rest.
#pragma once

#include <string_view>

#include "core/change.h"
#include "core/status.h"

namespace faucet::postgres {

// Parses `line` (one row, with or without its trailing newline) into `row`, replacing its
// content. A column count other than `columns` is kDataLoss.
Status ParseCopyTextRow(std::string_view line, size_t columns, Row& row);

}  // namespace faucet::postgres
