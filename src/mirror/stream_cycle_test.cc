// The router and acknowledgement logic of a stream cycle, with a fake stream and fake sinks:
// each change reaches its table only, a table skips what its start covers, and the stream is
// never acknowledged beyond what every table persisted or a floor needs.
#include "mirror/stream_cycle.h"

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "core/mutex.h"
#include "state/memory_state_store.h"
#include "testing/fakes.h"
#include "testing/status_matchers.h"

namespace faucet::mirror {
namespace {

using namespace std::chrono_literals;

Bookmark At(uint64_t p) { return Bookmark{Json{{"p", p}}}; }

RelationPtr Table(const std::string& name) {
  auto rel = std::make_shared<Relation>();
  rel->schema = "s";
  rel->name = name;
  rel->columns = {Column{"id", ValueType::kInt, 20, -1, true}};
  return rel;
}

// A change of table s.`table` in the transaction committed at `position`.
Change ChangeOf(const std::string& table, uint64_t position) {
  Change c;
  c.op = ChangeOp::kInsert;
  c.relation = Table(table);
  c.after = Row{Cell::Value(std::to_string(position))};
  c.commit_position = position;
  return c;
}

// A change stream of several tables: positions {"p": N}, ordered by N; a change's position is
// its commit_position. Records where it was opened and what it was acknowledged.
class FakeStream : public Source {
 public:
  explicit FakeStream(std::vector<Page> pages) : pages_(std::move(pages)) {}

  SourceCapabilities Capabilities() const override {
    SourceCapabilities caps;
    caps.routes_tables = true;
    return caps;
  }
  Status Open(const std::optional<Bookmark>& start) override {
    opened_at = start;
    return Status::Ok();
  }
  Result<SourceEvent> Next(std::chrono::milliseconds) override {
    SourceEvent event;
    if (next_ == pages_.size()) {
      event.kind = SourceEvent::Kind::kEnd;
      return event;
    }
    event.kind = SourceEvent::Kind::kPage;
    event.page = pages_[next_++];
    return event;
  }
  Status Acknowledge(const Bookmark& durable) override EXCLUDES(mu_) {
    MutexLock lock(mu_);
    acked_.push_back(durable.value["p"].get<uint64_t>());
    return Status::Ok();
  }
  Result<Position> PositionOf(const Bookmark& b) const override {
    if (!b.value.is_object() || !b.value["p"].is_number_unsigned()) {
      return DataLoss("not a position: " + b.ToString());
    }
    return Position{{b.value["p"].get<uint64_t>()}};
  }
  std::optional<Position> ChangePosition(const Change& c) const override {
    return Position{{c.commit_position}};
  }

  std::vector<uint64_t> Acked() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return acked_;
  }

  std::optional<Bookmark> opened_at;

 private:
  std::vector<Page> pages_;
  size_t next_ = 0;
  Mutex mu_;
  std::vector<uint64_t> acked_ GUARDED_BY(mu_);
};

class StreamCycleTest : public ::testing::Test {
 protected:
  // spdlog's registry is made on first use: here, not by two pipeline threads at once (the
  // faucet binary sets its logger up before any thread starts).
  void SetUp() override { spdlog::default_logger(); }

  // Table s.`name` streaming into its own FakeSink, from `start` persisted in the state.
  void AddTable(const std::string& name, std::optional<uint64_t> start) {
    CycleTable t;
    t.table = "s." + name;
    t.names = {"s." + name};
    auto sink = std::make_unique<testing::FakeSink>();
    sink->log = &calls_[name];  // the sink itself ends with the cycle
    if (name == failing_) sink->fail_write_at = 0;
    t.parts.sink = std::move(sink);
    t.options.state_key = "m::s." + name;
    if (start) {
      ASSERT_OK(state_.Put(t.options.state_key, At(*start).value));
    }
    tables_.push_back(std::move(t));
  }

  Result<CycleResult> Run(FakeStream& stream, const std::vector<CycleFloor>& floors = {}) {
    CycleOptions options;
    options.idle_flush = 0ms;
    options.on_unknown_table = [this](const std::string& name) { unknown_.push_back(name); };
    return RunStreamCycle(stream, state_, tables_, floors, options);
  }

  // Rows the table's sink was given ("write:<n>" calls).
  size_t Written(const std::string& name) {
    size_t rows = 0;
    for (const std::string& call : calls_[name]) {
      if (call.rfind("write:", 0) == 0) rows += std::stoul(call.substr(6));
    }
    return rows;
  }

