#include "sources/mysql/row_image.h"

#include <iconv.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "core/text.h"
#include "sources/mysql/mysql_types.h"
#include "sources/mysql/value_format.h"

namespace faucet::mysql {
namespace {

// --- bytes ------------------------------------------------------------------------------------

// The next `n` bytes of `data`, which then starts after them.
Result<std::string_view> Take(std::string_view& data, size_t n) {
  if (data.size() < n) {
    return DataLoss("truncated value: " + std::to_string(n) + " bytes needed, " +
                    std::to_string(data.size()) + " left");
  }
  std::string_view v = data.substr(0, n);
  data.remove_prefix(n);
  return v;
}

uint64_t Le(std::string_view b) {
  uint64_t v = 0;
  for (size_t i = 0; i < b.size(); ++i) v |= uint64_t{static_cast<uint8_t>(b[i])} << (8 * i);
  return v;
}

uint64_t Be(std::string_view b) {
  uint64_t v = 0;
  for (char c : b) v = (v << 8) | static_cast<uint8_t>(c);
  return v;
}

Result<uint64_t> TakeLe(std::string_view& data, size_t n) {
  ASSIGN_OR_RETURN(std::string_view b, Take(data, n));
  return Le(b);
}

Result<uint64_t> TakeBe(std::string_view& data, size_t n) {
  ASSIGN_OR_RETURN(std::string_view b, Take(data, n));
  return Be(b);
}

// --- text -------------------------------------------------------------------------------------

template <class T>
void AppendNumber(std::string& out, T v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;  // 32 bytes hold any 64-bit integer and the shortest form of any double
  out.append(buf, end);
}

// --- fractional seconds ------------------------------------------------------------------------

Status CheckFsp(unsigned fsp) {
  if (fsp > 6) return DataLoss("fractional seconds precision " + std::to_string(fsp) + " > 6");
  return Status::Ok();
}

// The fraction after a TIME2/DATETIME2/TIMESTAMP2 integer part: (fsp + 1) / 2 big-endian
// bytes, in units of 1/100 s (fsp 1-2), 1/10000 s (3-4) or microseconds (5-6).
struct Fraction {
  uint64_t raw = 0;
  size_t bytes = 0;
  uint64_t unit_us = 1;  // microseconds per unit of raw
};

Result<Fraction> TakeFraction(std::string_view& data, unsigned fsp) {
  Fraction f;
  f.bytes = (fsp + 1) / 2;
  static constexpr uint64_t kUnit[] = {1, 10000, 100, 1};
  f.unit_us = kUnit[f.bytes];
  ASSIGN_OR_RETURN(f.raw, TakeBe(data, f.bytes));
  return f;
}

// --- DECIMAL ----------------------------------------------------------------------------------

// DECIMAL's binary form: the integer and fraction digits in groups of 9 decimal digits, each
// group a 4-byte big-endian number, with the leftover leading integer digits and trailing
// fraction digits in just enough bytes; the sign bit of the first byte is inverted, and all
// bytes are inverted for a negative number (MySQL's decimal2bin).
constexpr int kDigitsPerGroup = 9;
constexpr std::array<int, 10> kBytesForDigits = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr std::array<uint32_t, 10> kPow10 = {1,      10,      100,      1000,      10000,
                                             100000, 1000000, 10000000, 100000000, 1000000000};

int DecimalBinarySize(int precision, int scale) {
  const int intg = precision - scale;
  return (intg / kDigitsPerGroup) * 4 + kBytesForDigits[intg % kDigitsPerGroup] +
         (scale / kDigitsPerGroup) * 4 + kBytesForDigits[scale % kDigitsPerGroup];
}

Status AppendDecimal(std::string& out, std::string_view& data, int precision, int scale) {
  if (precision < 1 || precision > 65 || scale < 0 || scale > 30 || scale > precision) {
    return DataLoss("invalid DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) +
                    ")");
  }
  ASSIGN_OR_RETURN(std::string_view raw, Take(data, DecimalBinarySize(precision, scale)));
  std::array<uint8_t, 32> b{};
  std::memcpy(b.data(), raw.data(), raw.size());
  const bool negative = (b[0] & 0x80) == 0;
  b[0] ^= 0x80;
  if (negative) {
    for (size_t i = 0; i < raw.size(); ++i) b[i] ^= 0xff;
  }
  size_t at = 0;
  Status bad;
  // Reads one group of `digits` digits, appending it to `text`, zero-padded when `pad`.
  auto group = [&](int digits, bool pad, std::string& text) {
    const int n = kBytesForDigits[digits];
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | b[at++];
    if (v >= kPow10[digits]) bad = DataLoss("DECIMAL digit group out of range");
    AppendPadded(text, v, pad ? digits : 0);
  };
  const int intg = precision - scale;
  std::string digits;
  if (intg % kDigitsPerGroup) group(intg % kDigitsPerGroup, false, digits);
  for (int g = 0; g < intg / kDigitsPerGroup; ++g) group(kDigitsPerGroup, true, digits);
  std::string fraction;
  for (int g = 0; g < scale / kDigitsPerGroup; ++g) group(kDigitsPerGroup, true, fraction);
  if (scale % kDigitsPerGroup) group(scale % kDigitsPerGroup, true, fraction);
  RETURN_IF_ERROR(bad);
  const size_t first = digits.find_first_not_of('0');
  std::string_view whole =
      first == std::string::npos ? "0" : std::string_view(digits).substr(first);
  const bool zero = whole == "0" && fraction.find_first_not_of('0') == std::string::npos;
  if (negative && !zero) out += '-';
  out += whole;
  if (scale > 0) {
    out += '.';
    out += fraction;
  }
  return Status::Ok();
}

// --- temporal types ---------------------------------------------------------------------------

// DATE: 3 little-endian bytes, year << 9 | month << 5 | day.
Status AppendDate3(std::string& out, std::string_view& data) {
  ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, 3));
  TemporalParts t;
  t.year = static_cast<uint32_t>(v >> 9);
  t.month = static_cast<uint32_t>((v >> 5) & 15);
  t.day = static_cast<uint32_t>(v & 31);
  AppendDate(out, t);
  return Status::Ok();
}

