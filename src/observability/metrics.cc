#include "observability/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace faucet::observability {
namespace {

std::string Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest round trip
  return ec == std::errc() ? std::string(buf, end) : "NaN";
}

// Backslash and newline escaped, and with `quotes` the double quote (a label value).
std::string Escape(const std::string& text, bool quotes) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// `{a="1",b="2"}` with `extra` appended (a histogram's le); "" without labels.
std::string LabelText(const Labels& labels, const std::pair<std::string, std::string>* extra) {
  if (labels.empty() && extra == nullptr) return "";
  std::string out = "{";
  auto add = [&out](const std::string& name, const std::string& value) {
    if (out.size() > 1) out += ',';
    out += name + "=\"" + EscapeLabelValue(value) + "\"";
  };
  for (const auto& [name, value] : labels) add(name, value);
  if (extra != nullptr) add(extra->first, extra->second);
  return out + "}";
}

}  // namespace

std::string EscapeLabelValue(const std::string& value) { return Escape(value, true); }

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::Observe(double v) {
  const size_t bucket =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  counts_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
}

std::vector<uint64_t> Histogram::Counts() const {
  std::vector<uint64_t> out(bounds_.size() + 1);
  for (size_t i = 0; i < out.size(); ++i) out[i] = counts_[i].load(std::memory_order_relaxed);
  return out;
}

std::vector<double> DefaultLatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

Registry::Family& Registry::FamilyOf(const std::string& name, const std::string& help, Kind kind) {
  auto [it, created] = families_.try_emplace(name);
  if (created) {
    it->second.kind = kind;
    it->second.help = help;
  }
  return it->second;
}

Counter& Registry::GetCounter(const std::string& name, const std::string& help,
                              const Labels& labels) {
  MutexLock lock(mu_);
  auto& slot = FamilyOf(name, help, Kind::kCounter).counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Registry::GetGauge(const std::string& name, const std::string& help, const Labels& labels) {
  MutexLock lock(mu_);
  auto& slot = FamilyOf(name, help, Kind::kGauge).gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Registry::GetHistogram(const std::string& name, const std::string& help,
                                  const Labels& labels) {
  MutexLock lock(mu_);
  auto& slot = FamilyOf(name, help, Kind::kHistogram).histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(latency_buckets_);
  return *slot;
}

void Registry::OnCollect(std::function<void()> collect) {
  MutexLock lock(collect_mu_);
  collectors_.push_back(std::move(collect));
}

std::string Registry::Render() {
  {
    MutexLock lock(collect_mu_);
    for (const auto& collect : collectors_) collect();
  }
  MutexLock lock(mu_);
  std::string out;
  for (const auto& [name, family] : families_) {
    if (family.counters.empty() && family.gauges.empty() && family.histograms.empty()) continue;
    const char* type = family.kind == Kind::kCounter ? "counter"
                       : family.kind == Kind::kGauge ? "gauge"
                                                     : "histogram";
    out += "# HELP " + name + " " + Escape(family.help, false) + "\n";
    out += "# TYPE " + name + " " + type + "\n";
    for (const auto& [labels, c] : family.counters) {
      out += name + LabelText(labels, nullptr) + " " + std::to_string(c->Value()) + "\n";
    }
    for (const auto& [labels, g] : family.gauges) {
      out += name + LabelText(labels, nullptr) + " " + Number(g->Value()) + "\n";
    }
    for (const auto& [labels, h] : family.histograms) {
      const std::vector<uint64_t> counts = h->Counts();
      uint64_t cumulative = 0;
      for (size_t i = 0; i < counts.size(); ++i) {
        cumulative += counts[i];
        const std::pair<std::string, std::string> le{
            "le", i < h->bounds().size() ? Number(h->bounds()[i]) : "+Inf"};
        out += name + "_bucket" + LabelText(labels, &le) + " " + std::to_string(cumulative) + "\n";
      }
      out += name + "_sum" + LabelText(labels, nullptr) + " " + Number(h->Sum()) + "\n";
      out += name + "_count" + LabelText(labels, nullptr) + " " + std::to_string(cumulative) + "\n";
    }
  }
  return out;
}

}  // namespace faucet::observability
