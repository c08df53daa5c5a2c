// Row images of a binlog rows event, decoded into faucet Cells in the text forms of
// mysql_types.h. Our own decoder (DESIGN.md §10: Connector/C's row extraction is wrong for
// CHAR/ENUM/SET, signed integers and ROTATE). Stateless and bounds-checked: malformed data is
// kDataLoss naming the table and column, never an out-of-bounds read.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/change.h"
#include "core/status.h"
#include "sources/mysql/binlog_event.h"

namespace faucet::mysql {

// How to read one column of a table map, resolved once per table map (ResolveColumns).
struct ColumnCodec {
  uint8_t type = 0;     // the real type: STRING's ENUM/SET resolved, others as in the map
  uint16_t meta = 0;    // as in ColumnDef
  uint32_t length = 0;  // STRING/ENUM/SET: the length from the metadata (bytes)
  bool is_unsigned = false;
  bool binary = false;  // binary charset: bytes, not text
  // Converts the column's bytes to UTF-8, appending to `out`; false when they are not valid
  // in the column's charset. Null for UTF-8 and ASCII columns (copied as they are).
  std::function<bool(std::string_view, std::string&)> to_utf8;
  std::vector<std::string> enum_values;  // ENUM / SET members, in definition order
  ValueType value_type = ValueType::kText;
};

// A charset converter for a collation id: null when the bytes are already UTF-8 (utf8mb3,
// utf8mb4, ascii) or the collation is binary; kFailedPrecondition for a charset faucet cannot
// convert (naming it). Given by the caller, who knows the server's collations.
using CharsetLookup =
    std::function<Result<std::function<bool(std::string_view, std::string&)>>(uint32_t collation)>;

// A collation lookup with the server's built-in ids and charsets faucet converts itself:
// utf8mb3/utf8mb4/ascii (no conversion), binary, latin1 (MySQL's latin1 is cp1252), and
// other charsets through iconv by name when `name_of(collation)` gives the charset's name.
CharsetLookup DefaultCharsets(std::function<std::string(uint32_t collation)> name_of = {});

// The codecs of `map`'s columns. Needs the map's unsigned flags, collations and ENUM/SET
// members (from FULL metadata, or filled in from the catalog by the caller before this); a
// character column without a collation is taken as utf8mb4; an ENUM/SET column without its
// members is kFailedPrecondition naming it. Members are converted to UTF-8 from the column's
// collation: members filled in from the catalog (already UTF-8) go with `collation` unset.
Result<std::vector<ColumnCodec>> ResolveColumns(const TableMap& map, const CharsetLookup& charsets);

// Decodes one row image from the front of `data` (and advances `data` past it): a null
// bitmap over the columns set in `present`, then their values. `row` gets one Cell per column
// of the table (codecs.size()); a column not in `present` (binlog_row_image MINIMAL/NOBLOB)
// is Cell::UnchangedToast(): its value was not sent and a sink must leave it as it is.
// `where` names the table for errors ("db.table").
Status DecodeRow(const std::vector<ColumnCodec>& codecs, const ColumnBitmap& present,
                 std::string_view& data, Row& row, const std::string& where);

// One value of a column, for unit tests and the query source's checks: the bytes of a
// non-null value as stored in a row image, decoded to its text form.
Result<std::string> DecodeValue(const ColumnCodec& codec, std::string_view& data);

// Decodes MySQL's binary JSON (the JSON column of a MySQL 8 row image) to compact JSON text.
Status DecodeMysqlJson(std::string_view binary, std::string& out);

}  // namespace faucet::mysql
