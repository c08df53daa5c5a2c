#include "sources/postgres/doctor.h"

#include "clients/postgres/connection.h"
#include "core/redact.h"
#include "sources/postgres/slot.h"

namespace faucet::postgres {
namespace {

// A slot further behind than this is worth a warning: it is WAL the server keeps for us.
constexpr int64_t kLagWarnBytes = int64_t{1} << 30;

class Doctor {
 public:
  explicit Doctor(const PostgresCdcConfig& config) : config_(config) {}

  DoctorReport Run() {
    Result<ConnPtr> conn = Connect(config_.connection_url, config_.tls, ConnectionKind::kSql);
    if (!conn.ok()) {
      Add("connection", DoctorOutcome::kFail, conn.status().message());
      return std::move(report_);
    }
    conn_ = std::move(conn).value();
    Add("connection", DoctorOutcome::kOk,
        "connected to " + Redact(config_.connection_url) + " as " +
            std::string(PQuser(conn_.get())));
    CheckReplicationConnection();
    CheckSettings();
    CheckPublication();
    CheckSlot();
    return std::move(report_);
  }

 private:
  void Add(const std::string& name, DoctorOutcome outcome, std::string detail) {
    report_.Add(name, outcome, std::move(detail));
  }

  // Runs a query; a failure becomes a failed check named `check` and returns null.
  PGresult* Query(const std::string& check, const std::string& sql) {
    Result<ResultPtr> r = Exec(conn_.get(), sql, check);
    if (!r.ok()) {
      Add(check, DoctorOutcome::kFail, r.status().message());
      return nullptr;
    }
    results_.push_back(std::move(r).value());
    return results_.back().get();
  }

  std::string Lit(const std::string& s) {
    Result<std::string> l = Literal(conn_.get(), s);
    return l.ok() ? *l : "NULL";
  }

  void CheckReplicationConnection() {
    Result<ConnPtr> r = Connect(config_.connection_url, config_.tls, ConnectionKind::kReplication);
    if (r.ok()) {
      Add("replication_connection", DoctorOutcome::kOk, "replication=database accepted");
    } else {
      Add("replication_connection", DoctorOutcome::kFail,
          r.status().message() + " (check pg_hba.conf and max_wal_senders)");
    }
  }

  void CheckSettings() {
    PGresult* r = Query("settings",
                        "SELECT current_setting('server_version_num')::int,"
                        " current_setting('server_version'), current_setting('wal_level'),"
                        " current_setting('max_slot_wal_keep_size'), current_user,"
                        " (SELECT rolreplication OR rolsuper FROM pg_roles"
                        "  WHERE rolname = current_user)");
    if (r == nullptr) return;
    const int version = std::stoi(PQgetvalue(r, 0, 0));
    const std::string version_text = PQgetvalue(r, 0, 1);
    if (config_.proto_version >= 2 && version < 140000) {
      Add("server_version", DoctorOutcome::kFail,
          "PostgreSQL " + version_text +
              " does not stream in-progress transactions "
              "(protocol 2 needs 14 or later): set proto_version: 1");
    } else {
      Add("server_version", DoctorOutcome::kOk, "PostgreSQL " + version_text);
    }
    const std::string wal_level = PQgetvalue(r, 0, 2);
    if (wal_level == "logical") {
      Add("wal_level", DoctorOutcome::kOk, "logical");
    } else {
      Add("wal_level", DoctorOutcome::kFail,
          "wal_level is '" + wal_level + "': set wal_level = logical and restart the server");
    }
    const std::string user = PQgetvalue(r, 0, 4);
    if (std::string(PQgetvalue(r, 0, 5)) == "t") {
      Add("replication_privilege", DoctorOutcome::kOk, "role " + user + " may replicate");
    } else {
      Add("replication_privilege", DoctorOutcome::kFail,
          "role " + user + " has neither REPLICATION nor SUPERUSER: ALTER ROLE " + user +
              " REPLICATION");
    }
    const std::string keep = PQgetvalue(r, 0, 3);
    Add("max_slot_wal_keep_size", DoctorOutcome::kOk,
        keep == "-1" ? "unlimited: a stopped pipeline's slot retains WAL until it resumes or the "
                       "slot is dropped (watch disk space)"
                     : keep + ": a slot further behind is invalidated and needs a resync");
  }

