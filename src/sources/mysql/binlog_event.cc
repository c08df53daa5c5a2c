#include "sources/mysql/binlog_event.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>

#include "sources/mysql/mysql_types.h"

namespace faucet::mysql {
namespace {

// Bounds-checked little-endian reads over one event's bytes. Every failed read is kDataLoss
// "<EVENT>: truncated <field>", so that a short or malformed event names what was missing.
class Reader {
 public:
  Reader(std::string_view data, uint8_t event_type) : data_(data), type_(event_type) {}
  Reader(std::string_view data, EventType event_type)
      : Reader(data, static_cast<uint8_t>(event_type)) {}
  // For what is not an event's body: `label` names it in errors.
  Reader(std::string_view data, const char* label) : data_(data), label_(label) {}

  size_t remaining() const { return data_.size() - at_; }
  std::string_view Rest() const { return data_.substr(at_); }

  Result<uint64_t> Uint(size_t bytes, const char* field) {
    if (remaining() < bytes) return Short(field);
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) {
      v |= uint64_t{static_cast<uint8_t>(data_[at_ + i])} << (8 * i);
    }
    at_ += bytes;
    return v;
  }

  Result<std::string_view> Bytes(uint64_t n, const char* field) {
    if (remaining() < n) return Short(field);
    std::string_view v = data_.substr(at_, n);
    at_ += n;
    return v;
  }

  Status Skip(uint64_t n, const char* field) {
    if (remaining() < n) return Short(field);
    at_ += n;
    return Status::Ok();
  }

  // A length-encoded integer (the client protocol's and the table map's "packed" integer).
  Result<uint64_t> Packed(const char* field) {
    ASSIGN_OR_RETURN(uint64_t first, Uint(1, field));
    switch (first) {
      case 251:
        return Malformed(std::string("NULL length in ") + field);
      case 252:
        return Uint(2, field);
      case 253:
        return Uint(3, field);
      case 254:
        return Uint(8, field);
      case 255:
        return Malformed(std::string("invalid length byte in ") + field);
      default:
        return first;
    }
  }

  // A packed length followed by that many bytes.
  Result<std::string_view> PackedString(const char* field) {
    ASSIGN_OR_RETURN(uint64_t n, Packed(field));
    return Bytes(n, field);
  }

  Status Malformed(const std::string& what) const { return DataLoss(Label() + ": " + what); }

 private:
  Status Short(const char* field) const {
    return DataLoss(Label() + ": truncated " + field + " (at byte " + std::to_string(at_) + " of " +
                    std::to_string(data_.size()) + ")");
  }

  std::string Label() const { return label_ ? label_ : EventTypeName(type_); }

  std::string_view data_;
  uint8_t type_ = 0;
  const char* label_ = nullptr;
  size_t at_ = 0;
};

uint32_t Le32(std::string_view b) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(b[i])} << (8 * i);
  return v;
}

uint32_t Crc32(std::string_view b) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(b.data()), static_cast<uInt>(b.size())));
}

// True when the trailing CRC32 of `event` matches the bytes before it.
bool ChecksumMatches(std::string_view event) {
  const size_t n = event.size() - kChecksumBytes;
  return Crc32(event.substr(0, n)) == Le32(event.substr(n));
}

// MySQL 5.6.1+ and MariaDB 5.3+ write the checksum algorithm byte (and 4 checksum bytes) at
// the end of every FDE, whether or not checksums are on. Older servers wrote neither.
bool FdeHasChecksumAlgorithm(const std::string& server_version) {
  int major = 0, minor = 0, patch = 0;
  if (std::sscanf(server_version.c_str(), "%d.%d.%d", &major, &minor, &patch) < 2) return true;
  if (server_version.find("MariaDB") != std::string::npos) {
    return std::pair(major, minor) >= std::pair(5, 3);
  }
  return std::array{major, minor, patch} >= std::array{5, 6, 1};
}

constexpr uint8_t kChecksumOff = 0;
constexpr uint8_t kChecksumCrc32 = 1;
constexpr uint8_t kChecksumUndefined = 255;

std::string Name(uint8_t type) { return EventTypeName(type); }

// STRING's metadata carries its real type (CHAR, ENUM or SET) in its high byte, with two bits
// of the length folded into it for CHAR columns longer than 255 bytes.
uint8_t RealType(const ColumnDef& c) {
  if (c.type != kTypeString || c.meta < 256) return c.type;
  const uint8_t real = static_cast<uint8_t>(c.meta >> 8);
  return (real & 0x30) != 0x30 ? static_cast<uint8_t>(real | 0x30) : real;
}

