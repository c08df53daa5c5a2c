// The libFuzzer entry point of a fuzzer binary: it links exactly one target.
#include <cstdlib>

#include "fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const faucet::fuzz::FuzzFn target = [] {
    if (faucet::fuzz::Targets().size() != 1) std::abort();
    return faucet::fuzz::Targets().begin()->second;
  }();
  target(data, size);
  return 0;
}
