#include "sources/mysql/value_format.h"

#include <charconv>

#include "core/text.h"

namespace faucet::mysql {
namespace {

template <typename T>
void AppendChars(std::string& out, T v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;  // 64 bytes hold the shortest form of any float, double or 64-bit integer
  out.append(buf, static_cast<size_t>(end - buf));
}

void AppendClock(std::string& out, const TemporalParts& t, uint32_t fsp) {
  AppendPadded(out, t.hour, 2);
  out += ':';
  AppendPadded(out, t.minute, 2);
  out += ':';
  AppendPadded(out, t.second, 2);
  AppendFraction(out, t.microsecond, fsp);
}

}  // namespace

void AppendInt(std::string& out, int64_t v) { AppendChars(out, v); }
void AppendUint(std::string& out, uint64_t v) { AppendChars(out, v); }
void AppendFloat(std::string& out, float v) { AppendChars(out, v); }
void AppendDouble(std::string& out, double v) { AppendChars(out, v); }

void AppendDate(std::string& out, const TemporalParts& t) {
  AppendPadded(out, t.year, 4);
  out += '-';
  AppendPadded(out, t.month, 2);
  out += '-';
  AppendPadded(out, t.day, 2);
}

void AppendTime(std::string& out, const TemporalParts& t, uint32_t fsp) {
  if (t.negative) out += '-';
  AppendClock(out, t, fsp);
}

void AppendDateTime(std::string& out, const TemporalParts& t, uint32_t fsp) {
  AppendDate(out, t);
  out += ' ';
  AppendClock(out, t, fsp);
}

void AppendTimestamp(std::string& out, const TemporalParts& t, uint32_t fsp) {
  AppendDateTime(out, t, fsp);
  out += kUtcSuffix;
}

void AppendFraction(std::string& out, uint32_t microsecond, uint32_t fsp) {
  if (fsp == 0) return;
  if (fsp > 6) fsp = 6;
  char digits[6];
  uint32_t v = microsecond % 1'000'000;
  for (int i = 5; i >= 0; --i) {
    digits[i] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
  out += '.';
  out.append(digits, fsp);
}

TemporalParts UtcFromEpoch(int64_t seconds, uint32_t microsecond) {
  TemporalParts t;
  if (seconds == 0 && microsecond == 0) return t;
  int64_t days = seconds / 86400;
  int64_t rest = seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  t.hour = static_cast<uint32_t>(rest / 3600);
  t.minute = static_cast<uint32_t>(rest % 3600 / 60);
  t.second = static_cast<uint32_t>(rest % 60);
  t.microsecond = microsecond;
  // Days since 1970-01-01 to a proleptic Gregorian date, counting in 400-year eras that start
  // on March 1st (so the leap day is the era year's last day).
  const int64_t z = days + 719468;  // days since 0000-03-01
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t day_of_era = z - era * 146097;  // [0, 146096]
  const int64_t year_of_era =
      (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const int64_t day_of_year =
      day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);  // [0, 365]
  const int64_t shifted_month = (5 * day_of_year + 2) / 153;                   // [0, 11], 0 = March
  t.day = static_cast<uint32_t>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  t.month = static_cast<uint32_t>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  t.year = static_cast<uint32_t>(year_of_era + era * 400 + (t.month <= 2 ? 1 : 0));
  return t;
}

void AppendBytes(std::string& out, std::string_view bytes) {
  out.reserve(out.size() + 2 + 2 * bytes.size());
  out += "\\x";
  AppendHex(bytes, out);
}

void AppendBit(std::string& out, std::string_view bytes, uint32_t bits) {
  auto bit = [&](uint32_t i) {  // bit i, 0 = least significant
    const size_t byte = i / 8;
    if (byte >= bytes.size()) return false;
    const auto b = static_cast<unsigned char>(bytes[bytes.size() - 1 - byte]);
    return ((b >> (i % 8)) & 1) != 0;
  };
  if (bits == 1) {
    out += bit(0) ? 't' : 'f';
    return;
  }
  out.reserve(out.size() + bits);
  for (uint32_t i = bits; i-- > 0;) out += bit(i) ? '1' : '0';
}

}  // namespace faucet::mysql
