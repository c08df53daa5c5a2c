// The mysql-cdc source against a real MariaDB (ROW binlog, FULL images and metadata): what a
// change carries, where pages end, where a resume starts, and what is refused.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "sources/mysql/binlog_stream.h"
#include "sources/mysql/mysql_cdc_source.h"
#include "testing/read_pages.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::mysql {
namespace {

using namespace std::chrono_literals;

class MysqlCdcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string url = faucet::testing::RequireEnv("FAUCET_TEST_MYSQL_URL");
    Result<MysqlUrl> parts = ParseMysqlUrl(url);
    ASSERT_OK(parts);
    config_.endpoint = {url, *parts, {}};
    // A replica id no other test uses at the same time (the server ends the older of two).
    config_.server_id = static_cast<uint32_t>(
        1000 + std::hash<std::string>()(faucet::testing::UniqueName("server_id")) % 4'000'000'000u);
    config_.idle_timeout = 30s;
    config_.linger = 5ms;
    Result<ConnPtr> conn = Connect(config_.endpoint, "test");
    ASSERT_OK(conn);
    conn_ = std::move(*conn);
    table_ = faucet::testing::UniqueName("cdc");
    config_.include_tables = {parts->database + "." + table_};
    db_ = parts->database;
  }
  void TearDown() override {
    if (conn_) Exec("DROP TABLE IF EXISTS " + table_);
  }

  void Exec(const std::string& sql) { EXPECT_OK(mysql::Exec(conn_.get(), sql, sql)); }

  std::unique_ptr<MysqlCdcSource> Open(const std::optional<Bookmark>& start = std::nullopt) {
    auto source = std::make_unique<MysqlCdcSource>(config_);
    Status s = source->Open(start);
    EXPECT_OK(s);
    return s.ok() ? std::move(source) : nullptr;
  }

  // Pages until `n` changes arrived and a page with a bookmark closed them (or 20 s passed).
  std::vector<Page> Read(Source& source, size_t n) {
    return faucet::testing::ReadPages(
        source,
        [&](const std::vector<Page>& pages) {
          return faucet::testing::CountChanges(pages) >= n && !pages.empty() &&
                 pages.back().bookmark.has_value();
        },
        20s * faucet::testing::TimeScale());
  }

  static std::vector<Change> Changes(std::vector<Page>& pages) {
    std::vector<Change> out;
    for (Page& p : pages) {
      for (Change& c : p.changes) out.push_back(std::move(c));
    }
    return out;
  }

  MysqlCdcConfig config_;
  ConnPtr conn_;
  std::string table_;
  std::string db_;
};

std::string Text(const std::optional<Row>& row, size_t i) {
  if (!row || i >= row->size()) return "<none>";
  const Cell& c = (*row)[i];
  if (c.state == CellState::kNull) return "<null>";
  if (c.state == CellState::kUnchangedToast) return "<unchanged>";
  return c.text;
}