  uint64_t Persisted(const std::string& name) {
    Result<std::optional<Json>> v = state_.Get("m::s." + name);
    EXPECT_OK(v);
    return v.ok() && *v ? (**v)["p"].get<uint64_t>() : 0;
  }

  MemoryStateStore state_;
  std::vector<CycleTable> tables_;
  std::map<std::string, std::vector<std::string>> calls_;  // each table's sink calls
  std::string failing_;  // the table whose sink fails its first write
  std::vector<std::string> unknown_;
};

TEST_F(StreamCycleTest, EachChangeReachesItsTableAndEveryTableEndsAtTheStreamsPosition) {
  AddTable("a", 1);
  AddTable("b", 1);
  FakeStream stream({Page{{ChangeOf("a", 2), ChangeOf("b", 2)}, At(3)},
                     Page{{ChangeOf("b", 4)}, At(5)},
                     Page{{ChangeOf("a", 6), ChangeOf("c", 6)}, At(7)}});
  Result<CycleResult> result = Run(stream);
  ASSERT_OK(result);
  EXPECT_OK(result->source);
  EXPECT_EQ(Written("a"), 2u);
  EXPECT_EQ(Written("b"), 2u);
  // Both persisted the last position, so the stream is acknowledged there.
  EXPECT_EQ(Persisted("a"), 7u);
  EXPECT_EQ(Persisted("b"), 7u);
  ASSERT_FALSE(stream.Acked().empty());
  EXPECT_EQ(stream.Acked().back(), 7u);
  EXPECT_EQ(unknown_, std::vector<std::string>{"s.c"});
}

TEST_F(StreamCycleTest, TheStreamOpensAtTheMinimumAndATableSkipsWhatItsStartCovers) {
  AddTable("a", 5);
  AddTable("b", 1);
  FakeStream stream({Page{{ChangeOf("a", 2), ChangeOf("b", 2)}, At(3)},
                     Page{{ChangeOf("a", 4)}, At(5)}, Page{{ChangeOf("a", 6)}, At(7)}});
  ASSERT_OK(Run(stream));
  ASSERT_TRUE(stream.opened_at.has_value());
  EXPECT_EQ(*stream.opened_at, At(1));
  EXPECT_EQ(Written("a"), 1u);  // only the change at 6
  EXPECT_EQ(Written("b"), 1u);
}

TEST_F(StreamCycleTest, AcknowledgementsNeverPassAFloorOrAFailedTable) {
  failing_ = "b";
  AddTable("a", 1);
  AddTable("b", 1);
  FakeStream stream(
      {Page{{ChangeOf("a", 2), ChangeOf("b", 2)}, At(3)}, Page{{ChangeOf("a", 4)}, At(5)}});
  Result<CycleResult> result = Run(stream, {CycleFloor{"s.joining", At(4)}});
  ASSERT_OK(result);
  // b failed alone; a went on to the end.
  EXPECT_FALSE(result->tables[1].status.ok());
  EXPECT_OK(result->tables[0].status);
  EXPECT_EQ(Persisted("a"), 5u);
  EXPECT_EQ(Persisted("b"), 1u);
  // b still needs the stream from 1: nothing beyond it is acknowledged.
  for (uint64_t acked : stream.Acked()) EXPECT_LE(acked, 1u);
}

TEST_F(StreamCycleTest, AFloorBelowEveryTableHoldsTheAcknowledgement) {
  AddTable("a", 3);
  FakeStream stream({Page{{ChangeOf("a", 4)}, At(5)}, Page{{ChangeOf("a", 6)}, At(7)}});
  ASSERT_OK(Run(stream, {CycleFloor{"s.joining", At(2)}}));
  EXPECT_EQ(*stream.opened_at, At(2));
  EXPECT_EQ(Persisted("a"), 7u);
  for (uint64_t acked : stream.Acked()) EXPECT_LE(acked, 2u);
}

TEST_F(StreamCycleTest, ATransactionsChunksGetTheirBookmarkEvenWhenTheLastChunkIsAnotherTables) {
  AddTable("a", 1);
  AddTable("b", 1);
  // One transaction at 2, cut in two chunks: a's changes first, then b's with the bookmark.
  FakeStream stream({Page{{ChangeOf("a", 2)}, std::nullopt}, Page{{ChangeOf("b", 2)}, At(3)}});
  ASSERT_OK(Run(stream));
  EXPECT_EQ(Persisted("a"), 3u);
  EXPECT_EQ(Persisted("b"), 3u);
}

}  // namespace
}  // namespace faucet::mirror
