// The state stores against real PostgreSQL and Redis servers (scripts/services.sh), checked
// against one contract and against the reference system's stored layout
// (docs/state-format.md), so that either engine resumes the other's pipelines.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "state/file_state_store.h"
#include "state/postgres_state_store.h"
#include "state/redis_state_store.h"
#include "state/state_config.h"
#include "testing/services.h"
#include "testing/status_matchers.h"

namespace faucet {
namespace {

const Json kBookmark = {{"last_lsn", "0/16B3748"}};
const Json kNext = {{"last_lsn", "0/16B9F20"}};

// --- direct access to the servers, bypassing the stores ------------------------------------

using PgRows = std::vector<std::vector<std::optional<std::string>>>;

PgRows PgQuery(const std::string& sql, const std::vector<std::string>& params = {}) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(
      PQconnectdb(testing::RequireEnv("FAUCET_TEST_PG_URL").c_str()), &PQfinish);
  EXPECT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  std::vector<const char*> values;
  for (const std::string& p : params) values.push_back(p.c_str());
  std::unique_ptr<PGresult, decltype(&PQclear)> res(
      PQexecParams(conn.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                   nullptr, nullptr, 0),
      &PQclear);
  ExecStatusType status = PQresultStatus(res.get());
  EXPECT_TRUE(status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK)
      << sql << ": " << PQresultErrorMessage(res.get());
  PgRows rows;
  for (int i = 0; i < PQntuples(res.get()); ++i) {
    rows.emplace_back();
    for (int j = 0; j < PQnfields(res.get()); ++j) {
      if (PQgetisnull(res.get(), i, j)) {
        rows.back().emplace_back();
      } else {
        rows.back().emplace_back(PQgetvalue(res.get(), i, j));
      }
    }
  }
  return rows;
}

// The test server's URL with `extra` query parameters ("application_name=x").
std::string PgUrlWith(const std::string& extra) {
  std::string url = testing::RequireEnv("FAUCET_TEST_PG_URL");
  return url + (url.find('?') == std::string::npos ? "?" : "&") + extra;
}

// The test server's URL with another user, password and database.
std::string PgUrlAs(const std::string& user, const std::string& password, const std::string& db) {
  std::string url = testing::RequireEnv("FAUCET_TEST_PG_URL");
  std::string rest = url.substr(url.find('@') + 1);  // host:port/db
  std::string hostport = rest.substr(0, rest.find('/'));
  return "postgres://" + user + ":" + password + "@" + hostport + "/" + db;
}

struct RedisReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyDeleter>;

RedisUrl TestRedis() {
  Result<RedisUrl> url = ParseRedisUrl(testing::RequireEnv("FAUCET_TEST_REDIS_URL"));
  EXPECT_OK(url);
  return *url;
}

// Runs one command on database `db` of the test server.
RedisReplyPtr RedisRaw(const std::vector<std::string>& args, int db = 0) {
  RedisUrl url = TestRedis();
  std::unique_ptr<redisContext, decltype(&redisFree)> ctx(redisConnect(url.host.c_str(), url.port),
                                                          &redisFree);
  EXPECT_TRUE(ctx != nullptr && ctx->err == 0);
  if (db != 0) {
    RedisReplyPtr(static_cast<redisReply*>(redisCommand(ctx.get(), "SELECT %d", db)));
  }
  std::vector<const char*> argv;
  std::vector<size_t> lengths;
  for (const std::string& a : args) {
    argv.push_back(a.data());
    lengths.push_back(a.size());
  }
  return RedisReplyPtr(static_cast<redisReply*>(
      redisCommandArgv(ctx.get(), static_cast<int>(argv.size()), argv.data(), lengths.data())));
}

std::string RedisUrlAs(const std::string& userinfo, int db = 0) {
  RedisUrl url = TestRedis();
  return "redis://" + userinfo + "@" + url.host + ":" + std::to_string(url.port) +
         (db == 0 ? "" : "/" + std::to_string(db));
}

// --- one contract for every store -----------------------------------------------------------

StateConfig ConfigFor(const std::string& backend) {
  if (backend == "postgres") {
    return StateConfig{.type = StateType::kPostgres,
                       .url = testing::RequireEnv("FAUCET_TEST_PG_URL"),
                       .table = testing::UniqueName("state"),
                       .ensure_table = true};
  }
  if (backend == "redis") {
    return StateConfig{.type = StateType::kRedis,
                       .url = testing::RequireEnv("FAUCET_TEST_REDIS_URL"),
                       .redis_namespace = testing::UniqueName("ns")};
  }
  if (backend == "file") {
    return StateConfig{.type = StateType::kFile, .path = testing::TempDir("state")};
  }
  return StateConfig{.type = StateType::kMemory};
}

class StateStoreContract : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<StateStore>> store = OpenStateStore(ConfigFor(GetParam()));
    ASSERT_OK(store);
    store_ = std::move(*store);
  }

  std::unique_ptr<StateStore> store_;
};

