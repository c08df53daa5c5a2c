// pgoutput: the input is a sequence of replication messages, each prefixed by a 2-byte
// big-endian length, fed to a fresh decoder. The first byte chooses the stream memory budget,
// so that spilling is fuzzed too. Only typed decode errors are allowed.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "sources/postgres/pgoutput_fuzz_driver.h"

FAUCET_FUZZ_TARGET(pgoutput) {
  if (size == 0) return;
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
}
