#include "core/change.h"

namespace faucet {

int Relation::FindColumn(const std::string& column_name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == column_name) return static_cast<int>(i);
  }
  return -1;
}

char ChangeOpCode(ChangeOp op) {
  switch (op) {
    case ChangeOp::kInsert:
      return 'c';
    case ChangeOp::kUpdate:
      return 'u';
    case ChangeOp::kDelete:
      return 'd';
    case ChangeOp::kRead:
      return 'r';
    case ChangeOp::kTruncate:
      return 't';
  }
  return '?';
}

const char* ChangeOpName(ChangeOp op) {
  switch (op) {
    case ChangeOp::kInsert:
      return "insert";
    case ChangeOp::kUpdate:
      return "update";
    case ChangeOp::kDelete:
      return "delete";
    case ChangeOp::kRead:
      return "read";
    case ChangeOp::kTruncate:
      return "truncate";
  }
  return "";
}

std::optional<ChangeOp> ParseChangeOp(std::string_view text) {
  for (ChangeOp op : kChangeOps) {
    if ((text.size() == 1 && text[0] == ChangeOpCode(op)) || text == ChangeOpName(op)) return op;
  }
  return std::nullopt;
}

namespace {
size_t RowBytes(const std::optional<Row>& row) {
  if (!row) return 0;
  size_t n = row->size() * sizeof(Cell);
  for (const Cell& c : *row) n += c.text.capacity();
  return n;
}
}  // namespace

size_t Change::ApproxBytes() const { return sizeof(Change) + RowBytes(before) + RowBytes(after); }

}  // namespace faucet
