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

// How a client reading the stream waits while the server is sending (data arrived within this
// long): unless a burst has already queued (BurstQueued), the client does not read the little
// the socket holds but sleeps this long, then reads everything that queued meanwhile. The
// walsender sends every message with its own send(); while the client's receive window is
// open, each send runs the whole transmit path, delivery and wake-up on the walsender's CPU,
// and the walsender is the bottleneck. A client that lets the window fill turns those sends
// into copies into the socket buffer, sent later in large segments. Measured (BENCHMARKS.md):
// 1 ms and 10 ms naps do not fill the window, 20 ms does; a reader that read whatever had
// queued (an empty socket its only reason to nap) and spent about a microsecond per message
// made the walsender send 2-5x the segments it sends to a client that drops the stream, for
// the same 1,000,000 rows. Latency added: at most this, and only while data is flowing; an
// idle stream is waited for in poll().
inline constexpr auto kBurstNap = std::chrono::milliseconds(20);

// How much ReadAvailable takes from the socket at most in one call (libpq's buffer then holds
// at most about twice this), and how much a reader lets queue before it reads without a nap.
// Counting only the calls after the first let the buffer grow to the socket's backlog: 4-8 MiB
// where the source waited on a full queue (BENCHMARKS.md, "Memory: a spilled stream leaves
// memory whole, and an 8 MiB queue").
inline constexpr size_t kReadBurstBytes = size_t{1} << 20;
inline constexpr size_t kBurstOfReceiveBuffer = 4;

// Moves what `conn`'s socket holds, up to about kReadBurstBytes, into libpq's buffer
// (PQconsumeInput until the socket is empty); false if the connection failed (PQerrorMessage
// says why). A burst that queued during a nap is taken in one go, not 16 KiB per
// PQconsumeInput spaced out by the decoding of what the previous one read: those spaced reads
// reopen the window a little at a time, so the walsender's sends go out in more, smaller
// segments. A client spending 1.5 us per message made the walsender send 2-3x the segments
// and spend 10% more CPU than under a client that drops the stream; reading each burst whole
// brought both back (BENCHMARKS.md).
bool ReadAvailable(PGconn* conn);

// Whether `conn`'s socket holds a burst not yet read: kReadBurstBytes, or a
// 1/kBurstOfReceiveBuffer of its receive buffer if that is less. A reader whose libpq buffer
// has run dry reads at once if so, and naps kBurstNap first if not (while the server is
// sending). The receive buffer (grown by the kernel as the reader keeps up, 128 KiB at first)
// bounds what can queue: a reader that falls behind finds it a quarter full and does not nap.
bool BurstQueued(PGconn* conn);

// 'r': tells the server how far we have written, flushed and applied. For a logical slot the
// flush position becomes confirmed_flush_lsn (WAL before it may be recycled), so callers pass
// only durably persisted positions; 0/0 means "no progress" and leaves the slot alone.
// `now_postgres_micros` is the client clock in microseconds since 2000-01-01.
std::string EncodeStandbyStatus(Lsn written, Lsn flushed, Lsn applied, int64_t now_postgres_micros,
                                bool reply_requested);

}  // namespace faucet::postgres
