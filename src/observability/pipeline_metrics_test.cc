#include "observability/pipeline_metrics.h"

#include <gtest/gtest.h>

#include "testing/fakes.h"

namespace faucet::observability {
namespace {

using namespace std::chrono_literals;

// A page group commit wrote (several received pages as one) counts as all of them: the
// stages that hold it lag by nothing, the one that does not yet by the oldest commit's age.
TEST(PipelineMetrics, AGroupCommittedPageHoldsEveryPageItJoined) {
  Registry registry;
  testing::FakeSource source({});
  PipelineMetrics metrics(registry, source, {{"pipeline", "p"}});
  metrics.Opened();
  const int64_t committed_us = 1'700'000'000'000'000;
  for (int n = 1; n <= 3; ++n) {
    Page page = testing::MakePage(1, Json{{"n", n}});
    page.changes[0].commit_time_us = committed_us;
    metrics.Received(page);
  }
  const Page group = testing::MakePage(3, Json{{"n", 3}});
  metrics.Written(group, 3, 1ms);
  metrics.Flushed(group, 1ms);
  metrics.Refresh(LogStatus{}, committed_us + 5'000'000);
  auto lag = [&](const char* stage) {
    return registry.GetGauge("faucet_lag_seconds", "", {{"pipeline", "p"}, {"stage", stage}})
        .Value();
  };
  EXPECT_EQ(lag("written"), 0);
  EXPECT_EQ(lag("flushed"), 0);
  EXPECT_EQ(lag("persisted"), 5);
}

}  // namespace
}  // namespace faucet::observability
