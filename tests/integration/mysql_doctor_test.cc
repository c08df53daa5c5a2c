// `faucet doctor` for mysql-cdc against the MariaDB of scripts/services.sh: a ROW/FULL server
// is healthy; STATEMENT binlogs, MINIMAL row metadata or images, short retention, a server_id
// clash, a user without replication privileges, a purged start file, missing tables and tables
// without a key are each named, with the fix; the JSON shape; no password in any output.
//
// Several tests change server-wide settings (SET GLOBAL), restored by the fixture even when the
// test fails: this binary runs alone (RUN_SERIAL), as no other test may see them.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "mysql_test_support.h"
#include "sources/mysql/doctor.h"
#include "sources/mysql/query_source.h"
#include "testing/process.h"

namespace faucet::mysql {
namespace {

using testing::TestDb;

const DoctorCheck* Find(const DoctorReport& r, const std::string& name) {
  for (const DoctorCheck& c : r.checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

DoctorOutcome OutcomeOf(const DoctorReport& r, const std::string& name) {
  const DoctorCheck* c = Find(r, name);
  EXPECT_NE(c, nullptr) << "no check " << name << " in\n" << r.ToText();
  return c == nullptr ? DoctorOutcome::kOk : c->outcome;
}

class MysqlDoctor : public ::testing::Test {
 protected:
  void SetUp() override {
    keyed_ = db_.Table("dkeyed");
    db_.Exec("CREATE TABLE " + keyed_ + " (id INT PRIMARY KEY, v TEXT)");
    config_.endpoint = db_.endpoint();
    config_.server_id = 4242;
    config_.include_tables = {"faucet." + keyed_};
  }
  void TearDown() override {
    // Server-wide settings back as they were, in reverse order, whatever the test did.
    for (auto it = restore_.rbegin(); it != restore_.rend(); ++it) db_.Exec(*it);
  }

  // SET GLOBAL `name` = `value`, restored by TearDown.
  void SetGlobal(const std::string& name, const std::string& value) {
    std::optional<std::string> old = db_.Scalar("SELECT @@GLOBAL." + name);
    ASSERT_TRUE(old.has_value()) << name;
    const bool number = !old->empty() && old->find_first_not_of("0123456789.") == std::string::npos;
    restore_.push_back("SET GLOBAL " + name + " = " + (number ? *old : Literal(db_.conn(), *old)));
    db_.Exec("SET GLOBAL " + name + " = " + value);
  }

  DoctorReport Run(const DoctorResume& resume = {}) {
    Result<DoctorReport> r = RunDoctor(config_, resume);
    EXPECT_OK(r);
    if (!r.ok()) return {};
    const std::string text = r->ToText() + r->ToJson().dump();
    EXPECT_EQ(text.find(":faucet@"), std::string::npos) << "password shown:\n" << text;
    EXPECT_EQ(text.find("IDENTIFIED BY"), std::string::npos) << text;
    return *r;
  }

  TestDb db_;
  std::string keyed_;
  MysqlCdcConfig config_;
  std::vector<std::string> restore_;
};

TEST_F(MysqlDoctor, AHealthyServerPassesEveryCheckInOrder) {
  DoctorReport r = Run();
  EXPECT_TRUE(r.ok()) << r.ToText();
  const std::vector<std::string> order = {
      "connection",       "server_version",      "log_bin",         "binlog_format",
      "binlog_row_image", "binlog_row_metadata", "binlog_checksum", "privileges",
      "server_id",        "binlog_retention",    "start_position",  "tables"};
  ASSERT_EQ(r.checks.size(), order.size()) << r.ToText();
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(r.checks[i].name, order[i]);
    EXPECT_EQ(r.checks[i].outcome, DoctorOutcome::kOk)
        << r.checks[i].name << ": " << r.checks[i].detail;
  }
  EXPECT_NE(Find(r, "server_version")->detail.find("MariaDB"), std::string::npos);
  EXPECT_NE(Find(r, "binlog_retention")->detail.find("until purged by hand"), std::string::npos);
  EXPECT_NE(Find(r, "start_position")->detail.find("binlog's end, now binlog."), std::string::npos)
      << Find(r, "start_position")->detail;
}

TEST_F(MysqlDoctor, JsonHasOkAndOneEntryPerCheck) {
  Json j = Run().ToJson();
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["ok"], true);
  ASSERT_TRUE(j["checks"].is_array());
  ASSERT_FALSE(j["checks"].empty());
  for (const Json& c : j["checks"]) {
    EXPECT_TRUE(c["check"].is_string());
    EXPECT_TRUE(c["status"] == "ok" || c["status"] == "warn" || c["status"] == "fail") << c;
    EXPECT_TRUE(c["detail"].is_string());
  }
  EXPECT_EQ(j["checks"][0]["check"], "connection");
}

TEST_F(MysqlDoctor, StatementBinlogFormatFails) {
  SetGlobal("binlog_format", "'STATEMENT'");
  DoctorReport r = Run();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(OutcomeOf(r, "binlog_format"), DoctorOutcome::kFail);
  EXPECT_NE(Find(r, "binlog_format")->detail.find("binlog_format = ROW"), std::string::npos);
}

TEST_F(MysqlDoctor, MinimalRowMetadataAndImageAreWarnings) {
  SetGlobal("binlog_row_metadata", "'MINIMAL'");
  SetGlobal("binlog_row_image", "'MINIMAL'");
  DoctorReport r = Run();
  EXPECT_TRUE(r.ok()) << r.ToText();
  EXPECT_EQ(OutcomeOf(r, "binlog_row_metadata"), DoctorOutcome::kWarn);
  EXPECT_NE(Find(r, "binlog_row_metadata")->detail.find("ALTER TABLE"), std::string::npos);
  EXPECT_EQ(OutcomeOf(r, "binlog_row_image"), DoctorOutcome::kWarn);
  EXPECT_NE(Find(r, "binlog_row_image")->detail.find("unchanged"), std::string::npos);
}

TEST_F(MysqlDoctor, RetentionUnderADayIsAWarningSayingHowLong) {
  SetGlobal("binlog_expire_logs_seconds", "7200");
  DoctorReport r = Run();
  EXPECT_EQ(OutcomeOf(r, "binlog_retention"), DoctorOutcome::kWarn);
  EXPECT_NE(Find(r, "binlog_retention")->detail.find("after 2 hours"), std::string::npos)
      << Find(r, "binlog_retention")->detail;
  db_.Exec("SET GLOBAL binlog_expire_logs_seconds = 604800");
  r = Run();
  EXPECT_EQ(OutcomeOf(r, "binlog_retention"), DoctorOutcome::kOk);
  EXPECT_NE(Find(r, "binlog_retention")->detail.find("after 7 days"), std::string::npos)
      << Find(r, "binlog_retention")->detail;
}

TEST_F(MysqlDoctor, TheServersOwnServerIdFails) {
  config_.server_id = static_cast<uint32_t>(std::stoul(*db_.Scalar("SELECT @@server_id")));
  DoctorReport r = Run();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(OutcomeOf(r, "server_id"), DoctorOutcome::kFail);
  EXPECT_NE(Find(r, "server_id")->detail.find("server's own"), std::string::npos);
}

TEST_F(MysqlDoctor, AUserWithoutReplicationPrivilegesFails) {
  const std::string user = faucet::testing::UniqueName("norepl");
  db_.Exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw-Secret-77'");
  restore_.push_back("DROP USER IF EXISTS '" + user + "'@'%'");
  db_.Exec("GRANT SELECT ON faucet.* TO '" + user + "'@'%'");
  const MysqlUrl& p = db_.endpoint().parts;  // no database: the user may lose all access to it
  config_.endpoint = testing::TestEndpoint("mysql://" + user + ":pw-Secret-77@" + p.host + ":" +
                                           std::to_string(p.port));
  DoctorReport r = Run();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(OutcomeOf(r, "connection"), DoctorOutcome::kOk);
  EXPECT_EQ(OutcomeOf(r, "privileges"), DoctorOutcome::kFail);
  const std::string& detail = Find(r, "privileges")->detail;
  EXPECT_NE(detail.find("REPLICATION SLAVE"), std::string::npos) << detail;
  EXPECT_NE(detail.find("BINLOG MONITOR"), std::string::npos) << detail;
  const std::string all = r.ToText() + r.ToJson().dump();
  EXPECT_EQ(all.find("pw-Secret-77"), std::string::npos) << all;

  // Granted, and SELECT on the table through its database: ok.
  db_.Exec("GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.* TO '" + user + "'@'%'");
  r = Run();
  EXPECT_EQ(OutcomeOf(r, "privileges"), DoctorOutcome::kOk) << Find(r, "privileges")->detail;
  // Without SELECT on a streamed table: a warning naming it.
  db_.Exec("REVOKE SELECT ON faucet.* FROM '" + user + "'@'%'");
  r = Run();
  EXPECT_EQ(OutcomeOf(r, "privileges"), DoctorOutcome::kWarn);
  EXPECT_NE(Find(r, "privileges")->detail.find(keyed_), std::string::npos);
}

TEST_F(MysqlDoctor, APurgedStartFileFailsSayingAResyncIsNeeded) {
  const std::string oldest = db_.Scalar("SHOW BINARY LOGS").value_or("");
  ASSERT_GT(oldest.size(), 6u);
  // The binlog before the oldest the server has: purged.
  std::string purged = oldest;
  purged.back() = static_cast<char>(purged.back() - 1);
  if (purged.back() < '0') purged = oldest.substr(0, oldest.rfind('.') + 1) + "000000";
  config_.start_position.kind = MysqlStartPosition::Kind::kFilePos;
  config_.start_position.file = purged;
  config_.start_position.pos = 4;
  DoctorReport r = Run();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(OutcomeOf(r, "start_position"), DoctorOutcome::kFail);
  EXPECT_NE(Find(r, "start_position")->detail.find("binlog purged, a resync is needed"),
            std::string::npos)
      << Find(r, "start_position")->detail;

  // A persisted bookmark wins over the config: the oldest file is still there.
  DoctorResume resume;
  resume.bookmark = Bookmark{Json{{"file", oldest}, {"pos", 4}}};
  resume.where = "p::row-0";
  r = Run(resume);
  EXPECT_EQ(OutcomeOf(r, "start_position"), DoctorOutcome::kOk)
      << Find(r, "start_position")->detail;
  EXPECT_NE(Find(r, "start_position")->detail.find("p::row-0"), std::string::npos);

  resume.bookmark = Bookmark{Json{{"file", purged}, {"pos", 4}}};
  EXPECT_EQ(OutcomeOf(Run(resume), "start_position"), DoctorOutcome::kFail);
  resume.bookmark = Bookmark{Json{{"last_lsn", "0/1"}}};
  EXPECT_EQ(OutcomeOf(Run(resume), "start_position"), DoctorOutcome::kFail)
      << "not a mysql-cdc bookmark";
}

TEST_F(MysqlDoctor, MissingTablesAndTablesWithoutAKeyAreWarnings) {
  const std::string keyless = db_.Table("dkeyless");
  db_.Exec("CREATE TABLE " + keyless + " (v TEXT)");
  config_.include_tables.insert("faucet." + keyless);
  config_.include_tables.insert("faucet.no_such_table_d");
  DoctorReport r = Run();
  EXPECT_TRUE(r.ok()) << r.ToText();
  EXPECT_EQ(OutcomeOf(r, "tables"), DoctorOutcome::kWarn);
  const std::string& detail = Find(r, "tables")->detail;
  EXPECT_NE(detail.find("faucet.no_such_table_d"), std::string::npos) << detail;
  EXPECT_NE(detail.find("no primary key on faucet." + keyless), std::string::npos) << detail;
  EXPECT_EQ(detail.find(keyed_), std::string::npos) << detail;
}

TEST_F(MysqlDoctor, AnUnreachableServerIsOneFailedCheck) {
  config_.endpoint = testing::TestEndpoint("mysql://faucet:s3cret@127.0.0.1:1/faucet");
  DoctorReport r = Run();
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].name, "connection");
  EXPECT_EQ(r.checks[0].outcome, DoctorOutcome::kFail);
  EXPECT_EQ(r.ToText().find("s3cret"), std::string::npos) << r.ToText();
}

