// What a change carries, against a real server: every value's text exactly as Postgres prints
// it (its type's output function, i.e. a text-format SELECT; `::text` differs only for bool and
// char(n), which it renders 'true' and without padding), types mapped from their OIDs, unchanged
// TOAST kept distinct from NULL, old images, truncate, and a column added while streaming.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "sources/postgres/pg_test_support.h"
#include "sources/postgres/postgres_cdc_source.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::postgres {
namespace {

using namespace std::chrono_literals;
using testing::TestDb;

class PostgresCdcTypesTest : public testing::CdcTest {
 protected:
  void SetUp() override { Name("types"); }

  // Streams until `n` changes arrived (or 15 s passed).
  std::vector<Change> Read(size_t n) {
    PostgresCdcSource source(config_);
    Status s = source.Open(std::nullopt);
    EXPECT_OK(s);
    if (!s.ok()) return {};
    auto pages = testing::ReadPages(
        source, [&](auto& p) { return testing::CountChanges(p) >= n; }, 15s);
    std::vector<Change> out;
    for (Page& p : pages) {
      for (Change& c : p.changes) out.push_back(std::move(c));
    }
    return out;
  }
};

TEST_F(PostgresCdcTypesTest, ValuesArriveExactlyAsPostgresPrintsThem) {
  const std::string t = faucet::testing::UniqueName("types_t");
  const std::string mood = t + "_mood";
  const std::string posint = t + "_posint";
  db_.Exec("CREATE TYPE " + mood + " AS ENUM ('sad', 'ok', 'happy')");
  db_.Exec("CREATE DOMAIN " + posint + " AS int CHECK (VALUE > 0)");
  struct Col {
    std::string name, type;
    ValueType expected;
  };
  const std::vector<Col> cols = {
      {"i2", "int2", ValueType::kInt},
      {"i4", "int4", ValueType::kInt},
      {"i8", "int8", ValueType::kInt},
      {"n", "numeric", ValueType::kNumeric},
      {"f4", "float4", ValueType::kFloat},
      {"f8", "float8", ValueType::kFloat},
      {"tx", "text", ValueType::kText},
      {"vc", "varchar(40)", ValueType::kText},
      {"bp", "char(6)", ValueType::kText},
      {"by", "bytea", ValueType::kBytes},
      {"bo", "bool", ValueType::kBool},
      {"d", "date", ValueType::kDate},
      {"tm", "time", ValueType::kTime},
      {"ttz", "timetz", ValueType::kTime},
      {"ts", "timestamp", ValueType::kTimestamp},
      {"tstz", "timestamptz", ValueType::kTimestampTz},
      {"iv", "interval", ValueType::kInterval},
      {"u", "uuid", ValueType::kUuid},
      {"j", "json", ValueType::kJson},
      {"jb", "jsonb", ValueType::kJson},
      {"ai", "int[]", ValueType::kArray},
      {"at", "text[]", ValueType::kArray},
      {"e", mood, ValueType::kOther},
      {"dm", posint, ValueType::kOther},
  };
  std::string ddl = "id int PRIMARY KEY";
  for (const Col& c : cols) ddl += ", " + c.name + " " + c.type;
  db_.CreateTableAndPublication(t, ddl, publication_);
  CreateSlot();

  db_.Exec(
      "INSERT INTO " + t +
      " VALUES (1, -32768, -2147483648, 9223372036854775807, "
      "'12345678901234567890123456789.123456789012345678901234567890', 'NaN', 'Infinity', "
      "E'tab\\there\\nnewline \\\\ back ''single'' \"double\" h\\u00e9llo \\u2713 \\u65e5\\u672c', "
      "'varying ✓', 'ab', '\\x00ff10', true, '2024-02-29', '23:59:59.999999', "
      "'12:00:00+05:30', '1999-12-31 23:59:59.5', '2024-01-01 00:00:00+00', "
      "'1 year 2 mons 3 days 04:05:06.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', "
      "'{\"a\": [1, 2.50, \"x\"]}', '{\"b\": {\"c\": null}, \"a\": 1}', '{1,NULL,3}', "
      "'{\"with space\",\"quo\\\"te\",back\\\\slash,NULL}', 'happy', 42)");
  db_.Exec("INSERT INTO " + t + " (id, n, f4, f8) VALUES (2, 'NaN', '-Infinity', '-Infinity')");
  db_.Exec("INSERT INTO " + t +
           " (id, f4, f8, n) VALUES (3, 'NaN', 1.5e-300, "
           "'-0.000000000000000000000000000001')");

  std::vector<Change> changes = Read(3);
  ASSERT_EQ(changes.size(), 3u);
  const Relation& rel = *changes[0].relation;
  ASSERT_EQ(rel.columns.size(), cols.size() + 1);
  EXPECT_TRUE(rel.columns[0].key);
  EXPECT_EQ(rel.name, t);
  EXPECT_EQ(rel.schema, "public");
  for (size_t i = 0; i < cols.size(); ++i) {
    EXPECT_EQ(rel.columns[i + 1].name, cols[i].name);
    EXPECT_EQ(rel.columns[i + 1].type, cols[i].expected) << cols[i].type;
  }
  EXPECT_EQ(rel.columns[8].type_modifier, 44) << "varchar(40) has atttypmod 40 + 4";

  for (const Change& c : changes) {
    const Row& row = *c.after;
    const std::string id = row[0].text;
    for (size_t i = 0; i < cols.size(); ++i) {
      std::optional<std::string> expected =
          db_.Scalar("SELECT " + cols[i].name + " FROM " + t + " WHERE id = " + id);
      if (!expected) {
        EXPECT_EQ(row[i + 1].state, CellState::kNull) << cols[i].name << " of row " << id;
      } else {
        EXPECT_EQ(row[i + 1].state, CellState::kValue) << cols[i].name << " of row " << id;
        EXPECT_EQ(row[i + 1].text, *expected) << cols[i].name << " of row " << id;
      }
    }
  }
}

TEST_F(PostgresCdcTypesTest, ChangesCarryTheCommitPositionAndTime) {
  const std::string t = faucet::testing::UniqueName("types_t");
  db_.CreateTableAndPublication(t, "id int PRIMARY KEY", publication_);
  CreateSlot();
  const Lsn before = db_.CurrentWal();
  const int64_t now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  db_.Exec("BEGIN; INSERT INTO " + t + " VALUES (1), (2); COMMIT");
  std::vector<Change> changes = Read(2);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].commit_position, changes[1].commit_position);
  EXPECT_GT(changes[0].commit_position, before.value());
  EXPECT_EQ(changes[0].ordinal, 0u);
  EXPECT_EQ(changes[1].ordinal, 1u);
  EXPECT_NEAR(static_cast<double>(changes[0].commit_time_us), static_cast<double>(now_us), 60e6);
}

