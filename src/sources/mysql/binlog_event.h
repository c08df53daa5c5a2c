// Binlog events as the server sends them over COM_BINLOG_DUMP (MariaDB 10.x and MySQL 5.7/8):
// one event = a 19-byte header, a body, and (when the binlog has checksums) a CRC32 of both.
// Every parser here is stateless, bounds-checked and copies nothing it can point at: a
// std::string_view in a result points into the event buffer given to it. A truncated or
// malformed event is kDataLoss naming the event type and what was short, never a crash or an
// out-of-bounds read (fuzzed: binlog_fuzz_test.cc, tests/fuzz/binlog_fuzz.cc).
//
// References: MariaDB KB "Replication Protocol" / "2-Binlog Event Header" / each event's page;
// MySQL's libbinlogevents (binary_log::*) for the MySQL-only events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace faucet::mysql {

enum class EventType : uint8_t {
  kUnknown = 0,
  kQuery = 2,
  kStop = 3,
  kRotate = 4,
  kIntvar = 5,
  kRand = 13,
  kUserVar = 14,
  kFormatDescription = 15,
  kXid = 16,
  kTableMap = 19,
  kWriteRowsV1 = 23,
  kUpdateRowsV1 = 24,
  kDeleteRowsV1 = 25,
  kHeartbeat = 27,
  kRowsQuery = 29,  // MySQL: the statement of the following rows events
  kWriteRowsV2 = 30,
  kUpdateRowsV2 = 31,
  kDeleteRowsV2 = 32,
  kMysqlGtid = 33,
  kMysqlAnonymousGtid = 34,
  kMysqlPreviousGtids = 35,
  kPartialUpdateRows = 39,  // MySQL 8 binlog_row_value_options=PARTIAL_JSON: refused
  kHeartbeatV2 = 41,        // MySQL 8.0.26+
  kAnnotateRows = 160,      // MariaDB: the statement of the following rows events
  kBinlogCheckpoint = 161,
  kMariaGtid = 162,
  kMariaGtidList = 163,
  kStartEncryption = 164,  // an encrypted binlog: refused
  kQueryCompressed = 165,
  kWriteRowsCompressedV1 = 166,
  kUpdateRowsCompressedV1 = 167,
  kDeleteRowsCompressedV1 = 168,
  kWriteRowsCompressed = 169,
  kUpdateRowsCompressed = 170,
  kDeleteRowsCompressed = 171,
};

// "WRITE_ROWS_EVENT_V2"-style name of a type, "event type N" for one not listed above.
std::string EventTypeName(uint8_t type);

inline constexpr size_t kEventHeaderBytes = 19;
inline constexpr size_t kChecksumBytes = 4;

struct EventHeader {
  uint32_t timestamp = 0;  // seconds since the epoch (UTC) of the statement
  uint8_t type = 0;        // an EventType value (kept raw: unknown types are skipped by callers)
  uint32_t server_id = 0;
  uint32_t event_size = 0;     // header + body + checksum
  uint32_t next_position = 0;  // "log_pos": offset just past this event in its binlog file;
                               // 0 for artificial events (a fake ROTATE, a resent FDE)
  uint16_t flags = 0;
};
inline constexpr uint16_t kFlagArtificial = 0x20;  // LOG_EVENT_ARTIFICIAL_F

// FORMAT_DESCRIPTION_EVENT: how the events after it are laid out.
struct FormatDescription {
  uint16_t binlog_version = 4;
  std::string server_version;                // "10.11.19-MariaDB-log"
  uint8_t common_header_length = 19;         // always 19 for v4
  std::vector<uint8_t> post_header_lengths;  // by event type - 1
  bool checksums = false;                    // BINLOG_CHECKSUM_ALG_CRC32 follows every event
  // The post-header length of `type` (0 when the FDE does not list it).
  uint8_t PostHeaderLength(uint8_t type) const;
};

// The header of `event` (the whole event, from the header's first byte). kDataLoss when it is
// shorter than a header or its event_size disagrees with event.size().
Result<EventHeader> ParseHeader(std::string_view event);

// The FDE's body, from the whole event. Its own checksum flag decides whether the event itself
// ends in a CRC32 (checked here when it does).
Result<FormatDescription> ParseFormatDescription(std::string_view event);

// The body of `event`: what follows the header, without the checksum, whose CRC32 is verified
// when `fde.checksums` (kDataLoss "checksum mismatch in <TYPE> at <next_position>" otherwise).
Result<std::string_view> EventBody(std::string_view event, const EventHeader& header,
                                   const FormatDescription& fde);

// ROTATE_EVENT: the next event comes from `file` at `position`.
struct Rotate {
  uint64_t position = 0;
  std::string file;
};
Result<Rotate> ParseRotate(std::string_view body);

// QUERY_EVENT (also the body of QUERY_COMPRESSED_EVENT once inflated): a statement. "BEGIN"
// opens a transaction, "COMMIT" ends one that has no XID (non-transactional engines), anything
// else in a row-based binlog is DDL (or a statement on a non-row table).
struct Query {
  uint32_t thread_id = 0;
  uint32_t seconds = 0;
  uint16_t error_code = 0;
  std::string_view database;  // the default database of the statement ("" when none)
  std::string_view statement;
};
Result<Query> ParseQuery(std::string_view body, const FormatDescription& fde);

