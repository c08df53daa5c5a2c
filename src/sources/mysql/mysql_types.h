// MySQL/MariaDB column types and the one mapping of them onto faucet's logical types and text
// forms, shared by the binlog decoder (mysql-cdc) and the query source (mysql), so that a
// mirror's snapshot and its stream give every value the same form.
//
// Text forms (Cell::Value), by MySQL type:
//   TINYINT..BIGINT, signed or unsigned   kInt        decimal ("-128", "18446744073709551615")
//   YEAR                                  kInt        "2024" (0 for the zero year)
//   DECIMAL                               kNumeric    exact, with the column's scale ("1.50")
//   FLOAT, DOUBLE                         kFloat      shortest text that reads back the same
//                                                     value ("0.1", "1e+100"), as C++
//                                                     std::to_chars of the float/double
//   DATE                                  kDate       "YYYY-MM-DD" (zero parts kept: "0000-00-00")
//   TIME                                  kTime       "[-]HH:MM:SS[.f]" (hours may exceed 23)
//   DATETIME                              kTimestamp  "YYYY-MM-DD HH:MM:SS[.f]"
//   TIMESTAMP                             kTimestampTz "YYYY-MM-DD HH:MM:SS[.f]+00" (UTC; the
//                                                     zero timestamp "0000-00-00 00:00:00+00")
//     [.f]: exactly the column's fsp digits (none when fsp = 0), as MySQL prints them.
//   CHAR, VARCHAR, TEXT (non-binary)      kText       UTF-8 (converted from the column's
//                                                     charset; CHAR keeps no trailing pad)
//   BINARY, VARBINARY, BLOB, and any      kBytes      Postgres hex: "\x" + 2 lowercase hex
//     string with the binary charset                  digits per byte (BINARY(n) keeps its
//                                                     trailing zero bytes)
//   ENUM                                  kText       the member's name ("" for index 0)
//   SET                                   kText       member names joined by ",", in
//                                                     definition order ("" for none)
//   BIT(1)                                kBool       "t" / "f"
//   BIT(n), n > 1                         kOther      n characters '0'/'1', most significant
//                                                     first (Postgres bit(n) text form)
//   JSON (MySQL binary JSON)              kJson       compact JSON text
//   JSON (MariaDB: LONGTEXT)              kText       the text as stored
//   GEOMETRY                              kBytes      the stored bytes (SRID + WKB), hex
//   NULL                                  Cell::Null()
#pragma once

#include <cstdint>
#include <string>

#include "core/change.h"

namespace faucet::mysql {

// MYSQL_TYPE_* (include/mysql_com.h / mariadb_com.h enum_field_types), as in binlogs and in
// MYSQL_FIELD::type.
enum FieldType : uint8_t {
  kTypeDecimal = 0,  // old DECIMAL (before 5.0), never in row-based binlogs
  kTypeTiny = 1,
  kTypeShort = 2,
  kTypeLong = 3,
  kTypeFloat = 4,
  kTypeDouble = 5,
  kTypeNull = 6,
  kTypeTimestamp = 7,
  kTypeLongLong = 8,
  kTypeInt24 = 9,
  kTypeDate = 10,
  kTypeTime = 11,
  kTypeDateTime = 12,
  kTypeYear = 13,
  kTypeNewDate = 14,
  kTypeVarchar = 15,
  kTypeBit = 16,
  kTypeTimestamp2 = 17,
  kTypeDateTime2 = 18,
  kTypeTime2 = 19,
  kTypeJson = 245,  // MySQL only
  kTypeNewDecimal = 246,
  kTypeEnum = 247,
  kTypeSet = 248,
  kTypeTinyBlob = 249,
  kTypeMediumBlob = 250,
  kTypeLongBlob = 251,
  kTypeBlob = 252,
  kTypeVarString = 253,
  kTypeString = 254,
  kTypeGeometry = 255,
};

inline constexpr uint32_t kBinaryCollation = 63;
// What a character column without a collation in its table map is taken as.
inline constexpr uint32_t kUtf8mb4GeneralCi = 45;

// The logical type of a column of MySQL type `type` (after resolving STRING's real type to
// ENUM/SET), `binary` when its charset is binary (collation 63), `bits` the width of a BIT
// column (1 makes it kBool).
ValueType ValueTypeOf(uint8_t type, bool binary, uint32_t bits);

// The declared width of a column (Column::width): bits of an integer, YEAR, FLOAT or DOUBLE
// (an unsigned integer one more), characters of a non-`binary` CHAR/VARCHAR of at most
// `max_bytes` bytes in a charset whose longest character is `bytes_per_char` bytes; 0 for
// every other type and for binary strings.
uint32_t DeclaredWidth(uint8_t type, bool is_unsigned, bool binary, uint32_t max_bytes,
                       uint32_t bytes_per_char);

// Integer, FLOAT/DOUBLE and DECIMAL types: those with a signedness in a table map.
bool IsNumeric(uint8_t type);
// CHAR/BINARY, VARCHAR/VARBINARY, TEXT/BLOB (real types): those with a charset in a table map.
bool IsCharacter(uint8_t type);

}  // namespace faucet::mysql
