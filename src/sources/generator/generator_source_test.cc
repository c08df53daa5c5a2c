#include "sources/generator/generator_source.h"

#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "testing/status_matchers.h"

namespace faucet {
namespace {

using std::chrono::milliseconds;

config::Block ConfigBlock(const std::string& yaml) {
  return config::Block(YAML::Load(yaml), std::make_shared<const std::string>("pipe.yaml"),
                       "source.config");
}

GeneratorOptions Options(std::optional<int64_t> count, int64_t batch_size,
                         std::optional<double> rate = std::nullopt) {
  GeneratorOptions o;
  o.count = count;
  o.batch_size = batch_size;
  o.rate = rate;
  return o;
}

// Pages until kEnd (at most `max_pages`), skipping kIdle.
std::vector<Page> Drain(GeneratorSource& source, int max_pages = 1000) {
  std::vector<Page> pages;
  while (static_cast<int>(pages.size()) < max_pages) {
    Result<SourceEvent> e = source.Next(milliseconds(100));
    EXPECT_OK(e);
    if (!e.ok() || e->kind == SourceEvent::Kind::kEnd) break;
    if (e->kind == SourceEvent::Kind::kPage) pages.push_back(std::move(e->page));
  }
  return pages;
}

std::vector<int64_t> Ids(const std::vector<Page>& pages) {
  std::vector<int64_t> ids;
  for (const Page& p : pages) {
    for (const Change& c : p.changes) ids.push_back(std::stoll(c.after->at(0).text));
  }
  return ids;
}

std::vector<int64_t> Range(int64_t first, int64_t last) {
  std::vector<int64_t> v;
  for (int64_t i = first; i <= last; ++i) v.push_back(i);
  return v;
}

TEST(GeneratorSource, RowsAreDeterministic) {
  GeneratorSource source(Options(2, 10));
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = Drain(source);
  ASSERT_EQ(pages.size(), 1u);
  const Change& first = pages[0].changes[0];
  EXPECT_EQ(first.op, ChangeOp::kRead);
  EXPECT_EQ(first.relation->schema, "public");
  EXPECT_EQ(first.relation->name, "generator");
  ASSERT_EQ(first.relation->columns.size(), 5u);
  EXPECT_EQ(first.relation->columns[2].type, ValueType::kNumeric);
  std::vector<std::string> texts;
  for (const Cell& c : *pages[0].changes[1].after) texts.push_back(c.text);
  EXPECT_EQ(texts,
            (std::vector<std::string>{"2", "name-2", "14.02", "t", "2026-01-01 00:00:02+00"}));
}

TEST(GeneratorSource, LaterIdsRollOverDaysAndAmounts) {
  GeneratorSource source(Options(std::nullopt, 1));
  ASSERT_OK(source.Open(Bookmark{Json{{"last_id", 86400 + 3600 + 60}}}));
  Result<SourceEvent> e = source.Next(milliseconds(0));
  ASSERT_OK(e);
  const Row& row = *e->page.changes[0].after;
  EXPECT_EQ(row[2].text, "30427.61");  // id 90061
  EXPECT_EQ(row[3].text, "f");
  EXPECT_EQ(row[4].text, "2026-01-02 01:01:01+00");
}

TEST(GeneratorSource, CountIsRespectedAcrossPages) {
  GeneratorSource source(Options(2500, 1000));
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = Drain(source);
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[0].changes.size(), 1000u);
  EXPECT_EQ(pages[2].changes.size(), 500u);
  EXPECT_EQ(Ids(pages), Range(1, 2500));
  EXPECT_EQ(pages[2].bookmark->value, (Json{{"last_id", 2500}}));
}

TEST(GeneratorSource, EachPageCarriesItsLastId) {
  GeneratorSource source(Options(25, 10));
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = Drain(source);
  ASSERT_EQ(pages.size(), 3u);
  EXPECT_EQ(pages[0].bookmark->ToString(), R"({"last_id":10})");
  EXPECT_EQ(pages[1].bookmark->ToString(), R"({"last_id":20})");
  EXPECT_EQ(pages[2].bookmark->ToString(), R"({"last_id":25})");
}

TEST(GeneratorSource, IdsContinueExactlyAfterTheResumeBookmark) {
  GeneratorSource first(Options(100, 30));
  ASSERT_OK(first.Open(std::nullopt));
  Result<SourceEvent> e = first.Next(milliseconds(0));
  ASSERT_OK(e);
  Bookmark bookmark = *e->page.bookmark;

  GeneratorSource resumed(Options(100, 30));
  ASSERT_OK(resumed.Open(bookmark));
  EXPECT_EQ(Ids(Drain(resumed)), Range(31, 100));
}

TEST(GeneratorSource, ResumingAtCountEndsAtOnce) {
  GeneratorSource source(Options(10, 5));
  ASSERT_OK(source.Open(Bookmark{Json{{"last_id", 10}}}));
  Result<SourceEvent> e = source.Next(milliseconds(0));
  ASSERT_OK(e);
  EXPECT_EQ(e->kind, SourceEvent::Kind::kEnd);
}

TEST(GeneratorSource, ZeroCountEndsAtOnce) {
  GeneratorSource source(Options(0, 5));
  ASSERT_OK(source.Open(std::nullopt));
  EXPECT_TRUE(Drain(source).empty());
}

TEST(GeneratorSource, WithoutCountItNeverEnds) {
  GeneratorSource source(Options(std::nullopt, 1000));
  ASSERT_OK(source.Open(std::nullopt));
  EXPECT_EQ(Drain(source, 50).size(), 50u);
}

TEST(GeneratorSource, BookmarkWithoutIntegerLastIdIsInvalid) {
  for (const Json& bad : {Json::object(), Json{{"last_id", "7"}}, Json{{"last_id", 1.5}},
                          Json{{"last_id", -1}}, Json{{"last_lsn", "0/1"}}, Json::array()}) {
    GeneratorSource source(Options(10, 5));
    Status st = source.Open(Bookmark{bad});
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad.dump();
    EXPECT_NE(st.message().find("last_id"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(bad.dump()), std::string::npos) << st.message();
  }
}

TEST(GeneratorSource, RateIsRespected) {
  GeneratorSource source(Options(2000, 1000, 10000));
  const auto start = std::chrono::steady_clock::now();
  ASSERT_OK(source.Open(std::nullopt));
  std::vector<Page> pages = Drain(source);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(Ids(pages), Range(1, 2000));
  EXPECT_GE(elapsed, milliseconds(150));
  EXPECT_LT(elapsed, milliseconds(2000));
}

TEST(GeneratorSource, SlowRateDeliversPartialPagesWithinTheWait) {
  GeneratorSource source(Options(std::nullopt, 1000, 100));
  ASSERT_OK(source.Open(std::nullopt));
  Result<SourceEvent> e = source.Next(milliseconds(200));
  ASSERT_OK(e);
  ASSERT_EQ(e->kind, SourceEvent::Kind::kPage);
  EXPECT_GE(e->page.changes.size(), 10u);
  EXPECT_LE(e->page.changes.size(), 30u);
}

TEST(GeneratorSource, NothingDueWithinTheWaitIsIdle) {
  GeneratorSource source(Options(std::nullopt, 1000, 1));
  ASSERT_OK(source.Open(std::nullopt));
  const auto start = std::chrono::steady_clock::now();
  Result<SourceEvent> e = source.Next(milliseconds(20));
  ASSERT_OK(e);
  EXPECT_EQ(e->kind, SourceEvent::Kind::kIdle);
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(20));
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(500));
}