TEST_P(StateStoreContract, MissingKeyReadsAsNothing) {
  Result<std::optional<Json>> got = store_->Get("never::written");
  ASSERT_OK(got);
  EXPECT_FALSE(got->has_value());
}

TEST_P(StateStoreContract, PutValueIsReturnedByGet) {
  ASSERT_OK(store_->Put("orders::row-0", kBookmark));
  Result<std::optional<Json>> got = store_->Get("orders::row-0");
  ASSERT_OK(got);
  EXPECT_EQ(*got, kBookmark);
}

TEST_P(StateStoreContract, ExactlyOnceStateKeepsEveryDigitOfItsSequence) {
  Json eo = {{"__faucet_eo", 1},
             {"bookmark", {{"file", "binlog.000123"}, {"pos", 4567}}},
             {"seq", uint64_t{18446744073709551615u}}};
  ASSERT_OK(store_->Put("orders::cdc", eo));
  Json got = **store_->Get("orders::cdc");
  EXPECT_EQ(got, eo);
  EXPECT_EQ(got["seq"].get<uint64_t>(), 18446744073709551615u);
}

TEST_P(StateStoreContract, PutOverwritesThePreviousValue) {
  ASSERT_OK(store_->Put("orders::row-0", kBookmark));
  ASSERT_OK(store_->Put("orders::row-0", kNext));
  EXPECT_EQ(*store_->Get("orders::row-0"), kNext);
}

TEST_P(StateStoreContract, KeysAreIndependent) {
  ASSERT_OK(store_->Put("orders::row-0", kBookmark));
  ASSERT_OK(store_->Put("orders::__replication__",
                        Json{{"phase", "cdc"}, {"snapshot_done", true}, {"position", kNext}}));
  EXPECT_EQ(*store_->Get("orders::row-0"), kBookmark);
  EXPECT_EQ((**store_->Get("orders::__replication__"))["phase"], "cdc");
}

TEST_P(StateStoreContract, DeleteRemovesTheValue) {
  ASSERT_OK(store_->Put("orders::row-0", kBookmark));
  ASSERT_OK(store_->Delete("orders::row-0"));
  EXPECT_FALSE(store_->Get("orders::row-0")->has_value());
}

TEST_P(StateStoreContract, DeletingAMissingKeyIsOk) { EXPECT_OK(store_->Delete("never::written")); }

TEST_P(StateStoreContract, InvalidKeyIsRejected) {
  EXPECT_EQ(store_->Put("no spaces", kBookmark).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->Get(".hidden").status().code(), StatusCode::kInvalidArgument);
}

// One holder at a time, across connections and file descriptors alike (a second process is
// another of those); released with the lease. Redis and memory cannot hold one: nullptr.
TEST_P(StateStoreContract, ALeaseKeepsASecondHolderOutUntilReleased) {
  Result<std::unique_ptr<StateLease>> first = store_->Lease("orders::__lease__");
  ASSERT_OK(first);
  if (GetParam() == "redis" || GetParam() == "memory") {
    EXPECT_EQ(*first, nullptr);
    return;
  }
  ASSERT_NE(*first, nullptr);
  Result<std::unique_ptr<StateLease>> second = store_->Lease("orders::__lease__");
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition) << second.status().ToString();
  EXPECT_NE(second.status().message().find("orders::__lease__ is held by another"),
            std::string::npos)
      << second.status().message();
  Result<std::unique_ptr<StateLease>> other = store_->Lease("customers::__lease__");
  ASSERT_OK(other);
  EXPECT_NE(*other, nullptr);
  first->reset();
  Result<std::unique_ptr<StateLease>> again = store_->Lease("orders::__lease__");
  ASSERT_OK(again);
  EXPECT_NE(*again, nullptr);
}

