#include "sources/postgres/pg_types.h"

#include <algorithm>
#include <iterator>

namespace faucet::postgres {
namespace {

// Builtin array types (pg_type.typcategory 'A', OID < 10000), sorted. int2vector (22) and
// oidvector (30) are left out: their text form is space-separated, not an array literal.
// clang-format off
constexpr uint32_t kBuiltinArrays[] = {
    143,  199,  210,  270,  271,  272,  273,  629,  651,  719,  775,  791,  1000, 1001, 1002,
    1003, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1015, 1016, 1017, 1018,
    1019, 1020, 1021, 1022, 1027, 1028, 1034, 1040, 1041, 1115, 1182, 1183, 1185, 1187, 1231,
    1263, 1270, 1561, 1563, 2201, 2207, 2208, 2209, 2210, 2211, 2949, 2951, 3221, 3643, 3644,
    3645, 3735, 3770, 3807, 3905, 3907, 3909, 3911, 3913, 3927, 4073, 4090, 4097, 4192, 5039,
    6150, 6151, 6152, 6153, 6155, 6157};
// clang-format on

}  // namespace

ValueType ValueTypeForOid(uint32_t oid) {
  // OIDs from the server's catalog (src/include/catalog/pg_type.dat); stable across versions.
  switch (oid) {
    case 16:
      return ValueType::kBool;
    case 17:
      return ValueType::kBytes;
    case 18:    // "char"
    case 19:    // name
    case 25:    // text
    case 1042:  // bpchar
    case 1043:  // varchar
      return ValueType::kText;
    case 20:  // int8
    case 21:  // int2
    case 23:  // int4
    case 26:  // oid
      return ValueType::kInt;
    case 700:  // float4
    case 701:  // float8
      return ValueType::kFloat;
    case 1700:
      return ValueType::kNumeric;
    case 114:   // json
    case 3802:  // jsonb
      return ValueType::kJson;
    case 1082:
      return ValueType::kDate;
    case 1083:  // time
    case 1266:  // timetz
      return ValueType::kTime;
    case 1114:
      return ValueType::kTimestamp;
    case 1184:
      return ValueType::kTimestampTz;
    case 1186:
      return ValueType::kInterval;
    case 2950:
      return ValueType::kUuid;
    default:
      break;
  }
  if (std::binary_search(std::begin(kBuiltinArrays), std::end(kBuiltinArrays), oid)) {
    return ValueType::kArray;
  }
  return ValueType::kOther;
}

}  // namespace faucet::postgres
