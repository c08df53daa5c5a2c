#include "fuzz_target.h"

namespace faucet::fuzz {

std::map<std::string, FuzzFn>& Targets() {
  static std::map<std::string, FuzzFn> targets;
  return targets;
}

}  // namespace faucet::fuzz
