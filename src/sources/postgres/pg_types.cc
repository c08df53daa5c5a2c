#include "sources/postgres/pg_types.h"

namespace faucet::postgres {

ValueType ValueTypeForOid(uint32_t oid) {
  // OIDs from the server's catalog (src/include/catalog/pg_type.dat); stable across versions.
  switch (oid) {
    case 16: return ValueType::kBool;
    case 17: return ValueType::kBytes;
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
    case 700:
    case 701:
      return ValueType::kFloat;
    case 1700: return ValueType::kNumeric;
    case 114:   // json
    case 3802:  // jsonb
      return ValueType::kJson;
    case 1082: return ValueType::kDate;
    case 1083:  // time
    case 1266:  // timetz
      return ValueType::kTime;
    case 1114: return ValueType::kTimestamp;
    case 1184: return ValueType::kTimestampTz;
    case 1186: return ValueType::kInterval;
    case 2950: return ValueType::kUuid;
    // Builtin array types (typcategory 'A'). int2vector (22) and oidvector (30) are left out:
    // their text form is space-separated, not an array literal.
    case 143: case 199: case 210: case 270: case 271: case 272: case 273: case 629: case 651:
    case 719: case 775: case 791: case 1000: case 1001: case 1002: case 1003: case 1005:
    case 1006: case 1007: case 1008: case 1009: case 1010: case 1011: case 1012: case 1013:
    case 1014: case 1015: case 1016: case 1017: case 1018: case 1019: case 1020: case 1021:
    case 1022: case 1027: case 1028: case 1034: case 1040: case 1041: case 1115: case 1182:
    case 1183: case 1185: case 1187: case 1231: case 1263: case 1270: case 1561: case 1563:
    case 2201: case 2207: case 2208: case 2209: case 2210: case 2211: case 2949: case 2951:
    case 3221: case 3643: case 3644: case 3645: case 3735: case 3770: case 3807: case 3905:
    case 3907: case 3909: case 3911: case 3913: case 3927: case 4073: case 4090: case 4097:
    case 4192: case 5039: case 6150: case 6151: case 6152: case 6153: case 6155: case 6157:
      return ValueType::kArray;
    default:
      return ValueType::kOther;
  }
}

}  // namespace faucet::postgres
