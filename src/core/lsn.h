// Lsn: a Postgres write-ahead-log position. A strong type so that it is never confused with
// another integer or kept as a string; formatted "X/Y" (upper-case hex, no leading zeros) as
// Postgres and the reference system's bookmarks write it.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace faucet {

class Lsn {
 public:
  constexpr Lsn() = default;
  constexpr explicit Lsn(uint64_t value) : value_(value) {}

  // Parses "X/Y" where X and Y are 1-8 hex digits. Anything else is kInvalidArgument.
  static Result<Lsn> Parse(std::string_view text);

  constexpr uint64_t value() const { return value_; }
  constexpr bool is_zero() const { return value_ == 0; }
  std::string ToString() const;

  friend constexpr auto operator<=>(Lsn, Lsn) = default;

 private:
  uint64_t value_ = 0;
};

}  // namespace faucet
