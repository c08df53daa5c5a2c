// The observability listener against a running `faucet mirror` and `faucet run` on real
// servers: /metrics (checked by promtool and scraped by a real Prometheus), the probes, the
// live status API (the same JSON as `faucet mirror status --json`), the status page (rendered
// by headless Chromium), the token rule and redaction.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "sources/postgres/pg_test_support.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/sql_destination.h"
#include "testing/wait.h"

namespace faucet {
namespace {

using postgres::testing::SlotGuard;
using postgres::testing::TestDb;
using namespace std::chrono_literals;

// A port nothing listens on now (the kernel's pick for a socket bound to port 0).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The value of the series `series` (name and labels exactly as rendered), or -1.
double SeriesValue(const std::string& metrics, const std::string& series) {
  const size_t at = metrics.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(metrics.substr(at + series.size() + 2));
}

class ObservabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    schema_ = testing::UniqueName("obs");
    dir_ = testing::TempDir("observability");
    guard_ = std::make_unique<SlotGuard>(src_.url(), schema_ + "_slot");
    dest_ = std::make_unique<testing::SqlDestination>(testing::SqlDest::kPostgres, schema_, dir_);
    src_.Exec("CREATE SCHEMA " + schema_);
    for (const char* t : {"a", "b", "c"}) {
      src_.Exec("CREATE TABLE " + Src(t) + " (id int8 PRIMARY KEY, v text)");
      src_.Exec("INSERT INTO " + Src(t) + " SELECT g, 'v' || g FROM generate_series(1, 20) g");
      dest_->Query(std::string("CREATE TABLE ") + t + " (id int8 PRIMARY KEY, v text)");
    }
    src_.Exec("CREATE PUBLICATION " + schema_ + "_pub FOR TABLES IN SCHEMA " + schema_);
  }
  void TearDown() override {
    if (faucet_) {
      faucet_->Kill(SIGTERM);
      faucet_->Wait();
    }
  }

  std::string Src(const std::string& t) const { return schema_ + "." + t; }

  std::string SourceYaml() const {
    return "{type: postgres-cdc, config: {connection_url: '" + src_.url() +
           "', slot_name: " + schema_ + "_slot, publication_name: " + schema_ +
           "_pub, status_update_interval: 1" + source_extra_ + "}}";
  }

  // A multi-table mirror of the schema with `observability` (none when empty).
  void WriteMirrorConfig(const std::string& observability, bool continuous = true) {
    config_ = dir_ + "/" + schema_ + ".yaml";
    std::ofstream(config_) << "name: " << schema_ << "\n"
                           << (observability.empty() ? ""
                                                     : "observability: " + observability + "\n")
                           << "pipeline:\n  source: " << SourceYaml() << "\n"
                           << "  transforms: [{type: cdc_unwrap}]\n"
                           << "  sink: "
                           << dest_->SinkYaml("unused",
                                              ", column_mapping: auto_map, "
                                              "delete_marker: {field: __op, values: [d]}")
                           << "\n"
                           << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n"
                           << "mirror:\n  mode: snapshot_then_cdc\n  continuous: "
                           << (continuous ? "true" : "false") << "\n"
                           << "  snapshot: {source: {type: postgres, config: {connection_url: '"
                           << src_.url() << "', query: 'SELECT 1'}}}\n"
                           << "  tables: {include: ['" << schema_ << ".*']}\n";
  }