TEST_F(MysqlCdcTest, StreamsEachCommittedChangeWithItsTableAndPosition) {
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY, name VARCHAR(40), qty BIGINT UNSIGNED)");
  auto source = Open();
  ASSERT_TRUE(source);
  Exec("INSERT INTO " + table_ + " VALUES (1, 'a', 18446744073709551615), (2, 'b', 0)");
  Exec("UPDATE " + table_ + " SET name = 'é🙂' WHERE id = 1");
  Exec("DELETE FROM " + table_ + " WHERE id = 2");
  Exec("BEGIN");
  Exec("INSERT INTO " + table_ + " VALUES (3, NULL, 3)");
  Exec("ROLLBACK");  // never committed: never streamed
  std::vector<Page> pages = Read(*source, 4);
  std::vector<Change> changes = Changes(pages);
  ASSERT_EQ(changes.size(), 4u);
  const Relation& rel = *changes[0].relation;
  EXPECT_EQ(rel.schema, db_);
  EXPECT_EQ(rel.name, table_);
  ASSERT_EQ(rel.columns.size(), 3u);
  EXPECT_EQ(rel.columns[0].name, "id");
  EXPECT_TRUE(rel.columns[0].key);
  EXPECT_FALSE(rel.columns[1].key);
  EXPECT_EQ(rel.columns[2].type, ValueType::kInt);
  EXPECT_EQ(changes[0].op, ChangeOp::kInsert);
  EXPECT_EQ(Text(changes[0].after, 2), "18446744073709551615");
  EXPECT_EQ(changes[2].op, ChangeOp::kUpdate);
  EXPECT_EQ(Text(changes[2].before, 1), "a");
  EXPECT_EQ(Text(changes[2].after, 1), "é🙂");
  EXPECT_EQ(changes[3].op, ChangeOp::kDelete);
  EXPECT_EQ(Text(changes[3].before, 0), "2");
  EXPECT_GT(changes[0].commit_time_us, 0);
  // Each change names its transaction: the server_id that wrote it and the GTID the server
  // gave it (MariaDB "domain-server-seq", sequence numbers growing).
  Result<mysql::Rows> server_id = mysql::Fetch(conn_.get(), "SELECT @@server_id", "server_id");
  ASSERT_OK(server_id);
  // (No std::regex here: its first use races with the reader thread's in libstdc++'s
  // locale cache, which ThreadSanitizer reports.)
  std::vector<uint64_t> sequences;
  for (const Change& c : changes) {
    ASSERT_TRUE(c.txn);
    EXPECT_EQ(std::to_string(c.txn->server_id), *(*server_id)[0][0]);
    const std::string& gtid = c.txn->gtid;
    const size_t first = gtid.find('-'), second = gtid.find('-', first + 1);
    ASSERT_NE(second, std::string::npos) << gtid;
    EXPECT_EQ(gtid.substr(first + 1, second - first - 1), *(*server_id)[0][0]) << gtid;
    sequences.push_back(std::stoull(gtid.substr(second + 1)));
  }
  EXPECT_EQ(changes[0].txn, changes[1].txn);  // one INSERT of two rows: one transaction
  EXPECT_LT(sequences[1], sequences[2]);
  EXPECT_LT(sequences[2], sequences[3]);

  // Every change is covered by the last bookmark and by none before its own transaction's.
  std::optional<Bookmark> last;
  for (const Page& p : pages) {
    if (p.bookmark) last = p.bookmark;
  }
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->value.contains("file"));
  EXPECT_TRUE(last->value.contains("pos"));
  EXPECT_TRUE(last->value.contains("gtid")) << last->ToString();
  Result<Position> end = source->PositionOf(*last);
  ASSERT_OK(end);
  for (const Change& c : changes) {
    std::optional<Position> at = source->ChangePosition(c);
    ASSERT_TRUE(at);
    EXPECT_LT(*at, *end);
  }
  EXPECT_LT(*source->ChangePosition(changes[0]), *source->ChangePosition(changes[3]));
}

TEST_F(MysqlCdcTest, AResumeStartsJustAfterTheBookmark) {
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY)");
  std::optional<Bookmark> after_two;
  {
    auto source = Open();
    ASSERT_TRUE(source);
    Exec("INSERT INTO " + table_ + " VALUES (1)");
    Exec("INSERT INTO " + table_ + " VALUES (2)");
    std::vector<Page> pages = Read(*source, 2);
    ASSERT_EQ(faucet::testing::CountChanges(pages), 2u);
    after_two = pages.back().bookmark;
  }
  ASSERT_TRUE(after_two);
  Exec("INSERT INTO " + table_ + " VALUES (3)");
  Exec("INSERT INTO " + table_ + " VALUES (4)");
  auto source = Open(after_two);
  ASSERT_TRUE(source);
  std::vector<Page> pages = Read(*source, 2);
  std::vector<Change> changes = Changes(pages);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(Text(changes[0].after, 0), "3");
  EXPECT_EQ(Text(changes[1].after, 0), "4");
}

// A page waits its linger for more transactions only while events keep coming: once none has
// arrived for a moment, its complete transactions leave, however long the linger.
TEST_F(MysqlCdcTest, APageLeavesOnceTheStreamIsQuietNotAtItsLinger) {
  config_.linger = std::chrono::hours(1);
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY)");
  auto source = Open();
  ASSERT_TRUE(source);
  Exec("INSERT INTO " + table_ + " VALUES (1)");
  const auto start = std::chrono::steady_clock::now();
  std::vector<Page> pages = Read(*source, 1);
  EXPECT_EQ(faucet::testing::CountChanges(pages), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s * faucet::testing::TimeScale());
}

TEST_F(MysqlCdcTest, ATransactionLargerThanAPageGoesOutInChunksWithOneBookmark) {
  config_.batch_size = 100;
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY, pad VARCHAR(100))");
  auto source = Open();
  ASSERT_TRUE(source);
  Exec("INSERT INTO " + table_ +
       " SELECT seq, REPEAT('x', 100) FROM seq_1_to_5000");  // MariaDB's sequence engine
  std::vector<Page> pages = Read(*source, 5000);
  ASSERT_EQ(faucet::testing::CountChanges(pages), 5000u);
  // Other tests' transactions may give pages without a change before it.
  size_t with_bookmark = 0;
  for (const Page& p : pages) {
    EXPECT_LE(p.changes.size(), 100u);
    if (p.bookmark && !p.changes.empty()) ++with_bookmark;
  }
  EXPECT_EQ(with_bookmark, 1u);
  EXPECT_TRUE(pages.back().bookmark);
}

