// The postgres-cdc source: streams a publication's changes from a logical replication slot
// (pgoutput) over a replication connection, and reports back to the server only positions the
// pipeline has durably persisted (DESIGN.md §1).
//
// Positions:
//   - a page's bookmark is {"last_lsn": "X/Y"}, the end LSN of its last complete transaction
//     (Lsn::ToString); chunks of a transaction larger than a page carry none but the last;
//   - each Change's commit_position is its transaction's commit LSN, where its commit record
//     starts: below the end LSN of that record, which a bookmark holds (ChangePosition);
//   - the flush/apply LSN of every standby status update is the last position given to
//     Acknowledge, or the bookmark the run started from, or 0/0 ("no progress"). Never a
//     decoded COMMIT, never a keepalive's WAL end: the slot's confirmed_flush_lsn therefore never
//     passes the state store.
// Idle databases do not pin WAL: when nothing is in flight and everything emitted is
// acknowledged, a keepalive that reports a WAL end beyond the acknowledged position yields an
// empty page whose bookmark is that WAL end; once it is persisted and acknowledged the slot
// moves there.
//
// A cycle (one Open .. kEnd) ends after idle_timeout without data (keepalives do not count) or
// at the first transaction boundary after max_cycle_duration.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clients/postgres/connection.h"
#include "config/block.h"
#include "core/source.h"
#include "core/txn_pager.h"
#include "sources/postgres/pgoutput_decoder.h"
#include "sources/postgres/postgres_config.h"

namespace faucet {

// Builds a postgres-cdc source from its `config:` block. Invalid values are kInvalidArgument;
// no I/O happens until Open.
Result<std::unique_ptr<Source>> MakePostgresCdcSource(const config::Block& block);

namespace postgres {

// Counters of one source, for logs and tests. Read on the source thread.
struct PostgresCdcStats {
  uint64_t keepalives = 0;
  uint64_t status_updates = 0;
  uint64_t streamed_transactions = 0;  // committed transactions that arrived in stream chunks
  uint64_t spilled_bytes = 0;          // of streamed transactions, written to spill files
  uint64_t moved_toast_lookups = 0;    // moved rows whose unchanged TOAST values were read
};

class PostgresCdcSource final : public Source {
 public:
  explicit PostgresCdcSource(PostgresCdcConfig config);
  ~PostgresCdcSource() override;