bool IsEnumOrSet(const ColumnDef& c) {
  const uint8_t t = RealType(c);
  return t == kTypeEnum || t == kTypeSet;
}

bool IsCharacterType(const ColumnDef& c) { return IsCharacter(RealType(c)); }

// The per-column metadata block of a table map: how many bytes each type has and how they
// make one number (ColumnDef::meta).
Status ReadColumnMeta(Reader& r, ColumnDef& c) {
  switch (c.type) {
    case kTypeFloat:  // the size
    case kTypeDouble:
    case kTypeTimestamp2:  // fsp
    case kTypeDateTime2:
    case kTypeTime2:
    case kTypeJson:  // the length's size
    case kTypeTinyBlob:
    case kTypeMediumBlob:
    case kTypeLongBlob:
    case kTypeBlob:
    case kTypeGeometry: {
      ASSIGN_OR_RETURN(uint64_t v, r.Uint(1, "column metadata"));
      c.meta = static_cast<uint16_t>(v);
      return Status::Ok();
    }
    case kTypeVarchar:  // the maximum length in bytes, little-endian
    case kTypeVarString:
    case kTypeBit: {  // bits % 8, then bytes
      ASSIGN_OR_RETURN(uint64_t v, r.Uint(2, "column metadata"));
      c.meta = static_cast<uint16_t>(v);
      return Status::Ok();
    }
    case kTypeNewDecimal:  // precision, scale
    case kTypeString:      // real type, length
    case kTypeEnum:
    case kTypeSet: {
      ASSIGN_OR_RETURN(uint64_t v, r.Uint(2, "column metadata"));
      c.meta = static_cast<uint16_t>(((v & 0xff) << 8) | (v >> 8));
      return Status::Ok();
    }
    case kTypeDecimal:
    case kTypeTiny:
    case kTypeShort:
    case kTypeLong:
    case kTypeNull:
    case kTypeTimestamp:
    case kTypeLongLong:
    case kTypeInt24:
    case kTypeDate:
    case kTypeTime:
    case kTypeDateTime:
    case kTypeYear:
    case kTypeNewDate:
      return Status::Ok();
    default:  // e.g. MariaDB's compressed columns (140, 141): nothing after it can be read
      return FailedPrecondition("TABLE_MAP_EVENT: unsupported column type " +
                                std::to_string(c.type));
  }
}

// The indexes of the columns `pick` selects: optional metadata fields list values for such a
// subset only (numeric columns, character columns, ...), in column order.
template <class Pick>
std::vector<size_t> Subset(const std::vector<ColumnDef>& columns, Pick pick) {
  std::vector<size_t> out;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (pick(columns[i])) out.push_back(i);
  }
  return out;
}

// SIGNEDNESS: one bit per numeric column, most significant bit first; set = unsigned.
Status ReadSignedness(Reader& r, std::vector<ColumnDef>& columns) {
  const std::vector<size_t> numeric =
      Subset(columns, [](const ColumnDef& c) { return IsNumeric(c.type); });
  ASSIGN_OR_RETURN(std::string_view bits, r.Bytes((numeric.size() + 7) / 8, "SIGNEDNESS"));
  for (size_t k = 0; k < numeric.size(); ++k) {
    columns[numeric[k]].is_unsigned = (static_cast<uint8_t>(bits[k / 8]) >> (7 - k % 8)) & 1;
  }
  return Status::Ok();
}

// DEFAULT_CHARSET (and ENUM_AND_SET_DEFAULT_CHARSET): the most common collation, then
// (index within the subset, collation) for the columns that differ.
Status ReadDefaultCharset(Reader& r, std::vector<ColumnDef>& columns,
                          const std::vector<size_t>& subset) {
  ASSIGN_OR_RETURN(uint64_t def, r.Packed("default charset"));
  for (size_t i : subset) columns[i].collation = static_cast<uint32_t>(def);
  while (r.remaining() > 0) {
    ASSIGN_OR_RETURN(uint64_t k, r.Packed("charset column index"));
    ASSIGN_OR_RETURN(uint64_t collation, r.Packed("charset collation"));
    if (k >= subset.size()) return r.Malformed("charset for a column index out of range");
    columns[subset[k]].collation = static_cast<uint32_t>(collation);
  }
  return Status::Ok();
}

