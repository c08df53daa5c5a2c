#include "core/source.h"

namespace faucet {

std::vector<std::optional<int64_t>> Source::BytesBehind(
    const std::vector<Bookmark>& positions) const {
  std::vector<std::optional<int64_t>> out(positions.size());
  if (positions.empty()) return out;
  const LogStatus log = ReadLogStatus();
  if (!log.head) return out;
  for (size_t i = 0; i < positions.size(); ++i) {
    Result<Position> position = PositionOf(positions[i]);
    if (position.ok()) out[i] = BytesBetween(*position, *log.head);
  }
  return out;
}

}  // namespace faucet
