// The CopyBoth sub-protocol of a streaming replication connection after START_REPLICATION:
// XLogData and Primary keepalive from the server, Standby status update from us. Formats:
// PostgreSQL docs, "Streaming Replication Protocol" (protocol-replication.html).
#pragma once

#include <libpq-fe.h>

#include <chrono>
#include <cstddef>
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

// The client clock as EncodeStandbyStatus wants it: microseconds since 2000-01-01.
int64_t NowPostgresMicros();

// How a client reading the stream waits while the server is sending: an empty socket is not
// waited on, the client sleeps this long and then reads everything that queued meanwhile. The
// walsender sends every message with its own send(); when the reader is woken for every few
// messages, the TCP window stays open and each of those sends runs the whole transmit path,
// delivery and wake-up, which on loopback made the walsender (the bottleneck) spend 60-90% more
// CPU than for pg_recvlogical, which reads slowly. A reader that lets the window fill turns
// those sends into copies into the socket buffer. Measured (BENCHMARKS.md): 1 ms and 10 ms
// naps do not fill the window, 20 ms does. Latency added: at most this, and only while data is
// flowing; an idle stream is waited for in poll().
inline constexpr auto kBurstNap = std::chrono::milliseconds(20);

// How much ReadAvailable takes from the socket at most in one call (libpq's buffer then holds
// at most about twice this).
inline constexpr size_t kReadBurstBytes = size_t{1} << 20;

// Moves what `conn`'s socket holds, up to about kReadBurstBytes, into libpq's buffer
// (PQconsumeInput until the socket is empty); false if the connection failed (PQerrorMessage
// says why). A burst that queued during a nap is taken in one go, not 16 KiB per
// PQconsumeInput spaced out by the decoding of what the previous one read: those spaced reads
// reopen the window a little at a time, so the walsender's sends go out in more, smaller
// segments. A client spending 1.5 us per message made the walsender send 2-3x the segments
// and spend 10% more CPU than under a client that drops the stream; reading each burst whole
// brought both back (BENCHMARKS.md).
bool ReadAvailable(PGconn* conn);

// 'r': tells the server how far we have written, flushed and applied. For a logical slot the
// flush position becomes confirmed_flush_lsn (WAL before it may be recycled), so callers pass
// only durably persisted positions; 0/0 means "no progress" and leaves the slot alone.
// `now_postgres_micros` is the client clock in microseconds since 2000-01-01.
std::string EncodeStandbyStatus(Lsn written, Lsn flushed, Lsn applied, int64_t now_postgres_micros,
                                bool reply_requested);

}  // namespace faucet::postgres
