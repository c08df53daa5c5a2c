// A replication session that reads a MySQL/MariaDB server's binlog as a replica: it registers
// with its server_id (COM_REGISTER_SLAVE), asks for the binlog from a file and position
// (COM_BINLOG_DUMP; MariaDB can also start from a GTID position) and receives the events.
//
// A thread reads the socket (Connector/C frames the packets) and queues the events, in
// batches of whole events back to back, bounded in bytes: the network read overlaps the
// decoding, memory stays bounded, and Next can wait with a deadline although the connector
// only reads blocking. The server sends a heartbeat when it has nothing to send, so a silent
// connection is a dead one (the read times out).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "clients/mysql/connection.h"
#include "core/bounded_queue.h"
#include "core/status.h"

namespace faucet::mysql {

// Where a dump starts: a binlog file and offset, or (file empty, MariaDB only) just after a
// GTID position ("0-1-100,1-2-7").
struct DumpStart {
  std::string file;
  uint64_t pos = 4;
  std::string gtid;
};

class BinlogReader {
 public:
  using Clock = std::chrono::steady_clock;
  struct Options {
    uint32_t server_id = 0;
    std::chrono::milliseconds heartbeat{1'000};
    size_t queue_bytes = 8 << 20;  // events read and not yet taken by Next
  };

  // Connects, sets the session up for the dump (checksums as the server writes them, GTID
  // events, the heartbeat period), registers and starts the dump. A start file the server no
  // longer has is kFailedPrecondition saying a resync is needed; a failed connection
  // kUnavailable. `who` names the source in messages.
  static Result<std::unique_ptr<BinlogReader>> Start(const Endpoint& endpoint,
                                                     const Options& options, const DumpStart& start,
                                                     const std::string& who);
  ~BinlogReader();
  BinlogReader(const BinlogReader&) = delete;
  BinlogReader& operator=(const BinlogReader&) = delete;

  // Whole events back to back (each from its 19-byte header to its checksum), waiting until
  // `deadline`: "" when none arrived by then. An error once the session failed or the server
  // ended it (kUnavailable: a reconnect may help; kFailedPrecondition: the binlog the dump
  // needs is gone).
  Result<std::string> Next(Clock::time_point deadline);

  // The server's version string ("10.11.19-MariaDB-log").
  const std::string& server_version() const { return server_version_; }
  bool mariadb() const { return server_version_.find("MariaDB") != std::string::npos; }
  // The events carry a CRC32 (binlog_checksum = CRC32): also the dump's first event, sent
  // before any format description says so.
  bool checksums() const { return checksums_; }

 private:
  struct Batch {
    std::string events;
    Status end;  // ok while the session lives
  };
  BinlogReader(ConnPtr conn, std::string who, size_t queue_bytes);
  void Read();

  ConnPtr conn_;
  const std::string who_;
  std::string server_version_;
  bool checksums_ = false;
  BoundedQueue<Batch> queue_;
  std::thread thread_;
  Status ended_;  // the session's end once Next has seen it
};

// Calls `fn(event)` for each whole event of a batch from BinlogReader::Next; kDataLoss when a
// length does not fit.
template <typename Fn>
Status ForEachEvent(std::string_view batch, Fn&& fn) {
  while (!batch.empty()) {
    if (batch.size() < 19) return DataLoss("binlog: a truncated event header");
    const auto* p = reinterpret_cast<const unsigned char*>(batch.data());
    const uint32_t size = p[9] | (p[10] << 8) | (p[11] << 16) | (uint32_t{p[12]} << 24);
    if (size < 19 || size > batch.size())
      return DataLoss("binlog: an event longer than its packet");
    RETURN_IF_ERROR(fn(batch.substr(0, size)));
    batch.remove_prefix(size);
  }
  return Status::Ok();
}

}  // namespace faucet::mysql