TEST_F(PostgresCdcTypesTest, UntouchedToastValueArrivesAsUnchangedToastAndTouchedInFull) {
  const std::string t = faucet::testing::UniqueName("toast_t");
  db_.CreateTableAndPublication(t, "id int PRIMARY KEY, big text, small int", publication_);
  CreateSlot();
  // Random hex does not compress below the TOAST threshold: the value is stored out of line.
  db_.Exec("INSERT INTO " + t +
           " SELECT 1, string_agg(md5(random()::text), ''), 1 "
           "FROM generate_series(1, 400)");
  db_.Exec("UPDATE " + t + " SET small = 2 WHERE id = 1");
  db_.Exec("UPDATE " + t + " SET big = big || 'tail', small = 3 WHERE id = 1");
  const std::string big = *db_.Scalar("SELECT big FROM " + t + " WHERE id = 1");
  ASSERT_GT(big.size(), 8000u);
  ASSERT_EQ(*db_.Scalar("SELECT pg_column_size(big) > 8000 FROM " + t), "t");

  std::vector<Change> changes = Read(3);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ((*changes[0].after)[1].text.size(), big.size() - 4);
  const Row& untouched = *changes[1].after;
  EXPECT_EQ(untouched[1].state, CellState::kUnchangedToast);
  EXPECT_EQ(untouched[2].text, "2");
  const Row& touched = *changes[2].after;
  EXPECT_EQ(touched[1].state, CellState::kValue);
  EXPECT_EQ(touched[1].text, big);
}