  void CheckPublication() {
    const std::string pub = Lit(config_.publication_name);
    PGresult* r =
        Query("publication", "SELECT puballtables FROM pg_publication WHERE pubname = " + pub);
    if (r == nullptr) return;
    if (PQntuples(r) == 0) {
      Add("publication", DoctorOutcome::kFail,
          "publication '" + config_.publication_name + "' does not exist: CREATE PUBLICATION " +
              config_.publication_name + " FOR TABLE ...");
      return;
    }
    const bool all_tables = std::string(PQgetvalue(r, 0, 0)) == "t";
    PGresult* tables =
        Query("replica_identity",
              "SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname), c.relreplident,"
              " EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary)"
              " FROM pg_publication_tables pt"
              " JOIN pg_namespace n ON n.nspname = pt.schemaname"
              " JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = pt.tablename"
              " WHERE pt.pubname = " +
                  pub + " ORDER BY 1");
    if (tables == nullptr) return;
    const int n = PQntuples(tables);
    std::string names;
    std::vector<std::string> no_identity;
    for (int i = 0; i < n; ++i) {
      const std::string name = PQgetvalue(tables, i, 0);
      if (i < 20) names += (i ? ", " : "") + name;
      const char ident = PQgetvalue(tables, i, 1)[0];
      const bool has_pk = std::string(PQgetvalue(tables, i, 2)) == "t";
      if ((ident == 'd' && !has_pk) || ident == 'n') {
        no_identity.push_back(
            name + (ident == 'n' ? " (REPLICA IDENTITY NOTHING)" : " (DEFAULT, no primary key)"));
      }
    }
    if (n > 20) names += ", ... (" + std::to_string(n) + " in all)";
    std::string scope = all_tables ? "FOR ALL TABLES, " : "";
    if (n == 0) {
      Add("publication", DoctorOutcome::kWarn,
          scope + "covers no tables yet: nothing will be captured");
    } else {
      Add("publication", DoctorOutcome::kOk,
          scope + "covers " + std::to_string(n) + " table" + (n == 1 ? "" : "s") + ": " + names);
    }
    if (no_identity.empty()) {
      Add("replica_identity", DoctorOutcome::kOk,
          "every published table identifies its rows (primary key, index or FULL)");
      return;
    }
    std::string list;
    for (const std::string& t : no_identity) list += (list.empty() ? "" : ", ") + t;
    Add("replica_identity", DoctorOutcome::kWarn,
        "UPDATE and DELETE will fail on " + list +
            ": add a primary key or ALTER TABLE ... REPLICA IDENTITY FULL");
  }

  void CheckSlot() {
    Result<std::optional<SlotInfo>> info = LookupSlot(conn_.get(), config_.slot_name);
    if (!info.ok()) {
      Add("slot", DoctorOutcome::kFail, info.status().message());
      return;
    }
    if (!*info) {
      if (config_.create_slot_if_missing) {
        Add("slot", DoctorOutcome::kWarn,
            "replication slot '" + config_.slot_name +
                "' does not exist yet; the first run "
                "creates it and captures changes from then on");
      } else {
        Add("slot", DoctorOutcome::kFail,
            "replication slot '" + config_.slot_name +
                "' does not exist and create_slot_if_missing is false");
      }
      return;
    }
    const SlotInfo& slot = **info;
    Status usable = CheckSlotUsable(slot, config_.slot_name);
    if (!usable.ok()) {
      Add("slot", DoctorOutcome::kFail, usable.message());
      return;
    }
    std::string state =
        slot.active_pid ? "active (pid " + std::to_string(*slot.active_pid) + ")" : "inactive";
    Add("slot", DoctorOutcome::kOk,
        "logical pgoutput slot, " + state +
            (slot.wal_status.empty() ? "" : ", wal_status " + slot.wal_status) +
            (slot.confirmed_flush_lsn ? ", confirmed " + slot.confirmed_flush_lsn->ToString()
                                      : ""));
    PGresult* lag =
        Query("slot_lag",
              "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint"
              " FROM pg_replication_slots WHERE slot_name = " +
                  Lit(config_.slot_name));
    if (lag == nullptr) return;
    if (PQntuples(lag) == 0 || PQgetisnull(lag, 0, 0)) {
      Add("slot_lag", DoctorOutcome::kOk, "no confirmed position yet");
      return;
    }
    const int64_t bytes = std::stoll(PQgetvalue(lag, 0, 0));
    const std::string text = std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) +
                             " MiB) of WAL behind the server";
    Add("slot_lag", bytes > kLagWarnBytes ? DoctorOutcome::kWarn : DoctorOutcome::kOk, text);
  }

  const PostgresCdcConfig& config_;
  ConnPtr conn_;
  std::vector<ResultPtr> results_;
  DoctorReport report_;
};

}  // namespace

Result<DoctorReport> RunDoctor(const PostgresCdcConfig& config) { return Doctor(config).Run(); }

}  // namespace faucet::postgres