// COLUMN_CHARSET (and ENUM_AND_SET_COLUMN_CHARSET): one collation per column of the subset.
Status ReadColumnCharsets(Reader& r, std::vector<ColumnDef>& columns,
                          const std::vector<size_t>& subset) {
  for (size_t i : subset) {
    ASSIGN_OR_RETURN(uint64_t collation, r.Packed("column charset"));
    columns[i].collation = static_cast<uint32_t>(collation);
  }
  return Status::Ok();
}

// SET_STR_VALUE / ENUM_STR_VALUE: for each such column, a count then that many strings.
Status ReadMembers(Reader& r, std::vector<ColumnDef>& columns, uint8_t type, bool set) {
  const std::vector<size_t> subset =
      Subset(columns, [type](const ColumnDef& c) { return RealType(c) == type; });
  for (size_t i : subset) {
    ASSIGN_OR_RETURN(uint64_t count, r.Packed("member count"));
    if (count > r.remaining()) return r.Malformed("member count beyond the event");
    std::vector<std::string>& out = set ? columns[i].set_values : columns[i].enum_values;
    out.clear();
    for (uint64_t m = 0; m < count; ++m) {
      ASSIGN_OR_RETURN(std::string_view name, r.PackedString("member name"));
      out.emplace_back(name);
    }
  }
  return Status::Ok();
}

Status ReadColumnNames(Reader& r, std::vector<ColumnDef>& columns) {
  for (ColumnDef& c : columns) {
    ASSIGN_OR_RETURN(std::string_view name, r.PackedString("column name"));
    c.name = std::string(name);
  }
  return Status::Ok();
}

Status ReadGeometryTypes(Reader& r, std::vector<ColumnDef>& columns) {
  for (size_t i : Subset(columns, [](const ColumnDef& c) { return c.type == kTypeGeometry; })) {
    ASSIGN_OR_RETURN(uint64_t g, r.Packed("geometry type"));
    columns[i].geometry_type = static_cast<uint32_t>(g);
  }
  return Status::Ok();
}

// SIMPLE_PRIMARY_KEY: column indexes; PRIMARY_KEY_WITH_PREFIX: (index, prefix length) pairs.
Status ReadPrimaryKey(Reader& r, size_t column_count, bool with_prefix,
                      std::optional<std::vector<uint32_t>>& key) {
  key.emplace();
  while (r.remaining() > 0) {
    ASSIGN_OR_RETURN(uint64_t index, r.Packed("primary key column"));
    if (with_prefix) RETURN_IF_ERROR(r.Packed("primary key prefix").status());
    if (index >= column_count) return r.Malformed("primary key column out of range");
    key->push_back(static_cast<uint32_t>(index));
  }
  return Status::Ok();
}

// binary_log::Table_map_event::Optional_metadata_field_type.
enum OptionalField : uint8_t {
  kSignedness = 1,
  kDefaultCharset = 2,
  kColumnCharset = 3,
  kColumnName = 4,
  kSetStrValue = 5,
  kEnumStrValue = 6,
  kGeometryType = 7,
  kSimplePrimaryKey = 8,
  kPrimaryKeyWithPrefix = 9,
  kEnumAndSetDefaultCharset = 10,
  kEnumAndSetColumnCharset = 11,
};

Status ReadOptionalField(uint8_t field, Reader& r, TableMap& map) {
  std::vector<ColumnDef>& cols = map.columns;
  switch (field) {
    case kSignedness:
      return ReadSignedness(r, cols);
    case kDefaultCharset:
      return ReadDefaultCharset(r, cols, Subset(cols, IsCharacterType));
    case kColumnCharset:
      return ReadColumnCharsets(r, cols, Subset(cols, IsCharacterType));
    case kColumnName:
      return ReadColumnNames(r, cols);
    case kSetStrValue:
      return ReadMembers(r, cols, kTypeSet, true);
    case kEnumStrValue:
      return ReadMembers(r, cols, kTypeEnum, false);
    case kGeometryType:
      return ReadGeometryTypes(r, cols);
    case kSimplePrimaryKey:
      return ReadPrimaryKey(r, cols.size(), false, map.primary_key);
    case kPrimaryKeyWithPrefix:
      return ReadPrimaryKey(r, cols.size(), true, map.primary_key);
    case kEnumAndSetDefaultCharset:
      return ReadDefaultCharset(r, cols, Subset(cols, IsEnumOrSet));
    case kEnumAndSetColumnCharset:
      return ReadColumnCharsets(r, cols, Subset(cols, IsEnumOrSet));
    default:
      return Status::Ok();  // a field of a newer server (COLUMN_VISIBILITY, ...): not needed
  }
}

