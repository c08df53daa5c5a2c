// The mysql query source (`type: mysql`): streams the rows of one query as kRead changes.
//
// Rows are read with the binary protocol (a prepared statement) and fetched unbuffered, one
// row at a time off the connection, so memory stays bounded whatever the result size (TCP
// holds the server back while a page is written). Values are formatted by value_format.h into
// the text forms of mysql_types.h, the same the binlog decoder gives: the text protocol would
// not do (FLOAT printed with 6 significant digits, BIT and binary strings as raw bytes).
// TIMESTAMP values are read in the session's UTC (mysql::Connect).
//
// The relation comes from the statement's result metadata: when every column comes from one
// table, it carries that table's database and name and marks its primary-key columns;
// otherwise it is named "query" and has no key.
//
// A query is not resumable: no page carries a bookmark, and a rerun reads everything again.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "clients/mysql/connection.h"
#include "config/block.h"
#include "core/source.h"
#include "sources/mysql/mysql_config.h"
#include "sources/mysql/mysql_snapshot.h"

namespace faucet {

// Builds a mysql query source from its `config:` block; no I/O until Open.
Result<std::unique_ptr<Source>> MakeMysqlQuerySource(const config::Block& block);

namespace mysql {

class MysqlQuerySource final : public Source {
 public:
  explicit MysqlQuerySource(MysqlQueryConfig config);
  // An unfinished read is abandoned by closing the connection (the server stops sending),
  // not by reading the rest of the result.
  ~MysqlQuerySource() override;
  MysqlQuerySource(const MysqlQuerySource&) = delete;
  MysqlQuerySource& operator=(const MysqlQuerySource&) = delete;

  // one_shot: pages carry no bookmark, `faucet run` writes the read as one bulk load.
  // reads_snapshots: a mirror's snapshot reads inside mysql-cdc's consistent snapshot.
  // discovers_tables: a multi-table mirror's tables.
  SourceCapabilities Capabilities() const override;
  // Makes Open read on `snapshot`'s session (a MysqlSnapshot: a MySQL snapshot cannot be
  // shared with another session), which must outlive the read. Open waits for the session
  // while another source reads on it (MysqlSnapshot::Lease) and holds it until the read ends.
  // kFailedPrecondition for a snapshot of another kind of source.
  Status ReadInSnapshot(const ConsistentSnapshot& snapshot) override;

  // Connects, prepares the query, describes its columns and starts it. `start` is ignored (a
  // query is read whole). A query the server rejects as written (syntax, unknown table or
  // column, a statement that returns no rows) is kInvalidArgument; a denied privilege
  // kFailedPrecondition; a lost connection kUnavailable. Messages name the query and the URL
  // (redacted).
  Status Open(const std::optional<Bookmark>& start) override;
  // Pages of batch_size rows (the last may be smaller), without bookmarks; then kEnd. Waits
  // for rows as long as the server takes to produce them: `wait` is not a bound here (the
  // binary protocol's fetch has no timeout; a query's first row may take a sort's time). An
  // error part-way (a lost connection: kUnavailable) ends the read.
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override;

  // The server's row estimate for the query, with its own connection: EXPLAIN's `rows` (times
  // `filtered` where the server gives it) when the plan reads one table; nullopt for a plan
  // over several tables, or when the server cannot tell.
  std::optional<int64_t> EstimateRows() const override;

  // The base tables of the URL's database, each read by `SELECT * FROM `db`.`table``, its key the
  // primary key and its estimate information_schema's TABLE_ROWS. With its own connection.
  Result<std::vector<DiscoveredTable>> DiscoverTables() const override;

  // Null before Open.
  const RelationPtr& relation() const { return relation_; }

 private:
  struct ColumnSlot;
  struct StmtDeleter {
    void operator()(MYSQL_STMT* s) const { mysql_stmt_close(s); }
  };

  // The server's error of the statement as a Status: the query's own mistakes (syntax,
  // unknown names) kInvalidArgument, the rest as mysql::ErrorCode says.
  Status QueryError(const std::string& what) const;
  Status Describe();
  Status Bind();
  // Cell `i` of the row just fetched.
  Status ReadColumn(size_t i, Cell& cell);
  // Binds the grown buffers (ColumnSlot::grow_to), between rows.
  Status Rebind();
  // Closes the statement and the connection (the read is done).
  void Close();

  const MysqlQueryConfig config_;
  const std::string query_;  // the configured query without its terminator
  ConnPtr conn_;             // the read's own connection (null when it reads in a snapshot)
  const MysqlSnapshot* snapshot_ = nullptr;        // the snapshot to read in, not owned
  MysqlSnapshot::Turn lease_;                      // its session while this reads (Open to Close)
  std::unique_ptr<MYSQL_STMT, StmtDeleter> stmt_;  // declared after conn_: closed first
  RelationPtr relation_;
  std::vector<ColumnSlot> slots_;
  std::vector<MYSQL_BIND> binds_;
  bool rebind_ = false;  // a buffer is to grow before the next row
  bool done_ = false;
};

}  // namespace mysql
}  // namespace faucet
