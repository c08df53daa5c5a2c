#include "sources/postgres/pg_types.h"

#include <gtest/gtest.h>

namespace faucet::postgres {
namespace {

TEST(PgTypes, BuiltinScalarsMapToTheirValueType) {
  EXPECT_EQ(ValueTypeForOid(16), ValueType::kBool);
  EXPECT_EQ(ValueTypeForOid(21), ValueType::kInt);
  EXPECT_EQ(ValueTypeForOid(20), ValueType::kInt);
  EXPECT_EQ(ValueTypeForOid(26), ValueType::kInt);
  EXPECT_EQ(ValueTypeForOid(701), ValueType::kFloat);
  EXPECT_EQ(ValueTypeForOid(1700), ValueType::kNumeric);
  EXPECT_EQ(ValueTypeForOid(1043), ValueType::kText);
  EXPECT_EQ(ValueTypeForOid(19), ValueType::kText);
  EXPECT_EQ(ValueTypeForOid(17), ValueType::kBytes);
  EXPECT_EQ(ValueTypeForOid(3802), ValueType::kJson);
  EXPECT_EQ(ValueTypeForOid(1266), ValueType::kTime);
  EXPECT_EQ(ValueTypeForOid(1184), ValueType::kTimestampTz);
  EXPECT_EQ(ValueTypeForOid(2950), ValueType::kUuid);
}

TEST(PgTypes, BuiltinArraysAreArraysButVectorTypesAreNot) {
  for (uint32_t oid : {143u, 1000u, 1007u, 1009u, 1231u, 3807u, 6157u}) {
    EXPECT_EQ(ValueTypeForOid(oid), ValueType::kArray) << oid;
  }
  EXPECT_EQ(ValueTypeForOid(22), ValueType::kOther);  // int2vector: "1 2 3"
  EXPECT_EQ(ValueTypeForOid(30), ValueType::kOther);  // oidvector
}

TEST(PgTypes, UserTypesAreOther) {
  EXPECT_EQ(ValueTypeForOid(16385), ValueType::kOther);  // an enum, a domain, ...
  EXPECT_EQ(ValueTypeForOid(0), ValueType::kOther);
}

}  // namespace
}  // namespace faucet::postgres
