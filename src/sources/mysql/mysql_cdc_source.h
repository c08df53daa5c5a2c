// The mysql-cdc source: streams the row changes of a MySQL/MariaDB server's binlog, read as a
// replica (binlog_reader.h), decoded by our own decoders (binlog_event.h, row_image.h), cut
// into pages at transaction boundaries (binlog_stream.h).
//
// Positions: a page's bookmark is {"file": F, "pos": P, "gtid": G}, P the end of its last
// transaction's commit event (file and position also under GTID, so a resume is exact). The
// server keeps no position for a replica: the state store's bookmark is the only one, written
// after the sink flushed like every source's, and a resume dumps from it. A bookmark whose
// file the server no longer has (purged) is kFailedPrecondition saying a resync is needed,
// never a silent gap.
//
// A cycle (Open .. kEnd) ends after idle_timeout without a change of a streamed table (the
// binlog also carries other tables' transactions, and the sink's own when it writes into the
// source server); complete transactions go out, an open one comes again next cycle. A commit
// without a streamed change still moves the bookmark, in a page that waits up to 5 s for
// company (MysqlCdcConfig::empty_linger).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "config/block.h"
#include "core/source.h"
#include "core/txn_pager.h"
#include "sources/mysql/binlog_reader.h"
#include "sources/mysql/binlog_stream.h"
#include "sources/mysql/mysql_config.h"

namespace faucet {

// Builds a mysql-cdc source from its `config:` block. Invalid values are kInvalidArgument; no
// I/O happens until Open.
Result<std::unique_ptr<Source>> MakeMysqlCdcSource(const config::Block& block);

namespace mysql {

class MysqlCdcSource final : public Source {
 public:
  explicit MysqlCdcSource(MysqlCdcConfig config);
  ~MysqlCdcSource() override;

  // Connects, checks that the server writes a row-based binlog, and dumps from `start`'s
  // position, else from start_position. A position whose binlog file is gone is
  // kFailedPrecondition (resync needed).
  Status Open(const std::optional<Bookmark>& start) override;
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override;
  // The server keeps no replica position: only checks that `durable` is one of this source's
  // bookmarks (kDataLoss naming it otherwise).
  Status Acknowledge(const Bookmark& durable) override;
  // The server's binlog end now (SHOW MASTER STATUS), with its GTID position on MariaDB.
  Result<Bookmark> CapturePosition() override;
  // An exact cut where the server allows it: a consistent-snapshot transaction and the binlog
  // position of its moment (MariaDB: mysql_snapshot.h), so the mirror's snapshot and stream
  // meet without overlap. Where the server does not tell that position (MySQL), the current
  // position without a snapshot: the snapshot then overlaps the stream, which a keyed sink
  // absorbs.
  Result<CapturedPosition> CapturePositionWithSnapshot() override;
  // Deterministic replay; captures positions (durable while the server keeps its binlogs);
  // routes tables (every change names its table and carries its transaction's position).
  SourceCapabilities Capabilities() const override;
  // {file number, pos}.
  Result<Position> PositionOf(const Bookmark& bookmark) const override;
  // {file number, offset of the transaction's first event} (binlog_stream.h).
  std::optional<Position> ChangePosition(const Change& change) const override;
  // The tables ("db.table") that include_tables / exclude_tables leave out of the stream. No
  // I/O: a row-based binlog carries every other table's changes in full.
  Result<std::map<std::string, std::string>> TablesNotStreamed(
      const std::vector<std::string>& tables) const override;
  // head: the server's binlog end.
  LogStatus ReadLogStatus() const override;

 private:
  enum class Phase { kCreated, kStreaming, kEnded };
  Result<BinlogPosition> StartPosition(const std::optional<Bookmark>& start);
  Status CheckFileExists(const std::string& file, const std::string& what);
  Result<std::shared_ptr<const StreamTable>> Resolve(TableMap map);
  Status FillFromCatalog(TableMap& map);
  Status LoadCollations();

  const MysqlCdcConfig config_;
  const std::string who_;  // "mysql-cdc server_id N", for messages
  ConnPtr sql_;            // plain SQL: checks, the catalog
  std::unique_ptr<BinlogReader> reader_;
  TxnPager pager_;
  std::unique_ptr<BinlogStream> stream_;
  CharsetLookup charsets_;
  std::map<uint32_t, std::string> charset_of_;    // collation id -> charset name
  std::map<std::string, uint32_t> collation_id_;  // collation name -> id
  Phase phase_ = Phase::kCreated;
  std::chrono::steady_clock::time_point last_data_;
};

}  // namespace mysql
}  // namespace faucet
