// The kafka source on the real broker scripts/services.sh starts, under `faucet run`:
// postgres-cdc -> kafka -> postgres. Three members of one consumer group share a 6-partition
// topic and apply it to one table; one is SIGKILLed mid-run (the others take its partitions),
// then restarted (the partitions move again): the destination equals the source by checksum.
// Debezium's JSON goes through with its types; a message that does not decode stops the run
// naming its topic, partition and offset, or is skipped when on_decode_error says so; offsets
// reach the group only for pages the destination holds.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <thread>

#include "core/crash_point.h"
#include "sinks/kafka/kafka_test_support.h"
#include "sources/postgres/pg_test_support.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using namespace std::chrono_literals;

class KafkaSourceTest : public ::testing::Test {
 protected:
  // A checksum of `table` computed by Postgres: every row, in key order.
  std::string Checksum(const std::string& table) {
    return db_
        .Scalar("SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY id), '')) FROM " + table +
                " t")
        .value_or("");
  }

  // A config running `source` into `sink` (YAML flow mappings) with its own state directory.
  std::string Config(const std::string& name, const std::string& source, const std::string& sink,
                     const std::string& extra = "") {
    std::string path = dir_ + "/" + name + ".yaml";
    std::ofstream(path) << "version: 1\nname: " << prefix_ << "\n"
                        << extra << "pipeline:\n  source: " << source << "\n  sink: " << sink
                        << "\n  state: {type: file, config: {path: '" << dir_ << "/" << name
                        << ".state'}}\n";
    return path;
  }

  // The kafka source of `topic` in the test's group, with `extra` entries.
  std::string KafkaSource(const std::string& topic, const std::string& extra = "") const {
    return "{type: kafka, config: {brokers: '" + brokers_ + "', topics: ['" + topic +
           "'], group_id: '" + prefix_ + ".group', session_timeout: 6000" + extra + "}}";
  }

  std::string PostgresSink(const std::string& table) const {
    return "{type: postgres, config: {connection_url: '" + db_.url() + "', table_name: '" + table +
           "', write_mode: upsert, key: [id]}}";
  }

  // A postgres-cdc -> kafka config streaming `table` to `topic` (made with `partitions`
  // unless 0), run once so that its slot exists: each later run sends what was written since.
  std::string Capture(const postgres::testing::CdcTable& table, const std::string& topic,
                      int partitions, const std::string& extra = "") {
    if (partitions > 0) kafka::testing::CreateTopic(brokers_, topic, partitions);
    std::string config = Config("produce", table.SourceYaml(),
                                "{type: kafka, config: {brokers: '" + brokers_ +
                                    "', topic: {name: '" + topic + "'}" + extra + "}}");
    testing::ProcessResult first = testing::RunProcess({FAUCET_BINARY, "run", config});
    EXPECT_EQ(first.exit_code, 0) << first.output;
    return config;
  }

  postgres::testing::TestDb db_;
  const std::string brokers_ = testing::RequireEnv("FAUCET_TEST_KAFKA_BROKERS");
  const std::string prefix_ = testing::UniqueName("kafkasrc");
  const std::string dir_ = testing::TempDir("kafkasrc");
};

std::unique_ptr<testing::Process> Start(const std::string& config) {
  return std::make_unique<testing::Process>(std::vector<std::string>{FAUCET_BINARY, "run", config},
                                            std::map<std::string, std::string>{});
}

