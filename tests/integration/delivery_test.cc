// `faucet validate` states the delivery guarantee a config really gets, derived from what the
// built sink declares (Sink::Capabilities), for every sink kind and write mode, including file
// sinks whose configs carry upsert keys they ignore.
#include <gtest/gtest.h>

#include <fstream>

#include "testing/process.h"
#include "testing/services.h"

namespace faucet {
namespace {

struct Case {
  const char* sink;      // the sink's flow map
  const char* mode;      // extra sink config keys ("" for none)
  const char* delivery;  // requested
  const char* expected;  // the delivery line validate prints, or a substring of its error
  bool valid;
};

constexpr const char* kPostgresSink =
    "type: postgres, config: {connection_url: 'postgres://u:pw@127.0.0.1/d', table_name: t, "
    "column_mapping: auto_map";
constexpr const char* kSqliteSink =
    "type: sqlite, config: {database_url: ./d.db, table_name: t, column_mapping: auto_map";
constexpr const char* kMysqlSink =
    "type: mysql, config: {connection_url: 'mysql://u:pw@127.0.0.1/d', table_name: t, "
    "column_mapping: auto_map";
constexpr const char* kJsonlSink = "type: jsonl, config: {path: ./o.jsonl";
constexpr const char* kFileSink = "type: file, config: {path: ./o.jsonl";
constexpr const char* kCsvSink = "type: csv, config: {path: ./o.csv";
constexpr const char* kStdoutSink = "type: stdout, config: {format: json";
constexpr const char* kKafkaSink =
    "type: kafka, config: {brokers: '127.0.0.1:9092', topic: {name: t}";

constexpr const char* kAppend = "";
constexpr const char* kUpsert = ", write_mode: upsert, key: [id]";
constexpr const char* kDelete = ", write_mode: delete, key: [id]";
constexpr const char* kOverwrite = ", write_mode: overwrite";

constexpr const char* kWatermark = "delivery: effectively-once (atomic watermark)";
constexpr const char* kKeyed = "delivery: effectively-once (keyed upsert)";
constexpr const char* kAtLeastOnce = "delivery: at-least-once";
constexpr const char* kAppends = "exactly_once is not supported by sink";
constexpr const char* kNoOverwrite = "exactly_once is not compatible with write_mode: overwrite";

const Case kCases[] = {
    // The SQL sinks commit a watermark in every mode but overwrite, and write by key in
    // upsert and delete modes.
    {kPostgresSink, kAppend, "at_least_once", kAtLeastOnce, true},
    {kPostgresSink, kAppend, "exactly_once", kWatermark, true},
    {kPostgresSink, kUpsert, "at_least_once", kKeyed, true},
    {kPostgresSink, kUpsert, "exactly_once", kWatermark, true},
    {kPostgresSink, kDelete, "at_least_once", kKeyed, true},
    {kPostgresSink, kOverwrite, "at_least_once", kAtLeastOnce, true},
    {kPostgresSink, kOverwrite, "exactly_once", kNoOverwrite, false},
    {kSqliteSink, kAppend, "at_least_once", kAtLeastOnce, true},
    {kSqliteSink, kAppend, "exactly_once", kWatermark, true},
    {kSqliteSink, kUpsert, "at_least_once", kKeyed, true},
    {kSqliteSink, kUpsert, "exactly_once", kWatermark, true},
    {kSqliteSink, kDelete, "exactly_once", kWatermark, true},
    {kSqliteSink, kOverwrite, "exactly_once", kNoOverwrite, false},
    {kMysqlSink, kAppend, "at_least_once", kAtLeastOnce, true},
    {kMysqlSink, kAppend, "exactly_once", kWatermark, true},
    {kMysqlSink, kUpsert, "at_least_once", kKeyed, true},
    {kMysqlSink, kUpsert, "exactly_once", kWatermark, true},
    {kMysqlSink, kOverwrite, "at_least_once", kAtLeastOnce, true},
    {kMysqlSink, kOverwrite, "exactly_once", kNoOverwrite, false},
    // File sinks append, whatever keys the config carries (they are warned as unknown).
    {kJsonlSink, kAppend, "at_least_once", kAtLeastOnce, true},
    {kJsonlSink, kAppend, "exactly_once", kAppends, false},
    {kJsonlSink, kUpsert, "at_least_once", kAtLeastOnce, true},
    {kJsonlSink, kUpsert, "exactly_once", kAppends, false},
    {kFileSink, kUpsert, "at_least_once", kAtLeastOnce, true},
    {kFileSink, kUpsert, "exactly_once", kAppends, false},
    {kCsvSink, kAppend, "at_least_once", kAtLeastOnce, true},
    {kCsvSink, kUpsert, "at_least_once", kAtLeastOnce, true},
    {kCsvSink, kUpsert, "exactly_once", kAppends, false},
    {kStdoutSink, kUpsert, "at_least_once", kAtLeastOnce, true},
    {kStdoutSink, kDelete, "exactly_once", kAppends, false},
    // Kafka commits a page's messages with its token in one Kafka transaction under
    // exactly_once; at-least-once it appends, and a replay sends messages again. Settings of
    // exactly_once in a pipeline that runs at-least-once are refused, not ignored.
    {kKafkaSink, kAppend, "at_least_once", kAtLeastOnce, true},
    {kKafkaSink, kAppend, "exactly_once", kWatermark, true},
    {kKafkaSink, ", exactly_once: {transactional_id_prefix: p}", "exactly_once", kWatermark, true},
    {kKafkaSink, ", exactly_once: {transactional_id_prefix: p}", "at_least_once",
     "only used under delivery: exactly_once", false},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.sink << c.mode << "} " << c.delivery; }

class ValidateDelivery : public ::testing::TestWithParam<Case> {};

TEST_P(ValidateDelivery, PrintsTheMechanismTheBuiltSinkHas) {
  const Case& c = GetParam();
  std::string dir = testing::TempDir("delivery");
  std::string path = dir + "/pipe.yaml";
  std::ofstream(path) << "version: 1\nname: d\ndelivery: " << c.delivery << "\npipeline:\n"
                      << "  source: {type: postgres-cdc, config: {connection_url: "
                         "'postgres://u:pw@127.0.0.1/d', slot_name: s, publication_name: p}}\n"
                      << "  sink: {" << c.sink << c.mode << "}}\n"
                      << "  state: {type: file, config: {path: ./st}}\n";
  testing::ProcessResult r = testing::RunProcess({FAUCET_BINARY, "validate", path});
  EXPECT_EQ(r.exit_code, c.valid ? 0 : 2) << r.output;
  EXPECT_NE(r.output.find(c.expected), std::string::npos) << r.output;
  if (!c.valid) {  // the typed config error names the file, line and key
    EXPECT_NE(r.output.find("pipe.yaml:3:11: delivery: "), std::string::npos) << r.output;
  }
  // The keys a file sink does not read are said to be ignored, so nobody believes them.
  if (c.valid && std::string(c.mode) == kUpsert &&
      std::string(c.sink).find("path:") != std::string::npos) {
    EXPECT_NE(r.output.find("write_mode: unknown key, ignored"), std::string::npos) << r.output;
  }
}

INSTANTIATE_TEST_SUITE_P(EverySinkAndMode, ValidateDelivery, ::testing::ValuesIn(kCases));

// The other conditions of the atomic watermark: without them a keyed sink still earns the
// keyed upsert, and an append sink is refused, naming what prevents it.
TEST(ValidateDelivery, TheWatermarkNeedsADurableStateAndNoDlq) {
  std::string dir = testing::TempDir("delivery");
  auto validate = [&](const std::string& mode, const std::string& extra) {
    std::string path = dir + "/pipe.yaml";
    std::ofstream(path) << "version: 1\nname: d\ndelivery: exactly_once\npipeline:\n"
                        << "  source: {type: postgres-cdc, config: {connection_url: "
                           "'postgres://u@127.0.0.1/d', slot_name: s, publication_name: p}}\n"
                        << "  sink: {" << kSqliteSink << mode << "}}\n"
                        << extra;
    return testing::RunProcess({FAUCET_BINARY, "validate", path}).output;
  };
  const std::string memory = "  state: {type: memory}\n";
  const std::string dlq =
      "  state: {type: file, config: {path: ./st}}\n"
      "  dlq: {sink: {type: jsonl, config: {path: ./dlq.jsonl}}}\n";
  EXPECT_NE(validate(kUpsert, memory).find(kKeyed), std::string::npos);
  EXPECT_NE(validate(kAppend, memory).find("requires a durable state store"), std::string::npos);
  EXPECT_NE(validate(kAppend, "").find("requires a state store"), std::string::npos);
  EXPECT_NE(validate(kUpsert, dlq).find(kKeyed), std::string::npos);
  EXPECT_NE(validate(kAppend, dlq).find("not compatible with a DLQ"), std::string::npos);
}

// The kafka source keeps a commit token per partition: the atomic watermark with a SQL sink,
// which keeps any number of them, but not with a kafka sink (one transactional.id per
// pipeline); there only write_mode upsert would do, which the kafka sink has not.
TEST(ValidateDelivery, AKafkaSourceNeedsASinkWithATokenPerPartition) {
  std::string dir = testing::TempDir("delivery");
  auto validate = [&](const std::string& sink) {
    std::string path = dir + "/kafka.yaml";
    std::ofstream(path) << "version: 1\nname: d\ndelivery: exactly_once\npipeline:\n"
                        << "  source: {type: kafka, config: {brokers: '127.0.0.1:9092', "
                           "topics: [t], group_id: g}}\n"
                        << "  sink: {" << sink << "}}\n"
                        << "  state: {type: file, config: {path: ./st}}\n";
    return testing::RunProcess({FAUCET_BINARY, "validate", path}).output;
  };
  EXPECT_NE(validate(std::string(kPostgresSink) + kAppend).find(kWatermark), std::string::npos)
      << validate(std::string(kPostgresSink) + kAppend);
  EXPECT_NE(validate(std::string(kKafkaSink) + ", exactly_once: {}")
                .find("the source keeps a commit token per partition"),
            std::string::npos)
      << validate(std::string(kKafkaSink) + ", exactly_once: {}");
}

}  // namespace
}  // namespace faucet
