#include "sources/postgres/walsender_protocol.h"

#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>

#include "sources/postgres/pgoutput.h"

namespace faucet::postgres {
namespace {

uint64_t ReadU64(std::string_view d, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(d[at + i]);
  return v;
}

void PutU64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

}  // namespace

int64_t NowPostgresMicros() {
  auto since_unix = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return since_unix.count() - kPostgresEpochUnixMicros;
}

bool ReadAvailable(PGconn* conn) {
  const int fd = PQsocket(conn);
  // What left the socket, as FIONREAD sees it before and after each read (what arrived meanwhile
  // is not counted): every call counts, the first too, so libpq's buffer, which doubles when a
  // call finds it nearly full, grows to about twice kReadBurstBytes and no further.
  size_t taken = 0;
  int before = 0;
  if (ioctl(fd, FIONREAD, &before) != 0) before = 0;
  do {
    if (PQconsumeInput(conn) == 0) return false;
    int after = 0;
    if (ioctl(fd, FIONREAD, &after) != 0) return true;
    if (before > after) taken += static_cast<size_t>(before - after);
    before = after;
  } while (before > 0 && taken < kReadBurstBytes);
  return true;
}

bool BurstQueued(PGconn* conn) {
  const int fd = PQsocket(conn);
  int queued = 0;
  int buffer = 0;
  socklen_t size = sizeof buffer;
  if (ioctl(fd, FIONREAD, &queued) != 0 ||
      getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, &size) != 0) {
    return true;  // unknown: read rather than nap
  }
  return static_cast<size_t>(queued) >=
         std::min(kReadBurstBytes, static_cast<size_t>(buffer) / kBurstOfReceiveBuffer);
}

Result<ReplicationMessage> ParseReplicationMessage(std::string_view data) {
  if (data.empty()) return DataLoss("replication: empty CopyData message");
  switch (data[0]) {
    case 'w': {
      if (data.size() < 25) {
        return DataLoss("replication: XLogData of " + std::to_string(data.size()) +
                        " bytes is shorter than its 25-byte header");
      }
      XLogData x;
      x.wal_start = Lsn(ReadU64(data, 1));
      x.wal_end = Lsn(ReadU64(data, 9));
      x.server_time = static_cast<int64_t>(ReadU64(data, 17));
      x.payload = data.substr(25);
      return ReplicationMessage(x);
    }
    case 'k': {
      if (data.size() != 18) {
        return DataLoss("replication: keepalive of " + std::to_string(data.size()) +
                        " bytes (expected 18)");
      }
      Keepalive k;
      k.wal_end = Lsn(ReadU64(data, 1));
      k.server_time = static_cast<int64_t>(ReadU64(data, 9));
      k.reply_requested = data[17] != 0;
      return ReplicationMessage(k);
    }
    default:
      return DataLoss("replication: unknown CopyData message type " +
                      std::to_string(static_cast<uint8_t>(data[0])));
  }
}

std::string EncodeStandbyStatus(Lsn written, Lsn flushed, Lsn applied, int64_t now_postgres_micros,
                                bool reply_requested) {
  std::string out;
  out.reserve(34);
  out.push_back('r');
  PutU64(out, written.value());
  PutU64(out, flushed.value());
  PutU64(out, applied.value());
  PutU64(out, static_cast<uint64_t>(now_postgres_micros));
  out.push_back(reply_requested ? 1 : 0);
  return out;
}

}  // namespace faucet::postgres
