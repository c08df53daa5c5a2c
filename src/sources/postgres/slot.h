// Replication slot control: look up, create, check and drop the logical slot a postgres-cdc
// source streams from, and the publication it reads.
//
// A slot is the server's promise to keep WAL from its restart_lsn and to resume decoding at its
// confirmed_flush_lsn. Two states mean that promise was broken for us and a resync is needed:
// the server invalidated the slot (wal_status 'lost', max_slot_wal_keep_size exceeded), or the
// slot confirmed a position beyond our persisted bookmark (someone else consumed it, or it was
// dropped and recreated). Both are kFailedPrecondition, never a silent skip.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/lsn.h"
#include "core/status.h"
#include "clients/postgres/connection.h"
#include "sources/postgres/postgres_config.h"

namespace faucet::postgres {

struct SlotInfo {
  std::string slot_type;  // "logical" or "physical"
  std::string plugin;
  bool same_database = false;  // created in the database we are connected to
  bool temporary = false;
  std::string wal_status;  // reserved, extended, unreserved, lost ("" before PG 13)
  std::optional<Lsn> confirmed_flush_lsn;
  std::optional<Lsn> restart_lsn;
  std::optional<int> active_pid;
};

// The slot named `slot`, or nullopt. Works on SQL and replication connections.
Result<std::optional<SlotInfo>> LookupSlot(PGconn* conn, const std::string& slot);

// Creates a logical pgoutput slot through the replication protocol (CREATE_REPLICATION_SLOT),
// without exporting a snapshot. A temporary slot lives as long as this replication session.
// REQUIRES: `conn` is a replication connection. A slot created concurrently is not an error.
Status CreateSlot(PGconn* conn, const std::string& slot, bool temporary);

// A new permanent slot created together with an exported snapshot: the database exactly as of
// the slot's consistent point. Reading a table inside that snapshot and then streaming from the
// consistent point is an exact cut: no change is both in the read and in the stream.
// `holder` is the replication session that exported the snapshot: the snapshot can be imported
// (SET TRANSACTION SNAPSHOT) only while it stays open and idle.
struct ExportedSnapshot {
  Lsn consistent_point;
  std::string snapshot_name;
  ConnPtr holder;
};

// Creates the slot with an exported snapshot. kFailedPrecondition if the slot already exists
// (its position is older than any snapshot we could export now).
Result<ExportedSnapshot> CreateSlotWithSnapshot(const PostgresCdcConfig& config);

// The existing slot, or — when `create` — a new one; kNotFound when missing and not created.
// A slot another session is still creating (listed, held, no confirmed position yet) is
// waited for (slot_acquire_retries, SlotBusyBackoff): its creator may die, and the server then
// drops it; kUnavailable if it is still being created after that.
Result<SlotInfo> EnsureSlot(PGconn* conn, const PostgresCdcConfig& config, bool create);

// kFailedPrecondition unless the slot is a logical pgoutput slot of this database that the
// server has not invalidated.
Status CheckSlotUsable(const SlotInfo& info, const std::string& slot);

// kFailedPrecondition (resync needed) when the slot has confirmed a position beyond `resume`,
// the position we will resume from: the server would skip what lies between.
Status CheckNotAheadOf(const SlotInfo& info, const std::string& slot, Lsn resume);

// kNotFound unless publication `name` exists in the connected database.
Status CheckPublication(PGconn* conn, const std::string& name);

// Wait before retry `attempt` (0-based) of an operation refused because the slot is active:
// 250 ms * 2^attempt, capped at 4 s.
std::chrono::milliseconds SlotBusyBackoff(int attempt);

// Drops the slot. kNotFound when it does not exist; an active slot is retried
// (slot_acquire_retries, SlotBusyBackoff) and then kFailedPrecondition naming the holder.
Status DropSlot(const PostgresCdcConfig& config);

}  // namespace faucet::postgres
