// The text forms of mysql_types.h, as small pure functions shared by the two readers of MySQL
// values: the query source (values from the binary protocol: integers, float, double,
// MYSQL_TIME, bytes) and the row-image decoder (values from binlog row images). Both must give
// a stored value the same text, so that a mirror's snapshot (query source) and its stream
// (mysql-cdc) agree; each form is produced here once.
//
// Every function appends to `out` (a Cell's text), so that a reader builds a value without a
// temporary string.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace faucet::mysql {

// What a TIMESTAMP's text ends with: its values are UTC.
inline constexpr std::string_view kUtcSuffix = "+00";

// The parts of a DATE, TIME, DATETIME or TIMESTAMP value, as MYSQL_TIME holds them. Zero
// parts are kept (MySQL's zero date "0000-00-00"). For a TIME, `hour` is the whole number of
// hours (up to 838: days already folded in) and `negative` its sign.
struct TemporalParts {
  bool negative = false;  // TIME only
  uint32_t year = 0;
  uint32_t month = 0;
  uint32_t day = 0;
  uint32_t hour = 0;
  uint32_t minute = 0;
  uint32_t second = 0;
  uint32_t microsecond = 0;  // 0..999999
};

// Signed and unsigned integers (TINYINT..BIGINT, YEAR): decimal.
void AppendInt(std::string& out, int64_t v);
void AppendUint(std::string& out, uint64_t v);

// FLOAT and DOUBLE: the shortest text that reads back as the same float (double), as
// std::to_chars prints it ("3.1415927", "0.1", "1e+100", "-0"). A FLOAT column's value must
// be passed as the float it is: widening it to double first would print the double nearest the
// float ("3.1415927410125732").
void AppendFloat(std::string& out, float v);
void AppendDouble(std::string& out, double v);

// DATE: "YYYY-MM-DD".
void AppendDate(std::string& out, const TemporalParts& t);
// TIME: "[-]HH:MM:SS[.f]", hours with at least two digits ("-838:59:59.000000").
void AppendTime(std::string& out, const TemporalParts& t, uint32_t fsp);
// DATETIME: "YYYY-MM-DD HH:MM:SS[.f]".
void AppendDateTime(std::string& out, const TemporalParts& t, uint32_t fsp);
// TIMESTAMP, whose parts are in UTC: the DATETIME form and kUtcSuffix
// ("2024-01-02 03:04:05.123+00"; the zero timestamp "0000-00-00 00:00:00+00").
void AppendTimestamp(std::string& out, const TemporalParts& t, uint32_t fsp);
// [.f]: nothing when `fsp` is 0, else "." and the first `fsp` (at most 6) digits of the six
// microsecond digits, as MySQL prints a column of that fractional precision.
void AppendFraction(std::string& out, uint32_t microsecond, uint32_t fsp);

// The UTC parts of a TIMESTAMP stored as seconds since the Unix epoch (how a binlog row image
// holds it). 0 seconds and 0 microseconds are the zero timestamp (0000-00-00 00:00:00), which
// is how MySQL stores it: 1970-01-01 00:00:00 UTC itself is outside TIMESTAMP's range.
TemporalParts UtcFromEpoch(int64_t seconds, uint32_t microsecond);

// BINARY, VARBINARY, BLOB, GEOMETRY and strings of the binary charset: "\x" and two lowercase
// hex digits per byte (Postgres' bytea hex form), every byte kept.
void AppendBytes(std::string& out, std::string_view bytes);

// BIT(bits) from its big-endian bytes, (bits + 7) / 8 of them (the binary protocol's and the
// row image's form): "t" / "f" for BIT(1), else `bits` characters '0'/'1', most significant
// first (Postgres' bit(n) text form). Bits of the first byte above `bits` are ignored; missing
// leading bytes count as zero.
void AppendBit(std::string& out, std::string_view bytes, uint32_t bits);

}  // namespace faucet::mysql
