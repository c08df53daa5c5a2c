// Configuration of the MySQL/MariaDB sources (`type: mysql-cdc` and `type: mysql`), parsed from
// a config block without any I/O, so that `faucet validate` finds every invalid value before a
// connection is attempted. Keys and defaults follow the reference system
// (spec/reference-faucet-stream.md §1.3, §1.4).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "clients/mysql/connection.h"
#include "config/block.h"
#include "core/status.h"

namespace faucet {

// Where a mysql-cdc source starts when no bookmark is persisted.
struct MysqlStartPosition {
  enum class Kind {
    kCurrent,   // the server's binlog end when the source opens (SHOW MASTER STATUS)
    kEarliest,  // the oldest binlog the server still has (SHOW BINARY LOGS)
    kGtidSet,   // just after the transactions of a GTID position (MariaDB "0-1-100,1-2-7")
    kFilePos,   // a binlog file and offset
  };
  Kind kind = Kind::kCurrent;
  std::string gtid_set;  // kGtidSet
  std::string file;      // kFilePos
  uint64_t pos = 4;      // kFilePos (4: just after a binlog's magic)
};

struct MysqlCdcConfig {
  mysql::Endpoint endpoint;  // connection_url (its database optional) and tls
  uint32_t server_id = 0;    // required, != 0, unique among the server's replicas
  // Exact "db.table" names; a table is streamed when include_tables lists it, or, when it is
  // empty, when exclude_tables does not.
  std::set<std::string> include_tables;
  std::set<std::string> exclude_tables;
  MysqlStartPosition start_position;
  bool include_columns = true;       // `before` on updates and deletes
  bool emit_schema_changes = false;  // true is refused: DDL is not emitted as records
  std::chrono::milliseconds idle_timeout{30'000};
  size_t batch_size = 1000;  // rows per page target

  // Tuning without a config key (tests lower them).
  size_t page_bytes = 16 << 20;  // byte budget of one page
  // How long a page waits for more transactions while events keep coming (one with changes
  // leaves once none has arrived for 20 ms).
  std::chrono::milliseconds linger{50};
  // How long a page of transactions without a streamed change waits (TxnPager): the binlog
  // carries every table's transactions, the sink's own writes among them when it writes into
  // the source server.
  std::chrono::milliseconds empty_linger{5'000};
  std::chrono::milliseconds heartbeat{1'000};  // the server's heartbeat period when idle

  // Whether changes of `db`.`table` are streamed.
  bool Streams(const std::string& db, const std::string& table) const;
};

struct MysqlQueryConfig {
  mysql::Endpoint endpoint;  // connection_url (with a database) and tls
  std::string query;
  size_t batch_size = 1000;  // rows per page
};

// Reads a `mysql-cdc` config block. Every invalid value is kInvalidArgument located at its key
// (file:line:col).
Result<MysqlCdcConfig> ParseMysqlCdcConfig(const config::Block& block);

// Reads a `mysql` (query) config block.
Result<MysqlQueryConfig> ParseMysqlQueryConfig(const config::Block& block);

}  // namespace faucet
