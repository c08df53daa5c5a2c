// Test-only: the binlogs recorded in testdata/ (record.sh says how), and helpers to build
// events by hand.
#pragma once

#include <zlib.h>

#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "sources/mysql/binlog_replay.h"

namespace faucet::mysql::testing {

// Every recorded file, by the name record.sh gives it (<name>.binlog).
inline const std::vector<std::string> kRecordedBinlogs = {
    "ints", "nums",    "times",         "strs",       "bins",     "misc",
    "dml",  "minimal", "image_minimal", "compressed", "old_times"};

struct RecordedBinlog {
  std::string bytes;
  std::vector<std::string_view> events;  // into `bytes`

  RecordedBinlog() = default;
  RecordedBinlog(const RecordedBinlog&) = delete;
  RecordedBinlog& operator=(const RecordedBinlog&) = delete;
  RecordedBinlog(RecordedBinlog&& o) noexcept { *this = std::move(o); }
  RecordedBinlog& operator=(RecordedBinlog&& o) noexcept {
    bytes = std::move(o.bytes);
    events = SplitBinlog(bytes);  // views into our own bytes, not the moved-from ones
    return *this;
  }
};

// testdata/<name>.binlog; empty when it cannot be read.
inline RecordedBinlog LoadBinlog(const std::string& name) {
  std::ifstream in(std::string(FAUCET_BINLOG_TESTDATA) + "/" + name + ".binlog", std::ios::binary);
  RecordedBinlog b;
  b.bytes.assign(std::istreambuf_iterator<char>(in), {});
  b.events = SplitBinlog(b.bytes);
  return b;
}

// What the catalog gives for a table map without FULL metadata (minimal.binlog): the ENUM and
// SET members of faucet.misc, as record.sh defines them, in UTF-8 (MINIMAL metadata gives no
// ENUM/SET collation, so that members are taken as UTF-8).
inline void CompleteFromCatalog(TableMap& map) {
  if (map.table != "misc" || map.columns.size() != 11 || !map.columns[1].enum_values.empty()) {
    return;
  }
  map.columns[1].enum_values = {"a", "b", "c"};
  for (int i = 1; i <= 260; ++i) map.columns[2].enum_values.push_back("v" + std::to_string(i));
  map.columns[3].set_values = {"x", "y", "z"};
  for (int i = 1; i <= 64; ++i) map.columns[4].set_values.push_back("m" + std::to_string(i));
  map.columns[5].enum_values = {"é", "ü"};
}

// A Replay for the recorded files: the server's charset name of the one collation of theirs
// faucet does not know itself (cp1251_general_ci, column strs.cyr), and the catalog's ENUM/SET
// members.
inline Replay RecordedReplay() {
  Replay r;
  r.charsets = DefaultCharsets([](uint32_t id) { return id == 51 ? "cp1251" : ""; });
  r.complete_table_map = CompleteFromCatalog;
  return r;
}

// `v` as `n` little-endian bytes.
inline std::string Le(uint64_t v, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += static_cast<char>(v >> (8 * i));
  return out;
}

// A whole event: the 19-byte header (server id 1), `body`, and its CRC32 when `checksum`.
inline std::string BuildEvent(uint8_t type, const std::string& body, bool checksum,
                              uint32_t next_position = 0) {
  const size_t size = kEventHeaderBytes + body.size() + (checksum ? kChecksumBytes : 0);
  std::string e = Le(0, 4) + static_cast<char>(type) + Le(1, 4) + Le(size, 4) +
                  Le(next_position, 4) + Le(0, 2) + body;
  if (checksum) {
    e += Le(0, 4);
    Resign(e);
  }
  return e;
}

}  // namespace faucet::mysql::testing
