// The CopyBoth sub-protocol of a streaming replication connection after START_REPLICATION:
// XLogData and Primary keepalive from the server, Standby status update from us. Formats:
// PostgreSQL docs, "Streaming Replication Protocol" (protocol-replication.html).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "core/lsn.h"
#include "core/status.h"

namespace faucet::postgres {

// 'w': one pgoutput message, starting at WAL position `wal_start`.
struct XLogData {
  Lsn wal_start;
  Lsn wal_end;  // the server's current end of WAL: NOT a position we have
  int64_t server_time = 0;
  std::string_view payload;  // points into the parsed buffer
};

// 'k': the server is alive; `wal_end` is how far it has sent (logical: decoded) WAL.
struct Keepalive {
  Lsn wal_end;
  int64_t server_time = 0;
  bool reply_requested = false;
};

using ReplicationMessage = std::variant<XLogData, Keepalive>;

// Parses one CopyData payload from the server. Malformed or unknown is kDataLoss.
Result<ReplicationMessage> ParseReplicationMessage(std::string_view data);

// 'r': tells the server how far we have written, flushed and applied. For a logical slot the
// flush position becomes confirmed_flush_lsn (WAL before it may be recycled), so callers pass
// only durably persisted positions; 0/0 means "no progress" and leaves the slot alone.
// `now_postgres_micros` is the client clock in microseconds since 2000-01-01.
std::string EncodeStandbyStatus(Lsn written, Lsn flushed, Lsn applied, int64_t now_postgres_micros,
                                bool reply_requested);

}  // namespace faucet::postgres