INSTANTIATE_TEST_SUITE_P(EveryStore, StateStoreContract,
                         ::testing::Values("postgres", "redis", "file", "memory"),
                         [](const auto& info) { return info.param; });

// --- values as each reference version stores them -------------------------------------------

// faucet and the reference before faucet-cli 1.13 store the bare value; 1.13 and later wrap it in
// a versioned envelope. Both must read back as the same value from every durable store.
class StoredValueShapes : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    cfg_ = ConfigFor(GetParam());
    Result<std::unique_ptr<StateStore>> store = OpenStateStore(cfg_);
    ASSERT_OK(store);
    store_ = std::move(*store);
  }

  // Stores `text` under `key` the way the reference does, bypassing the store.
  void WriteRaw(const std::string& key, const std::string& text) {
    if (cfg_.type == StateType::kFile) {
      std::ofstream(FileStateStore(PosixFileSystem(), cfg_.path).PathOf(key)) << text;
    } else if (cfg_.type == StateType::kPostgres) {
      PgQuery("INSERT INTO \"" + cfg_.table + "\" (key, value) VALUES ($1, $2::jsonb)",
              {key, text});
    } else {
      RedisRaw({"SET", cfg_.redis_namespace + ":" + key, text});
    }
  }

  StateConfig cfg_;
  std::unique_ptr<StateStore> store_;
};

std::string Envelope(const Json& data) {
  return R"({"faucet_state": 1, "owner": "postgres-cdc", "schema": 0, "data": )" + data.dump() +
         "}";
}

TEST_P(StoredValueShapes, BareAndEnvelopedBookmarksReadAsTheSameBookmark) {
  WriteRaw("pipe::row-0", kBookmark.dump());
  WriteRaw("pipe::cdc", Envelope(kBookmark));
  for (const char* key : {"pipe::row-0", "pipe::cdc"}) {
    Result<std::optional<Json>> got = store_->Get(key);
    ASSERT_OK(got);
    EXPECT_EQ(*got, kBookmark) << key;
  }
}

TEST_P(StoredValueShapes, EnvelopedExactlyOnceStateReadsAsTheWrapper) {
  Json eo = {{"__faucet_eo", 1}, {"bookmark", kBookmark}, {"seq", 42}};
  WriteRaw("pipe::row-0", Envelope(eo));
  Result<std::optional<Json>> got = store_->Get("pipe::row-0");
  ASSERT_OK(got);
  EXPECT_EQ(*got, eo);
}

TEST_P(StoredValueShapes, EnvelopeOfAnUnknownVersionIsDataLossNamingTheKey) {
  WriteRaw("pipe::row-0", R"({"faucet_state": 2, "owner": "postgres-cdc", "data": {}})");
  Status st = store_->Get("pipe::row-0").status();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss) << st.ToString();
  EXPECT_NE(st.message().find(GetParam() == "file" ? "pipe%3A%3Arow-0" : "pipe::row-0"),
            std::string::npos)
      << st.message();
}

INSTANTIATE_TEST_SUITE_P(EveryDurableStore, StoredValueShapes,
                         ::testing::Values("postgres", "redis", "file"),
                         [](const auto& info) { return info.param; });

// --- postgres -------------------------------------------------------------------------------