Status CheckClock(const TemporalParts& t, const char* type) {
  if (t.minute > 59 || t.second > 59 || t.microsecond > 999999) {
    return DataLoss(std::string("invalid ") + type + " value");
  }
  return Status::Ok();
}

// A TIME as MySQL's packed number: (hours << 12 | minutes << 6 | seconds) << 24 | microseconds,
// negated for negative times.
Result<TemporalParts> TimeFromPacked(int64_t packed) {
  const uint64_t a = packed < 0 ? 0 - static_cast<uint64_t>(packed) : static_cast<uint64_t>(packed);
  const uint64_t hms = a >> 24;
  TemporalParts t;
  t.negative = packed < 0;
  t.hour = static_cast<uint32_t>((hms >> 12) & 0x3ff);
  t.minute = static_cast<uint32_t>((hms >> 6) & 63);
  t.second = static_cast<uint32_t>(hms & 63);
  t.microsecond = static_cast<uint32_t>(a & 0xffffff);
  RETURN_IF_ERROR(CheckClock(t, "TIME"));
  return t;
}

// TIME2: 3 big-endian bytes, offset by 0x800000, of hours/minutes/seconds, then the fraction;
// a negative time with a fraction borrows one from the integer part (my_time_packed_to_binary).
Status AppendTime2(std::string& out, std::string_view& data, unsigned fsp) {
  RETURN_IF_ERROR(CheckFsp(fsp));
  ASSIGN_OR_RETURN(uint64_t high, TakeBe(data, 3));
  ASSIGN_OR_RETURN(Fraction f, TakeFraction(data, fsp));
  int64_t packed;
  if (f.bytes == 3) {
    packed = static_cast<int64_t>((high << 24) | f.raw) - (int64_t{0x800000} << 24);
  } else {
    int64_t whole = static_cast<int64_t>(high) - 0x800000;
    int64_t frac = static_cast<int64_t>(f.raw);
    if (whole < 0 && frac != 0) {
      whole += 1;
      frac -= int64_t{1} << (8 * f.bytes);
    }
    packed = whole * (int64_t{1} << 24) + frac * static_cast<int64_t>(f.unit_us);
  }
  ASSIGN_OR_RETURN(TemporalParts t, TimeFromPacked(packed));
  AppendTime(out, t, fsp);
  return Status::Ok();
}

// Old TIME: a signed 3-byte little-endian number [-]HHMMSS.
Status AppendOldTime(std::string& out, std::string_view& data) {
  ASSIGN_OR_RETURN(uint64_t raw, TakeLe(data, 3));
  int64_t v = static_cast<int64_t>(raw);
  if (v & 0x800000) v -= 0x1000000;
  const uint64_t a = static_cast<uint64_t>(v < 0 ? -v : v);
  TemporalParts t;
  t.negative = v < 0;
  t.hour = static_cast<uint32_t>(a / 10000);
  t.minute = static_cast<uint32_t>(a / 100 % 100);
  t.second = static_cast<uint32_t>(a % 100);
  RETURN_IF_ERROR(CheckClock(t, "TIME"));
  AppendTime(out, t, 0);
  return Status::Ok();
}

// DATETIME2's 40-bit integer part (after the 0x8000000000 offset), as in MySQL's packed
// DATETIME: (year * 13 + month) << 22 | day << 17 | hour << 12 | minute << 6 | second.
Result<TemporalParts> DateTimeFromBits(uint64_t v, uint64_t usec) {
  const uint64_t ymd = v >> 17, ym = ymd >> 5, hms = v & 0x1ffff;
  TemporalParts t;
  t.year = static_cast<uint32_t>(ym / 13);
  t.month = static_cast<uint32_t>(ym % 13);
  t.day = static_cast<uint32_t>(ymd & 31);
  t.hour = static_cast<uint32_t>(hms >> 12);
  t.minute = static_cast<uint32_t>((hms >> 6) & 63);
  t.second = static_cast<uint32_t>(hms & 63);
  t.microsecond = static_cast<uint32_t>(std::min<uint64_t>(usec, 1000000));
  RETURN_IF_ERROR(CheckClock(t, "DATETIME"));
  return t;
}

