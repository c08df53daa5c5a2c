#include "sources/postgres/copy_text.h"

#include "core/text.h"

namespace faucet::postgres {
namespace {

// Decodes the escapes of a field that has some. COPY TO itself writes only \b \f \n \r \t \v
// and \\ (and \N alone for NULL), but COPY's grammar also has octal \ooo and hex \xhh, accepted
// here as well.
std::string Unescape(std::string_view f) {
  std::string out;
  out.reserve(f.size());
  for (size_t i = 0; i < f.size(); ++i) {
    char c = f[i];
    if (c != '\\' || i + 1 == f.size()) {
      out.push_back(c);
      continue;
    }
    char e = f[++i];
    switch (e) {
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'v':
        out.push_back('\v');
        break;
      case 'x': {
        int v = 0;
        int digits = 0;
        while (digits < 2 && i + 1 < f.size() && HexDigit(f[i + 1]) >= 0) {
          v = v * 16 + HexDigit(f[++i]);
          ++digits;
        }
        if (digits == 0) {
          out.push_back('x');
        } else {
          out.push_back(static_cast<char>(v));
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0';
          for (int d = 1; d < 3 && i + 1 < f.size() && f[i + 1] >= '0' && f[i + 1] <= '7'; ++d) {
            v = v * 8 + (f[++i] - '0');
          }
          out.push_back(static_cast<char>(v));
        } else {
          out.push_back(e);
        }
    }
  }
  return out;
}

}  // namespace

Status ParseCopyTextRow(std::string_view line, size_t columns, Row& row) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  row.clear();
  row.reserve(columns);
  size_t start = 0;
  while (true) {
    size_t tab = line.find('\t', start);
    std::string_view field = line.substr(start, tab == std::string_view::npos ? tab : tab - start);
    if (field == "\\N") {
      row.push_back(Cell::Null());
    } else if (field.find('\\') == std::string_view::npos) {
      row.emplace_back(CellState::kValue, field);  // the common case: the bytes as they are
    } else {
      row.push_back(Cell::Value(Unescape(field)));
    }
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (row.size() != columns) {
    return DataLoss("COPY row has " + std::to_string(row.size()) + " columns, expected " +
                    std::to_string(columns));
  }
  return Status::Ok();
}

}  // namespace faucet::postgres
