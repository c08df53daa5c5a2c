// MysqlSnapshot: a MySQL/MariaDB database held still at one moment, for a mirror's exact cut.
// A session starts a transaction WITH CONSISTENT SNAPSHOT and keeps it open while this object
// lives; MariaDB also tells the binlog position of exactly that moment (the status variables
// binlog_snapshot_file / binlog_snapshot_position), so a stream from that position carries
// every change the snapshot does not see, and none it does.
//
// A MySQL/MariaDB snapshot cannot be shared with other sessions: the query source reads
// inside it on this object's own connection (MysqlQuerySource::ReadInSnapshot), and readers
// take turns on it (Lease): a multi-table mirror's tables are read one after another.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "clients/mysql/connection.h"
#include "core/source.h"
#include "sources/mysql/binlog_stream.h"

namespace faucet::mysql {

class MysqlSnapshot final : public ConsistentSnapshot {
 public:
  // Opens its own connection and starts the snapshot transaction (read only, repeatable
  // read). `who` names the caller in messages.
  static Result<std::unique_ptr<MysqlSnapshot>> Start(const Endpoint& endpoint,
                                                      const std::string& who);

  // "binlog.000003:1234" (the position), or "consistent snapshot" when the server gives none.
  const std::string& id() const override { return id_; }
  // The session holding the snapshot: reads on it see the snapshot.
  MYSQL* conn() const { return conn_.get(); }
  // The binlog position of the snapshot's moment; nullopt when the server does not say
  // (MySQL), in which case no exact cut is possible.
  const std::optional<BinlogPosition>& position() const { return position_; }
  // The session for one read: held from the read's start to its end, while other readers
  // wait. Callable from any thread.
  std::unique_lock<std::mutex> Lease() const { return std::unique_lock<std::mutex>(readers_); }

 private:
  MysqlSnapshot() = default;
  ConnPtr conn_;
  std::optional<BinlogPosition> position_;
  std::string id_;
  mutable std::mutex readers_;  // held by the reader of conn_ (Lease)
};

}  // namespace faucet::mysql
