#include "sources/mysql/binlog_reader.h"

#include <errmsg.h>
#include <mysqld_error.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "core/redact.h"

namespace faucet::mysql {
namespace {

// A batch goes to the queue when it reaches this size or the socket has nothing more to read.
constexpr size_t kBatchBytes = 256 << 10;

void Put4(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void Put2(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8));
}
void PutShortString(std::string& out, const std::string& s) {
  out.push_back(static_cast<char>(std::min<size_t>(s.size(), 255)));
  out.append(s, 0, std::min<size_t>(s.size(), 255));
}

// Whether the socket has bytes to read now. The connector may hold some already read in its
// own buffer: then this says no and a batch leaves a little early, which costs nothing.
bool Readable(MYSQL* conn) {
  pollfd p{static_cast<int>(mysql_get_socket(conn)), POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

Status CommandError(MYSQL* conn, const std::string& what) {
  const unsigned int err = mysql_errno(conn);
  // ER_MASTER_FATAL_ERROR_READING_BINLOG: the start file or position is not in the binlog
  // (purged, or never written).
  if (err == ER_MASTER_FATAL_ERROR_READING_BINLOG) {
    return FailedPrecondition(what + ": " + mysql_error(conn) +
                              " (error 1236): the binlog this source must resume from is gone; "
                              "a resync is needed (a new snapshot, or a start_position)");
  }
  // MariaDB's ER_SLAVE_SAME_ID: a newer dump with this server_id ended this one.
  if (err == 4052) {
    return FailedPrecondition(what + ": " + mysql_error(conn) +
                              " (error 4052): another replica or pipeline uses this server_id; "
                              "give each its own");
  }
  return StatementError(conn, what);
}

}  // namespace

BinlogReader::BinlogReader(ConnPtr conn, std::string who, size_t queue_bytes)
    : conn_(std::move(conn)), who_(std::move(who)), queue_(queue_bytes) {}

Result<std::unique_ptr<BinlogReader>> BinlogReader::Start(const Endpoint& endpoint,
                                                          const Options& options,
                                                          const DumpStart& start,
                                                          const std::string& who) {
  // A dead server is noticed when no heartbeat came for a while.
  const unsigned int read_timeout =
      static_cast<unsigned int>(std::max<int64_t>(30, 5 * options.heartbeat.count() / 1000));
  ASSIGN_OR_RETURN(ConnPtr conn, Connect(endpoint, who, [&](MYSQL* c) {
                     mysql_options(c, MYSQL_OPT_READ_TIMEOUT, &read_timeout);
                   }));
  MYSQL* c = conn.get();
  std::string version = mysql_get_server_info(c);
  const bool maria = version.find("MariaDB") != std::string::npos;
  // Checksums as the server writes them (it refuses a replica that does not say it handles
  // them); verified by the decoder. MariaDB: GTID events as they are (capability 4), else it
  // rewrites them as BEGIN queries.
  std::string setup =
      "SET @master_binlog_checksum = @@global.binlog_checksum, @master_heartbeat_period = " +
      std::to_string(options.heartbeat.count() * 1'000'000);
  if (maria) setup += ", @mariadb_slave_capability = 4";
  if (start.file.empty()) {
    if (!maria) return FailedPrecondition(who + ": a GTID start position needs MariaDB");
    setup += ", @slave_connect_state = " + Literal(c, start.gtid) +
             ", @slave_gtid_strict_mode = 0, @slave_gtid_ignore_duplicates = 0";
  }
  RETURN_IF_ERROR(Exec(c, setup, who + ": setting up the replication session"));
  ASSIGN_OR_RETURN(Rows checksum,
                   Fetch(c, "SELECT @@global.binlog_checksum", who + ": reading binlog_checksum"));
  const bool checksums = !checksum.empty() && checksum[0][0].value_or("NONE") != "NONE";

  // COM_REGISTER_SLAVE: server_id, host, user, password, port, rank, master id. The server
  // then lists this replica (SHOW SLAVE HOSTS) and ends an older one with the same server_id.
  std::string reg;
  Put4(reg, options.server_id);
  PutShortString(reg, "faucet");
  PutShortString(reg, "");
  PutShortString(reg, "");
  Put2(reg, 0);
  Put4(reg, 0);
  Put4(reg, 0);
  if (c->methods->db_command(c, COM_REGISTER_SLAVE, reg.data(), reg.size(), 0, nullptr) != 0) {
    return CommandError(c, who + ": registering as replica " + std::to_string(options.server_id));
  }
  // COM_BINLOG_DUMP: position (4 bytes), flags (0: wait for new events), server_id, file.
  std::string dump;
  Put4(dump, static_cast<uint32_t>(start.pos));
  Put2(dump, 0);
  Put4(dump, options.server_id);
  dump += start.file;
  if (c->methods->db_command(c, COM_BINLOG_DUMP, dump.data(), dump.size(), 1, nullptr) != 0) {
    return CommandError(c, who + ": starting the binlog dump");
  }
  std::unique_ptr<BinlogReader> reader(new BinlogReader(std::move(conn), who, options.queue_bytes));
  reader->server_version_ = std::move(version);
  reader->checksums_ = checksums;
  reader->thread_ = std::thread([r = reader.get()] { r->Read(); });
  return reader;
}

BinlogReader::~BinlogReader() {
  queue_.Close();  // a read thread waiting for room gives up
  if (thread_.joinable()) {
    // Wakes a read blocked on the socket: it fails and the thread ends.
    shutdown(static_cast<int>(mysql_get_socket(conn_.get())), SHUT_RDWR);
    thread_.join();
  }
}

void BinlogReader::Read() {
  MYSQL* c = conn_.get();
  std::string batch;
  Status end;
  while (true) {
    if (!batch.empty() && (batch.size() >= kBatchBytes || !Readable(c))) {
      const size_t bytes = batch.size();
      if (!queue_.Push(Batch{std::move(batch), Status::Ok()}, bytes)) return;  // closed
      batch = std::string();
    }
    const unsigned long n = mysql_net_read_packet(c);
    if (n == packet_error) {  // the server's error, or a lost link
      end = CommandError(c, who_ + ": reading the binlog");
      break;
    }
    const auto* p = c->net.read_pos;
    if (n < 9 && p[0] == 0xfe) {  // EOF: the server ended the dump
      end = Unavailable(who_ + ": the server ended the binlog dump");
      break;
    }
    if (n < 1 + 19 || p[0] != 0x00) {
      end = DataLoss(who_ + ": an unexpected packet in the binlog dump (" + std::to_string(n) +
                     " bytes, starting with " + std::to_string(p[0]) + ")");
      break;
    }
    const uint32_t size = p[10] | (p[11] << 8) | (p[12] << 16) | (uint32_t{p[13]} << 24);
    if (size != n - 1) {
      end = DataLoss(who_ + ": an event of " + std::to_string(size) + " bytes in a packet of " +
                     std::to_string(n - 1));
      break;
    }
    batch.append(reinterpret_cast<const char*>(p + 1), n - 1);
  }
  if (!batch.empty()) {
    const size_t bytes = batch.size();
    if (!queue_.Push(Batch{std::move(batch), Status::Ok()}, bytes)) return;
  }
  queue_.Push(Batch{{}, std::move(end)}, 0);
}

Result<std::string> BinlogReader::Next(Clock::time_point deadline) {
  if (!ended_.ok()) return ended_;
  Batch batch;
  switch (queue_.PopUntil(batch, deadline)) {
    case BoundedQueue<Batch>::PopResult::kTimedOut:
      return std::string();
    case BoundedQueue<Batch>::PopResult::kClosed:
      return Unavailable(who_ + ": the binlog reader has stopped");
    case BoundedQueue<Batch>::PopResult::kPopped:
      break;
  }
  if (!batch.end.ok()) {
    ended_ = batch.end;
    return ended_;
  }
  return std::move(batch.events);
}

}  // namespace faucet::mysql