Status AppendDateTime2(std::string& out, std::string_view& data, unsigned fsp) {
  RETURN_IF_ERROR(CheckFsp(fsp));
  ASSIGN_OR_RETURN(uint64_t high, TakeBe(data, 5));
  ASSIGN_OR_RETURN(Fraction f, TakeFraction(data, fsp));
  constexpr uint64_t kOffset = uint64_t{1} << 39;
  if (high < kOffset) return DataLoss("negative DATETIME value");
  ASSIGN_OR_RETURN(TemporalParts t, DateTimeFromBits(high - kOffset, f.raw * f.unit_us));
  AppendDateTime(out, t, fsp);
  return Status::Ok();
}

// Old DATETIME: an 8-byte little-endian number YYYYMMDDhhmmss.
Status AppendOldDateTime(std::string& out, std::string_view& data) {
  ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, 8));
  const uint64_t d = v / 1000000, hms = v % 1000000;
  if (d > 99991231) return DataLoss("invalid DATETIME value");
  TemporalParts t;
  t.year = static_cast<uint32_t>(d / 10000);
  t.month = static_cast<uint32_t>(d / 100 % 100);
  t.day = static_cast<uint32_t>(d % 100);
  t.hour = static_cast<uint32_t>(hms / 10000);
  t.minute = static_cast<uint32_t>(hms / 100 % 100);
  t.second = static_cast<uint32_t>(hms % 100);
  RETURN_IF_ERROR(CheckClock(t, "DATETIME"));
  AppendDateTime(out, t, 0);
  return Status::Ok();
}

// TIMESTAMP2: 4 big-endian bytes of seconds since the epoch, then the fraction.
Status AppendTimestamp2(std::string& out, std::string_view& data, unsigned fsp) {
  RETURN_IF_ERROR(CheckFsp(fsp));
  ASSIGN_OR_RETURN(uint64_t seconds, TakeBe(data, 4));
  ASSIGN_OR_RETURN(Fraction f, TakeFraction(data, fsp));
  const uint64_t usec = f.raw * f.unit_us;
  if (usec > 999999) return DataLoss("invalid TIMESTAMP fraction");
  AppendTimestamp(out, UtcFromEpoch(static_cast<int64_t>(seconds), static_cast<uint32_t>(usec)),
                  fsp);
  return Status::Ok();
}

// --- strings ----------------------------------------------------------------------------------

Status AppendText(std::string& out, const ColumnCodec& codec, std::string_view bytes) {
  if (codec.binary) {
    AppendBytes(out, bytes);
  } else if (codec.to_utf8) {
    if (!codec.to_utf8(bytes, out)) return DataLoss("bytes not valid in the column's charset");
  } else {
    out.append(bytes);
  }
  return Status::Ok();
}

// A value preceded by its length in `length_bytes` little-endian bytes.
Result<std::string_view> TakeLengthPrefixed(std::string_view& data, size_t length_bytes) {
  ASSIGN_OR_RETURN(uint64_t n, TakeLe(data, length_bytes));
  return Take(data, n);
}

Status AppendEnum(std::string& out, const ColumnCodec& codec, std::string_view& data) {
  if (codec.length != 1 && codec.length != 2) return DataLoss("invalid ENUM length");
  ASSIGN_OR_RETURN(uint64_t index, TakeLe(data, codec.length));
  if (index == 0) return Status::Ok();  // the "" error value
  if (index > codec.enum_values.size()) {
    return DataLoss("ENUM index " + std::to_string(index) + " beyond its " +
                    std::to_string(codec.enum_values.size()) + " members");
  }
  out += codec.enum_values[index - 1];
  return Status::Ok();
}

Status AppendSet(std::string& out, const ColumnCodec& codec, std::string_view& data) {
  if (codec.length < 1 || codec.length > 8) return DataLoss("invalid SET length");
  ASSIGN_OR_RETURN(uint64_t bits, TakeLe(data, codec.length));
  const size_t n = codec.enum_values.size();
  if (n < 64 && (bits >> n) != 0) return DataLoss("SET bits beyond its members");
  bool first = true;
  for (size_t i = 0; i < n && i < 64; ++i) {
    if (((bits >> i) & 1) == 0) continue;
    if (!first) out += ',';
    out += codec.enum_values[i];
    first = false;
  }
  return Status::Ok();
}

uint32_t BitWidth(uint16_t meta) { return (meta >> 8) * 8u + (meta & 0xff); }

Status AppendBitValue(std::string& out, const ColumnCodec& codec, std::string_view& data) {
  const uint32_t bits = BitWidth(codec.meta);
  if (bits == 0 || bits > 64) return DataLoss("invalid BIT width " + std::to_string(bits));
  ASSIGN_OR_RETURN(std::string_view bytes, Take(data, (bits + 7) / 8));
  AppendBit(out, bytes, bits);
  return Status::Ok();
}