Status ReadOptionalMetadata(Reader& r, TableMap& map) {
  while (r.remaining() > 0) {
    ASSIGN_OR_RETURN(uint64_t field, r.Uint(1, "optional metadata type"));
    ASSIGN_OR_RETURN(std::string_view value, r.PackedString("optional metadata field"));
    Reader fr(value, EventType::kTableMap);
    RETURN_IF_ERROR(ReadOptionalField(static_cast<uint8_t>(field), fr, map));
  }
  return Status::Ok();
}

// A 6-byte table id, or 4 bytes when the FDE says the post-header is the old 6 bytes long.
Result<uint64_t> ReadTableId(Reader& r, uint8_t post_header_length) {
  return r.Uint(post_header_length == 6 ? 4 : 6, "table id");
}

struct RowsType {
  RowsKind kind;
  bool v2;
  bool known;
};

RowsType ClassifyRows(uint8_t type) {
  switch (static_cast<EventType>(type)) {
    case EventType::kWriteRowsV1:
    case EventType::kWriteRowsCompressedV1:
      return {RowsKind::kWrite, false, true};
    case EventType::kUpdateRowsV1:
    case EventType::kUpdateRowsCompressedV1:
      return {RowsKind::kUpdate, false, true};
    case EventType::kDeleteRowsV1:
    case EventType::kDeleteRowsCompressedV1:
      return {RowsKind::kDelete, false, true};
    case EventType::kWriteRowsV2:
    case EventType::kWriteRowsCompressed:
      return {RowsKind::kWrite, true, true};
    case EventType::kUpdateRowsV2:
    case EventType::kUpdateRowsCompressed:
      return {RowsKind::kUpdate, true, true};
    case EventType::kDeleteRowsV2:
    case EventType::kDeleteRowsCompressed:
      return {RowsKind::kDelete, true, true};
    default:
      return {RowsKind::kWrite, false, false};
  }
}

// Reads a rows event's header (post-header, v2 extra data, column count, bitmaps) into
// `out`, leaving `r` at the first row image.
Status ReadRowsHeader(Reader& r, uint8_t type, const FormatDescription& fde, RowsEvent& out) {
  const RowsType rt = ClassifyRows(type);
  uint8_t ph = fde.PostHeaderLength(type);
  if (ph == 0) ph = rt.v2 ? 10 : 8;
  if (ph < 6) return r.Malformed("post-header too short");
  out.kind = rt.kind;
  ASSIGN_OR_RETURN(out.table_id, ReadTableId(r, ph));
  ASSIGN_OR_RETURN(uint64_t flags, r.Uint(2, "flags"));
  out.flags = static_cast<uint16_t>(flags);
  const size_t read = ph == 6 ? 6 : 8;
  if (rt.v2 && ph >= read + 2) {
    ASSIGN_OR_RETURN(uint64_t extra, r.Uint(2, "extra data length"));
    if (extra < 2) return r.Malformed("extra data length below 2");
    RETURN_IF_ERROR(r.Skip(ph - read - 2, "post-header"));
    RETURN_IF_ERROR(r.Skip(extra - 2, "extra data"));
  } else if (ph > read) {
    RETURN_IF_ERROR(r.Skip(ph - read, "post-header"));
  }
  ASSIGN_OR_RETURN(uint64_t count, r.Packed("column count"));
  if (count > 8 * r.remaining()) return r.Malformed("column count beyond the event");
  out.column_count = static_cast<uint32_t>(count);
  auto bitmap = [&](ColumnBitmap& b, const char* field) -> Status {
    ASSIGN_OR_RETURN(std::string_view bits, r.Bytes((count + 7) / 8, field));
    b.bits.assign(bits.begin(), bits.end());
    b.count = static_cast<uint32_t>(count);
    return Status::Ok();
  };
  RETURN_IF_ERROR(bitmap(out.present, "columns present"));
  if (rt.kind == RowsKind::kUpdate) RETURN_IF_ERROR(bitmap(out.present_after, "columns after"));
  return Status::Ok();
}

