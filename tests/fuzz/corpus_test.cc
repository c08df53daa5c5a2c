// Replays every fuzz target's checked-in corpus (tests/fuzz/corpus/<target>/) and the inputs
// that once failed (tests/fuzz/regressions/<target>/) through the same bodies the libFuzzer
// binaries run, in every build: a fixed finding stays fixed even where no fuzzer is built.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz_target.h"

namespace faucet::fuzz {
namespace {

namespace fs = std::filesystem;

class FuzzCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(FuzzCorpus, EveryCheckedInInputRunsCleanly) {
  const std::string& name = GetParam();
  size_t inputs = 0;
  for (const char* kind : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(FAUCET_FUZZ_DIR) / kind / name;
    if (!fs::exists(dir)) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      std::ifstream in(e.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      SCOPED_TRACE(e.path().string());
      Targets().at(name)(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++inputs;
    }
  }
  EXPECT_GT(inputs, 0u) << "no corpus for fuzz target " << name;
}

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const auto& [name, fn] : Targets()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, ::testing::ValuesIn(Names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace faucet::fuzz
