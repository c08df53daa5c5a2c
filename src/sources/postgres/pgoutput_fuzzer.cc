// libFuzzer target (cmake -DFAUCET_FUZZ=ON with clang). The input is a sequence of messages,
// each prefixed by a 2-byte big-endian length, fed to a fresh decoder; an untyped error
// aborts. The first byte chooses the stream memory budget, so that spilling is fuzzed too.
#include <cstdint>
#include <cstdlib>

#include "sources/postgres/pgoutput_fuzz_driver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t budget = data[0] & 1 ? 64 : 1 << 20;
  std::vector<std::string> messages;
  size_t at = 1;
  while (at + 2 <= size) {
    size_t len = (size_t{data[at]} << 8) | data[at + 1];
    at += 2;
    len = std::min(len, size - at);
    messages.emplace_back(reinterpret_cast<const char*>(data + at), len);
    at += len;
  }
  if (!faucet::postgres::IsTypedDecodeError(faucet::postgres::DecodeFuzzInput(messages, budget))) {
    std::abort();
  }
  return 0;
}
