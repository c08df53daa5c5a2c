// A bounded-time mutation fuzzer that runs with the unit tests: the recorded binlogs' events
// are mutated (bit flips, truncations, random counts and lengths, inserted bytes, dropped,
// duplicated and swapped events) and replayed through every parser and DecodeRow; most
// mutated events are re-signed so that they get past their checksum. Nothing may crash, hang
// or return an untyped error. FAUCET_FUZZ_SECONDS (default 3) and FAUCET_FUZZ_SEED (default
// fixed) tune a run; a failure prints the seed of the failing input.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "sources/mysql/binlog_replay.h"
#include "sources/mysql/binlog_test_files.h"
#include "testing/status_matchers.h"

namespace faucet::mysql {
namespace {

using Events = std::vector<std::string>;

std::vector<Events> Corpus() {
  std::vector<Events> corpus;
  for (const std::string& name : testing::kRecordedBinlogs) {
    testing::RecordedBinlog b = testing::LoadBinlog(name);
    corpus.emplace_back(b.events.begin(), b.events.end());
  }
  return corpus;
}

void Mutate(Events& events, std::mt19937_64& rng) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const int mutations = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < mutations && !events.empty(); ++i) {
    // Mostly the events after the FDE, where the row images are.
    const size_t at =
        events.size() > 1 && pick(8) != 0 ? 1 + pick(events.size() - 1) : pick(events.size());
    std::string& e = events[at];
    switch (pick(7)) {
      case 0:  // flip a bit past the header (a header's size must stay right to be read)
        if (e.size() > kEventHeaderBytes) {
          e[kEventHeaderBytes + pick(e.size() - kEventHeaderBytes)] ^=
              static_cast<char>(1 << pick(8));
        }
        break;
      case 1:  // truncate the body, keeping the header's size consistent
        if (e.size() > kEventHeaderBytes) {
          e.resize(kEventHeaderBytes + pick(e.size() - kEventHeaderBytes + 1));
        }
        break;
      case 2:  // overwrite 1, 2 or 4 bytes with a random count or length
        if (e.size() >= kEventHeaderBytes + 4) {
          const size_t p = kEventHeaderBytes + pick(e.size() - kEventHeaderBytes - 3);
          uint32_t v = static_cast<uint32_t>(rng());
          const size_t width = size_t{1} << pick(3);
          if (pick(2) == 0) v &= 0xff;
          for (size_t b = 0; b < width; ++b) e[p + b] = static_cast<char>(v >> (8 * b));
        }
        break;
      case 3:  // insert random bytes into the body
        for (size_t n = 1 + pick(8); n > 0 && e.size() >= kEventHeaderBytes; --n) {
          e.insert(e.begin() + static_cast<long>(kEventHeaderBytes +
                                                 pick(e.size() - kEventHeaderBytes + 1)),
                   static_cast<char>(rng()));
        }
        break;
      case 4:  // drop an event
        events.erase(events.begin() + static_cast<long>(at));
        continue;
      case 5:  // duplicate an event
        events.insert(events.begin() + static_cast<long>(pick(events.size() + 1)), e);
        continue;
      case 6:  // swap two events
        std::swap(e, events[pick(events.size())]);
        continue;
    }
    // Keep event_size equal to the bytes, so that the body parsers see the mutation.
    if (e.size() >= kEventHeaderBytes) {
      for (size_t b = 0; b < 4; ++b) e[9 + b] = static_cast<char>(e.size() >> (8 * b));
    }
  }
}

TEST(BinlogFuzz, MutatedEventsNeverCrashAndFailWithTypedErrors) {
  const char* seconds_env = std::getenv("FAUCET_FUZZ_SECONDS");
  const char* seed_env = std::getenv("FAUCET_FUZZ_SEED");
  const double seconds = seconds_env ? std::atof(seconds_env) : 3.0;
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : 20241202;
  const std::vector<Events> corpus = Corpus();
  for (const Events& events : corpus) {
    ASSERT_FALSE(events.empty());
    ASSERT_OK(testing::DecodeFuzzEvents(events, false)) << "corpus must be valid";
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(seconds));
  uint64_t runs = 0, failures = 0;
  for (uint64_t i = 0; std::chrono::steady_clock::now() < deadline; ++i) {
    std::mt19937_64 rng(seed + i);
    Events events = corpus[rng() % corpus.size()];
    Mutate(events, rng);
    const Status s = testing::DecodeFuzzEvents(events, rng() % 8 != 0);
    ASSERT_TRUE(testing::IsTypedDecodeError(s)) << "seed " << seed + i << ": " << s.ToString();
    ++runs;
    failures += !s.ok();
  }
  EXPECT_GT(runs, 0u);
  std::printf("binlog fuzz: %llu inputs, %llu rejected with typed errors\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(failures));
}

}  // namespace
}  // namespace faucet::mysql