TEST_F(KafkaSourceTest, ThreeMembersOfAGroupApplyEveryChangeThoughOneIsKilled) {
  postgres::testing::CdcTable table(db_, prefix_, "id int8 PRIMARY KEY, v text, n numeric");
  const std::string dst = prefix_ + "_dst";
  db_.Exec("CREATE TABLE " + dst + " (id int8 PRIMARY KEY, v text, n numeric)");
  const std::string topic = prefix_ + ".topic";
  const std::string produce = Capture(table, topic, 6);

  // Inserts, updates (the key's v grows) and deletes, with numerics beyond a double.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> rows{0};
  auto write = [&] {
    postgres::testing::TestDb w(db_.url());
    for (int64_t id = rows + 1; !stop; ++id) {
      const std::string sid = std::to_string(id);
      w.Exec("INSERT INTO " + prefix_ + " VALUES (" + sid + ", 'v', 123456789012345678901234567." +
             sid + ")");
      if (id % 3 == 0) {
        w.Exec("UPDATE " + prefix_ + " SET v = v || 'x' WHERE id = " + std::to_string(id / 2));
      }
      if (id % 7 == 0) w.Exec("DELETE FROM " + prefix_ + " WHERE id = " + std::to_string(id - 3));
      rows = id;
    }
  };
  auto consume = [&](int member) {
    return Config("member" + std::to_string(member),
                  KafkaSource(topic, ", idle_timeout: 20, batch_size: 200"), PostgresSink(dst));
  };
  auto count = [&] { return std::stoll(db_.Scalar("SELECT count(*) FROM " + dst).value_or("0")); };

  std::thread writer(write);
  std::unique_ptr<testing::Process> producer = Start(produce);
  std::vector<std::unique_ptr<testing::Process>> members;
  for (int i = 0; i < 3; ++i) members.push_back(Start(consume(i)));
  ASSERT_TRUE(testing::WaitFor([&] { return count() > 300; }, 90s, "rows applied", 100ms))
      << members[0]->Output();
  members[1]->Kill(SIGKILL);
  members[1]->Wait();
  const int64_t at_kill = rows;
  ASSERT_TRUE(testing::WaitFor([&] { return rows > at_kill + 300; }, 60s, "more rows"));
  stop = true;
  writer.join();
  testing::ProcessResult produced = producer->Wait();  // ends after its idle_timeout
  ASSERT_EQ(produced.exit_code, 0) << produced.output;
  // The killed member's partitions went to the other two, which apply everything.
  ASSERT_TRUE(testing::WaitFor([&] { return Checksum(dst) == Checksum(prefix_); }, 60s,
                               "the destination to equal the source", 200ms))
      << members[0]->Output() << members[2]->Output();

  // Restarted, it joins again and the partitions move under writes.
  members[1] = Start(consume(1));
  stop = false;
  std::thread writer2(write);
  producer = Start(produce);
  const int64_t at_restart = rows;
  ASSERT_TRUE(testing::WaitFor([&] { return rows > at_restart + 600; }, 60s, "more rows"));
  stop = true;
  writer2.join();
  produced = producer->Wait();
  ASSERT_EQ(produced.exit_code, 0) << produced.output;
  for (auto& member : members) {
    testing::ProcessResult r = member->Wait();  // each ends after its idle_timeout
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("released"), std::string::npos) << r.output;
  }
  EXPECT_EQ(Checksum(dst), Checksum(prefix_))
      << count() << " rows in the destination, source "
      << db_.Scalar("SELECT count(*) FROM " + prefix_).value_or("?");
}

TEST_F(KafkaSourceTest, DebeziumJsonArrivesWithItsTypes) {
  const std::string columns =
      "id int8 PRIMARY KEY, small int2, b bool, n numeric(30,5), f float8, t text, "
      "bytes bytea, j jsonb, d date, ts timestamp, tz timestamptz";
  postgres::testing::CdcTable table(db_, prefix_, columns);
  const std::string dst = prefix_ + "_dst";
  db_.Exec("CREATE TABLE " + dst + " (" + columns + ")");
  const std::string topic = prefix_ + ".dbz";
  const std::string produce =
      Capture(table, topic, 0, ", value_format: {type: debezium_json, server_name: srv}");
  db_.Exec("INSERT INTO " + prefix_ +
           " SELECT g, g - 100, g % 2 = 0, g * 1.5 + 0.00001, g / 3.0, "
           "'a\"b\\c ' || chr(233) || g, decode(lpad(to_hex(g), 4, '0'), 'hex'), "
           "jsonb_build_object('k', g, 'a', jsonb_build_array(1, 'x')), "
           "date '1960-01-01' + g, timestamp '2026-01-01 00:00:00.5' + g * interval '1 h', "
           "timestamptz '2026-01-01 00:00:00+00' + g * interval '1 min' "
           "FROM generate_series(1, 200) g");
  db_.Exec("UPDATE " + prefix_ + " SET t = NULL, b = NULL WHERE id % 10 = 0");
  db_.Exec("DELETE FROM " + prefix_ + " WHERE id % 9 = 0");
  testing::ProcessResult produced = testing::RunProcess({FAUCET_BINARY, "run", produce});
  ASSERT_EQ(produced.exit_code, 0) << produced.output;

  const std::string consume = Config(
      "consume", KafkaSource(topic, ", idle_timeout: 3, value_format: {type: debezium_json}"),
      PostgresSink(dst));
  testing::ProcessResult consumed = testing::RunProcess({FAUCET_BINARY, "run", consume});
  ASSERT_EQ(consumed.exit_code, 0) << consumed.output;
  EXPECT_EQ(Checksum(dst), Checksum(prefix_))
      << db_.Scalar("SELECT string_agg(t::text, E'\\n' ORDER BY id) FROM (SELECT * FROM " + dst +
                    " LIMIT 3) t")
             .value_or("");
}