// The length-prefix size of a BLOB-like column: its metadata, 1 to 4 bytes.
Result<size_t> BlobLengthBytes(const ColumnCodec& codec) {
  if (codec.meta < 1 || codec.meta > 4) {
    return DataLoss("invalid BLOB length size " + std::to_string(codec.meta));
  }
  return static_cast<size_t>(codec.meta);
}

Status AppendValue(std::string& out, const ColumnCodec& codec, std::string_view& data) {
  switch (codec.type) {
    case kTypeTiny:
    case kTypeShort:
    case kTypeInt24:
    case kTypeLong:
    case kTypeLongLong: {
      static constexpr size_t kSize[] = {0, 1, 2, 4, 0, 0, 0, 0, 8, 3};
      const size_t n = kSize[codec.type];
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, n));
      if (codec.is_unsigned) {
        AppendUint(out, v);
      } else {
        const unsigned shift = static_cast<unsigned>(64 - 8 * n);
        AppendInt(out, static_cast<int64_t>(v << shift) >> shift);
      }
      return Status::Ok();
    }
    case kTypeYear: {
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, 1));
      AppendUint(out, v == 0 ? 0 : 1900 + v);
      return Status::Ok();
    }
    case kTypeFloat: {
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, 4));
      float f;
      const uint32_t u = static_cast<uint32_t>(v);
      std::memcpy(&f, &u, sizeof f);
      AppendFloat(out, f);
      return Status::Ok();
    }
    case kTypeDouble: {
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, 8));
      double d;
      std::memcpy(&d, &v, sizeof d);
      AppendDouble(out, d);
      return Status::Ok();
    }
    case kTypeNewDecimal:
      return AppendDecimal(out, data, codec.meta >> 8, codec.meta & 0xff);
    case kTypeDate:
    case kTypeNewDate:
      return AppendDate3(out, data);
    case kTypeTime:
      return AppendOldTime(out, data);
    case kTypeTime2:
      return AppendTime2(out, data, codec.meta);
    case kTypeDateTime:
      return AppendOldDateTime(out, data);
    case kTypeDateTime2:
      return AppendDateTime2(out, data, codec.meta);
    case kTypeTimestamp: {
      ASSIGN_OR_RETURN(uint64_t seconds, TakeLe(data, 4));
      AppendTimestamp(out, UtcFromEpoch(static_cast<int64_t>(seconds), 0), 0);
      return Status::Ok();
    }
    case kTypeTimestamp2:
      return AppendTimestamp2(out, data, codec.meta);
    case kTypeVarchar:
    case kTypeVarString: {
      ASSIGN_OR_RETURN(std::string_view v, TakeLengthPrefixed(data, codec.meta > 255 ? 2 : 1));
      return AppendText(out, codec, v);
    }
    case kTypeString: {
      ASSIGN_OR_RETURN(std::string_view v, TakeLengthPrefixed(data, codec.length > 255 ? 2 : 1));
      RETURN_IF_ERROR(AppendText(out, codec, v));
      // BINARY(n) values are padded with zero bytes to n, but a row image strips the padding
      // (as it strips CHAR's spaces): put it back, as a SELECT returns the value.
      for (size_t i = v.size(); codec.binary && i < codec.length; ++i) out += "00";
      return Status::Ok();
    }
    case kTypeEnum:
      return AppendEnum(out, codec, data);
    case kTypeSet:
      return AppendSet(out, codec, data);
    case kTypeBit:
      return AppendBitValue(out, codec, data);
    case kTypeTinyBlob:
    case kTypeMediumBlob:
    case kTypeLongBlob:
    case kTypeBlob:
    case kTypeGeometry:
    case kTypeJson: {
      ASSIGN_OR_RETURN(size_t length_bytes, BlobLengthBytes(codec));
      ASSIGN_OR_RETURN(std::string_view v, TakeLengthPrefixed(data, length_bytes));
      if (codec.type == kTypeJson) {
        if (v.empty()) {
          out += "null";
          return Status::Ok();
        }
        return DecodeMysqlJson(v, out);
      }
      if (codec.type == kTypeGeometry) {
        AppendBytes(out, v);
        return Status::Ok();
      }
      return AppendText(out, codec, v);
    }
    case kTypeNull:
      return Status::Ok();
    default:
      return FailedPrecondition("unsupported column type " + std::to_string(codec.type));
  }
}

// --- charsets ---------------------------------------------------------------------------------

// MySQL's latin1 is Windows-1252, with the five bytes cp1252 leaves undefined (0x81, 0x8D,
// 0x8F, 0x90, 0x9D) mapped to the C1 controls of the same value.
constexpr std::array<uint16_t, 32> kCp1252High = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool Latin1ToUtf8(std::string_view in, std::string& out) {
  for (char c : in) {
    const uint8_t b = static_cast<uint8_t>(c);
    if (b < 0x80) {
      out += c;
    } else {
      AppendUtf8(out, b < 0xA0 ? kCp1252High[b - 0x80] : b);
    }
  }
  return true;
}