  // Connects, checks the publication, ensures the slot (creating it when allowed), refuses a
  // slot that is invalidated or ahead of `start` (kFailedPrecondition: resync needed), and
  // starts streaming from `start`'s last_lsn, else start_lsn, else the slot's confirmed
  // position. A slot held by another session is retried (slot_acquire_retries).
  Status Open(const std::optional<Bookmark>& start) override;
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override;
  // Publishes `durable` (a bookmark this source emitted) for the next status update; one
  // without a readable last_lsn is kDataLoss naming it.
  Status Acknowledge(const Bookmark& durable) override;
  // Ensures the permanent slot exists and returns its confirmed_flush_lsn (else restart_lsn,
  // else the current WAL end) as a bookmark, consuming nothing. A temporary slot cannot hold a
  // position across processes: kFailedPrecondition.
  Result<Bookmark> CapturePosition() override;
  // With create_slot_if_missing and no slot yet: creates it with an exported snapshot
  // (CreateSlotWithSnapshot) and returns its consistent point and that snapshot. An existing
  // slot keeps its own position: CapturePosition, without a snapshot.
  Result<CapturedPosition> CapturePositionWithSnapshot() override;
  // Deterministic replay; captures positions; durable unless slot_type: temporary; routes
  // tables (every change names its relation and carries its commit LSN).
  // A repeatable-read transaction on its own SQL session that exports its snapshot
  // (pg_export_snapshot), held open and idle while the result lives.
  Result<std::unique_ptr<ConsistentSnapshot>> ExportSnapshot() override;
  SourceCapabilities Capabilities() const override;
  // {lsn}.
  Result<Position> PositionOf(const Bookmark& bookmark) const override;
  // {commit LSN} (Change::commit_position: the Begin's final_lsn, the start of the commit
  // record), nullopt when it is 0 (not a change of this source). A page's bookmark is the end
  // LSN of its last transaction's commit record, and a later transaction's commit record starts
  // at or after that end, so bookmark B covers the change exactly when commit LSN < B. This is
  // also the server's own rule: a stream started at B skips the transactions whose commit
  // record starts before B (SnapBuildXactNeedsSkip). An idle page's WAL end holds it too: every
  // commit before it was already sent.
  std::optional<Position> ChangePosition(const Change& change) const override;
  // With its own SQL connection, for each of `tables` ("schema.table" as DiscoverTables names
  // them; a partitioned table by its root) that exists, every reason the publication would not
  // carry its changes in full, joined by "; ", each with the statement that fixes it:
  //   - it is not in the publication: neither it nor any of its partitions is listed in
  //     pg_publication_tables (which expands FOR ALL TABLES and TABLES IN SCHEMA, and lists
  //     a partitioned table's leaves unless publish_via_partition_root);
  //   - it, or for a partitioned table one of its leaf partitions (whose identity is the one
  //     decoded), has no replica identity (NOTHING; DEFAULT without a primary key; USING INDEX
  //     whose index was dropped): its updates and deletes are not streamed (and the server
  //     rejects them while a publication that publishes them holds the table);
  //   - the publication does not publish inserts, updates or deletes (reported for every table);
  //   - the publication does not exist (reported for every table).
  // Tables that do not exist (dropped) are absent. A failed connection is kUnavailable, a failed
  // query StatementError (URLs redacted).
  Result<std::map<std::string, std::string>> TablesNotStreamed(
      const std::vector<std::string>& tables) const override;
  // head: pg_current_wal_lsn(); from the slot (when it exists): confirmed_flush_lsn, the WAL
  // from its restart_lsn to the head, and safe_wal_size.
  LogStatus ReadLogStatus() const override;
  // The LSN difference.
  std::optional<int64_t> BytesBetween(const Position& from, const Position& to) const override;
  // Sends a status update (the persisted position) when one is due, so the server does not
  // drop a session whose pipeline is busy writing.
  Status KeepAlive() override;
  // Streamed transactions (protocol 2) go out as they arrive, as staged steps (core/page.h),
  // instead of waiting in the stream buffer for their commit.
  void AllowStaging() override { decoder_.set_staging(true); }

  // The flush LSN the next status update reports.
  Lsn reported_position() const { return Lsn(acked_.load()); }
  PostgresCdcStats stats() const;

 private:
  enum class Phase { kCreated, kStreaming, kEnded };

  Status StartReplication(Lsn start);
  // Reports acked_ as written, flushed and applied position.
  Status SendStatus();
  // Reads and handles what the server sent, waiting at most until `until`.
  Status Receive(std::chrono::steady_clock::time_point until);
  // Handles one CopyData message; true when it carried WAL data (not a keepalive).
  Result<bool> HandleCopyData(std::string_view data);
  Status AddEvents(std::vector<TxnEvent>& events);
  // Hands out the staged changes gathered in staged_page_, if any.
  void EmitStagedChanges();
  // A key-changing update arrives without its unchanged TOAST values; fills them in (see .cc).
  // `committed` false: the change is staged, its transaction's rows are not the source's yet,
  // so only what the change itself carries fills them in.
  Status FillMovedToast(Change& c, bool committed);
  void MaybeEmitIdlePage(Lsn wal_end);
  const PostgresCdcConfig config_;
  ConnPtr conn_;
  ConnPtr lookup_conn_;  // plain SQL, opened on the first moved row with TOAST (FillMovedToast)
  PgoutputDecoder decoder_;
  Phase phase_ = Phase::kCreated;

  // Written by Acknowledge (sink thread), read by the source thread: the last persisted LSN.
  std::atomic<uint64_t> acked_{0};

  TxnPager pager_;                // pages at transaction boundaries (chunks of a large transaction)
  std::vector<TxnEvent> events_;  // decoder output, reused (Next and HandleCopyData never nest)
  Page staged_page_;              // staged changes of one (sub)transaction, not handed out yet
  size_t staged_bytes_ = 0;
  Lsn last_emitted_;  // bookmark of the last transaction given to the pager (or the start)
  Lsn idle_floor_;    // an idle page's position must exceed this: max(resume, slot's confirmed)

  std::chrono::steady_clock::time_point cycle_start_;
  std::chrono::steady_clock::time_point last_data_;
  std::chrono::steady_clock::time_point last_status_;
  PostgresCdcStats stats_;
};

}  // namespace postgres
}  // namespace faucet