TEST_F(KafkaSourceTest, AMessageThatDoesNotDecodeIsNamedOrSkipped) {
  const std::string dst = prefix_ + "_dst";
  db_.Exec("CREATE TABLE " + dst + " (id int8 PRIMARY KEY, v text)");
  const std::string topic = prefix_ + ".bad";
  kafka::testing::CreateTopic(brokers_, topic, 1);
  kafka::testing::TransactionalProducer producer(brokers_, prefix_ + ".producer");
  producer.ProduceOpen(topic, R"({"id":1})", R"({"id":1,"v":"one"})");
  producer.Commit();
  producer.ProduceOpen(topic, R"({"id":2})", R"({"id":2,"v":)");
  producer.Commit();
  producer.ProduceOpen(topic, R"({"id":3})", R"({"id":3,"v":"three"})");
  producer.Commit();

  testing::ProcessResult failed = testing::RunProcess(
      {FAUCET_BINARY, "run",
       Config("fail", KafkaSource(topic, ", idle_timeout: 3"), PostgresSink(dst))});
  EXPECT_NE(failed.exit_code, 0);
  EXPECT_NE(failed.output.find(topic + "[0] offset 2"), std::string::npos) << failed.output;
  EXPECT_EQ(db_.Scalar("SELECT string_agg(v, ',' ORDER BY id) FROM " + dst), "one");

  testing::ProcessResult skipped = testing::RunProcess(
      {FAUCET_BINARY, "run",
       Config("skip", KafkaSource(topic, ", idle_timeout: 3, on_decode_error: skip"),
              PostgresSink(dst))});
  EXPECT_EQ(skipped.exit_code, 0) << skipped.output;
  EXPECT_NE(skipped.output.find("skipped"), std::string::npos) << skipped.output;
  EXPECT_EQ(db_.Scalar("SELECT string_agg(v, ',' ORDER BY id) FROM " + dst), "one,three");
}

// Under exactly_once into an append table (no key to absorb a replay), members killed at the
// crash points around the commit and with SIGKILL while another member runs: each partition's
// offset is committed with its rows (a commit token per partition), so every message is
// applied exactly once, whoever owned its partition when.
TEST_F(KafkaSourceTest, ExactlyOnceAppliesEachMessageOnceAcrossCrashesAndRebalances) {
  postgres::testing::CdcTable table(db_, prefix_, "id int8 PRIMARY KEY, v text");
  const std::string dst = prefix_ + "_dst";
  db_.Exec("CREATE TABLE " + dst + " (id int8, v text)");  // appended: a replay would show
  const std::string topic = prefix_ + ".eo";
  const std::string produce = Capture(table, topic, 4);
  for (int batch = 0; batch < 30; ++batch) {
    db_.Exec("INSERT INTO " + prefix_ + " SELECT g, 'v' || g FROM generate_series(" +
             std::to_string(batch * 100 + 1) + ", " + std::to_string(batch * 100 + 100) + ") g");
  }
  testing::ProcessResult produced = testing::RunProcess({FAUCET_BINARY, "run", produce});
  ASSERT_EQ(produced.exit_code, 0) << produced.output;

  auto member = [&](const std::string& name, int idle = 4) {
    return Config(
        name, KafkaSource(topic, ", idle_timeout: " + std::to_string(idle) + ", batch_size: 50"),
        "{type: postgres, config: {connection_url: '" + db_.url() + "', table_name: '" + dst +
            "', column_mapping: auto_map}}",
        "delivery: exactly_once\n");
  };
  auto applied = [&] {
    return db_.Scalar("SELECT count(*) || '/' || count(DISTINCT id) FROM " + dst).value_or("");
  };
  // Killed after a page and its token committed, before the state or the group knew; then
  // after a write; each time the next run (another member, same group) resumes.
  for (const char* point : {"pipeline.after_flush:3", "pipeline.after_write:2",
                            "pipeline.after_flush:1", "source.after_page:2"}) {
    testing::ProcessResult crashed = testing::RunProcess(
        {FAUCET_BINARY, "run", member(std::string("m-") + point)}, {{"FAUCET_CRASH_AT", point}});
    ASSERT_EQ(crashed.exit_code, kCrashExitCode) << point << "\n" << crashed.output;
    const std::string now = applied();
    ASSERT_EQ(now.substr(0, now.find('/')), now.substr(now.find('/') + 1)) << point;
  }
  // Two members at once, one SIGKILLed mid-run: its partitions go to the other.
  // `a` waits longer than the group takes to notice b's death (session_timeout 6 s).
  std::unique_ptr<testing::Process> a = Start(member("a", 15));
  std::unique_ptr<testing::Process> b = Start(member("b", 15));
  const int64_t before = std::stoll(applied());
  ASSERT_TRUE(testing::WaitFor([&] { return std::stoll(applied()) > before + 100; }, 60s,
                               "rows applied", 50ms))
      << applied() << "\n"
      << a->Output() << b->Output();
  b->Kill(SIGKILL);
  b->Wait();
  testing::ProcessResult rest = a->Wait();
  EXPECT_EQ(rest.exit_code, 0) << rest.output;
  EXPECT_EQ(applied(), "3000/3000") << "a took b's partitions over\n" << rest.output;
  testing::ProcessResult last = testing::RunProcess({FAUCET_BINARY, "run", member("last")});
  EXPECT_EQ(last.exit_code, 0) << last.output;
  EXPECT_EQ(applied(), "3000/3000");
  EXPECT_EQ(db_.Scalar("SELECT md5(string_agg(id || v, ',' ORDER BY id)) FROM " + dst),
            db_.Scalar("SELECT md5(string_agg(id || v, ',' ORDER BY id)) FROM " + prefix_));
}