std::string WriteConfig(const std::string& source_yaml) {
  const std::string dir = faucet::testing::TempDir("mysqldoctor");
  std::ofstream(dir + "/doc.yaml") << "version: 1\nname: doc\npipeline:\n  source: " << source_yaml
                                   << "\n  sink: {type: jsonl, config: {path: '" << dir
                                   << "/out.jsonl'}}\n"
                                      "  state: {type: file, config: {path: '"
                                   << dir << "/state'}}\n";
  return dir + "/doc.yaml";
}

TEST_F(MysqlDoctor, CliPrintsTheReportAndExitsByIt) {
  const std::string good =
      WriteConfig("{type: mysql-cdc, config: {connection_url: '" + db_.url() +
                  "', server_id: 4242, include_tables: [faucet." + keyed_ + "]}}");
  faucet::testing::ProcessResult r =
      faucet::testing::RunProcess({FAUCET_BINARY, "doctor", "--json", good});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  Json j = Json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(r.output.find(":faucet@"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no persisted bookmark"), std::string::npos) << r.output;

  const std::string own_id =
      WriteConfig("{type: mysql-cdc, config: {connection_url: '" + db_.url() +
                  "', server_id: " + *db_.Scalar("SELECT @@server_id") + "}}");
  r = faucet::testing::RunProcess({FAUCET_BINARY, "doctor", own_id});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("fail  server_id"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(":faucet@"), std::string::npos) << r.output;

  const std::string other = WriteConfig("{type: generator, config: {count: 1}}");
  r = faucet::testing::RunProcess({FAUCET_BINARY, "doctor", other});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("postgres-cdc or mysql-cdc"), std::string::npos) << r.output;
}

// The query source reads TIMESTAMP in UTC even when the server's own zone is another (here
// because it changes a server-wide setting).
TEST_F(MysqlDoctor, QuerySourceReadsTimestampsInUtcWhateverTheServersZone) {
  SetGlobal("time_zone", "'+05:00'");
  const std::string t = db_.Table("dzone");
  TestDb writer;  // a new session: the server's zone, +05:00
  ASSERT_EQ(writer.Scalar("SELECT @@session.time_zone"), "+00:00")
      << "mysql::Connect sets the session to UTC";
  writer.Exec("SET SESSION time_zone = DEFAULT");
  writer.Exec("CREATE TABLE " + t + " (ts TIMESTAMP(3) NULL)");
  writer.Exec("INSERT INTO " + t + " VALUES ('2024-06-01 12:00:00.500')");
  MysqlQueryConfig config;
  config.endpoint = db_.endpoint();
  config.query = "SELECT ts FROM " + t;
  MysqlQuerySource source(config);
  ASSERT_OK(source.Open(std::nullopt));
  Result<SourceEvent> e = source.Next(std::chrono::seconds(1));
  ASSERT_OK(e);
  ASSERT_EQ(e->page.changes.size(), 1u);
  EXPECT_EQ((*e->page.changes[0].after)[0].text, "2024-06-01 07:00:00.500+00");
}

}  // namespace
}  // namespace faucet::mysql