TEST_F(PostgresCdcTypesTest, OldImagesFollowTheReplicaIdentity) {
  const std::string t = faucet::testing::UniqueName("ident_t");
  const std::string full = faucet::testing::UniqueName("ident_full");
  db_.Exec("CREATE TABLE " + t + " (id int PRIMARY KEY, v text)");
  db_.Exec("CREATE TABLE " + full + " (id int, v text)");
  db_.Exec("ALTER TABLE " + full + " REPLICA IDENTITY FULL");
  db_.Exec("CREATE PUBLICATION " + publication_ + " FOR TABLE " + t + ", " + full);
  CreateSlot();
  db_.Exec("INSERT INTO " + t + " VALUES (1, 'a')");
  db_.Exec("UPDATE " + t + " SET v = 'b' WHERE id = 1");  // key unchanged: no old image
  db_.Exec("UPDATE " + t + " SET id = 2 WHERE id = 1");   // key changed: old key
  db_.Exec("DELETE FROM " + t + " WHERE id = 2");         // old key
  db_.Exec("INSERT INTO " + full + " VALUES (1, 'a')");
  db_.Exec("UPDATE " + full + " SET v = 'b'");  // full old row
  db_.Exec("DELETE FROM " + full);              // full old row
  std::vector<Change> c = Read(7);
  ASSERT_EQ(c.size(), 7u);
  EXPECT_FALSE(c[1].before.has_value());
  ASSERT_TRUE(c[2].before.has_value());
  EXPECT_EQ((*c[2].before)[0].text, "1");
  EXPECT_EQ((*c[2].before)[1].state, CellState::kNull);
  EXPECT_EQ(c[3].op, ChangeOp::kDelete);
  EXPECT_EQ((*c[3].before)[0].text, "2");
  EXPECT_EQ((*c[5].before)[1].text, "a");
  EXPECT_EQ((*c[5].after)[1].text, "b");
  EXPECT_EQ((*c[6].before)[1].text, "b");
}

TEST_F(PostgresCdcTypesTest, TruncateYieldsOneChangePerTable) {
  const std::string a = faucet::testing::UniqueName("trunc_a");
  const std::string b = faucet::testing::UniqueName("trunc_b");
  db_.Exec("CREATE TABLE " + a + " (id int PRIMARY KEY)");
  db_.Exec("CREATE TABLE " + b + " (id int PRIMARY KEY)");
  db_.Exec("CREATE PUBLICATION " + publication_ + " FOR TABLE " + a + ", " + b);
  CreateSlot();
  db_.Exec("INSERT INTO " + a + " VALUES (1)");
  db_.Exec("TRUNCATE " + a + ", " + b);
  std::vector<Change> c = Read(3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].op, ChangeOp::kTruncate);
  EXPECT_EQ(c[2].op, ChangeOp::kTruncate);
  EXPECT_EQ(c[1].commit_position, c[2].commit_position);
  std::set<std::string> names = {c[1].relation->name, c[2].relation->name};
  EXPECT_EQ(names, (std::set<std::string>{a, b}));
  EXPECT_FALSE(c[1].before.has_value());
  EXPECT_FALSE(c[1].after.has_value());
}

TEST_F(PostgresCdcTypesTest, ColumnAddedMidStreamGivesANewRelationOnlyToLaterChanges) {
  const std::string t = faucet::testing::UniqueName("alter_t");
  db_.CreateTableAndPublication(t, "id int PRIMARY KEY, v text", publication_);
  CreateSlot();
  db_.Exec("INSERT INTO " + t + " VALUES (1, 'a')");
  db_.Exec("ALTER TABLE " + t + " ADD COLUMN qty int DEFAULT 7");
  db_.Exec("INSERT INTO " + t + " VALUES (2, 'b')");
  db_.Exec("UPDATE " + t + " SET qty = 8 WHERE id = 1");
  std::vector<Change> c = Read(3);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].relation->columns.size(), 2u);
  EXPECT_EQ(c[0].after->size(), 2u);
  ASSERT_EQ(c[1].relation->columns.size(), 3u);
  EXPECT_EQ(c[1].relation->columns[2].name, "qty");
  EXPECT_EQ((*c[1].after)[2].text, "7");
  EXPECT_EQ((*c[2].after)[2].text, "8");
  EXPECT_NE(c[0].relation.get(), c[1].relation.get());
}

}  // namespace
}  // namespace faucet::postgres
