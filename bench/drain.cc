// The decoding limit of the bench: a replication client that receives a slot's pgoutput stream
// and drops it, i.e. the walsender's own rate. It decodes nothing but each message's first byte
// (to count row changes and see the commit), so what it measures is the server decoding the WAL
// and sending it, not a client.
//
//   faucet_drain CONNINFO SLOT PUBLICATION CHANGES [nap|poll]
//
// Streams from the slot's confirmed position with the options postgres-cdc uses (protocol 2,
// streaming on, messages on) until CHANGES row changes (insert, update, delete) have arrived and
// then a commit (Commit or Stream Commit); then exits 0, printing the counts on stdout.
//
// How it waits for data matters to the walsender (BENCHMARKS.md, "CDC decoding"): a client that
// sleeps in poll() whenever its socket is empty is woken once per message and makes the
// walsender pay a wake-up per send. `nap` (the default) reads the way postgres-cdc does: while
// data flows, a socket holding less than a burst (1 MiB) means a 20 ms nap and then one read of
// all it holds (ReadAvailable), which lets the walsender's sends coalesce; `poll` waits in
// poll() every time, as pg_recvlogical does.
#include <libpq-fe.h>
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

#include "sources/postgres/walsender_protocol.h"

using faucet::Lsn;
using namespace faucet::postgres;

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void Fail(PGconn* conn, const std::string& what) {
  fprintf(stderr, "faucet_drain: %s: %s\n", what.c_str(), conn ? PQerrorMessage(conn) : "");
  exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5 || (argc == 6 && strcmp(argv[5], "nap") != 0 && strcmp(argv[5], "poll") != 0)) {
    fprintf(stderr, "usage: faucet_drain CONNINFO SLOT PUBLICATION CHANGES [nap|poll]\n");
    return 2;
  }
  const std::string slot = argv[2];
  const std::string publication = argv[3];
  const long long want = atoll(argv[4]);
  const bool nap = argc < 6 || strcmp(argv[5], "nap") == 0;

  const char* keys[] = {"dbname", "replication", nullptr};
  const char* values[] = {argv[1], "database", nullptr};
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(PQconnectdbParams(keys, values, 1), PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) Fail(conn.get(), "connect");
  const std::string sql = "START_REPLICATION SLOT \"" + slot +
                          "\" LOGICAL 0/0 (proto_version '2', publication_names '\"" + publication +
                          "\"', messages 'true', streaming 'on')";
  {
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(conn.get(), sql.c_str()), PQclear);
    if (PQresultStatus(r.get()) != PGRES_COPY_BOTH) Fail(conn.get(), "START_REPLICATION");
  }

  long long messages = 0, changes = 0, bytes = 0;
  Clock::time_point last_data = Clock::now();
  bool read_socket = false;
  while (true) {
    char* buffer = nullptr;
    const int n = PQgetCopyData(conn.get(), &buffer, /*async=*/1);
    if (n > 0) {
      read_socket = false;  // the socket may hold more: read it before waiting
      // The message points into `buffer`: freed once it is read.
      std::unique_ptr<char, decltype(&PQfreemem)> owned(buffer, PQfreemem);
      faucet::Result<ReplicationMessage> m =
          ParseReplicationMessage(std::string_view(buffer, static_cast<size_t>(n)));
      if (!m.ok()) Fail(nullptr, m.status().ToString());
      if (const auto* x = std::get_if<XLogData>(&*m)) {
        last_data = Clock::now();
        ++messages;
        bytes += static_cast<long long>(x->payload.size());
        const char type = x->payload.empty() ? '\0' : x->payload[0];
        if (type == 'I' || type == 'U' || type == 'D') ++changes;
        if ((type == 'C' || type == 'c') && changes >= want) break;
      } else if (std::get<Keepalive>(*m).reply_requested) {
        // No progress to report (0/0): the slot is a throwaway copy.
        const std::string status = EncodeStandbyStatus(Lsn(), Lsn(), Lsn(), NowPostgresMicros(),
                                                       /*reply_requested=*/false);
        if (PQputCopyData(conn.get(), status.data(), static_cast<int>(status.size())) != 1 ||
            PQflush(conn.get()) != 0) {
          Fail(conn.get(), "standby status");
        }
      }
      continue;
    }
    if (n != 0) Fail(conn.get(), "the stream ended before " + std::to_string(want) + " changes");
    // As the source reads (PostgresCdcSource::Receive): a whole burst queued is read at once;
    // less than that is left to fill while the server is sending, and waited for in poll()
    // once a read has found nothing.
    if (!BurstQueued(conn.get())) {
      if (nap && Clock::now() - last_data < kBurstNap) {
        std::this_thread::sleep_for(kBurstNap);
      } else if (read_socket) {
        pollfd fd{PQsocket(conn.get()), POLLIN, 0};
        if (poll(&fd, 1, 1000) < 0 && errno != EINTR) Fail(conn.get(), "poll");
      }
    }
    if (!ReadAvailable(conn.get())) Fail(conn.get(), "read");
    read_socket = true;
  }
  printf("%lld messages, %lld bytes, %lld row changes\n", messages, bytes, changes);
  return 0;
}
