#include "assembly/registry.h"

#include <algorithm>

#include "core/mutex.h"
#include "sinks/file/csv_sink.h"
#include "sinks/file/jsonl_sink.h"
#include "sinks/file/stdout_sink.h"
#include "sinks/kafka/kafka_sink.h"
#include "sinks/mysql/mysql_sink.h"
#include "sinks/postgres/postgres_sink.h"
#include "sinks/sqlite/sqlite_sink.h"
#include "sources/generator/generator_source.h"
#include "sources/kafka/kafka_source.h"
#include "sources/mysql/mysql_cdc_source.h"
#include "sources/mysql/query_source.h"
#include "sources/postgres/postgres_cdc_source.h"
#include "sources/postgres/query_source.h"
#include "transforms/transforms.h"

namespace faucet::assembly {
namespace {

// Connector types of the reference system that this build does not have yet: a config that
// names one gets "not available in this build", not "unknown type".
const std::vector<std::string> kUnavailableSources = {
    "mongodb-cdc", "mssql-cdc", "oracle-cdc", "dynamodb", "sqlite", "mssql",
    "mongodb",     "oracle",    "csv",        "jsonl",    "http"};
const std::vector<std::string> kUnavailableSinks = {"mssql",     "parquet", "mongodb",
                                                    "redis",     "iceberg", "bigquery",
                                                    "snowflake", "spanner", "elasticsearch"};

template <typename Kind>
std::string TypeList(const std::vector<Kind>& kinds) {
  std::string list;
  for (const Kind& k : kinds) list += (list.empty() ? "" : ", ") + k.type;
  return list;
}

template <typename Kind>
const Kind* Find(const std::vector<Kind>& kinds, const std::string& type) {
  for (const Kind& k : kinds) {
    if (k.type == type) return &k;
  }
  return nullptr;
}

// Error for a type this build cannot make, located at the spec's `type:` key.
template <typename Kind>
Status UnknownType(const config::ConnectorSpec& spec, const char* what,
                   const std::vector<Kind>& kinds, const std::vector<std::string>& unavailable) {
  if (std::find(unavailable.begin(), unavailable.end(), spec.type) != unavailable.end()) {
    return spec.spec.Error(
        "type", std::string(what) + " connector '" + spec.type +
                    "' is not available in this build (available: " + TypeList(kinds) + ")");
  }
  return spec.spec.Error("type", "unknown " + std::string(what) + " type '" + spec.type +
                                     "' (expected one of: " + TypeList(kinds) + ")");
}

// Config blocks are read under this lock: copies of a Block share the set of keys read, and
// yaml-cpp nodes share their memory, so two threads building connectors from one config (a
// multi-table mirror's snapshots and cycles) must not read at once.
Mutex& ConfigReadMutex() {
  static Mutex mu;
  return mu;
}

}  // namespace

void WarnUnread(const config::Block& block, std::vector<std::string>& warnings) {
  for (const std::string& key : block.UnreadKeys()) {
    warnings.push_back(block.Where(key) + ": " + block.path() + "." + key +
                       ": unknown key, ignored");
  }
}

const std::vector<SourceKind>& SourceKinds() {
  static const std::vector<SourceKind> kKinds = {
      {"generator", false, MakeGeneratorSource}, {"postgres-cdc", true, MakePostgresCdcSource},
      {"mysql-cdc", true, MakeMysqlCdcSource},   {"postgres", false, MakePostgresQuerySource},
      {"mysql", false, MakeMysqlQuerySource},    {"kafka", true, MakeKafkaSource},
  };
  return kKinds;
}

const std::vector<SinkKind>& SinkKinds() {
  static const std::vector<SinkKind> kKinds = {
      {"jsonl", false, false, MakeJsonlSink},     {"file", false, false, MakeJsonlSink},
      {"csv", false, false, MakeCsvSink},         {"stdout", false, false, MakeStdoutSink},
      {"postgres", true, true, MakePostgresSink}, {"sqlite", true, true, MakeSqliteSink},
      {"mysql", true, true, MakeMysqlSink},       {"kafka", true, false, MakeKafkaSink},
  };
  return kKinds;
}

bool SinkWritesByKey(const std::string& type) {
  const SinkKind* kind = Find(SinkKinds(), type);
  return kind != nullptr && kind->writes_by_key;
}

const std::vector<TransformKind>& TransformKinds() {
  static const std::vector<TransformKind> kKinds = {
      {"cdc_unwrap", MakeCdcUnwrap},
      {"rename_fields", MakeRenameFields},
      {"drop_fields", MakeDropFields},
      {"filter", MakeFilter},
  };
  return kKinds;
}

Result<std::unique_ptr<Source>> MakeSource(const config::ConnectorSpec& spec,
                                           std::vector<std::string>& warnings) {
  MutexLock lock(ConfigReadMutex());
  const SourceKind* kind = Find(SourceKinds(), spec.type);
  if (kind == nullptr) return UnknownType(spec, "source", SourceKinds(), kUnavailableSources);
  ASSIGN_OR_RETURN(std::unique_ptr<Source> source, kind->make(spec.config));
  WarnUnread(spec.config, warnings);
  return source;
}

Result<std::unique_ptr<Sink>> MakeSink(const config::ConnectorSpec& spec,
                                       std::vector<std::string>& warnings) {
  MutexLock lock(ConfigReadMutex());
  const SinkKind* kind = Find(SinkKinds(), spec.type);
  if (kind == nullptr) return UnknownType(spec, "sink", SinkKinds(), kUnavailableSinks);
  ASSIGN_OR_RETURN(std::unique_ptr<Sink> sink, kind->make(spec.config));
  WarnUnread(spec.config, warnings);
  return sink;
}

Result<std::unique_ptr<Transform>> MakeTransform(const config::ConnectorSpec& spec,
                                                 std::vector<std::string>& warnings) {
  MutexLock lock(ConfigReadMutex());
  const TransformKind* kind = Find(TransformKinds(), spec.type);
  if (kind == nullptr) {
    return UnknownType(spec, "transform", TransformKinds(), {});
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Transform> transform, kind->make(spec));
  WarnUnread(spec.config, warnings);
  return transform;
}

}  // namespace faucet::assembly
