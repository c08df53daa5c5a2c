#include "core/lsn.h"

#include <cstdio>

#include "core/text.h"

namespace faucet {
namespace {

bool ParseHex32(std::string_view s, uint32_t* out) {
  if (s.empty() || s.size() > 8) return false;
  uint32_t v = 0;
  for (char c : s) {
    const int d = HexDigit(c);
    if (d < 0) return false;
    v = (v << 4) | static_cast<uint32_t>(d);
  }
  *out = v;
  return true;
}

}  // namespace

Result<Lsn> Lsn::Parse(std::string_view text) {
  size_t slash = text.find('/');
  uint32_t hi = 0;
  uint32_t lo = 0;
  if (slash == std::string_view::npos || !ParseHex32(text.substr(0, slash), &hi) ||
      !ParseHex32(text.substr(slash + 1), &lo)) {
    return InvalidArgument("'" + std::string(text) + "' is not an LSN (expected X/Y in hex)");
  }
  return Lsn((uint64_t{hi} << 32) | lo);
}

std::string Lsn::ToString() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%X/%X", static_cast<uint32_t>(value_ >> 32),
                static_cast<uint32_t>(value_));
  return buf;
}

}  // namespace faucet