// One iconv descriptor shared by the copies of a codec; iconv keeps state, hence the mutex.
class IconvToUtf8 {
 public:
  explicit IconvToUtf8(iconv_t cd) : cd_(cd) {}
  ~IconvToUtf8() { iconv_close(cd_); }
  IconvToUtf8(const IconvToUtf8&) = delete;
  IconvToUtf8& operator=(const IconvToUtf8&) = delete;

  bool Convert(std::string_view in, std::string& out) {
    std::lock_guard lock(mu_);
    iconv(cd_, nullptr, nullptr, nullptr, nullptr);
    const size_t base = out.size();
    out.resize(base + 4 * in.size() + 4);  // no charset takes more than 4 UTF-8 bytes a byte
    char* src = const_cast<char*>(in.data());
    size_t src_left = in.size();
    char* dst = out.data() + base;
    size_t dst_left = out.size() - base;
    const size_t rc = iconv(cd_, &src, &src_left, &dst, &dst_left);
    out.resize(out.size() - dst_left);
    if (rc == static_cast<size_t>(-1) || src_left != 0) {
      out.resize(base);
      return false;
    }
    return true;
  }

 private:
  std::mutex mu_;
  iconv_t cd_;
};

// MySQL charset names that iconv spells differently.
std::string IconvName(const std::string& mysql_name) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"utf16", "UTF-16BE"},    {"utf16le", "UTF-16LE"},   {"utf32", "UTF-32BE"},
      {"ucs2", "UCS-2BE"},      {"ujis", "EUC-JP"},        {"eucjpms", "EUC-JP-MS"},
      {"euckr", "EUC-KR"},      {"koi8r", "KOI8-R"},       {"koi8u", "KOI8-U"},
      {"greek", "ISO-8859-7"},  {"hebrew", "ISO-8859-8"},  {"latin2", "ISO-8859-2"},
      {"latin5", "ISO-8859-9"}, {"latin7", "ISO-8859-13"}, {"sjis", "SHIFT_JIS"},
      {"tis620", "TIS-620"},    {"armscii8", "ARMSCII-8"}, {"macroman", "MACINTOSH"},
  };
  for (const auto& [mysql, iconv_name] : kNames) {
    if (mysql_name == mysql) return iconv_name;
  }
  return mysql_name;
}

enum class Charset { kUnknown, kUtf8, kLatin1, kBinary };

bool InRange(uint32_t v, uint32_t lo, uint32_t hi) { return v >= lo && v <= hi; }

// The collation ids of MariaDB 10.x/11.x and MySQL 5.7/8 whose charset faucet handles itself.
Charset BuiltinCharset(uint32_t id) {
  static constexpr uint32_t kUtf8[] = {33,   45,   46,   76,   83, 223, 1057, 1069, 1070, 1107,
                                       1216, 1238, 1248, 1270, 11, 65,  1035, 1089};  // + ascii
  static constexpr uint32_t kLatin1[] = {5, 8, 15, 31, 47, 48, 49, 94, 1032, 1071};
  if (id == kBinaryCollation) return Charset::kBinary;
  for (uint32_t v : kUtf8) {
    if (v == id) return Charset::kUtf8;
  }
  for (uint32_t v : kLatin1) {
    if (v == id) return Charset::kLatin1;
  }
  if (InRange(id, 192, 215) || InRange(id, 224, 247) || InRange(id, 255, 323) ||
      InRange(id, 576, 578) || InRange(id, 608, 610) ||
      InRange(id, 2048, 2559)) {  // MariaDB's UCA 14 utf8mb3 (2048+) and utf8mb4 (2304+)
    return Charset::kUtf8;
  }
  return Charset::kUnknown;
}

Charset CharsetByName(const std::string& name) {
  if (name == "utf8" || name == "utf8mb3" || name == "utf8mb4" || name == "ascii") {
    return Charset::kUtf8;
  }
  if (name == "latin1") return Charset::kLatin1;
  if (name == "binary") return Charset::kBinary;
  return Charset::kUnknown;
}

using Converter = std::function<bool(std::string_view, std::string&)>;

Result<Converter> ConverterFor(Charset charset) {
  if (charset == Charset::kLatin1) return Converter(Latin1ToUtf8);
  return Converter();
}

Result<Converter> IconvConverter(const std::string& name, uint32_t collation) {
  // iconv_open's documented error value is (iconv_t)-1.
  const iconv_t failed = reinterpret_cast<iconv_t>(-1);  // NOLINT(performance-no-int-to-ptr)
  iconv_t cd = iconv_open("UTF-8", IconvName(name).c_str());
  if (cd == failed) {
    return FailedPrecondition("charset " + name + " (collation " + std::to_string(collation) +
                              ") cannot be converted to UTF-8");
  }
  auto conv = std::make_shared<IconvToUtf8>(cd);
  return Converter(
      [conv](std::string_view in, std::string& out) { return conv->Convert(in, out); });
}

// --- column resolution ------------------------------------------------------------------------

std::string ColumnName(const TableMap& map, size_t i) {
  std::string s = map.database + "." + map.table + " column " + std::to_string(i);
  if (map.columns[i].name) s += " (" + *map.columns[i].name + ")";
  return s;
}