// The query event up to its statement, leaving `r` at the statement.
Status ReadQueryHeader(Reader& r, const FormatDescription& fde, Query& q) {
  uint8_t ph = fde.PostHeaderLength(static_cast<uint8_t>(EventType::kQuery));
  if (ph == 0) ph = 13;
  if (ph < 13) return r.Malformed("post-header shorter than 13 bytes");
  ASSIGN_OR_RETURN(uint64_t thread_id, r.Uint(4, "thread id"));
  ASSIGN_OR_RETURN(uint64_t seconds, r.Uint(4, "execution time"));
  ASSIGN_OR_RETURN(uint64_t db_len, r.Uint(1, "database length"));
  ASSIGN_OR_RETURN(uint64_t error_code, r.Uint(2, "error code"));
  ASSIGN_OR_RETURN(uint64_t status_len, r.Uint(2, "status variables length"));
  RETURN_IF_ERROR(r.Skip(ph - 13, "post-header"));
  RETURN_IF_ERROR(r.Skip(status_len, "status variables"));
  ASSIGN_OR_RETURN(q.database, r.Bytes(db_len, "database"));
  RETURN_IF_ERROR(r.Skip(1, "database terminator"));
  q.thread_id = static_cast<uint32_t>(thread_id);
  q.seconds = static_cast<uint32_t>(seconds);
  q.error_code = static_cast<uint16_t>(error_code);
  return Status::Ok();
}

// MariaDB's compressed payload: one byte 0x80 | n (n = 1..4), the uncompressed length in n
// big-endian bytes, then a zlib stream (binlog_buf_compress in MariaDB's log_event.cc).
Status Inflate(std::string_view compressed, const std::string& event, std::string& out) {
  if (compressed.empty()) return DataLoss(event + ": empty compressed payload");
  const uint8_t head = static_cast<uint8_t>(compressed[0]);
  const size_t lenlen = head & 0x07;
  if ((head & 0x80) == 0 || lenlen < 1 || lenlen > 4 || compressed.size() < 1 + lenlen) {
    return DataLoss(event + ": malformed compressed payload header");
  }
  uint64_t length = 0;
  for (size_t i = 1; i <= lenlen; ++i) length = (length << 8) | static_cast<uint8_t>(compressed[i]);
  const std::string_view stream = compressed.substr(1 + lenlen);
  // zlib expands at most ~1032:1; a larger claim is corruption, and must not allocate.
  if (length > stream.size() * 1040 + 64) {
    return DataLoss(event + ": compressed payload claims " + std::to_string(length) + " bytes");
  }
  const size_t base = out.size();
  out.resize(base + length);
  uLongf produced = static_cast<uLongf>(length);
  const int rc =
      uncompress(reinterpret_cast<Bytef*>(out.data() + base), &produced,
                 reinterpret_cast<const Bytef*>(stream.data()), static_cast<uLong>(stream.size()));
  if (rc != Z_OK || produced != length) {
    out.resize(base);
    return DataLoss(event + ": compressed payload does not inflate (zlib " + std::to_string(rc) +
                    ")");
  }
  return Status::Ok();
}

}  // namespace

std::string EventTypeName(uint8_t type) {
  switch (type) {
    case 0:
      return "UNKNOWN_EVENT";
    case 1:
      return "START_EVENT_V3";
    case 2:
      return "QUERY_EVENT";
    case 3:
      return "STOP_EVENT";
    case 4:
      return "ROTATE_EVENT";
    case 5:
      return "INTVAR_EVENT";
    case 13:
      return "RAND_EVENT";
    case 14:
      return "USER_VAR_EVENT";
    case 15:
      return "FORMAT_DESCRIPTION_EVENT";
    case 16:
      return "XID_EVENT";
    case 19:
      return "TABLE_MAP_EVENT";
    case 23:
      return "WRITE_ROWS_EVENT_V1";
    case 24:
      return "UPDATE_ROWS_EVENT_V1";
    case 25:
      return "DELETE_ROWS_EVENT_V1";
    case 27:
      return "HEARTBEAT_LOG_EVENT";
    case 29:
      return "ROWS_QUERY_LOG_EVENT";
    case 30:
      return "WRITE_ROWS_EVENT_V2";
    case 31:
      return "UPDATE_ROWS_EVENT_V2";
    case 32:
      return "DELETE_ROWS_EVENT_V2";
    case 33:
      return "GTID_LOG_EVENT";
    case 34:
      return "ANONYMOUS_GTID_LOG_EVENT";
    case 35:
      return "PREVIOUS_GTIDS_LOG_EVENT";
    case 39:
      return "PARTIAL_UPDATE_ROWS_EVENT";
    case 41:
      return "HEARTBEAT_LOG_EVENT_V2";
    case 160:
      return "ANNOTATE_ROWS_EVENT";
    case 161:
      return "BINLOG_CHECKPOINT_EVENT";
    case 162:
      return "GTID_EVENT";
    case 163:
      return "GTID_LIST_EVENT";
    case 164:
      return "START_ENCRYPTION_EVENT";
    case 165:
      return "QUERY_COMPRESSED_EVENT";
    case 166:
      return "WRITE_ROWS_COMPRESSED_EVENT_V1";
    case 167:
      return "UPDATE_ROWS_COMPRESSED_EVENT_V1";
    case 168:
      return "DELETE_ROWS_COMPRESSED_EVENT_V1";
    case 169:
      return "WRITE_ROWS_COMPRESSED_EVENT";
    case 170:
      return "UPDATE_ROWS_COMPRESSED_EVENT";
    case 171:
      return "DELETE_ROWS_COMPRESSED_EVENT";
    default:
      return "event type " + std::to_string(type);
  }
}

