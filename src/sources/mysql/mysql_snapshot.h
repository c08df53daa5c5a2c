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
#include <optional>
#include <semaphore>
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
  // The session for one read, held from the read's start to its end while other readers
  // wait: Lease waits for the turn, and the turn passes on when the returned Turn is reset or
  // destroyed, on any thread (a source opens on one thread and closes on another).
  struct GiveBack {
    void operator()(std::binary_semaphore* turn) const { turn->release(); }
  };
  using Turn = std::unique_ptr<std::binary_semaphore, GiveBack>;
  Turn Lease() const {
    turn_.acquire();
    return Turn(&turn_);
  }

 private:
  MysqlSnapshot() = default;
  ConnPtr conn_;
  std::optional<BinlogPosition> position_;
  std::string id_;
  mutable std::binary_semaphore turn_{1};  // taken by the reader of conn_ (Lease)
};

}  // namespace faucet::mysql
