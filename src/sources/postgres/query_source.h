// The postgres query source (`type: postgres`): streams the rows of one query as kRead changes,
// through `COPY (query) TO STDOUT` in text format, so that memory stays bounded whatever the
// result size and values keep exactly the text Postgres prints. The relation comes from
// describing the prepared query (no rows are read twice); when every column comes from one
// table, it carries that table's name and marks its primary-key columns.
//
// A query is not resumable: no page carries a bookmark, and a rerun reads everything again.
#pragma once

#include <memory>

#include "config/block.h"
#include "core/source.h"
#include "clients/postgres/connection.h"
#include "sources/postgres/postgres_config.h"

namespace faucet {

// Builds a postgres query source from its `config:` block; no I/O until Open.
Result<std::unique_ptr<Source>> MakePostgresQuerySource(const config::Block& block);

namespace postgres {

class PostgresQuerySource final : public Source {
 public:
  explicit PostgresQuerySource(PostgresQueryConfig config);

  // Connects, describes the query and starts the COPY. `start` is ignored (a query is read
  // whole). A query the server rejects (syntax, unknown table) is kInvalidArgument.
  Status Open(const std::optional<Bookmark>& start) override;
  // Pages of batch_size rows (the last may be smaller), without bookmarks; then kEnd.
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override;

  const RelationPtr& relation() const { return relation_; }

  // Reads tables, also inside a snapshot exported by postgres-cdc (ReadInSnapshot); discovers
  // the database's tables (DiscoverTables).
  SourceCapabilities Capabilities() const override;
  // Reads inside the snapshot a postgres-cdc source of the same database exported
  // (CapturePositionWithSnapshot) instead of the current state.
  Status ReadInSnapshot(const ConsistentSnapshot& snapshot) override;
  // The planner's row estimate for the query (EXPLAIN).
  std::optional<int64_t> EstimateRows() const override;
  // Every table of the database that the connecting user may read (SELECT on it, USAGE on its
  // schema), with its own connection; the configured query plays no part. Ordinary and
  // partitioned tables of every schema except information_schema and pg_* (pg_catalog,
  // pg_toast*, other sessions' pg_temp_*); views, foreign tables and partitions are not
  // listed: a partitioned table appears once, under its root's name, with its leaf partitions
  // (all levels) in `partitions`. `key` is the primary key in key order (no INCLUDE columns);
  // `estimated_rows` is pg_class.reltuples (for a partitioned table, the sum over the leaves
  // whose estimate is known), nullopt while never vacuumed or analyzed; `read_patch` is
  // {"query": "SELECT * FROM \"schema\".\"table\""}. Sorted by `name` (bytewise). A failed
  // connection is kUnavailable, a failed query StatementError (URLs redacted).
  Result<std::vector<DiscoveredTable>> DiscoverTables() const override;
  // Ranges of the table's blocks, by ctid: `SELECT * FROM "s"."t" WHERE ctid >= '(lo,0)' AND
  // ctid < '(hi,0)'` (a TID range scan), the first without a lower bound and the last without
  // an upper one, so rows in blocks added meanwhile are read too. A partitioned table is split
  // by the block count of its largest partition (each range applies to every partition).
  Result<std::vector<std::map<std::string, std::string>>> PlanShards(
      const DiscoveredTable& table, int64_t n) const override;

 private:
  Status Describe(const std::string& query);
  // Finishes the COPY: its final status, then the connection goes idle.
  Status Finish();

  const PostgresQueryConfig config_;
  ConnPtr conn_;
  RelationPtr relation_;
  Page pending_;  // rows read, not yet handed out: pages are batch_size rows but the last
  bool done_ = false;
  std::string snapshot_;  // exported snapshot to read in; "" = the current state
};

}  // namespace postgres
}  // namespace faucet
