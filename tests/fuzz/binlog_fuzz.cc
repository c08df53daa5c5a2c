// binlog: the input is a binlog file (the 4-byte magic, optional, then events back to back,
// each as long as its header says), replayed through a fresh decoder as the mysql-cdc source
// would: the FORMAT_DESCRIPTION_EVENT, then every event parser, table maps resolved to column
// codecs and every row image decoded. Events are re-signed first, so that mutations reach the
// parsers instead of stopping at the CRC32 (checksum mismatches have their own unit tests).
// Only typed decode errors are allowed.
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_target.h"
#include "sources/mysql/binlog_replay.h"

FAUCET_FUZZ_TARGET(binlog) {
  const std::string_view file(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> events;
  for (std::string_view e : faucet::mysql::testing::SplitBinlog(file)) events.emplace_back(e);
  if (!faucet::mysql::testing::IsTypedDecodeError(
          faucet::mysql::testing::DecodeFuzzEvents(std::move(events), true))) {
    std::abort();
  }
}
