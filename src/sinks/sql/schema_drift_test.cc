#include "sinks/sql/schema_drift.h"

#include <gtest/gtest.h>

namespace faucet::sql {
namespace {

using K = ValueType;

Column Pg(const std::string& name, ValueType type, uint32_t oid, int32_t mod = -1) {
  return Column{name, type, oid, mod, false};
}

TEST(SchemaDrift, SourceClassTakesPostgresWidths) {
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kInt, 21)), (TypeClass{K::kInt, 16}));
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kInt, 23)), (TypeClass{K::kInt, 32}));
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kInt, 20)), (TypeClass{K::kInt, 64}));
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kText, 1043, 24)), (TypeClass{K::kText, 20}));
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kText, 1043)), (TypeClass{K::kText, 0}));
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kFloat, 700)), (TypeClass{K::kFloat, 32}));
  // Without a Postgres OID the logical type decides, at its widest.
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kInt, 0)), (TypeClass{K::kInt, 64}));
  EXPECT_EQ(SourceClass(Pg("a", ValueType::kOther, 0)), (TypeClass{K::kOther, 0}));
  // A source without OIDs (MySQL) declares its width itself.
  Column unsigned_bigint = Pg("a", ValueType::kInt, 0);
  unsigned_bigint.width = 65;
  EXPECT_EQ(SourceClass(unsigned_bigint), (TypeClass{K::kInt, 65}));
  EXPECT_EQ(FitOf({K::kInt, 64}, SourceClass(unsigned_bigint)), Fit::kWiden);
  Column varchar = Pg("a", ValueType::kText, 0);
  varchar.width = 40;
  EXPECT_EQ(FitOf({K::kText, 40}, SourceClass(varchar)), Fit::kFits);
  // A type guessed from a JSON value (a number read back from Kafka) is no declaration.
  Column guessed = Pg("a", ValueType::kNumeric, 0);
  guessed.type_inferred = true;
  EXPECT_EQ(FitOf({K::kInt, 64}, SourceClass(guessed)), Fit::kFits);
  EXPECT_EQ(FitOf({K::kTimestampTz, 0}, SourceClass(guessed)), Fit::kFits);
}

TEST(SchemaDrift, FitOfJudgesWhatATypeHolds) {
  const TypeClass int32{K::kInt, 32}, int64{K::kInt, 64}, text{K::kText, 0},
      varchar20{K::kText, 20}, varchar50{K::kText, 50}, numeric{K::kNumeric, 0},
      float64{K::kFloat, 64}, json{K::kJson, 0}, ts{K::kTimestamp, 0}, tstz{K::kTimestampTz, 0};
  EXPECT_EQ(FitOf(int64, int32), Fit::kFits);
  EXPECT_EQ(FitOf(int32, int64), Fit::kWiden);
  EXPECT_EQ(FitOf(text, json), Fit::kFits) << "text holds every value's text form";
  EXPECT_EQ(FitOf(varchar50, varchar20), Fit::kFits);
  EXPECT_EQ(FitOf(varchar20, varchar50), Fit::kWiden);
  EXPECT_EQ(FitOf(varchar20, text), Fit::kWiden);
  EXPECT_EQ(FitOf(numeric, int64), Fit::kFits);
  EXPECT_EQ(FitOf(int32, numeric), Fit::kWiden);
  EXPECT_EQ(FitOf(float64, numeric), Fit::kWiden);
  EXPECT_EQ(FitOf(tstz, ts), Fit::kFits);
  EXPECT_EQ(FitOf(ts, tstz), Fit::kWiden);
  EXPECT_EQ(FitOf(json, text), Fit::kIncompatible);
  EXPECT_EQ(FitOf(int32, text), Fit::kIncompatible);
  EXPECT_EQ(FitOf(TypeClass{}, text), Fit::kFits) << "an unknown destination type is not judged";
  EXPECT_EQ(FitOf(int32, TypeClass{}), Fit::kFits) << "nor an unknown source type";
}

class DriftTest : public testing::Test {
 protected:
  DriftTest() {
    target_.display_name = "public.items";
    target_.columns = {{"id", "integer", {K::kInt, 32}, true},
                       {"qty", "integer", {K::kInt, 32}, false},
                       {"legacy", "text", {K::kText, 0}, true}};
    relation_.columns = {Pg("id", ValueType::kInt, 23), Pg("qty", ValueType::kInt, 20),
                         Pg("note", ValueType::kText, 25), Pg("__op", ValueType::kText, 25)};
  }

  std::vector<Drift> Diff() const {
    // id, qty map; note is missing; __op is the marker; legacy is not sent.
    return DiffSchema(relation_, {0, 1, -1, -2}, target_, TypeName);
  }
  DriftDecision DecideWith(SchemaPolicy policy) const {
    return Decide(Diff(), relation_, target_, policy, TypeName);
  }
  static std::string TypeName(const Column& c) { return c.type_oid == 20 ? "bigint" : "text"; }