uint8_t FormatDescription::PostHeaderLength(uint8_t type) const {
  if (type == 0 || type > post_header_lengths.size()) return 0;
  return post_header_lengths[type - 1];
}

uint32_t ColumnBitmap::CountSet() const {
  uint32_t n = 0;
  for (uint32_t i = 0; i < count; ++i) n += Test(i) ? 1 : 0;
  return n;
}

Result<EventHeader> ParseHeader(std::string_view event) {
  Reader r(event, "event header");
  EventHeader h;
  ASSIGN_OR_RETURN(uint64_t timestamp, r.Uint(4, "timestamp"));
  ASSIGN_OR_RETURN(uint64_t type, r.Uint(1, "type"));
  ASSIGN_OR_RETURN(uint64_t server_id, r.Uint(4, "server id"));
  ASSIGN_OR_RETURN(uint64_t size, r.Uint(4, "event size"));
  ASSIGN_OR_RETURN(uint64_t next, r.Uint(4, "next position"));
  ASSIGN_OR_RETURN(uint64_t flags, r.Uint(2, "flags"));
  h.timestamp = static_cast<uint32_t>(timestamp);
  h.type = static_cast<uint8_t>(type);
  h.server_id = static_cast<uint32_t>(server_id);
  h.event_size = static_cast<uint32_t>(size);
  h.next_position = static_cast<uint32_t>(next);
  h.flags = static_cast<uint16_t>(flags);
  if (h.event_size != event.size()) {
    return DataLoss(Name(h.type) + ": event size " + std::to_string(h.event_size) + " but " +
                    std::to_string(event.size()) + " bytes received");
  }
  return h;
}

Result<FormatDescription> ParseFormatDescription(std::string_view event) {
  ASSIGN_OR_RETURN(EventHeader header, ParseHeader(event));
  const std::string name = Name(static_cast<uint8_t>(EventType::kFormatDescription));
  if (header.type != static_cast<uint8_t>(EventType::kFormatDescription)) {
    return DataLoss(name + ": expected, got " + Name(header.type));
  }
  Reader r(event.substr(kEventHeaderBytes), EventType::kFormatDescription);
  FormatDescription fde;
  ASSIGN_OR_RETURN(uint64_t version, r.Uint(2, "binlog version"));
  ASSIGN_OR_RETURN(std::string_view server, r.Bytes(50, "server version"));
  RETURN_IF_ERROR(r.Skip(4, "create timestamp"));
  ASSIGN_OR_RETURN(uint64_t header_length, r.Uint(1, "common header length"));
  fde.binlog_version = static_cast<uint16_t>(version);
  fde.server_version = std::string(server.substr(0, std::min(server.find('\0'), server.size())));
  fde.common_header_length = static_cast<uint8_t>(header_length);
  if (fde.binlog_version != 4 || fde.common_header_length != kEventHeaderBytes) {
    return r.Malformed("unsupported binlog version " + std::to_string(fde.binlog_version) +
                       " / header length " + std::to_string(fde.common_header_length));
  }
  std::string_view lengths = r.Rest();
  if (FdeHasChecksumAlgorithm(fde.server_version)) {
    if (lengths.size() < 1 + kChecksumBytes) return r.Malformed("truncated checksum algorithm");
    const uint8_t alg = static_cast<uint8_t>(lengths[lengths.size() - 1 - kChecksumBytes]);
    if (alg != kChecksumOff && alg != kChecksumCrc32 && alg != kChecksumUndefined) {
      return r.Malformed("unknown checksum algorithm " + std::to_string(alg));
    }
    fde.checksums = alg == kChecksumCrc32;
    lengths.remove_suffix(1 + kChecksumBytes);
    if (fde.checksums && !ChecksumMatches(event)) {
      return DataLoss("checksum mismatch in " + name + " at " +
                      std::to_string(header.next_position));
    }
  }
  fde.post_header_lengths.assign(lengths.begin(), lengths.end());
  return fde;
}

