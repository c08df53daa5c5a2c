// Metrics: counters, gauges and histograms with labels, rendered in the Prometheus text
// exposition format (version 0.0.4) for `GET /metrics`.
//
// A metric is created once (Registry::Counter etc., under a lock) and then updated through the
// returned reference with relaxed atomics only: the hot path never locks. References stay
// valid for the registry's lifetime. Names follow Prometheus conventions (`faucet_` prefix,
// base units, `_total` for counters); the registry does not enforce them, a test does
// (`promtool check metrics` on a rendered exposition).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/mutex.h"

namespace faucet::observability {

// Label name/value pairs, in the order they are rendered.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Cumulative buckets with upper bounds `bounds` (ascending; +Inf is implicit).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void Observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  // Per bucket (not cumulative), then the +Inf bucket; their total is the count.
  std::vector<uint64_t> Counts() const;
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;  // bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// Latency buckets in seconds (1 ms .. 10 s), the default of `observability.prometheus.buckets`.
std::vector<double> DefaultLatencyBuckets();

class Registry {
 public:
  explicit Registry(std::vector<double> latency_buckets = DefaultLatencyBuckets())
      : latency_buckets_(std::move(latency_buckets)) {}

  // The metric `name` with `labels`, created on first use. `help` is kept from the first call
  // of a name. REQUIRES: a name is always used with the same kind.
  Counter& GetCounter(const std::string& name, const std::string& help, const Labels& labels);
  Gauge& GetGauge(const std::string& name, const std::string& help, const Labels& labels);
  // With the registry's latency buckets.
  Histogram& GetHistogram(const std::string& name, const std::string& help, const Labels& labels);

  // Runs before each Render, to refresh gauges read from elsewhere (the source's head, a
  // mirror's tables). Runs on the scraping thread; must not call Render.
  void OnCollect(std::function<void()> collect);

  // Every family, sorted by name, series sorted by labels, in the text format.
  std::string Render();

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  struct Family {
    Kind kind;
    std::string help;
    std::map<Labels, std::unique_ptr<Counter>> counters;
    std::map<Labels, std::unique_ptr<Gauge>> gauges;
    std::map<Labels, std::unique_ptr<Histogram>> histograms;
  };
  Family& FamilyOf(const std::string& name, const std::string& help, Kind kind) REQUIRES(mu_);

  const std::vector<double> latency_buckets_;
  Mutex mu_;
  std::map<std::string, Family> families_ GUARDED_BY(mu_);
  Mutex collect_mu_;  // one scrape at a time runs the collectors
  std::vector<std::function<void()>> collectors_ GUARDED_BY(collect_mu_);
};

// A label value or help text escaped for the text format.
std::string EscapeLabelValue(const std::string& value);

}  // namespace faucet::observability
