// Finding the rows a database refuses, shared by the SQL sinks: apply a range of planned rows
// atomically; when the database refuses it, split the range (or, when the database named the
// failing row, step over that row) until every refused row is found.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace faucet::sql {

// The outcome of applying rows [begin, end).
struct RangeResult {
  // Ok when every row of the range was applied. kInvalidArgument when the database refused a
  // value or a constraint (a row-level error); any other code fails the whole page.
  Status status;
  // The row the database named as the failing one (COPY's line, SQLite's step), if it did.
  std::optional<size_t> failed_at;
  // With failed_at: the rows before it are applied and stay applied (only the failing row was
  // undone). Otherwise nothing of the range is applied.
  bool prefix_applied = false;
  // The target column the database named in its error, if any.
  std::string column;

  static RangeResult Ok() { return {}; }
};

struct FailedRow {
  size_t row;
  Status error;        // the database's error, kInvalidArgument
  std::string column;  // as RangeResult::column
};

// Applies rows [0, n) through `apply`, which must apply a range all or nothing (unless it
// reports prefix_applied). Rows refused with a row-level error are appended to `failed`, in
// order, and the other rows are applied; with `stop_at_first` it returns at the first refused
// row, leaving the rest unapplied. A non-row-level error is returned as it is.
// Cost: one call for a clean page; about log2(n) more calls per refused row.
Status ApplyIsolating(size_t n, const std::function<RangeResult(size_t, size_t)>& apply,
                      bool stop_at_first, std::vector<FailedRow>& failed);

}  // namespace faucet::sql