// STRING's real type and byte length from its metadata (see ColumnDef::meta): lengths above
// 255 keep their two high bits, inverted, in bits 4-5 of the type byte.
void ResolveString(ColumnCodec& c) {
  uint8_t real = static_cast<uint8_t>(c.meta >> 8);
  uint32_t length = c.meta & 0xff;
  if ((real & 0x30) != 0x30) {
    length |= static_cast<uint32_t>((real & 0x30) ^ 0x30) << 4;
    real |= 0x30;
  }
  c.length = length;
  if (c.type == kTypeString && (real == kTypeEnum || real == kTypeSet || real == kTypeString)) {
    c.type = real;
  }
}

Result<ColumnCodec> ResolveColumn(const TableMap& map, size_t i, const CharsetLookup& charsets) {
  const ColumnDef& def = map.columns[i];
  ColumnCodec c;
  c.type = def.type;
  c.meta = def.meta;
  c.is_unsigned = def.is_unsigned.value_or(false);
  if (c.type == kTypeString || c.type == kTypeEnum || c.type == kTypeSet) ResolveString(c);
  const bool enum_or_set = c.type == kTypeEnum || c.type == kTypeSet;
  if (IsCharacter(c.type) || enum_or_set) {
    const uint32_t collation = def.collation.value_or(kUtf8mb4GeneralCi);
    c.binary = collation == kBinaryCollation && !enum_or_set;
    if (collation != kBinaryCollation) {
      Result<Converter> conv = charsets(collation);
      if (!conv.ok()) return conv.status().WithContext(ColumnName(map, i));
      c.to_utf8 = std::move(conv).value();
    }
  }
  if (enum_or_set) {
    const std::vector<std::string>& members =
        c.type == kTypeEnum ? def.enum_values : def.set_values;
    if (members.empty()) {
      return FailedPrecondition(ColumnName(map, i) + ": the table map has no " +
                                (c.type == kTypeEnum ? "ENUM" : "SET") +
                                " members (binlog_row_metadata=FULL, or the catalog, gives them)");
    }
    for (const std::string& m : members) {
      if (!c.to_utf8) {
        c.enum_values.push_back(m);
        continue;
      }
      std::string utf8;
      if (!c.to_utf8(m, utf8)) {
        return DataLoss(ColumnName(map, i) + ": member not valid in its charset");
      }
      c.enum_values.push_back(std::move(utf8));
    }
    c.to_utf8 = nullptr;  // members are UTF-8 now; values are indexes
  }
  if (c.type == kTypeGeometry) c.binary = true;
  c.value_type = ValueTypeOf(c.type, c.binary, c.type == kTypeBit ? BitWidth(c.meta) : 0);
  return c;
}

// --- MySQL binary JSON ------------------------------------------------------------------------

// MySQL's binary JSON (sql-common/json_binary.h): a type byte, then the value. Objects and
// arrays come in a small (2-byte counts and offsets) and a large (4-byte) form; offsets count
// from the start of the object or array, after its type byte.
enum JsonType : uint8_t {
  kJsonSmallObject = 0x00,
  kJsonLargeObject = 0x01,
  kJsonSmallArray = 0x02,
  kJsonLargeArray = 0x03,
  kJsonLiteral = 0x04,
  kJsonInt16 = 0x05,
  kJsonUint16 = 0x06,
  kJsonInt32 = 0x07,
  kJsonUint32 = 0x08,
  kJsonInt64 = 0x09,
  kJsonUint64 = 0x0a,
  kJsonDouble = 0x0b,
  kJsonString = 0x0c,
  kJsonOpaque = 0x0f,
};
constexpr int kJsonMaxDepth = 100;

Status JsonError(const std::string& what) { return DataLoss(what); }

void AppendJsonString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<uint8_t>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[static_cast<uint8_t>(c) >> 4];
          out += kHex[c & 15];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void AppendBase64(std::string& out, std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i = 0;
  for (; i + 3 <= in.size(); i += 3) {
    const uint32_t v = static_cast<uint32_t>(Be(in.substr(i, 3)));
    for (int k = 3; k >= 0; --k) out += kAlphabet[(v >> (6 * k)) & 63];
  }
  const size_t rest = in.size() - i;
  if (rest == 0) return;
  const uint32_t v = static_cast<uint32_t>(Be(in.substr(i)) << (8 * (3 - rest)));
  out += kAlphabet[(v >> 18) & 63];
  out += kAlphabet[(v >> 12) & 63];
  out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
  out += '=';
}

