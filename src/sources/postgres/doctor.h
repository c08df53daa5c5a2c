// `faucet doctor` for a postgres-cdc source: checks what a logical replication pipeline needs
// from the server, read-only (it never creates the slot and never streams), and says how to fix
// what is missing.
#pragma once

#include "core/doctor_report.h"
#include "core/status.h"
#include "sources/postgres/postgres_config.h"

namespace faucet::postgres {

// Runs, in order: connection, replication_connection, server_version, wal_level,
// replication_privilege, publication, replica_identity, max_slot_wal_keep_size, slot,
// slot_lag. A connection failure is a failed "connection" check ending the report, not an
// error: the report is the answer. Messages never contain the URL's password.
Result<DoctorReport> RunDoctor(const PostgresCdcConfig& config);

}  // namespace faucet::postgres
