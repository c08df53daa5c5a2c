// Position: a source's resume position in a form that can be ordered, for the engine's
// decisions that need "before" and "after" (a table's position against the stream's, a stored
// bookmark against the position a mirror captured). Bookmarks stay the JSON the state store
// keeps; Source::PositionOf turns one into a Position. Positions of different sources are
// never compared.
#pragma once

#include <compare>
#include <cstdint>
#include <vector>

namespace faucet {

struct Position {
  // Compared lexicographically: postgres-cdc gives {lsn}; a binlog source would give
  // {file index, offset}.
  std::vector<uint64_t> parts;

  friend auto operator<=>(const Position&, const Position&) = default;
  friend bool operator==(const Position&, const Position&) = default;
};

}  // namespace faucet