  // Starts `faucet args...` and waits for its listener; returns a client for it.
  void StartFaucet(const std::vector<std::string>& args) {
    std::vector<std::string> argv{FAUCET_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    faucet_ = std::make_unique<testing::Process>(argv, std::map<std::string, std::string>{});
    const std::regex serving("on http://127\\.0\\.0\\.1:([0-9]+)/");
    std::smatch m;
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          const std::string out = faucet_->Output();
          if (!std::regex_search(out, m, serving)) return false;
          port_ = std::stoi(m[1]);
          return true;
        },
        30s, "the observability listener", 50ms))
        << faucet_->Output();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  }

  httplib::Result Get(const std::string& path, const httplib::Headers& headers = {}) {
    return client_->Get(path.c_str(), headers);
  }

  std::string Metrics() {
    auto r = Get("/metrics");
    return r && r->status == 200 ? r->body : "";
  }

  // Waits until the mirror is streaming with every table active.
  void WaitForActive() {
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          auto r = Get("/readyz");
          return r && r->status == 200;
        },
        60s, "/readyz to answer 200", 100ms))
        << faucet_->Output();
    ASSERT_TRUE(testing::WaitFor(
        [&] {
          auto r = Get("/v1/mirror/" + schema_);
          if (!r || r->status != 200) return false;
          const Json status = Json::parse(r->body);
          return status["summary"]["by_phase"].value("active", 0) == 3;
        },
        60s, "every table to be active", 100ms))
        << faucet_->Output();
  }

  TestDb src_;
  std::string schema_;
  std::string dir_;
  std::string config_;
  std::string source_extra_;  // more postgres-cdc config keys (", idle_timeout: 2")
  std::unique_ptr<SlotGuard> guard_;
  std::unique_ptr<testing::SqlDestination> dest_;
  std::unique_ptr<testing::Process> faucet_;
  int port_ = 0;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ObservabilityTest, AMirrorServesTheLagLadderItsLiveStatusAndNoPassword) {
  WriteMirrorConfig("{prometheus: {listen: '127.0.0.1:0'}}");
  StartFaucet({"mirror", config_});
  WaitForActive();
  src_.Exec("INSERT INTO " + Src("a") + " SELECT g, 'n' || g FROM generate_series(100, 109) g");

  const std::string a = "pipeline=\"" + schema_ + "\",table=\"" + schema_ + ".a\"";
  std::string metrics;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        metrics = Metrics();
        // The byte lags come from a periodic read of the server's log: wait for one too.
        return SeriesValue(metrics, "faucet_changes_total{" + a + ",op=\"insert\"}") >= 10 &&
               SeriesValue(metrics, "faucet_lag_seconds{" + a + ",stage=\"persisted\"}") == 0 &&
               SeriesValue(metrics, "faucet_lag_bytes{" + a + ",stage=\"received\"}") >= 0;
      },
      30s, "the 10 inserts to be counted and persisted", 200ms))
      << metrics;
  for (const char* stage : {"received", "written", "flushed", "persisted", "acknowledged"}) {
    EXPECT_GE(SeriesValue(metrics, "faucet_lag_bytes{" + a + ",stage=\"" + stage + "\"}"), 0)
        << stage << "\n"
        << metrics;
  }
  EXPECT_GE(
      SeriesValue(metrics, "faucet_lag_bytes{pipeline=\"" + schema_ + "\",stage=\"confirmed\"}"), 0)
      << metrics;
  EXPECT_GT(SeriesValue(metrics, "faucet_source_retained_bytes{pipeline=\"" + schema_ + "\"}"), 0)
      << metrics;
  EXPECT_EQ(SeriesValue(metrics, "faucet_table_phase{" + a + ",phase=\"active\"}"), 1) << metrics;
  EXPECT_EQ(SeriesValue(metrics, "faucet_tables{pipeline=\"" + schema_ + "\",phase=\"active\"}"), 3)
      << metrics;
  EXPECT_GT(SeriesValue(metrics, "faucet_sink_write_seconds_count{" + a + "}"), 0) << metrics;
  EXPECT_EQ(SeriesValue(metrics, "faucet_pipeline_up{" + a + "}"), 1) << metrics;

  // Prometheus' linter accepts the live exposition.
  const std::string path = dir_ + "/metrics.txt";
  std::ofstream(path) << metrics;
  testing::ProcessResult lint =
      testing::RunProcess({"/bin/sh", "-c", "promtool check metrics < '" + path + "'"});
  EXPECT_EQ(lint.exit_code, 0) << lint.output;

  // The live status is `faucet mirror status --json`'s shape, with the same tables and phases.
  auto live = Get("/v1/mirror/" + schema_);
  ASSERT_EQ(live->status, 200) << live->body;
  const Json status = Json::parse(live->body);
  testing::ProcessResult cli =
      testing::RunProcess({FAUCET_BINARY, "mirror", "status", "--json", config_});
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  const Json stored = Json::parse(cli.output.substr(cli.output.find('{')));
  ASSERT_EQ(status["tables"].size(), stored["tables"].size());
  for (size_t i = 0; i < status["tables"].size(); ++i) {
    EXPECT_EQ(status["tables"][i]["table"], stored["tables"][i]["table"]);
    EXPECT_EQ(status["tables"][i]["phase"], stored["tables"][i]["phase"]);
    for (const auto& [key, _] : stored["tables"][i].items()) {
      EXPECT_TRUE(status["tables"][i].contains(key)) << key;
    }
  }

  // The source URL carries a password ("faucet:faucet@"): no response shows it.
  for (const std::string& p : {std::string("/metrics"), "/v1/mirror/" + schema_, std::string("/"),
                               std::string("/readyz"), std::string("/nope")}) {
    auto r = Get(p);
    ASSERT_TRUE(r) << p;
    EXPECT_EQ(r->body.find(":faucet@"), std::string::npos) << p << ": " << r->body;
  }
}

