#include "config/document.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "testing/status_matchers.h"

namespace faucet::config {
namespace {

// A file in gtest's temporary directory, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& content)
      : path_(testing::TempDir() + std::to_string(::getpid()) + "_" + name) {
    std::ofstream(path_) << content;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class DocumentTest : public testing::Test {
 protected:
  void SetUp() override {
    setenv("FAUCET_TEST_USER", "app", 1);
    setenv("FAUCET_TEST_SECRET", "hunter2", 1);
    unsetenv("FAUCET_TEST_UNSET");
  }
};

struct MalformedCase {
  const char* name;
  const char* yaml;
  const char* message;
};

// Each case is a whole file "t.yaml"; the message is compared exactly.
const MalformedCase kMalformed[] = {
    {"YamlSyntax", "pipeline:\n  source: {type: x\n", "t.yaml:3:1: end of map flow not found"},
    {"TabIndentation", "pipeline:\n\tsource: {}\n", "t.yaml:2:8: illegal map value"},
    {"TwoDocuments", "name: a\n---\nname: b\n",
     "t.yaml:3:1: expected one YAML document, found more (separated by '---')"},
    {"EmptyFile", "# nothing\n", "t.yaml: the config is empty (expected a mapping with pipeline:)"},
    {"TopLevelList", "- pipeline\n",
     "t.yaml:1:1: expected a mapping with pipeline: at the top level, got a list"},
    {"UnknownTopLevelKey", "version: 1\npipelines: {}\n",
     "t.yaml:2:1: pipelines: unknown key 'pipelines' (expected one of: version, name, kind, vars, "
     "pipeline, delivery, mirror, replication, observability)"},
    {"UnsupportedReferenceKey",
     "pipeline: {source: {type: a}, sink: {type: b}}\nmatrix:\n  - id: one\n",
     "t.yaml:2:1: matrix: 'matrix' is not supported by this build"},
    {"UnsupportedResilience", "resilience: {retry: {max_attempts: 3}}\n",
     "t.yaml:1:1: resilience: 'resilience' is not supported by this build"},
    {"VersionNotAnInteger", "version: \"x\"\npipeline: {source: {type: a}, sink: {type: b}}\n",
     "t.yaml:1:10: version: expected an integer, got 'x'"},
    {"VersionTwo", "version: 2\npipeline: {source: {type: a}, sink: {type: b}}\n",
     "t.yaml:1:10: version: expected 1 (the only config format version), got 2"},
    {"MissingPipeline", "version: 1\nname: a\n",
     "t.yaml:1:1: pipeline: is required (expected a mapping with source and sink)"},
    {"PipelineNotAMapping", "pipeline: [source]\n",
     "t.yaml:1:11: pipeline: expected a mapping, got a list"},
    {"MissingSource", "pipeline:\n  sink: {type: file}\n",
     "t.yaml:2:3: pipeline.source: is required (expected a mapping with type and config)"},
    {"MissingSourceType", "pipeline:\n  source:\n    config: {slot_name: s}\n  sink: {type: b}\n",
     "t.yaml:3:5: pipeline.source.type: is required (expected a string)"},
    {"EmptySinkType", "pipeline:\n  source: {type: a}\n  sink: {type: \"\"}\n",
     "t.yaml:3:16: pipeline.sink.type: must not be empty"},
    {"ConfigNotAMapping", "pipeline:\n  source: {type: a, config: slot}\n  sink: {type: b}\n",
     "t.yaml:2:29: pipeline.source.config: expected a mapping, got 'slot'"},
    {"UnknownPipelineKey", "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  sate: {}\n",
     "t.yaml:4:3: pipeline.sate: unknown key 'sate' (expected one of: source, sink, transforms, "
     "state, dlq, schema)"},
    {"UnknownDriftPolicy",
     "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  schema: {on_drift: evolv}\n",
     "t.yaml:4:22: pipeline.schema.on_drift: expected one of warn, evolve, ignore, quarantine, "
     "fail, got 'evolv'"},
    {"UnknownSchemaKey",
     "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  schema: {on_drit: evolve}\n",
     "t.yaml:4:12: pipeline.schema.on_drit: unknown key 'on_drit' (expected one of: on_drift, "
     "allow_type_widening, on_incompatible, relax_nullability_on_missing)"},
    {"UnknownKeyInTransform",
     "pipeline:\n  source: {type: a}\n  transforms:\n    - type: cdc_unwrap\n      keys: [id]\n"
     "  sink: {type: b}\n",
     "t.yaml:5:7: pipeline.transforms[0].keys: unknown key 'keys' (expected one of: type, config, "
     "key)"},
    {"TransformsNotAList",
     "pipeline:\n  source: {type: a}\n  transforms: {type: x}\n  sink: {type: b}\n",
     "t.yaml:3:15: pipeline.transforms: expected a list of mappings, got a mapping"},
    {"TransformsOnSink", "pipeline:\n  source: {type: a}\n  sink: {type: b, transforms: []}\n",
     "t.yaml:3:19: pipeline.sink.transforms: 'transforms' is only allowed on pipeline.source"},
    {"UnknownKeyInSource", "pipeline:\n  source: {type: a, confg: {}}\n  sink: {type: b}\n",
     "t.yaml:2:21: pipeline.source.confg: unknown key 'confg' (expected one of: type, config, "
     "transforms, inherit_transforms, status, tags)"},
    {"CompleteForOnSource",
     "pipeline:\n  source: {type: a, complete_for: {scope: {}}}\n  sink: {type: b}\n",
     "t.yaml:2:21: pipeline.source.complete_for: 'complete_for' is not supported by this build"},
    {"DraftSource", "pipeline:\n  source: {type: a, status: draft}\n  sink: {type: b}\n",
     "t.yaml:2:29: pipeline.source.status: 'draft' is not supported by this build, which has no "
     "run selection (expected mandatory or active)"},
    {"UnknownKeyInState",
     "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  state: {type: file, path: ./s}\n",
     "t.yaml:4:23: pipeline.state.path: unknown key 'path' (expected one of: type, config)"},
    {"DlqWithoutSink",
     "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  dlq: {on_batch_error: dlq_all}\n",
     "t.yaml:4:8: pipeline.dlq.sink: is required (expected a mapping with type and config)"},
    {"DlqIntGivenAsList",
     "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  dlq:\n    sink: {type: file}\n"
     "    max_failures_per_page: [10]\n",
     "t.yaml:6:28: pipeline.dlq.max_failures_per_page: expected an integer >= 0, got a list"},
    {"DlqBadPolicy",
     "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  dlq: {sink: {type: f}, on_batch_error: "
     "drop}\n",
     "t.yaml:4:42: pipeline.dlq.on_batch_error: expected one of propagate, dlq_all, got 'drop'"},
    {"MissingEnvVar",
     "pipeline:\n  source:\n    type: postgres-cdc\n    config:\n"
     "      connection_url: postgres://${env:FAUCET_TEST_USER}@${env:FAUCET_TEST_UNSET}/db\n"
     "  sink: {type: b}\n",
     "t.yaml:5:23: pipeline.source.config.connection_url: environment variable "
     "'FAUCET_TEST_UNSET' is not set (referenced as ${env:FAUCET_TEST_UNSET})"},
    {"MissingSecret",
     "pipeline:\n  source: {type: a}\n  sink: {type: b, config: {password: "
     "\"${secret:FAUCET_TEST_UNSET}\"}}\n",
     "t.yaml:3:38: pipeline.sink.config.password: environment variable 'FAUCET_TEST_UNSET' is not "
     "set (referenced as ${secret:FAUCET_TEST_UNSET})"},
    {"MissingEnvVarInAList",
     "pipeline:\n  source: {type: a, config: {tables: [a, \"${env:FAUCET_TEST_UNSET}\"]}}\n"
     "  sink: {type: b}\n",
     "t.yaml:2:42: pipeline.source.config.tables[1]: environment variable 'FAUCET_TEST_UNSET' is "
     "not set (referenced as ${env:FAUCET_TEST_UNSET})"},
    {"MissingFile",
     "pipeline:\n  source: {type: a, config: {password: \"${file:/nonexistent/faucet_pw}\"}}\n"
     "  sink: {type: b}\n",
     "t.yaml:2:40: pipeline.source.config.password: cannot read '/nonexistent/faucet_pw' for "
     "${file:/nonexistent/faucet_pw}: No such file or directory"},
    {"UnknownInterpolation",
     "pipeline:\n  source: {type: a}\n  sink: {type: b, config: {path: "
     "\"out/${now.date}.jsonl\"}}\n",
     "t.yaml:3:34: pipeline.sink.config.path: unsupported reference '${now.date}' (this build "
     "resolves ${env:VAR}, ${secret:VAR}, ${file:PATH} and ${vars.NAME}; write '$${' for a "
     "literal '${')"},
    {"UnterminatedInterpolation",
     "pipeline:\n  source: {type: a, config: {password: \"a${b\"}}\n  sink: {type: b}\n",
     "t.yaml:2:40: pipeline.source.config.password: unterminated '${' (write '$${' for a literal "
     "'${')"},
    {"UnknownVar",
     "vars: {host: h}\npipeline:\n  source: {type: a, config: {host: \"${vars.hots}\"}}\n"
     "  sink: {type: b}\n",
     "t.yaml:3:36: pipeline.source.config.host: unknown variable '${vars.hots}' (vars: defines "
     "host)"},
    {"VarCycle",
     "vars:\n  a: \"${vars.b}\"\n  b: \"x${vars.a}\"\npipeline:\n  source: {type: a}\n"
     "  sink: {type: b}\n",
     "t.yaml:2:6: vars.a: variables refer to each other in a cycle: vars.b -> vars.a -> vars.b"},
    {"VarNotAString",
     "vars:\n  hosts: [a, b]\npipeline:\n  source: {type: a, config: {h: \"${vars.hosts}\"}}\n"
     "  sink: {type: b}\n",
     "t.yaml:2:10: vars.hosts: expected a string, since ${vars.hosts} is substituted into text"},
    {"BadName", "name: orders pipeline\npipeline: {source: {type: a}, sink: {type: b}}\n",
     "t.yaml:1:7: name: expected 1 to 239 characters of A-Z a-z 0-9 _ . - not starting with '.' "
     "(the name prefixes every state key), got 'orders pipeline'"},
    {"NameWithColon", "name: \"a::b\"\npipeline: {source: {type: a}, sink: {type: b}}\n",
     "t.yaml:1:7: name: expected 1 to 239 characters of A-Z a-z 0-9 _ . - not starting with '.' "
     "(the name prefixes every state key), got 'a::b'"},
    {"BadDelivery", "delivery: exactly-once\npipeline: {source: {type: a}, sink: {type: b}}\n",
     "t.yaml:1:11: delivery: expected one of at_least_once, exactly_once, got 'exactly-once'"},
    {"MirrorAndReplication",
     "pipeline: {source: {type: a}, sink: {type: b}}\nmirror: {mode: snapshot_then_cdc}\n"
     "replication: {mode: snapshot_then_cdc}\n",
     "t.yaml:3:1: replication: 'replication' is another name for 'mirror'; give only one of them"},
    {"MirrorNotAMapping", "pipeline: {source: {type: a}, sink: {type: b}}\nmirror: true\n",
     "t.yaml:2:9: mirror: expected a mapping, got 'true'"},
    {"DuplicateKey", "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  source: {type: c}\n",
     "t.yaml:4:3: pipeline.source: duplicate key (each key may appear once)"},
    {"ListenWithoutPort",
     "pipeline: {source: {type: a}, sink: {type: b}}\n"
     "observability: {prometheus: {listen: localhost}}\n",
     "t.yaml:2:38: observability.prometheus.listen: expected host:port with an IP address or "
     "localhost (e.g. 127.0.0.1:9187; port 0 picks a free one), got 'localhost'"},
    {"ListenOnAHostName",
     "pipeline: {source: {type: a}, sink: {type: b}}\n"
     "observability: {prometheus: {listen: 'metrics.internal:9187'}}\n",
     "t.yaml:2:38: observability.prometheus.listen: expected host:port with an IP address or "
     "localhost (e.g. 127.0.0.1:9187; port 0 picks a free one), got 'metrics.internal:9187'"},
    {"ListenEverywhereWithoutAToken",
     "pipeline: {source: {type: a}, sink: {type: b}}\n"
     "observability: {prometheus: {listen: '0.0.0.0:9187'}}\n",
     "t.yaml:2:38: observability.prometheus.listen: listens on 0.0.0.0, which is not a loopback "
     "address, without a token: set observability.auth_token (e.g. ${env:FAUCET_TOKEN}); clients "
     "then send Authorization: Bearer <token>"},
    {"BucketsNotAscending",
     "pipeline: {source: {type: a}, sink: {type: b}}\n"
     "observability: {prometheus: {buckets: [0.1, 0.01]}}\n",
     "t.yaml:2:39: observability.prometheus.buckets: expected an ascending list of positive "
     "numbers of seconds"},
    {"Tracing",
     "pipeline: {source: {type: a}, sink: {type: b}}\nobservability: {tracing: {level: info}}\n",
     "t.yaml:2:17: observability.tracing: 'tracing' is not supported by this build"},
    {"IncludeTag", "pipeline: !include base.yaml\n",
     "t.yaml:1:11: pipeline: the YAML tag '!include' is not supported by this build"},
};

class MalformedDocumentTest : public DocumentTest,
                              public testing::WithParamInterface<MalformedCase> {};

TEST_P(MalformedDocumentTest, IsRejectedWithLocatedMessage) {
  Result<Document> doc = ParseDocument(GetParam().yaml, "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(Document, MalformedDocumentTest, testing::ValuesIn(kMalformed),
                         [](const testing::TestParamInfo<MalformedCase>& info) {
                           return std::string(info.param.name);
                         });

TEST_F(DocumentTest, SelfReferencingAliasIsRejected) {
  Result<Document> doc = ParseDocument(
      "pipeline: {source: {type: a, config: {x: &loop [*loop]}}, sink: {type: b}}\n", "t.yaml");
  ASSERT_FALSE(doc.ok());
  std::string path = "pipeline.source.config.x";
  for (int i = 0; i < 97; ++i) path += "[0]";
  EXPECT_EQ(doc.status().message(),
            "t.yaml:1:42: " + path +
                ": nested more than 100 levels deep (a self-referencing YAML alias?)");
}

// yaml-cpp 0.7 loops forever on these (jbeder/yaml-cpp#1040); found by the config fuzzer.
TEST_F(DocumentTest, AStrayCommaIsAnErrorNotAHang) {
  for (const char* text : {",\n", "# a comment\n, x\n", "---\n,\n"}) {
    Result<Document> doc = ParseDocument(text, "t.yaml");
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_THAT(doc.status().message(),
                testing::HasSubstr("unexpected ',' outside a [...] or {...} collection"))
        << text;
  }
  Result<Document> two = ParseDocument("a: b\n---\n,\n", "t.yaml");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().message(),
            "t.yaml:3:1: unexpected ',' outside a [...] or {...} collection");
}

// "Billion laughs": ten levels of ten aliases each name 10^10 values in a few hundred bytes.
TEST_F(DocumentTest, AliasesThatExpandWithoutBoundAreRejected) {
  std::string text =
      "pipeline:\n sink: {type: b}\n source:\n  type: a\n  config:\n"
      "   l0: &l0 [v, v, v, v, v, v, v, v, v, v]\n";
  for (int i = 1; i < 10; ++i) {
    std::string prev = "*l" + std::to_string(i - 1);
    text += "   l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += (j ? ", " : "") + prev;
    text += "]\n";
  }
  Result<Document> doc = ParseDocument(text, "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(),
              testing::HasSubstr("more than 100000 values once its YAML aliases are expanded"));
}

TEST_F(DocumentTest, VariablesThatDoubleWithoutBoundAreRejected) {
  std::string text = "vars:\n  v0: xxxxxxxxxxxxxxxx\n";
  for (int i = 1; i < 40; ++i) {
    std::string prev = "${vars.v" + std::to_string(i - 1) + "}";
    text += "  v" + std::to_string(i) + ": \"" + prev + prev + "\"\n";
  }
  text += "pipeline: {source: {type: a, config: {x: '${vars.v39}'}}, sink: {type: b}}\n";
  Result<Document> doc = ParseDocument(text, "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_THAT(doc.status().message(),
              testing::HasSubstr("expands to more than 1048576 bytes (variables that repeat"));
}

TEST_F(DocumentTest, EveryReferenceExampleLoads) {
  setenv("SOURCE_PG_URL", "postgres://src@localhost/app", 1);
  setenv("DEST_PG_URL", "postgres://dst@localhost/mirror", 1);
  std::set<std::string> loaded;
  for (const auto& entry :
       std::filesystem::directory_iterator(FAUCET_CONFIG_TESTDATA "/reference_examples")) {
    Result<Document> doc = LoadDocument(entry.path().string());
    ASSERT_OK(doc);
    EXPECT_TRUE(doc->warnings.empty()) << doc->warnings.front();
    loaded.insert(entry.path().filename().string());
  }
  EXPECT_EQ(loaded.size(), 8u);
}

TEST_F(DocumentTest, ExactlyOnceExampleCarriesEverything) {
  setenv("SOURCE_PG_URL", "postgres://src@localhost/app", 1);
  setenv("DEST_PG_URL", "postgres://dst@localhost/mirror", 1);
  Result<Document> doc = LoadDocument(FAUCET_CONFIG_TESTDATA
                                      "/reference_examples/postgres_cdc_to_postgres_upsert.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(doc->name, "pg_cdc_mirror");
  EXPECT_EQ(doc->delivery, RequestedDelivery::kExactlyOnce);
  EXPECT_EQ(doc->source.type, "postgres-cdc");
  EXPECT_EQ(*doc->source.config.RequiredString("connection_url"), "postgres://src@localhost/app");
  EXPECT_EQ(*doc->sink.config.RequiredString("connection_url"), "postgres://dst@localhost/mirror");
  ASSERT_EQ(doc->transforms.size(), 1u);
  EXPECT_EQ(doc->transforms[0].type, "cdc_unwrap");
  EXPECT_EQ(*doc->transforms[0].spec.StringList("key"), std::vector<std::string>{"id"});
  EXPECT_TRUE(doc->transforms[0].config.Keys().empty());
  ASSERT_TRUE(doc->state.has_value());
  EXPECT_EQ(doc->state->type, "file");
  EXPECT_FALSE(doc->dlq.has_value());
  EXPECT_FALSE(doc->mirror.has_value());
}

TEST_F(DocumentTest, ObservabilityListensOnLoopbackByDefault) {
  Result<Document> doc = ParseDocument(
      "pipeline: {source: {type: a}, sink: {type: b}}\nobservability: {prometheus: {}}\n",
      "t.yaml");
  ASSERT_OK(doc);
  ASSERT_TRUE(doc->observability.has_value());
  EXPECT_EQ(doc->observability->host, "127.0.0.1");
  EXPECT_EQ(doc->observability->port, 9187);
  EXPECT_TRUE(doc->observability->loopback);

  doc = ParseDocument(
      "pipeline: {source: {type: a}, sink: {type: b}}\n"
      "observability: {prometheus: {listen: '[::]:0', buckets: [0.5, 2]}, auth_token: "
      "'${env:FAUCET_TEST_SECRET}'}\n",
      "t.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(doc->observability->host, "::");
  EXPECT_EQ(doc->observability->port, 0);
  EXPECT_FALSE(doc->observability->loopback);
  EXPECT_EQ(doc->observability->auth_token, "hunter2");
  EXPECT_EQ(doc->observability->buckets, (std::vector<double>{0.5, 2}));
}

TEST_F(DocumentTest, NameDefaultsToTheFileStem) {
  Result<Document> doc =
      LoadDocument(FAUCET_CONFIG_TESTDATA "/reference_examples/postgres_cdc_to_jsonl.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(doc->name, "postgres_cdc_to_jsonl");
  EXPECT_EQ(doc->delivery, RequestedDelivery::kAtLeastOnce);
  EXPECT_EQ(DefaultPipelineName("conf/orders.v2.yml"), "orders.v2");
}

TEST_F(DocumentTest, AnInvalidFileStemNeedsAName) {
  Result<Document> doc =
      ParseDocument("pipeline: {source: {type: a}, sink: {type: b}}\n", "dir/my pipeline.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(),
            "dir/my pipeline.yaml:1:1: name: is not set, and the file stem 'my pipeline' is not a "
            "valid name (expected 1 to 239 characters of A-Z a-z 0-9 _ . - not starting with '.' "
            "(the name prefixes every state key)); set name:");
}

TEST_F(DocumentTest, MirrorExampleKeepsTheMirrorBlock) {
  Result<Document> doc =
      LoadDocument(FAUCET_CONFIG_TESTDATA "/reference_examples/postgres_mirror_tables.yaml");
  ASSERT_OK(doc);
  ASSERT_TRUE(doc->mirror.has_value());
  EXPECT_EQ(doc->mirror->path(), "mirror");
  EXPECT_TRUE(doc->mirror->Has("tables"));
}

TEST_F(DocumentTest, ReplicationIsTheMirrorBlockUnderItsReferenceName) {
  Result<Document> doc = ParseDocument(
      "pipeline: {source: {type: a}, sink: {type: b}}\nreplication: {mode: snapshot_then_cdc}\n",
      "t.yaml");
  ASSERT_OK(doc);
  ASSERT_TRUE(doc->mirror.has_value());
  EXPECT_EQ(doc->mirror->path(), "replication");
  EXPECT_EQ(doc->mirror->Error("mode", "m").message(), "t.yaml:2:21: replication.mode: m");
}

TEST_F(DocumentTest, JsonConfigLoads) {
  Result<Document> doc = ParseDocument(R"({
  "version": 1,
  "name": "json_pipe",
  "delivery": "exactly_once",
  "pipeline": {
    "source": {"type": "postgres-cdc", "config": {"slot_name": "s", "batch_size": 500}},
    "transforms": [{"type": "cdc_unwrap", "config": {}}],
    "sink": {"type": "jsonl", "config": {"path": "${env:FAUCET_TEST_USER}.jsonl"}},
    "state": {"type": "memory"}
  }
})",
                                       "p.json");
  ASSERT_OK(doc);
  EXPECT_EQ(doc->name, "json_pipe");
  EXPECT_EQ(doc->delivery, RequestedDelivery::kExactlyOnce);
  EXPECT_EQ(*doc->source.config.Int("batch_size", 1000), 500);
  EXPECT_EQ(*doc->sink.config.RequiredString("path"), "app.jsonl");
  EXPECT_EQ(doc->transforms.size(), 1u);
  EXPECT_EQ(doc->state->type, "memory");
}

TEST_F(DocumentTest, InterpolatesSeveralReferencesInOneString) {
  Result<Document> doc = ParseDocument(R"(
vars:
  host: db.internal
  port: 5432
  url: "postgres://${env:FAUCET_TEST_USER}:${secret:FAUCET_TEST_SECRET}@${vars.host}"
pipeline:
  source: {type: a, config: {url: "${vars.url}:${vars.port}/app", port: "${vars.port}"}}
  sink: {type: b}
)",
                                       "t.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(*doc->source.config.RequiredString("url"),
            "postgres://app:hunter2@db.internal:5432/app");
  EXPECT_EQ(*doc->source.config.Int("port", 0), 5432);
}

TEST_F(DocumentTest, DoubleDollarEscapesALiteralReference) {
  Result<Document> doc = ParseDocument(
      "pipeline:\n  source: {type: a, config: {q: \"$${env:HOME} costs $$5, ${vars.x}\"}}\n"
      "  sink: {type: b}\nvars: {x: \"$${vars.y}\"}\n",
      "t.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(*doc->source.config.RequiredString("q"), "${env:HOME} costs $$5, ${vars.y}");
}

TEST_F(DocumentTest, AnAliasedScalarIsExpandedOnce) {
  Result<Document> doc = ParseDocument(
      "pipeline:\n  source: {type: a, config: {p: &pw \"$${x}\"}}\n"
      "  sink: {type: b, config: {p: *pw}}\n",
      "t.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(*doc->source.config.RequiredString("p"), "${x}");
  EXPECT_EQ(*doc->sink.config.RequiredString("p"), "${x}");
}

TEST_F(DocumentTest, FileReferenceReadsTheFileWithoutTrailingNewlines) {
  TempFile secret("pw.txt", "s3cret\n\n");
  Result<Document> doc =
      ParseDocument("pipeline:\n  source: {type: a, config: {password: \"${file:" + secret.path() +
                        "}\"}}\n  sink: {type: b}\n",
                    "t.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(*doc->source.config.RequiredString("password"), "s3cret");
}

TEST_F(DocumentTest, MessagesDoNotQuoteInterpolatedValues) {
  Result<Document> doc = ParseDocument(
      "pipeline:\n  source: {type: a}\n  sink: {type: b}\n"
      "  dlq: {sink: {type: f}, max_failures_total: \"${env:FAUCET_TEST_SECRET}\"}\n",
      "t.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(),
            "t.yaml:4:46: pipeline.dlq.max_failures_total: expected an integer >= 0, got a value "
            "from ${env:}, ${secret:} or ${file:} (not shown)");
}

TEST_F(DocumentTest, SourceTransformsRunAfterPipelineTransforms) {
  Result<Document> doc = ParseDocument(R"(
pipeline:
  transforms: [{type: p1}, {type: p2}]
  source:
    type: a
    transforms: [{type: s1}]
  sink: {type: b}
)",
                                       "t.yaml");
  ASSERT_OK(doc);
  std::vector<std::string> types;
  for (const ConnectorSpec& t : doc->transforms) types.push_back(t.type);
  EXPECT_EQ(types, (std::vector<std::string>{"p1", "p2", "s1"}));
  EXPECT_EQ(doc->transforms[2].spec.path(), "pipeline.source.transforms[0]");
}

TEST_F(DocumentTest, InheritTransformsFalseDropsPipelineTransformsWithAWarning) {
  Result<Document> doc = ParseDocument(R"(pipeline:
  transforms: [{type: p1}]
  source: {type: a, inherit_transforms: false, transforms: [{type: s1}]}
  sink: {type: b}
)",
                                       "t.yaml");
  ASSERT_OK(doc);
  ASSERT_EQ(doc->transforms.size(), 1u);
  EXPECT_EQ(doc->transforms[0].type, "s1");
  EXPECT_EQ(doc->warnings,
            std::vector<std::string>{"t.yaml:3:41: pipeline.source.inherit_transforms: is false, "
                                     "so pipeline.transforms are not applied to this source"});
}

TEST_F(DocumentTest, IneffectiveSettingsAreWarnings) {
  Result<Document> doc = ParseDocument(R"(pipeline:
  source: {type: a, tags: [nightly], status: mandatory}
  sink: {type: b, status: draft}
)",
                                       "t.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(doc->warnings,
            (std::vector<std::string>{
                "t.yaml:2:27: pipeline.source.tags: has no effect in this build (tags select "
                "matrix rows)",
                "t.yaml:3:27: pipeline.sink.status: has no effect on a sink"}));
}

TEST_F(DocumentTest, DlqDefaultsFollowTheReference) {
  Result<Document> doc = ParseDocument(
      "pipeline:\n  source: {type: a}\n  sink: {type: b}\n  dlq:\n    sink: {type: file, "
      "config: {path: dlq.jsonl}}\n",
      "t.yaml");
  ASSERT_OK(doc);
  ASSERT_TRUE(doc->dlq.has_value());
  EXPECT_EQ(doc->dlq->sink.type, "file");
  EXPECT_EQ(doc->dlq->on_batch_error, "propagate");
  EXPECT_FALSE(doc->dlq->max_failures_per_page.has_value());
  EXPECT_TRUE(doc->dlq->include_original_payload);
  EXPECT_EQ(doc->dlq->sink.config.path(), "pipeline.dlq.sink.config");
}

TEST_F(DocumentTest, ConnectorConfigKeysAreLeftToTheConnector) {
  Result<Document> doc = ParseDocument(
      "pipeline:\n  source: {type: a, config: {slot_name: s, not_a_key: 1}}\n  sink: {type: b}\n",
      "t.yaml");
  ASSERT_OK(doc);
  ASSERT_OK(doc->source.config.RequiredString("slot_name"));
  EXPECT_EQ(doc->source.config.UnreadKeys(), std::vector<std::string>{"not_a_key"});
  EXPECT_EQ(doc->sink.config.path(), "pipeline.sink.config");
}

TEST_F(DocumentTest, LoadDocumentNamesAMissingFile) {
  Result<Document> doc = LoadDocument("/nonexistent/pipeline.yaml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message(),
            "cannot read config file '/nonexistent/pipeline.yaml': No such file or directory");
}

TEST_F(DocumentTest, LoadDocumentKeepsThePathAsGiven) {
  TempFile file("orders.yaml", "pipeline: {source: {type: a}, sink: {type: b}}\n");
  Result<Document> doc = LoadDocument(file.path());
  ASSERT_OK(doc);
  EXPECT_EQ(doc->file, file.path());
  EXPECT_EQ(doc->name, std::to_string(::getpid()) + "_orders");
  EXPECT_EQ(doc->root.Error("delivery", "m").message(), file.path() + ":1:1: delivery: m");
}

}  // namespace
}  // namespace faucet::config
