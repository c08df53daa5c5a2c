// The command line as a user meets it: exit codes, error messages that name the file, line and
// key, the derived delivery guarantee, and no password in any output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/crash_point.h"
#include "testing/process.h"
#include "testing/services.h"
#include "testing/sql_destination.h"

namespace faucet {
namespace {

using testing::ProcessResult;
using testing::RunProcess;

std::string WriteConfig(const std::string& name, const std::string& text) {
  std::string path = testing::TempDir("cli") + "/" + name;
  std::ofstream(path) << text;
  return path;
}

ProcessResult Faucet(const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env = {},
                     testing::Stdout out = testing::Stdout::kCaptured) {
  std::vector<std::string> argv = {FAUCET_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, env, out);
}

const char* kGood =
    "version: 1\n"
    "pipeline:\n"
    "  source: {type: generator, config: {count: 10}}\n"
    "  sink: {type: jsonl, config: {path: ./out.jsonl}}\n"
    "  state: {type: file, config: {path: ./state}}\n";

struct BadConfig {
  const char* what;
  const char* yaml;
  const char* expected;  // a substring of the error, with the line number
};

const BadConfig kBadConfigs[] = {
    {"bad yaml", "pipeline:\n  source: {type: generator\n", "pipe.yaml:3:1:"},
    {"unknown top-level key", "pipelines: {}\n", "pipe.yaml:1:1: pipelines: unknown key"},
    {"wrong type",
     "pipeline:\n  source: {type: generator, config: {count: ten}}\n  sink: {type: stdout}\n",
     "pipe.yaml:2:45: pipeline.source.config.count: expected an integer >= 0, got 'ten'"},
    {"missing env var",
     "pipeline:\n  source: {type: generator}\n  sink:\n    type: jsonl\n"
     "    config: {path: '${env:FAUCET_TEST_UNSET_VAR}'}\n",
     "pipe.yaml:5:"},
    {"bad state key (name)",
     "name: 'has space'\npipeline:\n  source: {type: generator}\n  sink: {type: stdout}\n",
     "pipe.yaml:1:7: name:"},
    {"exactly_once with a jsonl sink",
     "delivery: exactly_once\npipeline:\n  source: {type: postgres-cdc, config: "
     "{connection_url: 'postgres://u:pw@h/db', slot_name: s, publication_name: p}}\n"
     "  sink: {type: jsonl, config: {path: x.jsonl}}\n  state: {type: file, config: {path: st}}\n",
     "pipe.yaml:1:11: delivery: exactly_once is not supported by sink 'jsonl'"},
    {"exactly_once with a non-replayable source",
     "delivery: exactly_once\npipeline:\n  source: {type: generator}\n"
     "  sink: {type: jsonl, config: {path: x.jsonl}}\n",
     "delivery: exactly_once is not supported by source 'generator'"},
    {"unknown source type", "pipeline:\n  source: {type: nosuch}\n  sink: {type: stdout}\n",
     "pipe.yaml:2:18: pipeline.source.type: unknown source type 'nosuch'"},
    {"connector not in this build",
     "pipeline:\n  source: {type: mongodb-cdc}\n  sink: {type: stdout}\n",
     "source connector 'mongodb-cdc' is not available in this build"},
    {"unsupported reference key", "matrix: []\npipeline: {}\n", "'matrix' is not supported"},
    {"schema quarantine without a dlq",
     "pipeline:\n  source: {type: generator}\n  sink: {type: sqlite, config: {database_url: "
     "'sqlite://d.db', column_mapping: auto_map, "
     "table_name: t}}\n  schema: {on_drift: quarantine}\n",
     "pipe.yaml:4:22: pipeline.schema.on_drift: quarantine sends drifting rows to the "
     "dead-letter queue, and the pipeline has no dlq: block"},
    {"schema on_incompatible quarantine without a dlq",
     "pipeline:\n  source: {type: generator}\n  sink: {type: sqlite, config: {database_url: "
     "'sqlite://d.db', column_mapping: auto_map, "
     "table_name: t}}\n  schema: {on_drift: evolve, on_incompatible: quarantine}\n",
     "pipeline.schema.on_incompatible: quarantine sends drifting rows"},
    {"missing required connector key",
     "pipeline:\n  source: {type: generator}\n  sink: {type: jsonl, config: {}}\n",
     "pipeline.sink.config.path: is required"},
};

void PrintTo(const BadConfig& c, std::ostream* os) { *os << c.what; }

class MalformedConfig : public ::testing::TestWithParam<BadConfig> {};

TEST_P(MalformedConfig, ValidateNamesFileLineAndKeyAndExitsWith2) {
  const BadConfig& c = GetParam();
  std::string path = WriteConfig("pipe.yaml", c.yaml);
  ProcessResult r = Faucet({"validate", path}, {{"FAUCET_TEST_UNSET_VAR", ""}});
  EXPECT_EQ(r.exit_code, 2) << c.what << "\n" << r.output;
  EXPECT_NE(r.output.find(c.expected), std::string::npos)
      << c.what << ": expected '" << c.expected << "' in:\n"
      << r.output;
  // `run` refuses the same config the same way, before touching anything.
  ProcessResult run = Faucet({"run", path}, {{"FAUCET_TEST_UNSET_VAR", ""}});
  EXPECT_EQ(run.exit_code, 2) << c.what << "\n" << run.output;
}

INSTANTIATE_TEST_SUITE_P(Table, MalformedConfig, ::testing::ValuesIn(kBadConfigs));

TEST(Cli, ValidatePrintsTheDeliveryGuarantee) {
  ProcessResult r = Faucet({"validate", WriteConfig("good.yaml", kGood)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("delivery: at-least-once"), std::string::npos) << r.output;
}

TEST(Cli, ValidateJsonIsMachineReadable) {
  ProcessResult r = Faucet({"validate", "--json", WriteConfig("good.yaml", kGood)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"delivery\": \"at-least-once\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"valid\": true"), std::string::npos) << r.output;
}

// The drift policy validate reports is the one the built sink applies: none for a sink that takes
// rows of any shape (with a warning when the config sets one), the policy for a SQL sink.
TEST(Cli, ValidateReportsTheSchemaDriftPolicy) {
  ProcessResult r = Faucet({"validate", WriteConfig("good.yaml", kGood)});
  EXPECT_NE(r.output.find("schema drift: none (the sink takes rows of any shape)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("observability: off"), std::string::npos) << r.output;
  r = Faucet({"validate", WriteConfig("observed.yaml",
                                      std::string(kGood) +
                                          "observability: {prometheus: {listen: '[::1]:9100'}, "
                                          "auth_token: x}\n")});
  EXPECT_NE(r.output.find("observability: metrics and status on http://[::1]:9100/ (bearer token "
                          "required)"),
            std::string::npos)
      << r.output;
  std::string yaml = std::string(kGood) + "  schema: {on_drift: evolve}\n";
  r = Faucet({"validate", WriteConfig("drift.yaml", yaml)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("drift.yaml:6:22: pipeline.schema.on_drift"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("pipeline.schema.on_drift: sink 'jsonl' in this configuration writes "
                          "rows of any shape, so they never drift: the policy has no effect"),
            std::string::npos)
      << r.output;

  yaml =
      "pipeline:\n  source: {type: generator}\n"
      "  sink: {type: sqlite, config: {database_url: 'sqlite://d.db', column_mapping: auto_map, "
      "table_name: t, write_mode: upsert, key: "
      "[id]}}\n  schema: {on_drift: evolve, allow_type_widening: false}\n";
  r = Faucet({"validate", WriteConfig("sql.yaml", yaml)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("schema drift: on_drift evolve, type widening off, NOT NULL relaxed "
                          "off, otherwise fail"),
            std::string::npos)
      << r.output;
  // Delete mode writes only keys: nothing can drift.
  yaml.replace(yaml.find("upsert"), 6, "delete");
  r = Faucet({"validate", WriteConfig("del.yaml", yaml)});
  EXPECT_NE(r.output.find("schema drift: none"), std::string::npos) << r.output;
}

TEST(Cli, MissingConfigFileIsAUsageError) {
  ProcessResult r = Faucet({"validate", "/nonexistent/pipe.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("/nonexistent/pipe.yaml"), std::string::npos) << r.output;
}

TEST(Cli, UnknownConnectorKeyIsAWarningNotAnError) {
  std::string yaml = std::string(kGood) + "";
  yaml.replace(yaml.find("count: 10"), 9, "count: 10, colour: blue");
  ProcessResult r = Faucet({"validate", WriteConfig("warn.yaml", yaml)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pipeline.source.config.colour: unknown key"), std::string::npos)
      << r.output;
}

TEST(Cli, RedisStateIsWarnedAsWeak) {
  std::string yaml = std::string(kGood);
  yaml.replace(yaml.find("{type: file, config: {path: ./state}}"), 37,
               "{type: redis, config: {url: 'redis://127.0.0.1:1'}}");
  ProcessResult r = Faucet({"validate", WriteConfig("redis.yaml", yaml)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("only as durable as the Redis server"), std::string::npos) << r.output;
}

TEST(Cli, PasswordsNeverReachOutput) {
  std::string yaml =
      "pipeline:\n  source: {type: postgres-cdc, config: {connection_url: "
      "'postgres://app:hunter2secret@127.0.0.1:1/db', slot_name: s, publication_name: p}}\n"
      "  sink: {type: stdout}\n  state: {type: memory}\n";
  std::string path = WriteConfig("pw.yaml", yaml);
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"validate", path}, {"validate", "--json", path}, {"run", path}}) {
    ProcessResult r = Faucet(args, {{"FAUCET_LOG", "debug"}});
    EXPECT_EQ(r.output.find("hunter2secret"), std::string::npos) << r.output;
  }
  ProcessResult run = Faucet({"run", path});
  EXPECT_EQ(run.exit_code, 1) << run.output;  // the server is unreachable: a run failure
  EXPECT_NE(run.output.find("app:***@"), std::string::npos) << run.output;
}

TEST(Cli, StateGetAndDeleteWorkOnTheConfigsStore) {
  std::string dir = testing::TempDir("cli-state");
  std::string path = dir + "/p.yaml";
  std::ofstream(path) << "name: p\npipeline:\n  source: {type: generator, config: {count: 5}}\n"
                         "  sink: {type: jsonl, config: {path: "
                      << dir
                      << "/o.jsonl}}\n"
                         "  state: {type: file, config: {path: "
                      << dir << "/state}}\n";
  ASSERT_EQ(Faucet({"run", path}).exit_code, 0);
  ProcessResult get = Faucet({"state", "get", path, "row-0"});
  EXPECT_EQ(get.exit_code, 0);
  EXPECT_EQ(get.output, "{\"last_id\":5}\n");
  EXPECT_EQ(Faucet({"state", "get", path, "p::row-0"}).output, "{\"last_id\":5}\n");
  EXPECT_EQ(Faucet({"state", "delete", path, "row-0"}).exit_code, 0);
  EXPECT_EQ(Faucet({"state", "get", path, "row-0"}).exit_code, 1);
  ProcessResult bad = Faucet({"state", "get", path, "bad key!"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("state key"), std::string::npos) << bad.output;
}

// A pipeline last run by a newer reference version resumes from its enveloped bookmark, and
// faucet stores the bare bookmark after it.
TEST(Cli, RunResumesFromAnEnvelopedBookmark) {
  std::string dir = testing::TempDir("cli-envelope");
  std::string yaml = "name: p\npipeline:\n  source: {type: generator, config: {count: 8}}\n";
  yaml += "  sink: {type: jsonl, config: {path: " + dir + "/o.jsonl}}\n";
  yaml += "  state: {type: file, config: {path: " + dir + "/state}}\n";
  std::string path = WriteConfig("envelope.yaml", yaml);
  const std::string state_file = dir + "/state/p%3A%3Arow-0.json";
  std::filesystem::create_directories(dir + "/state");
  std::ofstream(state_file)
      << R"({"faucet_state":1,"owner":"generator","schema":0,"data":{"last_id":5}})";
  EXPECT_EQ(Faucet({"state", "get", path, "row-0"}).output, "{\"last_id\":5}\n");

  ProcessResult run = Faucet({"run", path});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream out(dir + "/o.jsonl");
  std::vector<int64_t> ids;
  for (std::string line; std::getline(out, line);) {
    ids.push_back(nlohmann::json::parse(line)["id"]);
  }
  EXPECT_EQ(ids, (std::vector<int64_t>{6, 7, 8}));
  std::ifstream state(state_file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(state), {}), R"({"last_id":8})");
}

TEST(Cli, EveryCommandHasHelp) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"--help"},
                                                                {"validate", "--help"},
                                                                {"run", "--help"},
                                                                {"state", "--help"},
                                                                {"state", "get", "--help"},
                                                                {"state", "delete", "--help"},
                                                                {"version", "--help"}}) {
    ProcessResult r = Faucet(args);
    EXPECT_EQ(r.exit_code, 0) << args[0];
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << r.output;
  }
}

TEST(Cli, UsageLinesNameTheProgramNotItsPath) {
  for (const auto& [args, usage] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--help"}, "Usage: faucet [OPTIONS] SUBCOMMAND"},
           {{"validate", "--help"}, "Usage: faucet validate [OPTIONS] config"},
           {{"state", "get", "--help"}, "Usage: faucet state get [OPTIONS] config key"}}) {
    ProcessResult r = Faucet(args);
    EXPECT_NE(r.output.find("\n" + usage + "\n"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find(FAUCET_BINARY), std::string::npos) << r.output;
  }
  ProcessResult bare = Faucet({});
  EXPECT_EQ(bare.output.find(FAUCET_BINARY), std::string::npos) << bare.output;
}

// Every command that prints survives a reader that went away (`faucet ... | head` after head
// exited): no death by SIGPIPE, but a clear error and exit 1 instead of 0 with the output lost.
TEST(Cli, StdoutWhoseReaderIsGoneIsAnErrorNotASignal) {
  std::string dir = testing::TempDir("cli-pipe");
  std::string config =
      WriteConfig("gone.yaml",
                  "pipeline:\n  source: {type: generator}\n  sink: {type: stdout}\n"
                  "  state: {type: file, config: {path: " +
                      dir + "}}\n");
  std::ofstream(dir + "/gone%3A%3Arow-0.json") << R"({"last_id":5})";
  ASSERT_EQ(Faucet({"state", "get", config, "row-0"}).exit_code, 0);
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"version"},
                                             {"--help"},
                                             {"validate", config},
                                             {"validate", "--json", config},
                                             {"state", "get", config, "row-0"},
                                             {"debug", "crash-points"}}) {
    ProcessResult r = Faucet(args, {}, testing::Stdout::kReaderGone);
    EXPECT_EQ(r.signal, 0) << args[0] << " died by signal " << r.signal;
    EXPECT_EQ(r.exit_code, 1) << args[0] << "\n" << r.output;
    EXPECT_NE(r.output.find("error: cannot write to standard output: Broken pipe"),
              std::string::npos)
        << args[0] << "\n"
        << r.output;
  }
}

TEST(Cli, UsageErrorsExitWith2) {
  EXPECT_EQ(Faucet({}).exit_code, 2);
  EXPECT_EQ(Faucet({"nosuchcommand"}).exit_code, 2);
  EXPECT_EQ(Faucet({"validate"}).exit_code, 2);
}

TEST(Cli, VersionAndCrashPoints) {
  ProcessResult v = Faucet({"version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.output.rfind("faucet ", 0), 0u) << v.output;
  ProcessResult cp = Faucet({"debug", "crash-points"});
  EXPECT_EQ(cp.exit_code, 0);
  EXPECT_NE(cp.output.find("pipeline.after_flush"), std::string::npos) << cp.output;
}

// The mirror's gates, checked by `faucet validate` before anything connects.
const char* kMirrorSource =
    "  source: {type: postgres-cdc, config: {connection_url: 'postgres://u:p@127.0.0.1:1/db', "
    "slot_name: s, publication_name: p}}\n";
const char* kMirrorSnapshot =
    "mirror: {mode: snapshot_then_cdc, snapshot: {source: {type: postgres, config: "
    "{connection_url: 'postgres://u:p@127.0.0.1:1/db', query: 'SELECT * FROM t'}}}}\n";
const char* kUpsertSink =
    "  sink: {type: sqlite, config: {database_url: /tmp/x.db, table_name: t, column_mapping: "
    "auto_map, write_mode: upsert, key: [id]}}\n";

TEST(CliMirror, AValidMirrorIsReported) {
  std::string yaml = std::string("pipeline:\n") + kMirrorSource + kUpsertSink +
                     "  state: {type: file, config: {path: st}}\n" + kMirrorSnapshot;
  ProcessResult r = Faucet({"validate", WriteConfig("m.yaml", yaml)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mirror: snapshot_then_cdc from postgres, continuous"), std::string::npos)
      << r.output;
}

struct MirrorGate {
  const char* what;
  std::string yaml;
  const char* expected;
};

TEST(CliMirror, GatesAreConfigErrors) {
  const std::string state = "  state: {type: file, config: {path: st}}\n";
  const MirrorGate gates[] = {
      {"memory state",
       std::string("pipeline:\n") + kMirrorSource + kUpsertSink + "  state: {type: memory}\n" +
           kMirrorSnapshot,
       "a mirror needs a durable state store"},
      {"temporary slot",
       "pipeline:\n  source: {type: postgres-cdc, config: {connection_url: 'postgres://u@h/d', "
       "slot_name: s, publication_name: p, slot_type: temporary}}\n" +
           std::string(kUpsertSink) + state + kMirrorSnapshot,
       "a mirror needs a permanent slot"},
      {"non-CDC source",
       std::string("pipeline:\n  source: {type: generator}\n") + kUpsertSink + state +
           kMirrorSnapshot,
       "a mirror streams from a CDC source"},
      {"CDC snapshot source",
       std::string("pipeline:\n") + kMirrorSource + kUpsertSink + state +
           "mirror: {snapshot: {source: {type: postgres-cdc, config: {connection_url: "
           "'postgres://u@h/d', slot_name: s2, publication_name: p}}}}\n",
       "the snapshot reads with a query source"},
      {"upsert without a key",
       std::string("pipeline:\n") + kMirrorSource +
           "  sink: {type: sqlite, config: {database_url: /tmp/x.db, table_name: t, "
           "column_mapping: auto_map, write_mode: upsert}}\n" +
           state + kMirrorSnapshot,
       "key"},
      {"shards without tables",
       std::string("pipeline:\n") + kMirrorSource + kUpsertSink + state +
           "mirror: {snapshot: {shards: 4, source: {type: "
           "postgres, config: {connection_url: 'postgres://u@h/d', query: 'x'}}}}\n",
       "mirror.snapshot.shards applies to a multi-table mirror (mirror.tables)"},
      {"multi-table into files without a destination",
       std::string("pipeline:\n") + kMirrorSource +
           "  sink: {type: jsonl, config: {path: out.jsonl}}\n" + state +
           "mirror: {tables: {include: ['a.*']}, snapshot: {source: {type: "
           "postgres, config: {connection_url: 'postgres://u@h/d', query: 'x'}}}}\n",
       "sink 'jsonl' has no default per-table destination — set mirror.tables.destination"},
      {"per_table without tables",
       std::string("pipeline:\n") + kMirrorSource + kUpsertSink + state +
           "mirror: {per_table: {a.b: {key: [id]}}, snapshot: {source: {type: "
           "postgres, config: {connection_url: 'postgres://u@h/d', query: 'x'}}}}\n",
       "mirror.per_table needs mirror.tables (a multi-table mirror)"},
  };
  for (const MirrorGate& g : gates) {
    for (const char* command : {"validate", "mirror"}) {
      ProcessResult r = Faucet({command, WriteConfig("gate.yaml", g.yaml)});
      EXPECT_EQ(r.exit_code, 2) << command << ": " << g.what << "\n" << r.output;
      EXPECT_NE(r.output.find(g.expected), std::string::npos) << command << ": " << g.what << "\n"
                                                              << r.output;
    }
  }
}

// As the reference's multi-table example writes it: the sink is a template for every table
// (no table_name of its own); validate renders it for a sample table.
TEST(CliMirror, AMultiTableConfigValidatesWithATemplateSink) {
  std::string yaml = std::string("pipeline:\n") + kMirrorSource +
                     "  sink: {type: postgres, config: {connection_url: 'postgres://u@h/d', "
                     "column_mapping: auto_map}}\n"
                     "  state: {type: file, config: {path: st}}\n"
                     "mirror: {tables: {include: ['public.*'], destination: {table_name: "
                     "'{schema}_{table_name}'}}, snapshot: {concurrency: 2, source: {type: "
                     "postgres, config: {connection_url: 'postgres://u@h/d', query: 'x'}}}}\n";
  ProcessResult r = Faucet({"validate", WriteConfig("mt.yaml", yaml)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(CliMirror, AnAppendSinkIsOnlyAWarning) {
  std::string yaml = std::string("pipeline:\n") + kMirrorSource +
                     "  sink: {type: jsonl, config: {path: out.jsonl}}\n"
                     "  state: {type: file, config: {path: st}}\n" +
                     kMirrorSnapshot;
  ProcessResult r = Faucet({"validate", WriteConfig("m.yaml", yaml)});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("does not write by key"), std::string::npos) << r.output;
}

// Under exactly_once, shards are not used for tables appended to (MultiMirror reads them whole):
// validate says so, for a sink that only appends and for write_mode: append, and not for upsert.
TEST(CliMirror, ShardsUnderExactlyOnceIntoAnAppendDestinationAreAWarning) {
  const std::string kWhole = "mirror.snapshot.shards: the tables are read whole, not in parts";
  const struct {
    const char* sink;
    const char* destination;
    bool warned;
  } kCases[] = {
      {"{type: kafka, config: {brokers: '127.0.0.1:1', topic: {name: t}, exactly_once: {}}}",
       "{topic: {name: 'cdc.{table}'}}", true},
      {"{type: postgres, config: {connection_url: 'postgres://u@h/d', write_mode: append}}",
       "{table_name: '{table_name}'}", true},
      {"{type: postgres, config: {connection_url: 'postgres://u@h/d'}}",
       "{table_name: '{table_name}'}", false},
  };
  for (const auto& c : kCases) {
    const std::string yaml =
        std::string("delivery: exactly_once\npipeline:\n") + kMirrorSource + "  sink: " + c.sink +
        "\n  state: {type: file, config: {path: st}}\n"
        "mirror: {tables: {include: ['public.*'], destination: " +
        c.destination +
        "}, snapshot: {shards: 4, source: {type: postgres, config: {connection_url: "
        "'postgres://u@h/d', query: 'x'}}}}\n";
    ProcessResult r = Faucet({"validate", WriteConfig("mt.yaml", yaml)});
    EXPECT_EQ(r.exit_code, 0) << c.sink << "\n" << r.output;
    EXPECT_EQ(r.output.find(kWhole) != std::string::npos, c.warned) << c.sink << "\n" << r.output;
  }
}

// A row the destination cannot take goes to the DLQ with its error; the rest is written. Without
// a DLQ the page fails with an error naming the table, key and column, and nothing is persisted.
TEST(CliDlq, RejectedRowsGoToTheDlqAndTheRestIsWritten) {
  std::string dir = testing::TempDir("dlq");
  std::string db = dir + "/dest.db";
  ASSERT_EQ(
      RunProcess({"/usr/bin/sqlite3", db,
                  "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT CHECK (length(name) <= 6))"})
          .exit_code,
      0);
  auto config = [&](bool with_dlq) {
    std::string yaml =
        "name: dlqtest\npipeline:\n  source: {type: generator, config: {count: 20, batch_size: "
        "20}}\n"
        "  transforms: [{type: drop_fields, config: {fields: [amount, active, created_at]}}]\n"
        "  sink: {type: sqlite, config: {database_url: '" +
        db +
        "', table_name: t, "
        "column_mapping: auto_map, write_mode: upsert, key: [id]}}\n"
        "  state: {type: file, config: {path: '" +
        dir + "/state" + (with_dlq ? "1" : "2") + "'}}\n";
    if (with_dlq) {
      yaml += "  dlq: {sink: {type: jsonl, config: {path: '" + dir + "/dlq.jsonl'}}}\n";
    }
    return WriteConfig(with_dlq ? "with.yaml" : "without.yaml", yaml);
  };
  // "name-10" and longer break the CHECK: ids 10..20 are rejected.
  ProcessResult without = Faucet({"run", config(false)});
  EXPECT_EQ(without.exit_code, 1) << without.output;
  EXPECT_NE(without.output.find("table t"), std::string::npos) << without.output;
  EXPECT_EQ(RunProcess({"/usr/bin/sqlite3", db, "SELECT count(*) FROM t"}).output, "0\n");

  ProcessResult with = Faucet({"run", config(true)});
  EXPECT_EQ(with.exit_code, 0) << with.output;
  EXPECT_EQ(RunProcess({"/usr/bin/sqlite3", db, "SELECT count(*) FROM t"}).output, "9\n");
  std::ifstream in(dir + "/dlq.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_NE(line.find("\"error\":{\"kind\":"), std::string::npos) << line;
    EXPECT_NE(line.find("\"payload\":{\"id\":"), std::string::npos) << line;
    EXPECT_NE(line.find("\"pipeline\":\"dlqtest\""), std::string::npos) << line;
  }
  EXPECT_EQ(lines, 11);
}

// `faucet run` of a query (a one-shot read) into a SQL sink (postgres, sqlite, mysql) is one
// transaction: a run killed part-way, or whose query fails part-way, leaves nothing, so the
// rerun appends every row exactly once (pages committed one by one would be there twice). A
// row the table refuses fails the load, which is then redone page by page to name the row's
// key and column.
class CliBulkRun : public ::testing::TestWithParam<testing::SqlDest> {
 protected:
  void SetUp() override {
    const std::string name = testing::UniqueName("bulkrun");
    dir_ = testing::TempDir("bulkrun");
    table_ = name;
    source_ =
        std::make_unique<testing::SqlDestination>(testing::SqlDest::kPostgres, name + "_src", dir_);
    dest_ = std::make_unique<testing::SqlDestination>(GetParam(), name, dir_);
    source_->Query("CREATE TABLE items (id int8 PRIMARY KEY, name text, qty int8)");
    source_->Query("INSERT INTO items SELECT g, 'n' || g, g FROM generate_series(1, 5000) g");
  }
  void TearDown() override {
    if (GetParam() == testing::SqlDest::kMysql) dest_->Query("DROP TABLE IF EXISTS " + table_);
  }

  // `columns`: the destination table's, after its name.
  void CreateDest(const std::string& columns) {
    dest_->Query("CREATE TABLE " + table_ + " " + columns);
  }

  std::string Config(const std::string& sink_extra,
                     const std::string& query = "SELECT id, name, qty FROM items ORDER BY id") {
    return WriteConfig(testing::UniqueName("bulkrun") + ".yaml",
                       "version: 1\nname: bulkrun\npipeline:\n"
                       "  source: {type: postgres, config: {connection_url: '" +
                           source_->url() + "', query: '" + query +
                           "', batch_size: 500}}\n"
                           "  sink: " +
                           dest_->SinkYaml(table_, ", column_mapping: auto_map" + sink_extra) +
                           "\n"
                           "  state: {type: file, config: {path: '" +
                           dir_ + "/" + testing::UniqueName("state") + "'}}\n");
  }

  // "rows/distinct ids/sum of qty".
  std::string Rows() {
    if (GetParam() == testing::SqlDest::kMysql) {
      return dest_->Query("SELECT CONCAT(count(*), '/', count(DISTINCT id), '/', sum(qty)) FROM " +
                          table_);
    }
    return dest_->Query("SELECT count(*) || '/' || count(DISTINCT id) || '/' || sum(qty) FROM " +
                        table_);
  }

  std::string dir_, table_;
  std::unique_ptr<testing::SqlDestination> source_, dest_;
};

TEST_P(CliBulkRun, AKilledRunLeavesNothingAndTheRerunAppendsEachRowOnce) {
  CreateDest("(id bigint, name text, qty bigint)");
  const std::string config = Config("");
  ProcessResult killed = Faucet({"run", config}, {{"FAUCET_CRASH_AT", "pipeline.after_write:4"}});
  ASSERT_EQ(killed.exit_code, kCrashExitCode) << killed.output;
  EXPECT_EQ(dest_->Query("SELECT count(*) FROM " + table_), "0") << "pages of a killed run remain";
  ProcessResult rerun = Faucet({"run", config});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_EQ(Rows(), "5000/5000/12502500");
}

// The query fails at row 4000 (a division by zero): the rows read before it are not
// committed, and the read is not redone (the sink refused nothing).
TEST_P(CliBulkRun, AQueryFailingPartWayLeavesNothingAndIsNotRedone) {
  CreateDest("(id bigint, name text, qty bigint)");
  ProcessResult r = Faucet(
      {"run",
       Config("", "SELECT id, name, qty / (id - 4000) + qty AS qty FROM items ORDER BY id")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("division by zero"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("redoing it page by page"), std::string::npos) << r.output;
  EXPECT_EQ(dest_->Query("SELECT count(*) FROM " + table_), "0") << r.output;
}

TEST_P(CliBulkRun, ARefusedRowIsNamedByItsKey) {
  CreateDest("(id bigint PRIMARY KEY, name text CHECK (name <> 'n4321'), qty bigint)");
  ProcessResult r = Faucet({"run", Config(", write_mode: upsert, key: [id]")});
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("redoing it page by page"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("key (id)=(4321)"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Dest, CliBulkRun,
                         ::testing::Values(testing::SqlDest::kPostgres, testing::SqlDest::kSqlite,
                                           testing::SqlDest::kMysql),
                         [](const auto& info) { return testing::SqlDestName(info.param); });

}  // namespace
}  // namespace faucet