// Brokers that do not answer fail the run naming them, instead of idling until idle_timeout.
TEST_F(KafkaSourceTest, BrokersThatDoNotAnswerAreAnErrorNamingThem) {
  const std::string config = Config(
      "unreachable", "{type: kafka, config: {brokers: '127.0.0.1:1', topics: [t], group_id: g}}",
      PostgresSink(prefix_ + "_dst"));
  testing::ProcessResult r = testing::RunProcess({FAUCET_BINARY, "run", config});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("kafka 127.0.0.1:1 group g: no broker answered"), std::string::npos)
      << r.output;
}

// The rule: a page's offsets reach the group only once the destination has the page. A run
// whose sink refuses a row stops there; the next run (the row allowed) starts after the last
// durable page and applies every row, none lost to an offset committed too early. (Group
// commit may have written the pages before the refused one in the same transaction as it, so
// how many are durable depends on how far the sink was behind.)
TEST_F(KafkaSourceTest, OffsetsAreCommittedOnlyForDurablePages) {
  const std::string dst = prefix_ + "_dst";
  db_.Exec("CREATE TABLE " + dst + " (id int8 PRIMARY KEY, v text CHECK (v <> 'bad'))");
  const std::string topic = prefix_ + ".rule";
  kafka::testing::CreateTopic(brokers_, topic, 1);
  kafka::testing::TransactionalProducer producer(brokers_, prefix_ + ".producer");
  for (int id = 1; id <= 60; ++id) {
    const std::string sid = std::to_string(id);
    producer.ProduceOpen(topic, R"({"id":)" + sid + "}",
                         R"({"id":)" + sid + R"(,"v":")" + (id == 45 ? "bad" : "ok") + R"("})");
    producer.Commit();
  }
  const std::string config =
      Config("rule", KafkaSource(topic, ", idle_timeout: 3, batch_size: 10"), PostgresSink(dst));
  testing::ProcessResult refused = testing::RunProcess({FAUCET_BINARY, "run", config});
  EXPECT_NE(refused.exit_code, 0) << refused.output;
  // Whole pages before the refused one are durable, and nothing of it or after it.
  const int durable = std::stoi(db_.Scalar("SELECT count(*) FROM " + dst).value_or("-1"));
  EXPECT_EQ(durable % 10, 0);
  EXPECT_LE(durable, 40);
  EXPECT_EQ(db_.Scalar("SELECT coalesce(max(id), 0) FROM " + dst), std::to_string(durable));

  db_.Exec("ALTER TABLE " + dst + " DROP CONSTRAINT " + dst + "_v_check");
  // Another member (a state of its own): only the group's committed offset says where to start.
  testing::ProcessResult resumed =
      testing::RunProcess({FAUCET_BINARY, "run",
                           Config("rule2", KafkaSource(topic, ", idle_timeout: 3, batch_size: 10"),
                                  PostgresSink(dst))});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_EQ(db_.Scalar("SELECT count(*) || ':' || min(id) || ':' || max(id) FROM " + dst),
            "60:1:60");
  // It started at the committed offset, not before: the durable rows were not applied again.
  EXPECT_NE(resumed.output.find(" " + std::to_string(60 - durable) + " changes"), std::string::npos)
      << resumed.output;
}

}  // namespace
}  // namespace faucet
