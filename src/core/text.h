// Small text helpers shared by connectors.
#pragma once

#include <charconv>
#include <cstdint>
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

// Appends the lowercase hex digits of `bytes` to `out`.
inline void AppendHex(std::string_view bytes, std::string& out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (char c : bytes) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 0xf];
  }
}

// Appends the bytes whose hex digits `hex` spells ("0aff" -> "\x0a\xff") to `out`. False, with
// `out` partly written, when `hex` has an odd length or a character that is not a hex digit.
inline bool AppendUnhex(std::string_view hex, std::string& out) {
  if (hex.size() % 2 != 0) return false;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexDigit(hex[i]);
    const int lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi << 4 | lo);
  }
  return true;
}

// Appends `v` in decimal, left-padded with zeros to `width` digits (as printf's "%0*llu", without
// parsing a format for each number: dates and times are written with it).
inline void AppendPadded(std::string& out, uint64_t v, int width) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;  // 24 bytes hold any uint64_t
  for (auto n = end - buf; n < width; ++n) out += '0';
  out.append(buf, static_cast<size_t>(end - buf));
}

// Appends `v` as a field of the tab-separated text format that Postgres' COPY and MySQL's LOAD
// DATA (FIELDS TERMINATED BY '\t' ESCAPED BY '\\' LINES TERMINATED BY '\n') both read:
// backslash, newline, carriage return, tab and NUL escaped by a backslash (NULL is the field
// \N, the caller's). Clean runs are copied whole.
inline void AppendEscapedField(std::string_view v, std::string& out) {
  size_t start = 0;
  for (size_t i = 0; i < v.size(); ++i) {
    const char* escaped;
    switch (v[i]) {
      case '\\':
        escaped = "\\\\";
        break;
      case '\n':
        escaped = "\\n";
        break;
      case '\r':
        escaped = "\\r";
        break;
      case '\t':
        escaped = "\\t";
        break;
      case '\0':
        escaped = "\\0";
        break;
      default:
        continue;
    }
    out.append(v.data() + start, i - start);
    out.append(escaped, 2);
    start = i + 1;
  }
  out.append(v.data() + start, v.size() - start);
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
