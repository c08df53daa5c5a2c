#include "sources/mysql/mysql_types.h"

#include <algorithm>

namespace faucet::mysql {

ValueType ValueTypeOf(uint8_t type, bool binary, uint32_t bits) {
  switch (type) {
    case kTypeTiny:
    case kTypeShort:
    case kTypeLong:
    case kTypeLongLong:
    case kTypeInt24:
    case kTypeYear:
      return ValueType::kInt;
    case kTypeDecimal:
    case kTypeNewDecimal:
      return ValueType::kNumeric;
    case kTypeFloat:
    case kTypeDouble:
      return ValueType::kFloat;
    case kTypeDate:
    case kTypeNewDate:
      return ValueType::kDate;
    case kTypeTime:
    case kTypeTime2:
      return ValueType::kTime;
    case kTypeDateTime:
    case kTypeDateTime2:
      return ValueType::kTimestamp;
    case kTypeTimestamp:
    case kTypeTimestamp2:
      return ValueType::kTimestampTz;
    case kTypeVarchar:
    case kTypeVarString:
    case kTypeString:
    case kTypeTinyBlob:
    case kTypeMediumBlob:
    case kTypeLongBlob:
    case kTypeBlob:
      return binary ? ValueType::kBytes : ValueType::kText;
    case kTypeEnum:
    case kTypeSet:
      return ValueType::kText;
    case kTypeBit:
      return bits == 1 ? ValueType::kBool : ValueType::kOther;
    case kTypeJson:
      return ValueType::kJson;
    case kTypeGeometry:
      return ValueType::kBytes;
    default:
      return ValueType::kOther;
  }
}

uint32_t DeclaredWidth(uint8_t type, bool is_unsigned, bool binary, uint32_t max_bytes,
                       uint32_t bytes_per_char) {
  const uint32_t sign = is_unsigned ? 1 : 0;
  switch (type) {
    case kTypeTiny:
      return 8 + sign;
    case kTypeShort:
      return 16 + sign;
    case kTypeInt24:
      return 24 + sign;
    case kTypeLong:
      return 32 + sign;
    case kTypeLongLong:
      return 64 + sign;
    case kTypeYear:
      return 16;
    case kTypeFloat:
      return 32;
    case kTypeDouble:
      return 64;
    case kTypeVarchar:
    case kTypeVarString:
    case kTypeString:
      return binary ? 0 : max_bytes / std::max<uint32_t>(bytes_per_char, 1);
    default:
      return 0;
  }
}

bool IsNumeric(uint8_t type) {
  switch (type) {
    case kTypeTiny:
    case kTypeShort:
    case kTypeInt24:
    case kTypeLong:
    case kTypeLongLong:
    case kTypeFloat:
    case kTypeDouble:
    case kTypeDecimal:
    case kTypeNewDecimal:
      return true;
    default:
      return false;
  }
}

bool IsCharacter(uint8_t type) {
  switch (type) {
    case kTypeString:
    case kTypeVarString:
    case kTypeVarchar:
    case kTypeTinyBlob:
    case kTypeMediumBlob:
    case kTypeLongBlob:
    case kTypeBlob:
      return true;
    default:
      return false;
  }
}

}  // namespace faucet::mysql