  TargetTable target_;
  Relation relation_;
};

TEST_F(DriftTest, DiffNamesEveryDifferenceButTheMarker) {
  std::vector<Drift> drifts = Diff();
  ASSERT_EQ(drifts.size(), 3u);
  EXPECT_EQ(drifts[0].kind, Drift::kWiden);
  EXPECT_EQ(drifts[0].message,
            "column qty is integer in the destination, narrower than the "
            "source's bigint");
  EXPECT_EQ(drifts[1].kind, Drift::kMissing);
  EXPECT_EQ(drifts[1].message, "the source's column note (text) is not in the destination");
  EXPECT_EQ(drifts[2].kind, Drift::kUnfilled);
  EXPECT_EQ(drifts[2].target, 2);
}

TEST_F(DriftTest, WarnAndIgnoreOnlyReport) {
  for (OnDrift d : {OnDrift::kWarn, OnDrift::kIgnore}) {
    DriftDecision out = DecideWith({d});
    EXPECT_FALSE(out.error);
    EXPECT_TRUE(out.changes.empty());
    EXPECT_TRUE(out.quarantine.empty());
    ASSERT_EQ(out.warnings.size(), 3u);
    EXPECT_EQ(out.warnings[1], std::string("table public.items: the source's column note (text) "
                                           "is not in the destination (on_drift: ") +
                                   OnDriftName(d) + ")");
  }
}

TEST_F(DriftTest, FailStopsAtTheFirstDifference) {
  DriftDecision out = DecideWith({OnDrift::kFail});
  ASSERT_TRUE(out.error);
  EXPECT_EQ(out.error->code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(out.error->message(),
            "table public.items: column qty is integer in the destination, "
            "narrower than the source's bigint (on_drift: fail)");
}

TEST_F(DriftTest, QuarantineSelectsRowsByColumn) {
  DriftDecision out = DecideWith({OnDrift::kQuarantine});
  EXPECT_FALSE(out.error);
  ASSERT_EQ(out.quarantine.size(), 3u);
  EXPECT_EQ(out.quarantine[0].source, 1);
  EXPECT_EQ(out.quarantine[1].source, 2);
  EXPECT_EQ(out.quarantine[1].column, "note");
  EXPECT_EQ(out.quarantine[2].source, -1) << "an unfilled column refuses every inserted row";
  EXPECT_EQ(out.quarantine[2].column, "legacy");
}

TEST_F(DriftTest, EvolveAddsAndWidensAndFailsWhatItMayNotChange) {
  DriftDecision out = DecideWith({OnDrift::kEvolve});
  ASSERT_TRUE(out.error) << "legacy is unfilled and relax_nullability_on_missing is false";
  EXPECT_NE(out.error->message().find("relax_nullability_on_missing is false (on_drift: evolve, "
                                      "on_incompatible: fail)"),
            std::string::npos)
      << out.error->message();
  EXPECT_TRUE(out.changes.empty()) << "nothing is changed when the page fails";

  SchemaPolicy relax{OnDrift::kEvolve};
  relax.relax_nullability_on_missing = true;
  out = DecideWith(relax);
  EXPECT_FALSE(out.error);
  EXPECT_EQ(out.changes, (std::vector<SchemaChange>{{SchemaChange::kWidenColumn, "qty", "bigint"},
                                                    {SchemaChange::kAddColumn, "note", "text"},
                                                    {SchemaChange::kDropNotNull, "legacy", ""}}));
}

TEST_F(DriftTest, EvolveSendsTheRestToOnIncompatible) {
  SchemaPolicy policy{OnDrift::kEvolve};
  policy.allow_type_widening = false;
  policy.on_incompatible = OnIncompatible::kQuarantine;
  DriftDecision out = DecideWith(policy);
  EXPECT_FALSE(out.error);
  EXPECT_EQ(out.changes, (std::vector<SchemaChange>{{SchemaChange::kAddColumn, "note", "text"}}));
  ASSERT_EQ(out.quarantine.size(), 2u);
  EXPECT_EQ(out.quarantine[0].column, "qty");
  EXPECT_NE(out.quarantine[0].message.find("allow_type_widening is false"), std::string::npos);
  EXPECT_EQ(out.quarantine[1].column, "legacy");
}

TEST_F(DriftTest, NoDifferenceNoDecision) {
  relation_.columns = {Pg("id", ValueType::kInt, 23), Pg("legacy", ValueType::kText, 25)};
  std::vector<Drift> drifts = DiffSchema(relation_, {0, 2}, target_, TypeName);
  EXPECT_TRUE(drifts.empty());
  DriftDecision out = Decide(drifts, relation_, target_, {OnDrift::kFail}, TypeName);
  EXPECT_FALSE(out.error);
  EXPECT_TRUE(out.warnings.empty());
}

}  // namespace
}  // namespace faucet::sql
