// `faucet doctor` for a mysql-cdc source: checks what a binlog pipeline needs from a MySQL or
// MariaDB server, read-only (it never connects as a replica and never reads the binlog), and
// says how to fix what is missing.
#pragma once

#include <optional>
#include <string>

#include "core/bookmark.h"
#include "core/doctor_report.h"
#include "core/status.h"
#include "sources/mysql/mysql_config.h"

namespace faucet::mysql {

// The position the pipeline's next run resumes from, as its state store holds it.
struct DoctorResume {
  std::optional<Bookmark> bookmark;  // {"file": ..., "pos": ...}; none: the config's start
  std::string where;                 // where it was read ("orders::row-0"), for messages
  std::string error;                 // why the state store could not be read; "" when it was
};

// Runs, in order:
//   connection           a failure is a failed check ending the report, not an error
//   server_version       MySQL or MariaDB, and its version
//   log_bin              ON, else fail
//   binlog_format        ROW, else fail (STATEMENT and MIXED log statements, not rows)
//   binlog_row_image     FULL; MINIMAL, NOBLOB, FULL_NODUP warn (unchanged columns are not
//                        sent: the stream marks them unchanged, as Postgres' unchanged TOAST)
//   binlog_row_metadata  FULL; MINIMAL, NO_LOG or a server without it warn (names, keys and
//                        ENUM/SET members then come from the catalog, which is wrong for rows
//                        written before an ALTER TABLE the source has not read past)
//   binlog_checksum      NONE or CRC32, else fail
//   privileges           REPLICATION SLAVE and REPLICATION CLIENT (MariaDB: BINLOG MONITOR),
//                        else fail; SELECT on the streamed tables, else warn. From SHOW GRANTS
//                        (ALL PRIVILEGES covers them); privileges of roles are not followed
//   server_id            equal to the server's own: fail; used by a replica the server lists
//                        (SHOW SLAVE HOSTS): warn, as it may be this pipeline running now
//   binlog_retention     how long binlogs are kept; 0 = until purged by hand: ok; under a
//                        day: warn (a snapshot or a stopped pipeline may need longer)
//   start_position       where the next run starts (`resume`, else the config): a file the
//                        server no longer has (SHOW BINARY LOGS) fails: a resync is needed
//   tables               include_tables that do not exist, streamed tables without a primary
//                        key: warn
// Messages never contain the URL's password (nor the password hashes SHOW GRANTS prints).
Result<DoctorReport> RunDoctor(const MysqlCdcConfig& config, const DoctorResume& resume = {});

}  // namespace faucet::mysql
