// A slot the server invalidated (wal_status 'lost') is a typed resync error, never a silent
// restart from wherever the server can still decode. Invalidating needs a server-wide setting
// (max_slot_wal_keep_size), so this binary runs alone (RUN_SERIAL in postgres.cmake): any other
// test's lagging slot would be invalidated too.
#include <gtest/gtest.h>

#include "sources/postgres/doctor.h"
#include "sources/postgres/pg_test_support.h"
#include "sources/postgres/postgres_cdc_source.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using testing::TestDb;

TEST(PostgresSlotInvalidation, InvalidatedSlotNeedsAResync) {
  TestDb db;
  const std::string table = faucet::testing::UniqueName("inval_t");
  const std::string publication = faucet::testing::UniqueName("inval_pub");
  const std::string slot = faucet::testing::UniqueName("inval_slot");
  db.CreateTableAndPublication(table, "id int PRIMARY KEY, v text", publication);
  testing::SlotGuard guard(db.url(), slot);
  PostgresCdcConfig config = testing::TestCdcConfig(db.url(), slot, publication);
  Result<Bookmark> position = PostgresCdcSource(config).CapturePosition();
  ASSERT_OK(position);

  db.Exec("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'");
  db.Exec("SELECT pg_reload_conf()");
  for (int i = 0; i < 2; ++i) {
    db.Exec("INSERT INTO " + table + " SELECT g + " + std::to_string(i * 3000) +
            ", repeat('x', 1000) FROM generate_series(1, 3000) g");
    db.Exec("SELECT pg_switch_wal()");
  }
  db.Exec("CHECKPOINT");
  db.Exec("ALTER SYSTEM RESET max_slot_wal_keep_size");
  db.Exec("SELECT pg_reload_conf()");
  ASSERT_EQ(
      db.Scalar("SELECT wal_status FROM pg_replication_slots WHERE slot_name = '" + slot + "'"),
      "lost");

  PostgresCdcSource source(config);
  Status s = source.Open(*position);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("resync"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("lost"), std::string::npos) << s.message();
  // Without a bookmark too: the slot cannot deliver what it promised to keep.
  EXPECT_EQ(PostgresCdcSource(config).Open(std::nullopt).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(PostgresCdcSource(config).CapturePosition().status().code(),
            StatusCode::kFailedPrecondition);

  Result<DoctorReport> report = RunDoctor(config);
  ASSERT_OK(report);
  EXPECT_FALSE(report->ok()) << report->ToText();
}

}  // namespace
}  // namespace faucet::postgres
