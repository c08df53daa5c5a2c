// The postgres sink against the PostgreSQL of scripts/services.sh: the backend for the shared
// scenarios, type fidelity Postgres -> Postgres, the one-statement keyed page and the bulk load.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include "sinks/postgres/postgres_sink.h"
#include "sql_sink_test.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet::sqltest {
namespace {

class PostgresBackend : public Backend {
 public:
  PostgresBackend() : url_(testing::RequireEnv("FAUCET_TEST_PG_URL")) {
    conn_ = PQconnectdb(url_.c_str());
    EXPECT_EQ(PQstatus(conn_), CONNECTION_OK) << PQerrorMessage(conn_);
  }
  ~PostgresBackend() override { PQfinish(conn_); }

  std::string Name() const override { return "postgres"; }

  void Exec(const std::string& sql) override {
    PGresult* r = PQexec(conn_, sql.c_str());
    ExecStatusType st = PQresultStatus(r);
    EXPECT_TRUE(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        << sql << ": " << PQerrorMessage(conn_);
    PQclear(r);
  }

  Rows Query(const std::string& sql) override {
    PGresult* r = PQexec(conn_, sql.c_str());
    EXPECT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << sql << ": " << PQerrorMessage(conn_);
    Rows rows;
    for (int i = 0; i < PQntuples(r); ++i) {
      rows.emplace_back();
      for (int j = 0; j < PQnfields(r); ++j) {
        if (PQgetisnull(r, i, j)) {
          rows.back().push_back(std::nullopt);
        } else {
          rows.back().push_back(std::string(PQgetvalue(r, i, j)));
        }
      }
    }
    PQclear(r);
    return rows;
  }

  std::string Quote(const std::string& table) const override {
    return "\"public\".\"" + table + "\"";
  }
  std::string ItemsDdl(const std::string& table) const override {
    return "CREATE TABLE " + Quote(table) +
           " (id integer PRIMARY KEY, name text, doc text, qty integer)";
  }
  std::string Locate(const std::string& table) const override {
    return "connection_url: '" + url_ + "', table_name: " + table;
  }
  Result<std::unique_ptr<Sink>> MakeSink(const config::Block& cfg) const override {
    return MakePostgresSink(cfg);
  }

  PGconn* conn() { return conn_; }
  const std::string& url() const { return url_; }

 private:
  std::string url_;
  PGconn* conn_;
};

// Every column type a Postgres source sends, with its edge values. Rows are read from a source
// table as the source would send them (each value's text output, which is what pgoutput
// carries), written through the sink, and compared as whole-row text.
TEST(PostgresSink, EveryTypeRoundTripsAsItsText) {
  PostgresBackend pg;
  const std::string u = testing::UniqueName("t");
  const std::string src = u + "_src", up = u + "_upsert", app = u + "_append";
  pg.Exec("CREATE TYPE mood_" + u + " AS ENUM ('sad', 'ok', 'happy')");
  pg.Exec("CREATE DOMAIN posint_" + u + " AS integer CHECK (VALUE > 0)");
  const std::string columns =
      "(id int4 PRIMARY KEY, i2 int2, i4 int4, i8 int8, n numeric, np numeric(40,20), f4 float4,"
      " f8 float8, t text, vc varchar(50), ch char(3), b bytea, bo bool, d date, tm time,"
      " ttz timetz, ts timestamp, tstz timestamptz, iv interval, u uuid, j json, jb jsonb,"
      " ia int4[], ta text[], ia2 int4[][], e mood_" +
      u + ", dm posint_" + u + ", ip inet)";
  for (const std::string& t : {src, up, app}) pg.Exec("CREATE TABLE " + t + " " + columns);
  pg.Exec("INSERT INTO " + src + R"SQL( VALUES
    (1, 32767, -2147483648, 9223372036854775807,
     123456789012345678901234567890.123456789012345678901234567890,
     12345678901234567890.12345678901234567890, 'NaN', 'Infinity',
     E'tab\there\nnew line\r\nback\\slash ''single'' "double" h\u00e9llo \u2713 \U0001F680 \\N',
     'abc', 'ab', '\x00ff5c0a0d09', true, '2024-02-29', '23:59:59.999999', '12:00:00+05:30',
     '2024-01-01 00:00:00.123456', '2024-06-30 12:34:56.789+02',
     '1 year 2 mons 3 days 04:05:06.789', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
     '{ "a" : [1, 2.50, "x\ty"], "b": null }', '{"z": 1, "a": {"n": [true, false]}}',
     '{1,NULL,3}', E'{"a\\"b","c,d","NULL",NULL,"x\\\\y","tab\there",""}', '{{1,2},{3,4}}',
     'happy', 42, '192.168.0.1/24'),
    (2, -32768, 0, -9223372036854775808, 'NaN', -0.00000000000000000001, '-Infinity', 'NaN',
     '', '', '', '\x', false, '0044-03-15 BC', '00:00:00', '00:00:00-12', '-infinity',
     'infinity', '-1 days -00:00:01', '00000000-0000-0000-0000-000000000000', '[]', 'null',
     '{}', '{}', '{}', 'sad', 1, '::1'),
    (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
  )SQL");

  std::vector<std::string> names;
  for (const auto& row : pg.Query("SELECT attname FROM pg_attribute WHERE attrelid = '" + src +
                                  "'::regclass AND attnum > 0 ORDER BY attnum")) {
    names.push_back(*row[0]);
  }
  std::string select;
  for (const std::string& n : names) select += (select.empty() ? "" : ", ") + n + "::text";
  RelationPtr rel = Relation(names);
  Page page;
  for (const auto& row : pg.Query("SELECT " + select + " FROM " + src + " ORDER BY id")) {
    Row cells;
    for (const auto& v : row) cells.push_back(v ? Cell::Value(*v) : Cell::Null());
    page.changes.push_back(Read(rel, std::move(cells)));
  }
  ASSERT_EQ(page.changes.size(), 3u);

  auto upsert = OpenSink(pg, up, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  auto append = OpenSink(pg, app, ", column_mapping: auto_map");
  ASSERT_NE(upsert, nullptr);
  ASSERT_NE(append, nullptr);
  ASSERT_OK(upsert->Write(page));
  ASSERT_OK(append->Write(page));

  Rows expected = pg.Query("SELECT t::text FROM " + src + " t ORDER BY id");
  EXPECT_EQ(pg.Query("SELECT t::text FROM " + up + " t ORDER BY id"), expected);
  EXPECT_EQ(pg.Query("SELECT t::text FROM " + app + " t ORDER BY id"), expected);
  // Rewriting the same rows (the upsert's update path) changes nothing.
  ASSERT_OK(upsert->Write(page));
  EXPECT_EQ(pg.Query("SELECT t::text FROM " + up + " t ORDER BY id"), expected);
}

TEST(PostgresSink, DefaultMappingWritesTheWholeRowAsJsonb) {
  PostgresBackend pg;
  const std::string table = testing::UniqueName("events");
  pg.Exec("CREATE TABLE " + table + " (seq bigserial, data jsonb)");
  auto sink = OpenSink(pg, table, "");
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Relation({"id", "name"});
  ASSERT_OK(sink->Write(PageOf({Insert(rel, {T("1"), T("a")}), Read(rel, {T("2"), T("b")})})));
  Rows rows = pg.Query("SELECT data->>'op', data->'after'->>'name', data->>'name' FROM " + table +
                       " ORDER BY seq");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0].value_or(""), "c");  // a change is written as its envelope
  EXPECT_EQ(rows[0][1].value_or(""), "a");
  EXPECT_EQ(rows[1][2].value_or(""), "b");  // a flat row as itself
}

TEST(PostgresSink, DomainCheckViolationIsIsolatedToItsRow) {
  PostgresBackend pg;
  const std::string u = testing::UniqueName("dom");
  pg.Exec("CREATE DOMAIN pos_" + u + " AS integer CHECK (VALUE > 0)");
  pg.Exec("CREATE TABLE " + u + " (id int PRIMARY KEY, n pos_" + u + " NOT NULL)");
  auto sink = OpenSink(pg, u, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Relation({"id", "n"});
  Page page = PageOf({Insert(rel, {T("1"), T("1")}), Insert(rel, {T("2"), T("-2")}),
                      Insert(rel, {T("3"), Null()}), Insert(rel, {T("4"), T("4")})});
  Status st = sink->Write(page);
  ASSERT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("key (id)=(2)"), std::string::npos) << st.message();
  std::vector<Sink::RejectedRow> rejected;
  ASSERT_OK(sink->WriteIsolating(page, &rejected));
  ASSERT_EQ(rejected.size(), 2u);
  EXPECT_EQ(rejected[1].index, 2u);
  EXPECT_NE(rejected[1].error.message().find("column n"), std::string::npos)
      << rejected[1].error.message();
  EXPECT_EQ(pg.Query("SELECT string_agg(id::text, ',' ORDER BY id) FROM " + u)[0][0], "1,4");
}

// A keyed page with deletes goes in one statement batch of array literals (not the staging
// table): values with the characters array and string literals quote, an empty string, the
// string "NULL" and a null must arrive as they are; a value too long for varchar(n), or for a
// domain over it, must be refused (as COPY would), not truncated by a cast; the refused row is
// then isolated and named by the staged path.
TEST(PostgresSink, KeyedPageInOneStatementKeepsValuesAndCopySemantics) {
  PostgresBackend pg;
  const std::string u = testing::UniqueName("arr");
  pg.Exec("CREATE DOMAIN short_" + u + " AS varchar(3)");
  pg.Exec("CREATE TABLE " + u + " (id int PRIMARY KEY, t text, v varchar(3), d short_" + u +
          ", a int4[])");
  pg.Exec("INSERT INTO " + u + " VALUES (1, 'old', 'old', 'old', '{0}'), (9, 'x', 'x', 'x', NULL)");
  auto sink = OpenSink(pg, u, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Relation({"id", "t", "v", "d", "a"});
  const char* tricky = "q'uote \"dq\" back\\slash {br,ace} \\\\N tab\there \xc3\xa9";
  Page page = PageOf({Update(rel, {T("1"), T(tricky), T("ab"), T("cd"), T("{1,NULL,3}")}),
                      Insert(rel, {T("2"), T(""), T(""), T(""), T("{}")}),
                      Insert(rel, {T("3"), T("NULL"), Null(), Null(), Null()}),
                      Delete(rel, {T("9"), Null(), Null(), Null(), Null()})});
  ASSERT_OK(sink->Write(page));
  EXPECT_EQ(pg.Query("SELECT t, v, d, a::text FROM " + u + " ORDER BY id"),
            (Rows{{std::string(tricky), "ab", "cd", "{1,NULL,3}"},
                  {"", "", "", "{}"},
                  {"NULL", std::nullopt, std::nullopt, std::nullopt}}));

  std::vector<Sink::RejectedRow> rejected;
  ASSERT_OK(
      sink->WriteIsolating(PageOf({Update(rel, {T("1"), T("x"), T("toolong"), T("ok"), Null()}),
                                   Update(rel, {T("2"), T("y"), T("ok"), T("toolong"), Null()}),
                                   Update(rel, {T("3"), T("z"), T("ok"), T("ok"), Null()}),
                                   Delete(rel, {T("4"), Null(), Null(), Null(), Null()})}),
                           &rejected));
  ASSERT_EQ(rejected.size(), 2u);
  EXPECT_EQ(rejected[0].index, 0u);
  EXPECT_EQ(rejected[1].index, 1u);
  EXPECT_NE(rejected[0].error.message().find("column v"), std::string::npos)
      << rejected[0].error.message();
  EXPECT_NE(rejected[1].error.message().find("column d"), std::string::npos)
      << rejected[1].error.message();
  EXPECT_EQ(pg.Query("SELECT string_agg(id || ':' || t, ',' ORDER BY id) FROM " + u)[0][0],
            "1:" + std::string(tricky) + ",2:,3:z");
}

// The staging table's own columns (pos, grp) and aliases (s, t) must not clash with the
// target's: bisecting a refused row runs the range-filtered statements.
TEST(PostgresSink, TargetColumnsNamedLikeTheStagingBookkeepingWork) {
  PostgresBackend pg;
  const std::string table = testing::UniqueName("clash");
  pg.Exec("CREATE TABLE " + table +
          " (id int PRIMARY KEY, pos int CHECK (pos > 0), grp text, s text, t text, c0 text)");
  pg.Exec("INSERT INTO " + table + " VALUES (9, 9, 'x', 'x', 'x', 'x')");
  auto sink = OpenSink(pg, table, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Relation({"id", "pos", "grp", "s", "t", "c0"});
  std::vector<Sink::RejectedRow> rejected;
  ASSERT_OK(
      sink->WriteIsolating(PageOf({Insert(rel, {T("1"), T("1"), T("a"), T("b"), T("c"), T("d")}),
                                   Insert(rel, {T("2"), T("-2"), T("a"), T("b"), T("c"), T("d")}),
                                   Insert(rel, {T("3"), T("3"), T("a"), T("b"), T("c"), T("d")}),
                                   Delete(rel, {T("9"), Null(), Null(), Null(), Null(), Null()})}),
                           &rejected));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 1u);
  EXPECT_EQ(pg.Query("SELECT string_agg(id::text, ',' ORDER BY id) FROM " + table)[0][0], "1,3");
}

TEST(PostgresSink, ConnectionFailureIsUnavailableWithThePasswordRedacted) {
  auto sink = MakePostgresSink(
      Yaml("{connection_url: 'postgres://faucet:s3cret@127.0.0.1:1/faucet', table_name: t}"));
  ASSERT_OK(sink);
  Status st = (*sink)->Open(false);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(st.message().find("s3cret"), std::string::npos) << st.message();
}

TEST(PostgresSink, ReconnectsAfterItsSessionIsTerminated) {
  PostgresBackend pg;
  const std::string table = testing::UniqueName("items");
  pg.Exec(pg.ItemsDdl(table));
  auto sink = OpenSink(pg, table, ", column_mapping: auto_map, write_mode: upsert, key: [id]");
  ASSERT_NE(sink, nullptr);
  RelationPtr rel = Relation({"id", "name", "doc", "qty"});
  ASSERT_OK(sink->Write(PageOf({Insert(rel, {T("1"), T("a"), T("x"), T("1")})})));
  pg.Exec(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()"
      " AND query LIKE '%" +
      table + "%'");
  Page next = PageOf({Insert(rel, {T("2"), T("b"), T("y"), T("2")})});
  Status st = sink->Write(next);
  if (!st.ok()) {
    EXPECT_EQ(st.code(), StatusCode::kUnavailable) << st.ToString();
    st = sink->Write(next);  // what the pipeline's retry does
  }
  ASSERT_OK(st);
  EXPECT_EQ(Dump(pg, table), "1|a|x|1;2|b|y|2");
}

}  // namespace

std::unique_ptr<Backend> MakePostgresBackend() { return std::make_unique<PostgresBackend>(); }

}  // namespace faucet::sqltest
