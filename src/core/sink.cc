#include "core/sink.h"

namespace faucet {
namespace {

constexpr char kBulkLoad[] = ": bulk load";

}  // namespace

Status BulkLoadRefusal(const std::string& where, std::optional<size_t> row,
                       const std::string& column, const Status& error) {
  std::string text = where + kBulkLoad;
  if (row) text += ", row " + std::to_string(*row + 1);
  if (!column.empty()) text += ", column " + column;
  return InvalidArgument(text + ": " + error.message());
}

bool IsBulkLoadRefusal(const Status& status) {
  return status.code() == StatusCode::kInvalidArgument &&
         status.message().find(kBulkLoad) != std::string::npos;
}

}  // namespace faucet
