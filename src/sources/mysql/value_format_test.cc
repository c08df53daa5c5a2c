#include "sources/mysql/value_format.h"

#include <gtest/gtest.h>

#include <limits>

namespace faucet::mysql {
namespace {

template <typename F, typename... Args>
std::string Text(F f, Args... args) {
  std::string out;
  f(out, args...);
  return out;
}

TEST(ValueFormat, IntegersAreDecimalAtTheirExtremes) {
  EXPECT_EQ(Text(AppendInt, std::numeric_limits<int64_t>::min()), "-9223372036854775808");
  EXPECT_EQ(Text(AppendInt, int64_t{-128}), "-128");
  EXPECT_EQ(Text(AppendUint, std::numeric_limits<uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(Text(AppendUint, uint64_t{0}), "0");
}

TEST(ValueFormat, FloatIsTheShortestTextOfTheFloatNotOfTheWidenedDouble) {
  EXPECT_EQ(Text(AppendFloat, 3.1415927f), "3.1415927");
  EXPECT_EQ(Text(AppendDouble, static_cast<double>(3.1415927f)), "3.1415927410125732");
  EXPECT_EQ(Text(AppendFloat, 0.1f), "0.1");
  EXPECT_EQ(Text(AppendFloat, -0.0f), "-0");
  EXPECT_EQ(Text(AppendFloat, 3.4028235e38f), "3.4028235e+38");
}

TEST(ValueFormat, DoubleReadsBackExactly) {
  EXPECT_EQ(Text(AppendDouble, 0.1), "0.1");
  EXPECT_EQ(Text(AppendDouble, 1e100), "1e+100");
  EXPECT_EQ(Text(AppendDouble, 2.2250738585072014e-308), "2.2250738585072014e-308");
  EXPECT_EQ(Text(AppendDouble, -1.5), "-1.5");
  EXPECT_EQ(Text(AppendDouble, 123456789012.0), "123456789012");
}

TEST(ValueFormat, DatesKeepZeroParts) {
  EXPECT_EQ(Text(AppendDate, TemporalParts{.year = 2024, .month = 2, .day = 29}), "2024-02-29");
  EXPECT_EQ(Text(AppendDate, TemporalParts{}), "0000-00-00");
  EXPECT_EQ(Text(AppendDate, TemporalParts{.year = 1, .month = 1, .day = 1}), "0001-01-01");
}

TEST(ValueFormat, TimeMayBeNegativeAndExceed24Hours) {
  TemporalParts t{.hour = 838, .minute = 59, .second = 59};
  t.negative = true;
  EXPECT_EQ(Text(AppendTime, t, 0u), "-838:59:59");
  EXPECT_EQ(Text(AppendTime, TemporalParts{.hour = 1, .minute = 2, .second = 3}, 0u), "01:02:03");
  TemporalParts frac{.second = 1, .microsecond = 500000};
  frac.negative = true;
  EXPECT_EQ(Text(AppendTime, frac, 6u), "-00:00:01.500000");
}

TEST(ValueFormat, FractionHasExactlyTheColumnsDigits) {
  const TemporalParts t{.year = 2024,
                        .month = 1,
                        .day = 2,
                        .hour = 3,
                        .minute = 4,
                        .second = 5,
                        .microsecond = 123000};
  EXPECT_EQ(Text(AppendDateTime, t, 0u), "2024-01-02 03:04:05");
  EXPECT_EQ(Text(AppendDateTime, t, 3u), "2024-01-02 03:04:05.123");
  EXPECT_EQ(Text(AppendDateTime, t, 6u), "2024-01-02 03:04:05.123000");
  EXPECT_EQ(Text(AppendFraction, uint32_t{7}, 6u), ".000007");
  EXPECT_EQ(Text(AppendFraction, uint32_t{0}, 1u), ".0");
}

TEST(ValueFormat, TimestampIsUtcWithSuffix) {
  const TemporalParts t{.year = 2024,
                        .month = 1,
                        .day = 2,
                        .hour = 3,
                        .minute = 4,
                        .second = 5,
                        .microsecond = 120000};
  EXPECT_EQ(Text(AppendTimestamp, t, 2u), "2024-01-02 03:04:05.12+00");
  EXPECT_EQ(Text(AppendTimestamp, TemporalParts{}, 0u), "0000-00-00 00:00:00+00");
}

TEST(ValueFormat, EpochSecondsBecomeUtcParts) {
  auto text = [](int64_t s, uint32_t us, uint32_t fsp) {
    std::string out;
    AppendTimestamp(out, UtcFromEpoch(s, us), fsp);
    return out;
  };
  EXPECT_EQ(text(0, 0, 0), "0000-00-00 00:00:00+00") << "0 is the zero timestamp";
  EXPECT_EQ(text(1, 0, 0), "1970-01-01 00:00:01+00");
  EXPECT_EQ(text(951782400, 0, 0), "2000-02-29 00:00:00+00");
  EXPECT_EQ(text(1709251199, 999999, 6), "2024-02-29 23:59:59.999999+00");
  EXPECT_EQ(text(2147483647, 0, 0), "2038-01-19 03:14:07+00");
  EXPECT_EQ(text(4102444800, 0, 0), "2100-01-01 00:00:00+00");
  EXPECT_EQ(text(-86400, 0, 0), "1969-12-31 00:00:00+00");
}

TEST(ValueFormat, BytesAreHexWithEveryByteKept) {
  EXPECT_EQ(Text(AppendBytes, std::string_view("\x00\x5c\xff\x00", 4)), "\\x005cff00");
  EXPECT_EQ(Text(AppendBytes, std::string_view()), "\\x");
}

TEST(ValueFormat, BitsAreBoolForOneBitAndDigitsOtherwise) {
  EXPECT_EQ(Text(AppendBit, std::string_view("\x01", 1), 1u), "t");
  EXPECT_EQ(Text(AppendBit, std::string_view("\x00", 1), 1u), "f");
  EXPECT_EQ(Text(AppendBit, std::string_view("\x02\x05", 2), 10u), "1000000101");
  EXPECT_EQ(Text(AppendBit, std::string_view("\xff", 1), 8u), "11111111");
  EXPECT_EQ(Text(AppendBit, std::string_view("\x01", 1), 12u), "000000000001")
      << "missing leading bytes are zero";
  EXPECT_EQ(Text(AppendBit, std::string_view("\xff\xff", 2), 10u), "1111111111")
      << "bits above the width are ignored";
}

}  // namespace
}  // namespace faucet::mysql