// A string's length: 7 bits a byte, least significant first, high bit = more bytes follow.
Result<uint64_t> TakeJsonLength(std::string_view& data) {
  uint64_t length = 0;
  for (int i = 0; i < 5; ++i) {
    ASSIGN_OR_RETURN(uint64_t b, TakeLe(data, 1));
    length |= (b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return length;
  }
  return JsonError("string length longer than 5 bytes");
}

// Opaque DECIMAL and temporal values as JSON strings of their text (MySQL prints these
// typed scalars from its own structures); other opaque values as MySQL prints them,
// "base64:type<N>:<base64 of the bytes>".
Status AppendJsonOpaque(std::string& out, uint8_t field_type, std::string_view bytes) {
  std::string text;
  if (field_type == kTypeNewDecimal && bytes.size() >= 2) {
    std::string_view rest = bytes.substr(2);
    Status s =
        AppendDecimal(text, rest, static_cast<uint8_t>(bytes[0]), static_cast<uint8_t>(bytes[1]));
    if (!s.ok() || !rest.empty()) return JsonError("malformed opaque DECIMAL");
  } else if ((field_type == kTypeDate || field_type == kTypeDateTime ||
              field_type == kTypeTimestamp || field_type == kTypeTime) &&
             bytes.size() == 8) {
    const int64_t packed = static_cast<int64_t>(Le(bytes));
    if (field_type == kTypeTime) {
      ASSIGN_OR_RETURN(TemporalParts t, TimeFromPacked(packed));
      AppendTime(text, t, 6);
    } else {
      if (packed < 0) return JsonError("negative opaque date");
      const uint64_t v = static_cast<uint64_t>(packed);
      ASSIGN_OR_RETURN(TemporalParts t, DateTimeFromBits(v >> 24, v & 0xffffff));
      if (field_type == kTypeDate) {
        AppendDate(text, t);
      } else {
        AppendDateTime(text, t, 6);
      }
    }
  } else {
    out += "\"base64:type";
    AppendNumber(out, field_type);
    out += ':';
    AppendBase64(out, bytes);
    out += '"';
    return Status::Ok();
  }
  AppendJsonString(out, text);
  return Status::Ok();
}

Status AppendJsonValue(std::string& out, uint8_t type, std::string_view data, int depth);

// The value of one entry of an object or array: inlined in the entry for small scalars,
// otherwise at an offset into `container`.
Status AppendJsonEntry(std::string& out, std::string_view container, std::string_view entry,
                       bool large, int depth) {
  const uint8_t type = static_cast<uint8_t>(entry[0]);
  const std::string_view field = entry.substr(1);
  switch (type) {
    case kJsonLiteral:
    case kJsonInt16:
    case kJsonUint16:
      return AppendJsonValue(out, type, field, depth);
    case kJsonInt32:
    case kJsonUint32:
      if (large) return AppendJsonValue(out, type, field, depth);
      break;
    default:
      break;
  }
  const uint64_t offset = Le(field);
  if (offset >= container.size()) return JsonError("value offset beyond its container");
  return AppendJsonValue(out, type, container.substr(offset), depth);
}

Status AppendJsonContainer(std::string& out, std::string_view data, bool object, bool large,
                           int depth) {
  if (depth > kJsonMaxDepth) return JsonError("nested deeper than 100");
  const size_t word = large ? 4 : 2;
  std::string_view header = data;
  ASSIGN_OR_RETURN(uint64_t count, TakeLe(header, word));
  ASSIGN_OR_RETURN(uint64_t size, TakeLe(header, word));
  if (size > data.size()) return JsonError("container larger than its bytes");
  const std::string_view container = data.substr(0, size);
  const size_t key_entry = word + 2, value_entry = 1 + word;
  const uint64_t entries = 2 * word + count * ((object ? key_entry : 0) + value_entry);
  if (count > size || entries > size) return JsonError("container entries beyond its size");
  out += object ? '{' : '[';
  for (uint64_t i = 0; i < count; ++i) {
    if (i > 0) out += ',';
    if (object) {
      const std::string_view k = container.substr(2 * word + i * key_entry, key_entry);
      const uint64_t key_offset = Le(k.substr(0, word)), key_length = Le(k.substr(word));
      if (key_offset > size || key_length > size - key_offset) {
        return JsonError("key beyond its object");
      }
      AppendJsonString(out, container.substr(key_offset, key_length));
      out += ':';
    }
    const size_t at = 2 * word + (object ? count * key_entry : 0) + i * value_entry;
    RETURN_IF_ERROR(
        AppendJsonEntry(out, container, container.substr(at, value_entry), large, depth + 1));
  }
  out += object ? '}' : ']';
  return Status::Ok();
}

Status AppendJsonValue(std::string& out, uint8_t type, std::string_view data, int depth) {
  switch (type) {
    case kJsonSmallObject:
    case kJsonLargeObject:
    case kJsonSmallArray:
    case kJsonLargeArray:
      return AppendJsonContainer(out, data, type <= kJsonLargeObject,
                                 type == kJsonLargeObject || type == kJsonLargeArray, depth);
    case kJsonLiteral: {
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, 1));
      if (v > 2) return JsonError("unknown literal " + std::to_string(v));
      out += v == 0 ? "null" : v == 1 ? "true" : "false";
      return Status::Ok();
    }
    case kJsonInt16:
    case kJsonInt32:
    case kJsonInt64: {
      const size_t n = type == kJsonInt16 ? 2 : type == kJsonInt32 ? 4 : 8;
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, n));
      const unsigned shift = static_cast<unsigned>(64 - 8 * n);
      AppendNumber(out, static_cast<int64_t>(v << shift) >> shift);
      return Status::Ok();
    }
    case kJsonUint16:
    case kJsonUint32:
    case kJsonUint64: {
      const size_t n = type == kJsonUint16 ? 2 : type == kJsonUint32 ? 4 : 8;
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, n));
      AppendNumber(out, v);
      return Status::Ok();
    }
    case kJsonDouble: {
      ASSIGN_OR_RETURN(uint64_t v, TakeLe(data, 8));
      double d;
      std::memcpy(&d, &v, sizeof d);
      if (!std::isfinite(d)) return JsonError("non-finite double");
      const size_t at = out.size();
      AppendNumber(out, d);
      // A double that prints as an integer keeps a ".0", as MySQL prints it.
      if (out.find_first_of(".e", at) == std::string::npos) out += ".0";
      return Status::Ok();
    }
    case kJsonString: {
      ASSIGN_OR_RETURN(uint64_t n, TakeJsonLength(data));
      ASSIGN_OR_RETURN(std::string_view s, Take(data, n));
      AppendJsonString(out, s);
      return Status::Ok();
    }
    case kJsonOpaque: {
      ASSIGN_OR_RETURN(uint64_t field_type, TakeLe(data, 1));
      ASSIGN_OR_RETURN(uint64_t n, TakeJsonLength(data));
      ASSIGN_OR_RETURN(std::string_view bytes, Take(data, n));
      return AppendJsonOpaque(out, static_cast<uint8_t>(field_type), bytes);
    }
    default:
      return JsonError("unknown value type " + std::to_string(type));
  }
}

}  // namespace