// XID_EVENT: the commit of an InnoDB transaction.
Result<uint64_t> ParseXid(std::string_view body);

// A transaction's global id. MariaDB GTID_EVENT: "domain-server-seq" with the header's
// server_id; `standalone` (FL_STANDALONE) means no BEGIN/COMMIT pair follows: a DDL statement.
// MySQL GTID_LOG_EVENT: "uuid:n". ANONYMOUS_GTID has an empty `text`.
struct Gtid {
  std::string text;
  bool standalone = false;  // MariaDB only
  uint32_t domain_id = 0;   // MariaDB only
  uint64_t sequence = 0;
};
Result<Gtid> ParseMariaGtid(std::string_view body, uint32_t server_id);
Result<Gtid> ParseMysqlGtid(std::string_view body);

// HEARTBEAT_LOG_EVENT (v1): the server's current binlog file (body) and, in the header's
// next_position, its position. HEARTBEAT_LOG_EVENT_V2 (MySQL) is parsed to the same.
struct Heartbeat {
  std::string file;
  uint64_t position = 0;  // from the header for v1; from the body for v2
};
Result<Heartbeat> ParseHeartbeat(std::string_view body, const EventHeader& header);

// A set of columns (the "columns present" bitmaps of a rows event), bit i = column i.
struct ColumnBitmap {
  std::vector<uint8_t> bits;
  uint32_t count = 0;
  bool Test(uint32_t i) const { return i < count && (bits[i / 8] >> (i % 8)) & 1; }
  uint32_t CountSet() const;
};

// One column as the TABLE_MAP_EVENT describes it, with its optional metadata
// (binlog_row_metadata = MINIMAL or FULL; absent fields stay empty / unset).
struct ColumnDef {
  uint8_t type = 0;   // MYSQL_TYPE_* as written in the binlog (real type: see row_image.h)
  uint16_t meta = 0;  // the per-type metadata of the table map, decoded to one number:
                      // VARCHAR/VAR_STRING max bytes; BLOB/GEOMETRY/JSON length bytes;
                      // FLOAT/DOUBLE size; NEWDECIMAL (precision << 8) | scale; BIT
                      // (bytes << 8) | bits; TIME2/DATETIME2/TIMESTAMP2 fsp;
                      // STRING (real_type << 8) | length as in the event (row_image.h decodes)
  bool nullable = false;
  std::optional<bool> is_unsigned;        // numeric columns, from SIGNEDNESS
  std::optional<uint32_t> collation;      // character columns, from DEFAULT/COLUMN_CHARSET;
                                          // ENUM/SET columns, from ENUM_AND_SET_*_CHARSET (FULL)
  std::optional<std::string> name;        // FULL: COLUMN_NAME
  std::vector<std::string> enum_values;   // FULL: ENUM_STR_VALUE (for ENUM columns, in order)
  std::vector<std::string> set_values;    // FULL: SET_STR_VALUE (for SET columns, in order)
  std::optional<uint32_t> geometry_type;  // GEOMETRY_TYPE
};

// TABLE_MAP_EVENT: the table the next rows events with this table_id change.
struct TableMap {
  uint64_t table_id = 0;
  std::string database;
  std::string table;
  std::vector<ColumnDef> columns;
  // FULL: SIMPLE_PRIMARY_KEY or PRIMARY_KEY_WITH_PREFIX, column indexes in key order; nullopt
  // when the event does not say (then the catalog is asked).
  std::optional<std::vector<uint32_t>> primary_key;
  bool has_names() const { return !columns.empty() && columns.front().name.has_value(); }
};
Result<TableMap> ParseTableMap(std::string_view body, const FormatDescription& fde);

enum class RowsKind : uint8_t { kWrite, kUpdate, kDelete };

// WRITE/UPDATE/DELETE_ROWS_EVENT v1 and v2 (and MariaDB's compressed ones once inflated):
// the header; the row images stay in `rows`, decoded by row_image.h one at a time.
struct RowsEvent {
  RowsKind kind = RowsKind::kWrite;
  uint64_t table_id = 0;
  uint16_t flags = 0;  // 0x0001 STMT_END_F: the last rows event of its statement
  uint32_t column_count = 0;
  ColumnBitmap present;        // columns in the before image (update, delete) or the row (write)
  ColumnBitmap present_after;  // update only: columns in the after image
  std::string_view rows;       // the row images, back to back (update: before, after, ...)
};
// `type` is the header's event type (it gives the kind and the version).
Result<RowsEvent> ParseRowsEvent(uint8_t type, std::string_view body, const FormatDescription& fde);

// ANNOTATE_ROWS_EVENT (MariaDB) / ROWS_QUERY_LOG_EVENT (MySQL): the SQL text of the rows
// events that follow.
Result<std::string_view> ParseAnnotateRows(uint8_t type, std::string_view body);

// MariaDB's compressed events (QUERY_COMPRESSED, *_ROWS_COMPRESSED*; log_bin_compress=ON):
// the body with its compressed part inflated (zlib), in `out`, laid out as the uncompressed
// event's body so that ParseQuery / ParseRowsEvent read it.
Status InflateCompressedBody(uint8_t type, std::string_view body, const FormatDescription& fde,
                             std::string& out);

}  // namespace faucet::mysql
