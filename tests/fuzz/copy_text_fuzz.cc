// COPY text rows (the query source's snapshot reader): the first byte is the column count,
// the rest one line. A row that does not parse must be kInvalidArgument or kDataLoss.
#include <cstdlib>
#include <string_view>

#include "core/change.h"
#include "fuzz_target.h"
#include "sources/postgres/copy_text.h"

FAUCET_FUZZ_TARGET(copy_text) {
  if (size == 0) return;
  const size_t columns = data[0] % 16;
  faucet::Row row;
  faucet::Status st = faucet::postgres::ParseCopyTextRow(
      std::string_view(reinterpret_cast<const char*>(data + 1), size - 1), columns, row);
  if (!st.ok() && st.code() != faucet::StatusCode::kInvalidArgument &&
      st.code() != faucet::StatusCode::kDataLoss) {
    std::abort();
  }
  if (st.ok() && row.size() != columns) std::abort();
}