std::unique_ptr<PostgresStateStore> OpenPg(const std::string& table, bool ensure_table,
                                           const std::string& url = "") {
  Result<std::unique_ptr<PostgresStateStore>> store = PostgresStateStore::Open(
      url.empty() ? testing::RequireEnv("FAUCET_TEST_PG_URL") : url, table, ensure_table);
  EXPECT_OK(store);
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(PostgresStateStore, MissingTableWithoutEnsureTableIsAClearError) {
  std::string table = testing::UniqueName("absent");
  std::unique_ptr<PostgresStateStore> store = OpenPg(table, /*ensure_table=*/false);
  ASSERT_NE(store, nullptr);
  for (const Status& st : {store->Get("orders::row-0").status(), store->Put("p::row-0", kNext)}) {
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
    EXPECT_NE(st.message().find("\"" + table + "\""), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("does not exist"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("CREATE TABLE"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("ensure_table: true"), std::string::npos) << st.message();
  }
}

TEST(PostgresStateStore, EnsureTableCreatesTheReferenceLayout) {
  std::string table = testing::UniqueName("layout");
  ASSERT_NE(OpenPg(table, /*ensure_table=*/true), nullptr);
  PgRows columns = PgQuery(
      "SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns"
      " WHERE table_name = $1 ORDER BY ordinal_position",
      {table});
  ASSERT_EQ(columns.size(), 3u);
  EXPECT_EQ(columns[0][0], "key");
  EXPECT_EQ(columns[0][1], "text");
  EXPECT_EQ(columns[1][0], "value");
  EXPECT_EQ(columns[1][1], "jsonb");
  EXPECT_EQ(columns[1][2], "NO");
  EXPECT_EQ(columns[2][0], "updated_at");
  EXPECT_EQ(columns[2][1], "timestamp with time zone");
  EXPECT_EQ(columns[2][2], "NO");
  EXPECT_EQ(columns[2][3], "now()");
  PgRows pk = PgQuery(
      "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid"
      " AND a.attnum = ANY(i.indkey) WHERE i.indrelid = quote_ident($1)::regclass"
      " AND i.indisprimary",
      {table});
  ASSERT_EQ(pk.size(), 1u);
  EXPECT_EQ(pk[0][0], "key");
}

TEST(PostgresStateStore, EnsureTableOnAnExistingTableKeepsItsRows) {
  std::string table = testing::UniqueName("again");
  std::unique_ptr<PostgresStateStore> first = OpenPg(table, /*ensure_table=*/true);
  ASSERT_NE(first, nullptr);
  ASSERT_OK(first->Put("orders::row-0", kBookmark));
  std::unique_ptr<PostgresStateStore> second = OpenPg(table, /*ensure_table=*/true);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(*second->Get("orders::row-0"), kBookmark);
}

TEST(PostgresStateStore, ValueIsStoredAsJsonbUnderItsKey) {
  std::string table = testing::UniqueName("jsonb");
  std::unique_ptr<PostgresStateStore> store = OpenPg(table, /*ensure_table=*/true);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("orders::row-0", kBookmark));
  PgRows rows = PgQuery(
      "SELECT key, jsonb_typeof(value), value->>'last_lsn', "
      "updated_at > now() - interval '1 hour' FROM \"" +
      table + "\"");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "orders::row-0");
  EXPECT_EQ(rows[0][1], "object");
  EXPECT_EQ(rows[0][2], "0/16B3748");
  EXPECT_EQ(rows[0][3], "t");
}

TEST(PostgresStateStore, OverwriteAdvancesUpdatedAt) {
  std::string table = testing::UniqueName("updated");
  std::unique_ptr<PostgresStateStore> store = OpenPg(table, /*ensure_table=*/true);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("orders::row-0", kBookmark));
  std::string first = *PgQuery("SELECT updated_at::text FROM \"" + table + "\"")[0][0];
  ASSERT_OK(store->Put("orders::row-0", kNext));
  PgRows rows = PgQuery("SELECT updated_at > $1::timestamptz FROM \"" + table + "\"", {first});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0], "t");
}

TEST(PostgresStateStore, ReadsARowTheReferenceWrote) {
  std::string table = testing::UniqueName("reference");
  std::unique_ptr<PostgresStateStore> store = OpenPg(table, /*ensure_table=*/true);
  ASSERT_NE(store, nullptr);
  PgQuery("INSERT INTO \"" + table +
          "\" (key, value) VALUES ('pipe::row-0', "
          "'{\"file\": \"binlog.000123\", \"pos\": 4567}')");
  EXPECT_EQ(*store->Get("pipe::row-0"), (Json{{"file", "binlog.000123"}, {"pos", 4567}}));
}