// A single-table mirror serves its live status (the JSON of `faucet mirror status --json`) and
// its gauges.
TEST_F(ObservabilityTest, ASingleTableMirrorServesItsStatus) {
  src_.Exec("ALTER PUBLICATION " + schema_ + "_pub SET TABLE " + Src("a"));
  config_ = dir_ + "/single.yaml";
  std::ofstream(config_) << "name: " << schema_ << "\n"
                         << "observability: {prometheus: {listen: '127.0.0.1:0'}}\n"
                         << "pipeline:\n  source: " << SourceYaml() << "\n"
                         << "  transforms: [{type: cdc_unwrap}]\n"
                         << "  sink: "
                         << dest_->SinkYaml("a",
                                            ", column_mapping: auto_map, write_mode: upsert, "
                                            "key: [id], delete_marker: {field: __op, values: [d]}")
                         << "\n"
                         << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n"
                         << "mirror:\n  mode: snapshot_then_cdc\n"
                         << "  snapshot: {source: {type: postgres, config: {connection_url: '"
                         << src_.url() << "', query: 'SELECT * FROM " << Src("a") << "'}}}\n";
  StartFaucet({"mirror", config_});
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        auto r = Get("/readyz");
        return r && r->status == 200;
      },
      60s, "the mirror to stream", 100ms))
      << faucet_->Output();
  src_.Exec("INSERT INTO " + Src("a") + " VALUES (500, 'x')");
  Json live;
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        auto r = Get("/v1/mirror/" + schema_);
        if (!r || r->status != 200) return false;
        live = Json::parse(r->body);
        return live["phase"] == "cdc" && live["last_commit_ms"].get<int64_t>() > 0;
      },
      30s, "the live status to show the streamed commit", 100ms))
      << live.dump() << faucet_->Output();
  EXPECT_EQ(live["snapshot"]["rows"], 20);
  testing::ProcessResult cli =
      testing::RunProcess({FAUCET_BINARY, "mirror", "status", "--json", config_});
  ASSERT_EQ(cli.exit_code, 0) << cli.output;
  const Json stored = Json::parse(cli.output.substr(cli.output.find('{')));
  for (const auto& [key, _] : stored.items()) EXPECT_TRUE(live.contains(key)) << key;
  const std::string metrics = Metrics();
  const std::string p = "pipeline=\"" + schema_ + "\"";
  EXPECT_EQ(SeriesValue(metrics, "faucet_mirror_phase{" + p + ",phase=\"cdc\"}"), 1) << metrics;
  EXPECT_EQ(SeriesValue(metrics, "faucet_snapshot_rows{" + p + "}"), 20) << metrics;
  EXPECT_EQ(SeriesValue(metrics, "faucet_pipeline_up{" + p + "}"), 1) << metrics;
}

// A real Prometheus scrapes the mirror (with the bearer token) and answers queries on the lag
// series; without the token the mirror refuses the data.
TEST_F(ObservabilityTest, PrometheusScrapesTheMirrorWithItsToken) {
  WriteMirrorConfig("{prometheus: {listen: '127.0.0.1:0'}, auth_token: '${env:OBS_TOKEN}'}");
  faucet_ = nullptr;
  setenv("OBS_TOKEN", "t0ken-for-tests", 1);
  StartFaucet({"mirror", config_});
  unsetenv("OBS_TOKEN");
  EXPECT_EQ(Get("/metrics")->status, 401);
  EXPECT_EQ(Get("/v1/mirror/" + schema_)->status, 401);
  const httplib::Headers auth{{"Authorization", "Bearer t0ken-for-tests"}};
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        auto r = Get("/v1/mirror/" + schema_, auth);
        return r && r->status == 200 &&
               Json::parse(r->body)["summary"]["by_phase"].value("active", 0) == 3;
      },
      60s, "every table to be active", 100ms));

  const int prom_port = FreePort();
  const std::string prom_dir = dir_ + "/prometheus";
  std::ofstream(dir_ + "/prometheus.yml")
      << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
      << "scrape_configs:\n"
      << "  - job_name: faucet\n"
      << "    authorization: {credentials: t0ken-for-tests}\n"
      << "    static_configs: [{targets: ['127.0.0.1:" << port_ << "']}]\n";
  testing::Process prometheus({"/usr/bin/prometheus", "--config.file=" + dir_ + "/prometheus.yml",
                               "--storage.tsdb.path=" + prom_dir,
                               "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                              {});
  httplib::Client prom("127.0.0.1", prom_port);
  Json result;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        auto r =
            prom.Get("/api/v1/query?query=" +
                     httplib::detail::encode_query_param(
                         "faucet_lag_bytes{stage=\"persisted\",pipeline=\"" + schema_ + "\"}"));
        if (!r || r->status != 200) return false;
        result = Json::parse(r->body)["data"]["result"];
        return result.size() == 3;  // one per table
      },
      60s, "Prometheus to have scraped a persisted lag per table", 500ms))
      << result.dump() << "\n"
      << prometheus.Output();
  auto up = prom.Get("/api/v1/query?query=up");
  ASSERT_TRUE(up);
  EXPECT_NE(up->body.find("\"1\""), std::string::npos) << "the scrape succeeds: " << up->body;
  prometheus.Kill(SIGTERM);
  prometheus.Wait();
}

