#include "sources/generator/generator_source.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

namespace faucet {
namespace {

using Clock = std::chrono::steady_clock;

// Type OIDs are Postgres's, so that a SQL sink can create the table with the right types.
RelationPtr GeneratorRelation() {
  auto r = std::make_shared<Relation>();
  r->schema = "public";
  r->name = "generator";
  r->columns = {
      {"id", ValueType::kInt, 20, -1, true},          // int8
      {"name", ValueType::kText, 25},                 // text
      {"amount", ValueType::kNumeric, 1700},          // numeric
      {"active", ValueType::kBool, 16},               // bool
      {"created_at", ValueType::kTimestampTz, 1184},  // timestamptz
  };
  return r;
}

// Postgres timestamptz text output (DateStyle ISO, TimeZone UTC) of 2026-01-01 00:00:00+00
// plus `id` seconds.
std::string CreatedAt(int64_t id) {
  using namespace std::chrono;
  constexpr sys_days kEpoch = year(2026) / January / 1;
  const sys_seconds t = kEpoch + seconds(id);
  const sys_days day = floor<days>(t);
  const year_month_day ymd(day);
  const hh_mm_ss<seconds> hms(t - day);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02d:%02d:%02d+00", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

Row RowOf(int64_t id) {
  char amount[32];
  std::snprintf(amount, sizeof amount, "%lld.%02lld",
                static_cast<long long>(id % 100000 * 7 % 100000), static_cast<long long>(id % 100));
  return Row{
      Cell::Value(std::to_string(id)),
      Cell::Value("name-" + std::to_string(id)),
      Cell::Value(amount),
      Cell::Value(id % 2 == 0 ? "t" : "f"),
      Cell::Value(CreatedAt(id)),
  };
}

}  // namespace

Result<GeneratorOptions> GeneratorOptions::FromConfig(const config::Block& cfg) {
  GeneratorOptions o;
  ASSIGN_OR_RETURN(o.count, cfg.OptionalInt("count", 0));
  // -1 stands for absent: the getter rejects negative values the user wrote.
  ASSIGN_OR_RETURN(double rate, cfg.Double("rate", -1, 0, 1e9));
  if (rate == 0) return cfg.Error("rate", "expected a number of rows per second > 0, got 0");
  if (rate > 0) o.rate = rate;
  ASSIGN_OR_RETURN(o.batch_size, cfg.Int("batch_size", 1000, 1, 1000000));
  return o;
}

GeneratorSource::GeneratorSource(const GeneratorOptions& options)
    : options_(options), relation_(GeneratorRelation()) {}

Status GeneratorSource::Open(const std::optional<Bookmark>& start) {
  next_id_ = 1;
  if (start) {
    const Json& v = start->value;
    if (!v.is_object() || !v.contains("last_id") || !v.at("last_id").is_number_integer() ||
        v.at("last_id").get<int64_t>() < 0) {
      return InvalidArgument("generator: bookmark " + start->ToString() +
                             " has no integer last_id >= 0");
    }
    next_id_ = v.at("last_id").get<int64_t>() + 1;
  }
  emitted_ = 0;
  opened_at_ = Clock::now();
  return Status::Ok();
}

Page GeneratorSource::MakePage(int64_t rows) {
  Page page;
  page.changes.reserve(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i, ++next_id_) {
    Change c;
    c.op = ChangeOp::kRead;
    c.relation = relation_;
    c.after = RowOf(next_id_);
    page.changes.push_back(std::move(c));
  }
  emitted_ += rows;
  page.bookmark = Bookmark{Json{{"last_id", next_id_ - 1}}};
  return page;
}

Result<SourceEvent> GeneratorSource::Next(std::chrono::milliseconds wait) {
  int64_t rows = options_.batch_size;
  if (options_.count) {
    const int64_t left = *options_.count - next_id_ + 1;
    if (left <= 0) return SourceEvent{SourceEvent::Kind::kEnd, {}};
    rows = std::min(rows, left);
  }
  if (options_.rate) {
    const double rate = *options_.rate;
    const Clock::time_point deadline = Clock::now() + wait;
    const Clock::time_point full_page_due =
        opened_at_ + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>((emitted_ + rows) / rate));
    std::this_thread::sleep_until(std::min(full_page_due, deadline));
    const Clock::time_point now = Clock::now();
    if (now < full_page_due) {
      const double elapsed = std::chrono::duration<double>(now - opened_at_).count();
      rows = std::min(rows, static_cast<int64_t>(elapsed * rate) - emitted_);
      if (rows <= 0) return SourceEvent{SourceEvent::Kind::kIdle, {}};
    }
  }
  return SourceEvent{SourceEvent::Kind::kPage, MakePage(rows)};
}

Result<std::unique_ptr<Source>> MakeGeneratorSource(const config::Block& cfg) {
  ASSIGN_OR_RETURN(GeneratorOptions options, GeneratorOptions::FromConfig(cfg));
  return std::unique_ptr<Source>(std::make_unique<GeneratorSource>(options));
}

}  // namespace faucet
