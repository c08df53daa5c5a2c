#include "sources/mysql/mysql_snapshot.h"

namespace faucet::mysql {

Result<std::unique_ptr<MysqlSnapshot>> MysqlSnapshot::Start(const Endpoint& endpoint,
                                                            const std::string& who) {
  std::unique_ptr<MysqlSnapshot> s(new MysqlSnapshot());
  ASSIGN_OR_RETURN(s->conn_, Connect(endpoint, who));
  MYSQL* c = s->conn_.get();
  RETURN_IF_ERROR(Exec(c, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
                       who + ": setting the snapshot's isolation"));
  RETURN_IF_ERROR(Exec(c, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY",
                       who + ": starting a consistent snapshot"));
  ASSIGN_OR_RETURN(Rows status, Fetch(c, "SHOW STATUS LIKE 'binlog_snapshot_%'",
                                      who + ": reading the snapshot's binlog position"));
  std::optional<std::string> file, pos;
  for (const auto& r : status) {
    if (r[0] == "Binlog_snapshot_file") file = r[1];
    if (r[0] == "Binlog_snapshot_position") pos = r[1];
  }
  if (file && pos && !file->empty()) {
    s->position_ = BinlogPosition{*file, std::stoull(*pos), ""};
    s->id_ = *file + ":" + *pos;
  } else {
    s->id_ = "consistent snapshot";
  }
  return s;
}

}  // namespace faucet::mysql