CharsetLookup DefaultCharsets(std::function<std::string(uint32_t collation)> name_of) {
  return [name_of = std::move(name_of)](uint32_t collation) -> Result<Converter> {
    const Charset builtin = BuiltinCharset(collation);
    if (builtin != Charset::kUnknown) return ConverterFor(builtin);
    if (!name_of) {
      return FailedPrecondition("unknown collation id " + std::to_string(collation) +
                                ": its charset is not known without the server's catalog");
    }
    const std::string name = name_of(collation);
    if (name.empty()) {
      return FailedPrecondition("unknown collation id " + std::to_string(collation));
    }
    const Charset by_name = CharsetByName(name);
    if (by_name != Charset::kUnknown) return ConverterFor(by_name);
    return IconvConverter(name, collation);
  };
}

Result<std::vector<ColumnCodec>> ResolveColumns(const TableMap& map,
                                                const CharsetLookup& charsets) {
  const CharsetLookup fallback = charsets ? CharsetLookup() : DefaultCharsets();
  const CharsetLookup& lookup = charsets ? charsets : fallback;
  std::vector<ColumnCodec> codecs;
  codecs.reserve(map.columns.size());
  for (size_t i = 0; i < map.columns.size(); ++i) {
    ASSIGN_OR_RETURN(ColumnCodec c, ResolveColumn(map, i, lookup));
    codecs.push_back(std::move(c));
  }
  return codecs;
}

Status DecodeRow(const std::vector<ColumnCodec>& codecs, const ColumnBitmap& present,
                 std::string_view& data, Row& row, const std::string& where) {
  if (present.count != codecs.size()) {
    return DataLoss(where + ": rows event has " + std::to_string(present.count) +
                    " columns, its table map " + std::to_string(codecs.size()));
  }
  const uint32_t sent = present.CountSet();
  // A row image always holds a column; one with none would consume nothing and never end.
  if (sent == 0) return DataLoss(where + ": row image with no columns");
  Result<std::string_view> nulls = Take(data, (sent + 7) / 8);
  if (!nulls.ok()) return nulls.status().WithContext(where + " null bitmap");
  row.resize(codecs.size());
  uint32_t k = 0;  // index among the columns sent
  for (size_t i = 0; i < codecs.size(); ++i) {
    Cell& cell = row[i];
    cell.text.clear();
    if (!present.Test(static_cast<uint32_t>(i))) {
      cell.state = CellState::kUnchangedToast;
      continue;
    }
    const bool is_null = (static_cast<uint8_t>((*nulls)[k / 8]) >> (k % 8)) & 1;
    ++k;
    if (is_null) {
      cell.state = CellState::kNull;
      continue;
    }
    cell.state = CellState::kValue;
    Status s = AppendValue(cell.text, codecs[i], data);
    if (!s.ok()) return s.WithContext(where + " column " + std::to_string(i));
  }
  return Status::Ok();
}

Result<std::string> DecodeValue(const ColumnCodec& codec, std::string_view& data) {
  std::string out;
  RETURN_IF_ERROR(AppendValue(out, codec, data));
  return out;
}

Status DecodeMysqlJson(std::string_view binary, std::string& out) {
  std::string_view data = binary;
  Result<uint64_t> type = TakeLe(data, 1);
  if (!type.ok()) return DataLoss("binary JSON: empty document");
  const size_t at = out.size();
  Status s = AppendJsonValue(out, static_cast<uint8_t>(*type), data, 0);
  if (s.ok()) return s;
  out.resize(at);
  return s.WithContext("binary JSON");
}

}  // namespace faucet::mysql