Result<std::string_view> EventBody(std::string_view event, const EventHeader& header,
                                   const FormatDescription& fde) {
  const size_t trailer = fde.checksums ? kChecksumBytes : 0;
  if (event.size() < kEventHeaderBytes + trailer) {
    return DataLoss(Name(header.type) + ": " + std::to_string(event.size()) +
                    " bytes, shorter than its header and checksum");
  }
  if (fde.checksums && !ChecksumMatches(event)) {
    return DataLoss("checksum mismatch in " + Name(header.type) + " at " +
                    std::to_string(header.next_position));
  }
  return event.substr(kEventHeaderBytes, event.size() - kEventHeaderBytes - trailer);
}

Result<Rotate> ParseRotate(std::string_view body) {
  Reader r(body, EventType::kRotate);
  Rotate rotate;
  ASSIGN_OR_RETURN(rotate.position, r.Uint(8, "position"));
  std::string_view file = r.Rest();
  while (!file.empty() && file.back() == '\0') file.remove_suffix(1);
  if (file.empty()) return r.Malformed("empty file name");
  rotate.file = std::string(file);
  return rotate;
}

Result<Query> ParseQuery(std::string_view body, const FormatDescription& fde) {
  Reader r(body, EventType::kQuery);
  Query q;
  RETURN_IF_ERROR(ReadQueryHeader(r, fde, q));
  q.statement = r.Rest();
  return q;
}

Result<uint64_t> ParseXid(std::string_view body) {
  Reader r(body, EventType::kXid);
  return r.Uint(8, "xid");
}

Result<Gtid> ParseMariaGtid(std::string_view body, uint32_t server_id) {
  Reader r(body, EventType::kMariaGtid);
  Gtid g;
  ASSIGN_OR_RETURN(g.sequence, r.Uint(8, "sequence number"));
  ASSIGN_OR_RETURN(uint64_t domain, r.Uint(4, "domain id"));
  ASSIGN_OR_RETURN(uint64_t flags, r.Uint(1, "flags"));
  constexpr uint64_t kFlagStandalone = 1;  // FL_STANDALONE: no BEGIN/COMMIT follows
  g.domain_id = static_cast<uint32_t>(domain);
  g.standalone = (flags & kFlagStandalone) != 0;
  g.text = std::to_string(g.domain_id) + "-" + std::to_string(server_id) + "-" +
           std::to_string(g.sequence);
  return g;
}

Result<Gtid> ParseMysqlGtid(std::string_view body) {
  Reader r(body, EventType::kMysqlGtid);
  Gtid g;
  RETURN_IF_ERROR(r.Skip(1, "flags"));
  ASSIGN_OR_RETURN(std::string_view sid, r.Bytes(16, "source uuid"));
  ASSIGN_OR_RETURN(g.sequence, r.Uint(8, "transaction number"));
  if (std::all_of(sid.begin(), sid.end(), [](char c) { return c == 0; })) return g;  // anonymous
  static constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < sid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) g.text += '-';
    const uint8_t b = static_cast<uint8_t>(sid[i]);
    g.text += kHex[b >> 4];
    g.text += kHex[b & 15];
  }
  g.text += ':' + std::to_string(g.sequence);
  return g;
}

Result<Heartbeat> ParseHeartbeat(std::string_view body, const EventHeader& header) {
  Heartbeat hb;
  if (header.type != static_cast<uint8_t>(EventType::kHeartbeatV2)) {
    hb.file = std::string(body);
    hb.position = header.next_position;
    return hb;
  }
  // MySQL 8.0.26+: (type, length, value) fields, each number length-encoded, up to type 0.
  constexpr uint64_t kEnd = 0, kFileName = 1, kPosition = 2;
  Reader r(body, header.type);
  bool have_position = false;
  while (r.remaining() > 0) {
    ASSIGN_OR_RETURN(uint64_t field, r.Packed("field type"));
    if (field == kEnd) break;
    ASSIGN_OR_RETURN(std::string_view value, r.PackedString("field value"));
    if (field == kFileName) {
      hb.file = std::string(value);
    } else if (field == kPosition) {
      Reader vr(value, header.type);
      ASSIGN_OR_RETURN(hb.position, vr.Packed("log position"));
      have_position = true;
    }
  }
  if (hb.file.empty() || !have_position) return r.Malformed("missing log file or position");
  return hb;
}

