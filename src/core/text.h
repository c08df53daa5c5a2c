// Small text helpers shared by connectors.
#pragma once

#include <string>
#include <string_view>

namespace faucet {

// The value of hex digit `c` (0-9, a-f, A-F), or -1.
inline int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes URL percent-escapes ("%2F" -> "/") of `in` into `out`; false on a malformed escape.
inline bool PercentDecode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = HexDigit(in[i + 1]);
    const int lo = HexDigit(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi << 4 | lo);
    i += 2;
  }
  return true;
}

// `ident` as an SQL identifier quoted with `quote` (" for Postgres and SQLite, ` for MySQL),
// the quote character doubled inside.
inline std::string QuoteIdentifier(std::string_view ident, char quote) {
  std::string out(1, quote);
  for (char c : ident) {
    if (c == quote) out += quote;
    out += c;
  }
  out += quote;
  return out;
}

}  // namespace faucet
