// A fuzz target: FAUCET_FUZZ_TARGET(name) { ... } defines the body that runs on one input
// (`data`, `size`) and registers it under `name`. A target must return normally on any input:
// a crash, a sanitizer report, an uncaught exception or an untyped error (which the target
// turns into std::abort) is a finding. The same bodies run in two places: the libFuzzer
// binaries of the asan preset (one target each, libfuzzer_main.cc) and, in every build, the
// unit test that replays each target's checked-in corpus and regressions (corpus_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace faucet::fuzz {

using FuzzFn = void (*)(const uint8_t* data, size_t size);

// Every target linked into this binary, by name.
std::map<std::string, FuzzFn>& Targets();

inline bool Register(const char* name, FuzzFn fn) {
  Targets()[name] = fn;
  return true;
}

}  // namespace faucet::fuzz

#define FAUCET_FUZZ_TARGET(name)                             \
  static void name##_Fuzz(const uint8_t* data, size_t size); \
  [[maybe_unused]] static const bool name##_registered =     \
      ::faucet::fuzz::Register(#name, name##_Fuzz);          \
  static void name##_Fuzz([[maybe_unused]] const uint8_t* data, [[maybe_unused]] size_t size)
