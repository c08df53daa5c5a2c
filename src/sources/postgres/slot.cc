#include "sources/postgres/slot.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

namespace faucet::postgres {
namespace {

std::optional<Lsn> LsnValue(const PGresult* r, int row, int col) {
  std::optional<std::string> v = Value(r, row, col);
  if (!v) return std::nullopt;
  Result<Lsn> lsn = Lsn::Parse(*v);
  if (!lsn.ok()) return std::nullopt;
  return *lsn;
}

std::string Resync(const std::string& slot, const std::string& why) {
  return "replication slot '" + slot + "' " + why +
         ": changes may have been lost; a resync is needed (snapshot again, or drop the state "
         "and the slot to start over)";
}

}  // namespace

Result<std::optional<SlotInfo>> LookupSlot(PGconn* conn, const std::string& slot) {
  ASSIGN_OR_RETURN(std::string name, Literal(conn, slot));
  ASSIGN_OR_RETURN(
      ResultPtr r,
      Exec(conn,
           "SELECT slot_type, coalesce(plugin, ''), coalesce(database = current_database(), false),"
           " temporary, coalesce(wal_status, ''), confirmed_flush_lsn, restart_lsn, active_pid"
           " FROM pg_replication_slots WHERE slot_name = " +
               name,
           "looking up replication slot '" + slot + "'"));
  if (PQntuples(r.get()) == 0) return std::optional<SlotInfo>();
  SlotInfo info;
  info.slot_type = PQgetvalue(r.get(), 0, 0);
  info.plugin = PQgetvalue(r.get(), 0, 1);
  info.same_database = std::string(PQgetvalue(r.get(), 0, 2)) == "t";
  info.temporary = std::string(PQgetvalue(r.get(), 0, 3)) == "t";
  info.wal_status = PQgetvalue(r.get(), 0, 4);
  info.confirmed_flush_lsn = LsnValue(r.get(), 0, 5);
  info.restart_lsn = LsnValue(r.get(), 0, 6);
  if (std::optional<std::string> pid = Value(r.get(), 0, 7)) info.active_pid = std::stoi(*pid);
  return std::optional<SlotInfo>(info);
}

Status CreateSlot(PGconn* conn, const std::string& slot, bool temporary) {
  // Slot names are [a-z0-9_] (config validation), so they need no quoting beyond "".
  std::string sql = "CREATE_REPLICATION_SLOT \"" + slot + "\"" + (temporary ? " TEMPORARY" : "") +
                    " LOGICAL pgoutput NOEXPORT_SNAPSHOT";
  ResultPtr r(PQexec(conn, sql.c_str()));
  if (r != nullptr && PQresultStatus(r.get()) == PGRES_TUPLES_OK) {
    if (!temporary) {
      spdlog::warn(
          "created permanent replication slot '{}': it retains WAL until it is dropped "
          "(faucet slot drop)",
          slot);
    }
    return Status::Ok();
  }
  if (SqlState(r.get()) == kSqlStateDuplicateObject) return Status::Ok();
  return StatementError(conn, r.get(), "creating replication slot '" + slot + "'");
}

Result<ExportedSnapshot> CreateSlotWithSnapshot(const PostgresCdcConfig& config) {
  ASSIGN_OR_RETURN(ConnPtr conn,
                   Connect(config.connection_url, config.tls, ConnectionKind::kReplication));
  RETURN_IF_ERROR(CheckPublication(conn.get(), config.publication_name));
  ASSIGN_OR_RETURN(std::optional<SlotInfo> existing, LookupSlot(conn.get(), config.slot_name));
  if (existing) {
    return FailedPrecondition("replication slot '" + config.slot_name +
                              "' already exists: no snapshot can be exported at its position");
  }
  std::string sql =
      "CREATE_REPLICATION_SLOT \"" + config.slot_name + "\" LOGICAL pgoutput (SNAPSHOT 'export')";
  ResultPtr r(PQexec(conn.get(), sql.c_str()));
  if (PQresultStatus(r.get()) != PGRES_TUPLES_OK || PQntuples(r.get()) != 1) {
    return StatementError(conn.get(), r.get(),
                          "creating replication slot '" + config.slot_name + "' with a snapshot");
  }
  // Columns: slot_name, consistent_point, snapshot_name, output_plugin.
  std::optional<std::string> point = Value(r.get(), 0, 1);
  std::optional<std::string> name = Value(r.get(), 0, 2);
  if (!point || !name) return Internal("CREATE_REPLICATION_SLOT returned no snapshot");
  ASSIGN_OR_RETURN(Lsn lsn, Lsn::Parse(*point));
  spdlog::warn(
      "created permanent replication slot '{}' at {} with exported snapshot {}: it "
      "retains WAL until it is dropped (faucet slot drop)",
      config.slot_name, lsn.ToString(), *name);
  return ExportedSnapshot{lsn, *name, std::move(conn)};
}

namespace {

// A logical slot that another session is still creating: listed, held by that session, with
// no confirmed position yet. It may yet vanish (its creator died: the server drops it when
// the session ends) or finish; its restart_lsn is no position to resume from.
bool BeingCreated(const SlotInfo& info) {
  return info.slot_type == "logical" && !info.confirmed_flush_lsn && info.active_pid;
}

// The slot once no other session is creating it (nullopt when it vanished), waiting
// slot_acquire_retries times SlotBusyBackoff; kUnavailable (worth retrying later) after that.
Result<std::optional<SlotInfo>> LookupSettledSlot(PGconn* conn, const PostgresCdcConfig& config) {
  for (int attempt = 0;; ++attempt) {
    ASSIGN_OR_RETURN(std::optional<SlotInfo> info, LookupSlot(conn, config.slot_name));
    if (!info || !BeingCreated(*info)) return info;
    if (attempt >= config.slot_acquire_retries) {
      return Unavailable("replication slot '" + config.slot_name +
                         "' is still being created by session " +
                         std::to_string(*info->active_pid) + " (waited " +
                         std::to_string(config.slot_acquire_retries) + " retries)");
    }
    spdlog::info("replication slot '{}' is being created by session {}; waiting {} ms",
                 config.slot_name, *info->active_pid, SlotBusyBackoff(attempt).count());
    std::this_thread::sleep_for(SlotBusyBackoff(attempt));
  }
}

}  // namespace

Result<SlotInfo> EnsureSlot(PGconn* conn, const PostgresCdcConfig& config, bool create) {
  ASSIGN_OR_RETURN(std::optional<SlotInfo> info, LookupSettledSlot(conn, config));
  if (!info) {
    if (!create) {
      return NotFound("replication slot '" + config.slot_name +
                      "' does not exist (create_slot_if_missing is false)");
    }
    RETURN_IF_ERROR(CreateSlot(conn, config.slot_name, config.temporary_slot));
    ASSIGN_OR_RETURN(info, LookupSlot(conn, config.slot_name));
    if (!info) {
      return Internal("replication slot '" + config.slot_name + "' vanished after creation");
    }
  }
  RETURN_IF_ERROR(CheckSlotUsable(*info, config.slot_name));
  return *info;
}

Status CheckSlotUsable(const SlotInfo& info, const std::string& slot) {
  if (info.slot_type != "logical" || info.plugin != "pgoutput") {
    return FailedPrecondition("replication slot '" + slot + "' is a " + info.slot_type + " slot" +
                              (info.plugin.empty() ? "" : " of plugin " + info.plugin) +
                              ", not a logical pgoutput slot");
  }
  if (!info.same_database) {
    return FailedPrecondition("replication slot '" + slot +
                              "' belongs to another database than the connection URL's");
  }
  if (info.wal_status == "lost") {
    return FailedPrecondition(
        Resync(slot,
               "was invalidated by the server (wal_status 'lost': its WAL was removed, "
               "see max_slot_wal_keep_size)"));
  }
  return Status::Ok();
}

Status CheckNotAheadOf(const SlotInfo& info, const std::string& slot, Lsn resume) {
  if (info.confirmed_flush_lsn && *info.confirmed_flush_lsn > resume) {
    return FailedPrecondition(
        Resync(slot, "has confirmed position " + info.confirmed_flush_lsn->ToString() +
                         ", ahead of the resume position " + resume.ToString()));
  }
  return Status::Ok();
}

Status CheckPublication(PGconn* conn, const std::string& name) {
  ASSIGN_OR_RETURN(std::string lit, Literal(conn, name));
  ASSIGN_OR_RETURN(ResultPtr r, Exec(conn, "SELECT 1 FROM pg_publication WHERE pubname = " + lit,
                                     "looking up publication '" + name + "'"));
  if (PQntuples(r.get()) == 0) {
    return NotFound("publication '" + name +
                    "' does not exist in this database (create it, e.g. CREATE PUBLICATION " +
                    name + " FOR TABLE ...)");
  }
  return Status::Ok();
}

std::chrono::milliseconds SlotBusyBackoff(int attempt) {
  return std::chrono::milliseconds(250 << std::min(attempt, 4));
}

Status DropSlot(const PostgresCdcConfig& config) {
  ASSIGN_OR_RETURN(ConnPtr conn, Connect(config.connection_url, config.tls, ConnectionKind::kSql));
  ASSIGN_OR_RETURN(std::optional<SlotInfo> info, LookupSlot(conn.get(), config.slot_name));
  if (!info) return NotFound("replication slot '" + config.slot_name + "' does not exist");
  ASSIGN_OR_RETURN(std::string name, Literal(conn.get(), config.slot_name));
  const std::string sql = "SELECT pg_drop_replication_slot(" + name + ")";
  for (int attempt = 0;; ++attempt) {
    ResultPtr r(PQexec(conn.get(), sql.c_str()));
    if (r != nullptr && PQresultStatus(r.get()) == PGRES_TUPLES_OK) return Status::Ok();
    std::string state = SqlState(r.get());
    if (state == kSqlStateUndefinedObject) {
      return NotFound("replication slot '" + config.slot_name + "' does not exist");
    }
    Status error =
        StatementError(conn.get(), r.get(), "dropping replication slot '" + config.slot_name + "'");
    if (state != kSqlStateObjectInUse) return error;
    if (attempt >= config.slot_acquire_retries) {
      return FailedPrecondition(error.message() + "; stop the pipeline that uses it first");
    }
    std::this_thread::sleep_for(SlotBusyBackoff(attempt));
  }
}

}  // namespace faucet::postgres
