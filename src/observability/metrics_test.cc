#include "observability/metrics.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/process.h"
#include "testing/services.h"

namespace faucet::observability {
namespace {

TEST(Metrics, RendersEachKindInTheTextFormat) {
  Registry registry({0.1, 1});
  registry.GetCounter("faucet_x_total", "Things", {{"pipeline", "p"}}).Add(3);
  registry.GetGauge("faucet_y_bytes", "Bytes", {{"pipeline", "p"}, {"stage", "written"}}).Set(2.5);
  Histogram& h = registry.GetHistogram("faucet_z_seconds", "Time", {{"pipeline", "p"}});
  h.Observe(0.05);
  h.Observe(0.5);
  h.Observe(5);
  EXPECT_EQ(registry.Render(),
            "# HELP faucet_x_total Things\n"
            "# TYPE faucet_x_total counter\n"
            "faucet_x_total{pipeline=\"p\"} 3\n"
            "# HELP faucet_y_bytes Bytes\n"
            "# TYPE faucet_y_bytes gauge\n"
            "faucet_y_bytes{pipeline=\"p\",stage=\"written\"} 2.5\n"
            "# HELP faucet_z_seconds Time\n"
            "# TYPE faucet_z_seconds histogram\n"
            "faucet_z_seconds_bucket{pipeline=\"p\",le=\"0.1\"} 1\n"
            "faucet_z_seconds_bucket{pipeline=\"p\",le=\"1\"} 2\n"
            "faucet_z_seconds_bucket{pipeline=\"p\",le=\"+Inf\"} 3\n"
            "faucet_z_seconds_sum{pipeline=\"p\"} 5.55\n"
            "faucet_z_seconds_count{pipeline=\"p\"} 3\n");
}

TEST(Metrics, SameNameAndLabelsIsTheSameMetric) {
  Registry registry;
  Counter& a = registry.GetCounter("faucet_a_total", "A", {{"table", "t"}});
  Counter& b = registry.GetCounter("faucet_a_total", "A", {{"table", "t"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &registry.GetCounter("faucet_a_total", "A", {{"table", "u"}}));
}

TEST(Metrics, LabelValuesAreEscaped) {
  Registry registry;
  registry.GetGauge("faucet_g", "G", {{"table", "a\"b\\c\nd"}}).Set(1);
  EXPECT_NE(registry.Render().find("faucet_g{table=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos);
}

TEST(Metrics, CollectorsRunBeforeEachRender) {
  Registry registry;
  Gauge& g = registry.GetGauge("faucet_g", "G", {});
  int runs = 0;
  registry.OnCollect([&] { g.Set(++runs); });
  EXPECT_NE(registry.Render().find("faucet_g 1\n"), std::string::npos);
  EXPECT_NE(registry.Render().find("faucet_g 2\n"), std::string::npos);
}

// Prometheus' own linter accepts the exposition (names, units, help, format).
TEST(Metrics, PromtoolAcceptsTheExposition) {
  Registry registry;
  registry.GetCounter("faucet_changes_total", "Changes", {{"pipeline", "p"}, {"op", "insert"}})
      .Add(1);
  registry.GetGauge("faucet_lag_seconds", "Lag", {{"pipeline", "p"}, {"stage", "written"}}).Set(0);
  registry.GetHistogram("faucet_sink_write_seconds", "Write time", {{"pipeline", "p"}})
      .Observe(0.01);
  const std::string path = testing::TempDir("metrics") + "/metrics.txt";
  std::ofstream(path) << registry.Render();
  testing::ProcessResult r =
      testing::RunProcess({"/bin/sh", "-c", "promtool check metrics < '" + path + "'"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace faucet::observability