TEST(PostgresStateStore, MixedCaseTableNameIsKeptExactly) {
  std::string table = "Mixed_" + testing::UniqueName("Case");
  std::unique_ptr<PostgresStateStore> store = OpenPg(table, /*ensure_table=*/true);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("orders::row-0", kBookmark));
  EXPECT_EQ(PgQuery("SELECT count(*) FROM \"" + table + "\"")[0][0], "1");
}

TEST(PostgresStateStore, ValueIsPassedAsAParameterNeverAsSql) {
  std::string table = testing::UniqueName("inject");
  std::unique_ptr<PostgresStateStore> store = OpenPg(table, /*ensure_table=*/true);
  ASSERT_NE(store, nullptr);
  Json nasty = {{"last_lsn", "0/1'); DROP TABLE \"" + table + "\"; --"}};
  ASSERT_OK(store->Put("orders::row-0", nasty));
  EXPECT_EQ(*store->Get("orders::row-0"), nasty);
}

TEST(PostgresStateStore, ReconnectsAfterTheServerDropsTheConnection) {
  std::string app = testing::UniqueName("faucet_state_test");
  std::string table = testing::UniqueName("reconnect");
  std::unique_ptr<PostgresStateStore> store =
      OpenPg(table, /*ensure_table=*/true, PgUrlWith("application_name=" + app));
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("orders::row-0", kBookmark));
  PgRows killed = PgQuery(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", {app});
  ASSERT_EQ(killed.size(), 1u);
  Result<std::optional<Json>> got = store->Get("orders::row-0");
  ASSERT_OK(got);
  EXPECT_EQ(*got, kBookmark);
}

TEST(PostgresStateStore, FailedConnectionIsUnavailableAndHidesThePassword) {
  Result<std::unique_ptr<PostgresStateStore>> store = PostgresStateStore::Open(
      PgUrlAs("faucet", "hunter2-secret", testing::UniqueName("nodb")), "faucet_state", false);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store.status().message().find("hunter2-secret"), std::string::npos)
      << store.status().message();
  EXPECT_NE(store.status().message().find("faucet:***@"), std::string::npos)
      << store.status().message();
}

TEST(PostgresStateStore, IsDurable) {
  std::unique_ptr<PostgresStateStore> store =
      OpenPg(testing::UniqueName("durable"), /*ensure_table=*/true);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->durability(), Durability::kDurable);
}

// --- redis ----------------------------------------------------------------------------------

std::unique_ptr<RedisStateStore> OpenRedis(const std::string& ns, const std::string& url = "") {
  Result<std::unique_ptr<RedisStateStore>> store =
      RedisStateStore::Open(url.empty() ? testing::RequireEnv("FAUCET_TEST_REDIS_URL") : url, ns);
  EXPECT_OK(store);
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(RedisStateStore, ValueIsCompactJsonUnderNamespaceColonKey) {
  std::string ns = testing::UniqueName("ns");
  std::unique_ptr<RedisStateStore> store = OpenRedis(ns);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("orders::row-0", kBookmark));
  RedisReplyPtr reply = RedisRaw({"GET", ns + ":orders::row-0"});
  ASSERT_EQ(reply->type, REDIS_REPLY_STRING);
  EXPECT_EQ(std::string(reply->str, reply->len), R"({"last_lsn":"0/16B3748"})");
  ASSERT_OK(store->Delete("orders::row-0"));
  EXPECT_EQ(RedisRaw({"EXISTS", ns + ":orders::row-0"})->integer, 0);
}

TEST(RedisStateStore, ReadsAKeyTheReferenceWrote) {
  std::string ns = testing::UniqueName("ns");
  std::unique_ptr<RedisStateStore> store = OpenRedis(ns);
  ASSERT_NE(store, nullptr);
  RedisRaw({"SET", ns + ":pipe::cdc", R"({"file": "binlog.000123", "pos": 4567})"});
  EXPECT_EQ(*store->Get("pipe::cdc"), (Json{{"file", "binlog.000123"}, {"pos", 4567}}));
}

