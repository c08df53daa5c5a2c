// The multi-table marker (its version-2 JSON, both ways), the phase transitions, and the text
// of `faucet mirror status` for many tables.
#include "mirror/table_states.h"

#include <gtest/gtest.h>

#include "mirror/multi_status.h"
#include "testing/status_matchers.h"

namespace faucet::mirror {
namespace {

constexpr int64_t kNow = 1'764'626'400'123;  // 2025-12-01T22:00:00.123Z

TEST(Rfc3339, RoundTripsMilliseconds) {
  EXPECT_EQ(Rfc3339(kNow), "2025-12-01T22:00:00.123Z");
  EXPECT_EQ(ParseRfc3339(Rfc3339(kNow)), kNow);
  EXPECT_EQ(ParseRfc3339("2025-12-01T22:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseRfc3339("2025-12-01T22:00:00.123Zx"), std::nullopt);
}

TEST(Marker, RoundTripsEveryField) {
  Marker m;
  TableState& t = m.tables["shop.orders"];
  t.phase = TablePhase::kPaused;
  t.since_ms = kNow;
  t.position = Bookmark{Json{{"last_lsn", "0/16B3748"}}};
  t.snapshot = {kNow - 5000, kNow - 1000, 42, 0, 0, 2, "9f3c"};
  t.changes = 1234567;
  t.last_applied_ms = kNow - 10;
  t.last_commit_ms = kNow - 20;
  t.behind_since_ms = kNow - 15;
  t.consecutive_failures = 3;
  t.last_error = "boom";
  t.key = {"order_id"};
  t.write_mode = "upsert";
  t.id = "shop.orders";
  t.estimated_rows = 40;
  t.resync_required = "stale";
  m.discovered_ms = kNow - 7;
  m.updated_ms = kNow;
  Json json = m.ToJson();
  EXPECT_EQ(json["version"], 2);
  EXPECT_EQ(json["tables"]["shop.orders"]["phase"], "paused");
  EXPECT_EQ(json["tables"]["shop.orders"]["since"], "2025-12-01T22:00:00.123Z");
  Result<Marker> back = Marker::FromJson(json, "k");
  ASSERT_OK(back);
  EXPECT_EQ(back->ToJson(), json);
}

TEST(Marker, ASingleTableMarkerIsRefusedWithTheReferencesText) {
  Result<Marker> m = Marker::FromJson(
      Json{{"phase", "cdc"}, {"snapshot_done", true}, {"position", {{"last_lsn", "0/1"}}}}, "k");
  EXPECT_EQ(m.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(m.status().message().find("holds a single-table marker; a multi-table mirror "
                                      "(`mirror.tables`) needs its own `name:`"),
            std::string::npos)
      << m.status().message();
}

TEST(Marker, AnythingElseIsDataLossNamingTheKey) {
  for (const Json& bad : {Json(3), Json{{"version", 1}}, Json{{"version", 2}, {"tables", 1}},
                          Json{{"version", 2}, {"tables", {{"t", {{"phase", "gone"}}}}}}}) {
    Result<Marker> m = Marker::FromJson(bad, "shop::__replication__");
    EXPECT_EQ(m.status().code(), StatusCode::kDataLoss) << bad.dump();
    EXPECT_NE(m.status().message().find("shop::__replication__"), std::string::npos);
  }
}

TEST(Transitions, ASnapshotStartsAtItsJoinPointAndCountsAttempts) {
  TableState t;
  StartSnapshot(t, Bookmark{Json{{"p", 1}}}, "first", kNow);
  StartSnapshot(t, Bookmark{Json{{"p", 2}}}, "second", kNow + 1);
  EXPECT_EQ(t.phase, TablePhase::kSnapshotting);
  EXPECT_EQ(t.snapshot.attempts, 2);
  EXPECT_EQ(t.snapshot.id, "second");
  EXPECT_EQ(t.position->value["p"], 2);
  FinishSnapshot(t, kNow + 2);
  EXPECT_EQ(t.phase, TablePhase::kActive);
  EXPECT_EQ(t.snapshot.finished_ms, kNow + 2);
}

TEST(Transitions, ATableIsPausedAtMaxFailuresInARowAndZeroActsAsOne) {
  TableState t;
  t.phase = TablePhase::kActive;
  EXPECT_FALSE(RecordFailure(t, "one", 3, kNow));
  RecordSuccess(t);
  EXPECT_FALSE(RecordFailure(t, "one", 3, kNow));
  EXPECT_FALSE(RecordFailure(t, "two", 3, kNow));
  EXPECT_TRUE(RecordFailure(t, "three", 3, kNow + 5));
  EXPECT_EQ(t.phase, TablePhase::kPaused);
  EXPECT_EQ(t.since_ms, kNow + 5);
  EXPECT_EQ(t.last_error, "three");

  TableState u;
  EXPECT_TRUE(RecordFailure(u, "x", 0, kNow));
}

TEST(Transitions, TheErrorIsRedactedAndCut) {
  TableState t;
  RecordFailure(t, "cannot connect to postgres://app:s3cret@db/x " + std::string(1000, 'z'), 5,
                kNow);
  EXPECT_EQ(t.last_error.find("s3cret"), std::string::npos) << t.last_error;
  EXPECT_EQ(t.last_error.size(), 500u);
}

TEST(Transitions, APausedTableIsRetriedAfterItsDelayAndNeverWithZero) {
  TableState t;
  RecordFailure(t, "x", 1, kNow);
  EXPECT_FALSE(RetryDue(t, 300, kNow + 299'999));
  EXPECT_TRUE(RetryDue(t, 300, kNow + 300'000));
  EXPECT_FALSE(RetryDue(t, 0, kNow + 1'000'000'000));
}

TEST(FormatMultiStatus, TheReferencesTableShape) {
  Json status = {{"name", "shop"},
                 {"summary",
                  {{"tables", 3},
                   {"by_phase", {{"active", 2}, {"refused", 1}}},
                   {"lagging", 1},
                   {"resync_required", 1}}},
                 {"tables",
                  {{{"table", "shop.orders"},
                    {"phase", "active"},
                    {"snapshot", {{"percent", 100.0}, {"rows", 10}}},
                    {"changes", 1204511},
                    {"lag_secs", 3},
                    {"lagging", false},
                    {"last_error", nullptr}},
                   {{"table", "shop.lines"},
                    {"phase", "active"},
                    {"snapshot", {{"percent", nullptr}, {"rows", 7}}},
                    {"changes", 0},
                    {"lag_secs", 400},
                    {"lagging", true},
                    {"last_error", nullptr},
                    {"resync_required", "stale rows may remain"}},
                   {{"table", "shop.logs"},
                    {"phase", "refused"},
                    {"snapshot", {{"percent", nullptr}, {"rows", 0}}},
                    {"changes", 0},
                    {"lag_secs", nullptr},
                    {"lagging", false},
                    {"last_error", "no primary key"}}}}};
  EXPECT_EQ(FormatMultiStatus(status),
            "mirror shop (3 tables: 2 active, 1 refused, 1 lagging)\n"
            "  ! shop.lines: stale rows may remain\n"
            "  TABLE        PHASE          SNAPSHOT     CHANGES     LAG  NOTE\n"
            "  shop.orders  active             100%   1,204,511      3s\n"
            "  shop.lines   active           7 rows           0      6m  resync required; "
            "lagging\n"
            "  shop.logs    refused               -           0       -  no primary key\n");
}

}  // namespace
}  // namespace faucet::mirror
