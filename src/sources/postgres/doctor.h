// `faucet doctor` for a postgres-cdc source: checks what a logical replication pipeline needs
// from the server, read-only (it never creates the slot and never streams), and says how to fix
// what is missing.
#pragma once

#include <string>
#include <vector>

#include "core/bookmark.h"
#include "core/status.h"
#include "sources/postgres/postgres_config.h"

namespace faucet::postgres {

enum class DoctorOutcome { kOk, kWarn, kFail };

struct DoctorCheck {
  std::string name;  // "wal_level", "replica_identity", ...
  DoctorOutcome outcome = DoctorOutcome::kOk;
  std::string detail;
};

struct DoctorReport {
  std::vector<DoctorCheck> checks;

  // No check failed (warnings allowed).
  bool ok() const;
  // {"ok": bool, "checks": [{"check": name, "status": "ok"|"warn"|"fail", "detail": text}]}
  Json ToJson() const;
  // One line per check ("  warn  replica_identity  public.t has ..."), then a summary line.
  std::string ToText() const;
};

// Runs, in order: connection, replication_connection, server_version, wal_level,
// replication_privilege, publication, replica_identity, max_slot_wal_keep_size, slot,
// slot_lag. A connection failure is a failed "connection" check ending the report, not an
// error: the report is the answer. Messages never contain the URL's password.
Result<DoctorReport> RunDoctor(const PostgresCdcConfig& config);

const char* DoctorOutcomeName(DoctorOutcome outcome);

}  // namespace faucet::postgres
