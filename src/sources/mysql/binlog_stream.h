// BinlogStream: the transaction flow of a binlog, event by event, into pages. It follows the
// position (file and offset, through ROTATE events), knows each transaction's bounds (MariaDB
// GTID / BEGIN ... XID / COMMIT; a standalone DDL statement), decodes the rows events of the
// streamed tables into Changes, and hands them to a TxnPager: every commit, also of a
// transaction with no streamed change, gives the pager its bookmark
// {"file": F, "pos": P, "gtid": G}, P the end of the commit event, so a dump started at (F, P)
// begins with the next transaction.
//
// Positions: a Change's commit_position is (file number << 32) | the offset where its
// transaction's first event starts: at or after the bookmark of every transaction before it,
// and before its own bookmark (ChangePosition).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/bookmark.h"
#include "core/position.h"
#include "core/txn_pager.h"
#include "sources/mysql/binlog_event.h"
#include "sources/mysql/row_image.h"

namespace faucet::mysql {

// A binlog position.
struct BinlogPosition {
  std::string file;  // "binlog.000012"
  uint64_t pos = 4;
  std::string gtid;  // MariaDB "domain-server-seq" of the last transaction; "" when unknown

  Bookmark ToBookmark() const;
  // {"file": .., "pos": ..} (a "gtid" is optional); kDataLoss naming the bookmark otherwise.
  static Result<BinlogPosition> FromBookmark(const Bookmark& bookmark);
  // {file number, pos}; kDataLoss for a file name without a numeric extension.
  Result<Position> ToPosition() const;
};

// A table as the stream decodes it: its relation (what Changes point at) and column codecs.
struct StreamTable {
  bool streamed = false;  // false: its changes are skipped
  std::string name;       // "db.table", for errors
  RelationPtr relation;
  std::vector<ColumnCodec> codecs;
};

// Turns a table map into a StreamTable: fills in from the catalog what the map lacks (names,
// key, unsigned flags, charsets, ENUM/SET members: binlog_row_metadata MINIMAL or NO_LOG),
// resolves the codecs. Given by the source; tests give one that needs FULL metadata.
using TableResolver = std::function<Result<std::shared_ptr<const StreamTable>>(const TableMap&)>;

class BinlogStream {
 public:
  struct Options {
    bool include_before = true;  // `before` on updates (deletes keep it: it is the row)
    bool checksums = false;      // the server's binlog_checksum is CRC32
  };
  // Starts at `start` (where the dump was asked to start).
  BinlogStream(Options options, TableResolver resolver, TxnPager& pager, BinlogPosition start);

  // Handles one whole event. Errors: kDataLoss for a malformed event or a bad checksum,
  // kFailedPrecondition for what faucet cannot stream (an encrypted or partial-JSON binlog,
  // a rows event whose table map is missing), the resolver's errors.
  Status Handle(std::string_view event);

  // Inside a transaction (its commit not yet handled).
  bool in_transaction() const { return in_transaction_; }
  // Changes handed to the pager so far.
  uint64_t changes() const { return changes_; }
  // The position after the last event handled.
  const BinlogPosition& position() const { return position_; }
  // Called after a DDL statement (the catalog may have changed): drops what the resolver
  // made.
  void ForgetTables() { tables_.clear(); }

 private:
  // `event_start`: where the event being handled starts in its file; `gtid` the transaction's
  // ("" when no GTID event began it).
  Status Begin(const EventHeader& header, std::string gtid, uint64_t event_start);
  void Commit();
  Status HandleQuery(const EventHeader& header, std::string_view body, uint64_t event_start);
  Status HandleTableMap(std::string_view body);
  Status HandleRows(const EventHeader& header, std::string_view body, uint64_t event_start);

  const Options options_;
  TableResolver resolver_;
  TxnPager& pager_;
  BinlogPosition position_;
  uint64_t file_number_ = 0;  // of position_.file
  FormatDescription fde_;
  std::string inflated_;  // the body of a compressed event, inflated (reused)

  bool in_transaction_ = false;
  bool standalone_ = false;  // the open group is one DDL statement (MariaDB FL_STANDALONE)
  // The open (or last) transaction's GTID and server, shared by its changes.
  std::shared_ptr<const SourceTxn> txn_;
  uint64_t txn_position_ = 0;  // commit_position of the open transaction's changes
  int64_t txn_time_us_ = 0;
  uint32_t ordinal_ = 0;  // changes of the open transaction so far
  uint64_t changes_ = 0;
  // table_id -> the map's bytes and what the resolver made of them.
  struct Mapped {
    std::string map_bytes;
    std::shared_ptr<const StreamTable> table;
  };
  std::map<uint64_t, Mapped> tables_;
};

}  // namespace faucet::mysql