Result<TableMap> ParseTableMap(std::string_view body, const FormatDescription& fde) {
  const uint8_t type = static_cast<uint8_t>(EventType::kTableMap);
  Reader r(body, type);
  TableMap map;
  uint8_t ph = fde.PostHeaderLength(type);
  if (ph == 0) ph = 8;
  if (ph < 6) return r.Malformed("post-header too short");
  ASSIGN_OR_RETURN(map.table_id, ReadTableId(r, ph));
  RETURN_IF_ERROR(r.Skip(ph - (ph == 6 ? 4 : 6), "flags"));
  ASSIGN_OR_RETURN(uint64_t db_len, r.Uint(1, "database length"));
  ASSIGN_OR_RETURN(std::string_view db, r.Bytes(db_len, "database"));
  RETURN_IF_ERROR(r.Skip(1, "database terminator"));
  ASSIGN_OR_RETURN(uint64_t table_len, r.Uint(1, "table length"));
  ASSIGN_OR_RETURN(std::string_view table, r.Bytes(table_len, "table"));
  RETURN_IF_ERROR(r.Skip(1, "table terminator"));
  map.database = std::string(db);
  map.table = std::string(table);
  ASSIGN_OR_RETURN(uint64_t count, r.Packed("column count"));
  ASSIGN_OR_RETURN(std::string_view types, r.Bytes(count, "column types"));
  ASSIGN_OR_RETURN(std::string_view meta, r.PackedString("column metadata"));
  ASSIGN_OR_RETURN(std::string_view nulls, r.Bytes((count + 7) / 8, "null bitmap"));
  map.columns.resize(count);
  Reader mr(meta, type);
  for (size_t i = 0; i < count; ++i) {
    ColumnDef& c = map.columns[i];
    c.type = static_cast<uint8_t>(types[i]);
    c.nullable = (static_cast<uint8_t>(nulls[i / 8]) >> (i % 8)) & 1;
    RETURN_IF_ERROR(ReadColumnMeta(mr, c));
  }
  if (mr.remaining() != 0) return r.Malformed("column metadata longer than its columns");
  RETURN_IF_ERROR(ReadOptionalMetadata(r, map));
  return map;
}

Result<RowsEvent> ParseRowsEvent(uint8_t type, std::string_view body,
                                 const FormatDescription& fde) {
  if (type == static_cast<uint8_t>(EventType::kPartialUpdateRows)) {
    return FailedPrecondition(
        "PARTIAL_UPDATE_ROWS_EVENT is not supported: set binlog_row_value_options to ''");
  }
  Reader r(body, type);
  if (!ClassifyRows(type).known) return r.Malformed("not a rows event");
  RowsEvent ev;
  RETURN_IF_ERROR(ReadRowsHeader(r, type, fde, ev));
  ev.rows = r.Rest();
  return ev;
}

Result<std::string_view> ParseAnnotateRows(uint8_t type, std::string_view body) {
  if (type != static_cast<uint8_t>(EventType::kRowsQuery)) return body;
  // ROWS_QUERY_LOG_EVENT: a 1-byte length (the text's length mod 256, unusable), then the text.
  Reader r(body, type);
  RETURN_IF_ERROR(r.Skip(1, "length"));
  return r.Rest();
}

Status InflateCompressedBody(uint8_t type, std::string_view body, const FormatDescription& fde,
                             std::string& out) {
  out.clear();
  Reader r(body, type);
  if (type == static_cast<uint8_t>(EventType::kQueryCompressed)) {
    Query q;
    RETURN_IF_ERROR(ReadQueryHeader(r, fde, q));
  } else if (type >= static_cast<uint8_t>(EventType::kWriteRowsCompressedV1) &&
             type <= static_cast<uint8_t>(EventType::kDeleteRowsCompressed)) {
    RowsEvent ev;
    RETURN_IF_ERROR(ReadRowsHeader(r, type, fde, ev));
  } else {
    return r.Malformed("not a compressed event");
  }
  const std::string_view compressed = r.Rest();
  out.append(body.substr(0, body.size() - compressed.size()));
  return Inflate(compressed, Name(type), out);
}

}  // namespace faucet::mysql