TEST(GeneratorOptions, ReadsEveryKey) {
  config::Block cfg = ConfigBlock("{count: 5, rate: 2.5, batch_size: 7}");
  Result<GeneratorOptions> o = GeneratorOptions::FromConfig(cfg);
  ASSERT_OK(o);
  EXPECT_EQ(o->count, 5);
  EXPECT_EQ(o->rate, 2.5);
  EXPECT_EQ(o->batch_size, 7);
  EXPECT_TRUE(cfg.UnreadKeys().empty());
}

TEST(GeneratorOptions, DefaultsAreEndlessUnpacedThousandRowPages) {
  Result<GeneratorOptions> o = GeneratorOptions::FromConfig(ConfigBlock("{}"));
  ASSERT_OK(o);
  EXPECT_FALSE(o->count.has_value());
  EXPECT_FALSE(o->rate.has_value());
  EXPECT_EQ(o->batch_size, 1000);
}

TEST(MakeGeneratorSource, ConfigErrorsNameTheKey) {
  for (auto [yaml, key] : std::vector<std::pair<std::string, std::string>>{
           {"{count: -1}", "source.config.count"},
           {"{count: many}", "source.config.count"},
           {"{rate: 0}", "source.config.rate"},
           {"{rate: -5}", "source.config.rate"},
           {"{rate: fast}", "source.config.rate"},
           {"{batch_size: 0}", "source.config.batch_size"},
           {"{batch_size: 1000001}", "source.config.batch_size"},
       }) {
    Result<std::unique_ptr<Source>> source = MakeGeneratorSource(ConfigBlock(yaml));
    ASSERT_FALSE(source.ok()) << yaml;
    EXPECT_EQ(source.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(source.status().message().find("pipe.yaml:1:"), std::string::npos)
        << source.status().message();
    EXPECT_NE(source.status().message().find(key), std::string::npos) << source.status().message();
  }
}

}  // namespace
}  // namespace faucet
