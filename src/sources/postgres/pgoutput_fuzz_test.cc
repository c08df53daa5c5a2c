// A bounded-time mutation fuzzer that runs with the unit tests: valid message sequences are
// mutated (bit flips, truncations, random bytes and lengths, dropped, duplicated and swapped
// messages) and decoded; the decoder must never crash, hang or return an untyped error.
// FAUCET_FUZZ_SECONDS (default 3) and FAUCET_FUZZ_SEED (default fixed) tune a run; a failure
// prints the seed of the failing input.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>

#include "sources/postgres/pgoutput_fuzz_driver.h"
#include "sources/postgres/pgoutput_test_messages.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using namespace testmsg;

std::vector<std::vector<std::string>> Corpus() {
  const uint32_t r = 16384;
  auto rel = [&](std::optional<uint32_t> xid = std::nullopt) {
    return Relation(r, "public", "t", {{"id", 20, true}, {"v", 25}, {"j", 3802}}, xid);
  };
  return {
      {Begin(0x100, 1, 7), rel(), Insert(r, {T("1"), T("a"), N()}),
       Update(r, 'K', {T("1"), N(), N()}, {T("2"), U(), T("{}")}),
       Delete(r, 'O', {T("2"), T("b"), N()}), Truncate({r}, 3), Commit(0x100, 0x130, 1)},
      {Message(false, 0x90, "p", "x"), Begin(0x200, 1, 8), Origin(0x10, "o"), Type(70000, "s", "e"),
       rel(), Insert(r, {T("1"), T("a"), T("[1]")}), Relation(r, "public", "t", {{"id", 20, true}}),
       Insert(r, {T("3")}), Commit(0x200, 0x230, 1)},
      {StreamStart(900, true), rel(900), Insert(r, {T("1"), T("a"), N()}, 900), StreamStop(),
       Begin(0x300, 1, 9), rel(), Insert(r, {T("9"), N(), N()}), Commit(0x300, 0x330, 1),
       StreamStart(900, false), Insert(r, {T("2"), T("b"), N()}, 901), StreamStop(),
       StreamAbort(900, 901), StreamStart(900, false), Delete(r, 'K', {T("1"), N(), N()}, 900),
       StreamStop(), StreamCommit(900, 0x400, 0x430, 1)},
      {StreamStart(950, true), rel(950), Insert(r, {T("1"), T("a"), N()}, 950), StreamStop(),
       StreamAbort(950, 950)},
  };
}

void Mutate(std::vector<std::string>& messages, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  int mutations = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < mutations && !messages.empty(); ++i) {
    std::string& m = messages[pick(messages.size())];
    switch (pick(8)) {
      case 0:  // flip a bit
        if (!m.empty()) m[pick(m.size())] ^= static_cast<char>(1 << pick(8));
        break;
      case 1:  // truncate
        m.resize(pick(m.size() + 1));
        break;
      case 2:  // overwrite 2 or 4 bytes with a random count or length
        if (m.size() >= 5) {
          size_t at = pick(m.size() - 4);
          uint32_t v = static_cast<uint32_t>(rng());
          if (pick(2) == 0) v &= 0xff;
          for (int b = 0; b < 4; ++b) m[at + b] = static_cast<char>(v >> (8 * (3 - b)));
        }
        break;
      case 3:  // insert random bytes
        for (size_t n = pick(8); n > 0; --n) {
          m.insert(m.begin() + static_cast<long>(pick(m.size() + 1)), static_cast<char>(rng()));
        }
        break;
      case 4:  // drop a message
        messages.erase(messages.begin() + static_cast<long>(pick(messages.size())));
        break;
      case 5:  // duplicate a message
        messages.insert(messages.begin() + static_cast<long>(pick(messages.size() + 1)), m);
        break;
      case 6:  // swap two messages
        std::swap(m, messages[pick(messages.size())]);
        break;
      case 7:  // replace the tag
        if (!m.empty()) m[0] = "BCORYIUDTMSEcAwkZ\0"[pick(18)];
        break;
    }
  }
}

TEST(PgoutputFuzz, MutatedStreamsNeverCrashAndFailWithTypedErrors) {
  const char* seconds_env = std::getenv("FAUCET_FUZZ_SECONDS");
  const char* seed_env = std::getenv("FAUCET_FUZZ_SEED");
  const double seconds = seconds_env ? std::atof(seconds_env) : 3.0;
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : 20240901;
  const auto corpus = Corpus();
  for (const auto& sequence : corpus) {
    ASSERT_OK(DecodeFuzzInput(sequence, 1 << 20)) << "corpus must be valid";
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  uint64_t runs = 0;
  uint64_t failures = 0;
  for (uint64_t i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
    std::mt19937_64 rng(seed + i);
    std::vector<std::string> messages = corpus[rng() % corpus.size()];
    Mutate(messages, rng);
    // A tiny budget on some inputs sends streamed messages through the spill file.
    Status s = DecodeFuzzInput(messages, rng() % 2 ? 64 : 1 << 20);
    ASSERT_TRUE(IsTypedDecodeError(s)) << "seed " << seed + i << ": " << s.ToString();
    ++runs;
    failures += !s.ok();
  }
  EXPECT_GT(runs, 0u);
  std::printf("pgoutput fuzz: %llu inputs, %llu rejected with typed errors\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(failures));
}

}  // namespace
}  // namespace faucet::postgres