TEST(RedisStateStore, ValueThatIsNotJsonIsDataLossNamingTheKey) {
  std::string ns = testing::UniqueName("ns");
  std::unique_ptr<RedisStateStore> store = OpenRedis(ns);
  ASSERT_NE(store, nullptr);
  RedisRaw({"SET", ns + ":pipe::cdc", "{\"last_lsn\": \"0/1"});
  Status st = store->Get("pipe::cdc").status();
  EXPECT_EQ(st.code(), StatusCode::kDataLoss);
  EXPECT_NE(st.message().find(ns + ":pipe::cdc"), std::string::npos) << st.message();
}

TEST(RedisStateStore, KeyOfAnotherTypeIsAFailedPrecondition) {
  std::string ns = testing::UniqueName("ns");
  std::unique_ptr<RedisStateStore> store = OpenRedis(ns);
  ASSERT_NE(store, nullptr);
  RedisRaw({"RPUSH", ns + ":pipe::cdc", "x"});
  EXPECT_EQ(store->Get("pipe::cdc").status().code(), StatusCode::kFailedPrecondition);
}

TEST(RedisStateStore, UsesTheDatabaseOfTheUrl) {
  std::string ns = testing::UniqueName("ns");
  RedisUrl server = TestRedis();
  std::unique_ptr<RedisStateStore> store =
      OpenRedis(ns, "redis://" + server.host + ":" + std::to_string(server.port) + "/3");
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("orders::row-0", kBookmark));
  EXPECT_EQ(RedisRaw({"EXISTS", ns + ":orders::row-0"}, /*db=*/3)->integer, 1);
  EXPECT_EQ(RedisRaw({"EXISTS", ns + ":orders::row-0"}, /*db=*/0)->integer, 0);
}

TEST(RedisStateStore, AuthenticatesAsTheUserOfTheUrl) {
  std::string user = testing::UniqueName("user");
  RedisRaw({"ACL", "SETUSER", user, "on", ">right-pw", "~*", "+@all"});
  std::unique_ptr<RedisStateStore> store =
      OpenRedis(testing::UniqueName("ns"), RedisUrlAs(user + ":right-pw"));
  ASSERT_NE(store, nullptr);
  EXPECT_OK(store->Put("orders::row-0", kBookmark));
  RedisRaw({"ACL", "DELUSER", user});
}

TEST(RedisStateStore, WrongPasswordIsUnavailableAndHidden) {
  std::string user = testing::UniqueName("user");
  RedisRaw({"ACL", "SETUSER", user, "on", ">right-pw", "~*", "+@all"});
  Result<std::unique_ptr<RedisStateStore>> store =
      RedisStateStore::Open(RedisUrlAs(user + ":hunter2-secret"), "faucet");
  RedisRaw({"ACL", "DELUSER", user});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store.status().message().find("hunter2-secret"), std::string::npos)
      << store.status().message();
  EXPECT_NE(store.status().message().find(user + ":***@"), std::string::npos)
      << store.status().message();
}

TEST(RedisStateStore, ReconnectsAfterTheServerDropsTheConnection) {
  // The store connects as a user of its own, so that only its connection is dropped (tests
  // running at the same time keep theirs).
  std::string user = testing::UniqueName("user");
  RedisRaw({"ACL", "SETUSER", user, "on", ">pw", "~*", "+@all"});
  std::unique_ptr<RedisStateStore> store =
      OpenRedis(testing::UniqueName("ns"), RedisUrlAs(user + ":pw"));
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("orders::row-0", kBookmark));
  ASSERT_EQ(RedisRaw({"CLIENT", "KILL", "USER", user})->integer, 1);
  Result<std::optional<Json>> got = store->Get("orders::row-0");
  RedisRaw({"ACL", "DELUSER", user});
  ASSERT_OK(got);
  EXPECT_EQ(*got, kBookmark);
}

TEST(RedisStateStore, IsOnlyWeaklyDurable) {
  std::unique_ptr<RedisStateStore> store = OpenRedis(testing::UniqueName("ns"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->durability(), Durability::kWeak);
}

}  // namespace
}  // namespace faucet