// Headless Chromium renders the status page: the mirror's tables and their phases.
TEST_F(ObservabilityTest, TheStatusPageShowsTheTablesInABrowser) {
  WriteMirrorConfig("{prometheus: {listen: '127.0.0.1:0'}}");
  StartFaucet({"mirror", config_});
  WaitForActive();
  testing::ProcessResult page =
      testing::RunProcess({"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-dev-shm-usage", "--user-data-dir=" + dir_ + "/chromium",
                           "--virtual-time-budget=10000", "--dump-dom",
                           "http://127.0.0.1:" + std::to_string(port_) + "/"});
  ASSERT_EQ(page.exit_code, 0) << page.output;
  for (const char* t : {"a", "b", "c"}) {
    EXPECT_NE(page.output.find("<td>" + Src(t) + "</td>"), std::string::npos) << page.output;
  }
  EXPECT_NE(page.output.find("<td class=\"phase-active\">active</td>"), std::string::npos)
      << page.output;
  EXPECT_NE(page.output.find("3 tables: 3 active"), std::string::npos) << page.output;
}

// `faucet run` of a change stream serves the pipeline's ladder; it has no mirror status.
TEST_F(ObservabilityTest, ARunServesItsPipelineMetrics) {
  src_.Exec("SELECT pg_create_logical_replication_slot('" + schema_ + "_slot', 'pgoutput')");
  const std::string config = dir_ + "/run.yaml";
  std::ofstream(config) << "name: " << schema_ << "\n"
                        << "observability: {prometheus: {listen: '127.0.0.1:0'}}\n"
                        << "pipeline:\n  source: " << SourceYaml() << "\n"
                        << "  sink: {type: file, config: {path: '" << dir_
                        << "/out.jsonl', format: jsonl}}\n"
                        << "  state: {type: file, config: {path: '" << dir_ << "/state'}}\n";
  StartFaucet({"run", config});
  ASSERT_TRUE(testing::WaitFor(
      [&] {
        auto r = Get("/readyz");
        return r && r->status == 200;
      },
      30s, "the pipeline to run", 100ms))
      << faucet_->Output();
  src_.Exec("INSERT INTO " + Src("b") + " SELECT g, 'n' || g FROM generate_series(100, 104) g");
  const std::string p = "pipeline=\"" + schema_ + "\"";
  std::string metrics;
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        metrics = Metrics();
        return SeriesValue(metrics, "faucet_changes_total{" + p + ",op=\"insert\"}") == 5 &&
               SeriesValue(metrics, "faucet_checkpoints_total{" + p + "}") >= 1 &&
               SeriesValue(metrics, "faucet_lag_seconds{" + p + ",stage=\"persisted\"}") == 0;
      },
      30s, "the inserts to be counted and persisted", 200ms))
      << metrics << faucet_->Output();
  EXPECT_GE(SeriesValue(metrics, "faucet_lag_bytes{" + p + ",stage=\"acknowledged\"}"), 0)
      << metrics;
  EXPECT_EQ(Get("/v1/mirror/" + schema_)->status, 404);
}

// Snapshot progress is a live line on a terminal (a pseudo-terminal here, by script(1)), and
// absent when stderr is not one.
TEST_F(ObservabilityTest, ProgressIsLiveOnATerminalOnly) {
  source_extra_ = ", idle_timeout: 2";
  WriteMirrorConfig("", /*continuous=*/false);
  testing::ProcessResult tty = testing::RunProcess(
      {"/usr/bin/script", "-qfec", std::string(FAUCET_BINARY) + " mirror " + config_, "/dev/null"});
  ASSERT_EQ(tty.exit_code, 0) << tty.output;
  EXPECT_NE(tty.output.find("\rsnapshot: 3 of 3 tables done; in all: 60 rows, "), std::string::npos)
      << tty.output;

  src_.Exec("SELECT pg_drop_replication_slot('" + schema_ + "_slot')");
  std::filesystem::remove_all(dir_ + "/state");
  testing::ProcessResult plain = testing::RunProcess({FAUCET_BINARY, "mirror", config_});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(plain.output.find('\r'), std::string::npos) << plain.output;
}

TEST_F(ObservabilityTest, ANonLoopbackListenerNeedsAToken) {
  WriteMirrorConfig("{prometheus: {listen: '0.0.0.0:0'}}");
  testing::ProcessResult r = testing::RunProcess({FAUCET_BINARY, "validate", config_});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("observability.prometheus.listen"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("auth_token"), std::string::npos) << r.output;
  r = testing::RunProcess({FAUCET_BINARY, "mirror", config_});
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace faucet