TEST_F(MysqlCdcTest, ACommitOfAnotherTableStillMovesTheBookmark) {
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY)");
  const std::string other = table_ + "_other";
  Exec("CREATE TABLE " + other + " (id INT PRIMARY KEY)");
  auto source = Open();
  ASSERT_TRUE(source);
  Exec("INSERT INTO " + other + " VALUES (1)");
  std::vector<Page> pages = faucet::testing::ReadPages(
      *source, [](const std::vector<Page>& p) { return !p.empty(); }, 20s);
  Exec("DROP TABLE " + other);
  ASSERT_FALSE(pages.empty());
  EXPECT_TRUE(pages[0].changes.empty());
  EXPECT_TRUE(pages[0].bookmark);
}

TEST_F(MysqlCdcTest, AColumnAddedWhileStreamingIsInTheChangesAfterIt) {
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY)");
  auto source = Open();
  ASSERT_TRUE(source);
  Exec("INSERT INTO " + table_ + " VALUES (1)");
  Exec("ALTER TABLE " + table_ + " ADD COLUMN note TEXT");
  Exec("INSERT INTO " + table_ + " VALUES (2, 'added')");
  std::vector<Page> pages = Read(*source, 2);
  std::vector<Change> changes = Changes(pages);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].relation->columns.size(), 1u);
  ASSERT_EQ(changes[1].relation->columns.size(), 2u);
  EXPECT_EQ(changes[1].relation->columns[1].name, "note");
  EXPECT_EQ(Text(changes[1].after, 1), "added");
}

TEST_F(MysqlCdcTest, APositionInAPurgedBinlogIsAResyncError) {
  MysqlCdcSource source(config_);
  Status s = source.Open(Bookmark{Json{{"file", "binlog.999999"}, {"pos", 4}}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("resync"), std::string::npos) << s.ToString();
  MysqlCdcSource bad(config_);
  Status damaged = bad.Open(Bookmark{Json{{"last_lsn", "0/1"}}});
  EXPECT_EQ(damaged.code(), StatusCode::kDataLoss) << damaged.ToString();
}

TEST_F(MysqlCdcTest, TwoReplicasWithOneServerIdAreAnErrorNamingIt) {
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY)");
  auto first = Open();
  ASSERT_TRUE(first);
  auto second = Open();  // the server ends the older dump of a server_id
  ASSERT_TRUE(second);
  Exec("INSERT INTO " + table_ + " VALUES (1)");
  Status error = Status::Ok();
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (error.ok() && std::chrono::steady_clock::now() < deadline) {
    Result<SourceEvent> e = first->Next(100ms);
    if (!e.ok()) error = e.status();
  }
  ASSERT_FALSE(error.ok());
  EXPECT_EQ(error.code(), StatusCode::kFailedPrecondition) << error.ToString();
  EXPECT_NE(error.message().find("server_id " + std::to_string(config_.server_id)),
            std::string::npos)
      << error.ToString();
  EXPECT_NE(error.message().find("give each its own"), std::string::npos) << error.ToString();
}

TEST_F(MysqlCdcTest, StartsFromAGtidPosition) {
  Exec("CREATE TABLE " + table_ + " (id INT PRIMARY KEY)");
  Exec("INSERT INTO " + table_ + " VALUES (1)");
  Result<Rows> gtid = Fetch(conn_.get(), "SELECT @@gtid_binlog_pos", "gtid");
  ASSERT_OK(gtid);
  Exec("INSERT INTO " + table_ + " VALUES (2)");
  config_.start_position.kind = MysqlStartPosition::Kind::kGtidSet;
  config_.start_position.gtid_set = (*gtid)[0][0].value_or("");
  auto source = Open();
  ASSERT_TRUE(source);
  std::vector<Page> pages = Read(*source, 1);
  std::vector<Change> changes = Changes(pages);
  ASSERT_GE(changes.size(), 1u);
  EXPECT_EQ(Text(changes[0].after, 0), "2");
  EXPECT_TRUE(pages.back().bookmark->value["file"].is_string());
}

}  // namespace
}  // namespace faucet::mysql
