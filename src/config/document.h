// config::Document: a pipeline config file (YAML, or JSON as YAML flow style) loaded,
// interpolated and checked against the engine's grammar. Connector `config:` blocks are
// interpolated but not checked here: each connector reads its own with Block getters.
//
// Every error is kInvalidArgument "file:line:col: dotted.key.path: message" and says what was
// expected; docs/config.md lists the grammar, the interpolation forms and the reference keys
// this build refuses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/block.h"
#include "core/schema_policy.h"
#include "core/status.h"

namespace faucet::config {

// A `{type, config, ...}` spec: a source, sink, transform, state store or DLQ sink.
struct ConnectorSpec {
  std::string type;
  Block config;  // the `config:` mapping; an empty block at "<spec>.config" when absent
  Block spec;    // the whole spec mapping, for extra keys such as cdc_unwrap's `key:`
};

struct DlqSpec {
  ConnectorSpec sink;
  std::string on_batch_error = "propagate";  // propagate | dlq_all
  std::optional<int64_t> max_failures_per_page;
  std::optional<int64_t> max_failures_total;
  bool include_original_payload = true;
};

// `pipeline.schema:` (or a mirror table's `schema_drift:`): the drift policy, and where it was
// written, for errors about it.
struct SchemaSpec {
  SchemaPolicy policy;
  Block block;
};

// `observability:`: where the metrics and status listener binds, and its token.
struct ObservabilitySpec {
  std::string host;  // an IP address ("localhost" reads as 127.0.0.1)
  int port = 0;      // 0: any free port
  bool loopback = true;
  std::vector<double> buckets;  // latency histogram bounds in seconds, ascending; empty: default
  std::string auth_token;       // "" = none
  Block block;
};

enum class RequestedDelivery { kAtLeastOnce, kExactlyOnce };

struct Document {
  std::string file;  // the path as given
  std::string name;  // `name:`, default the file stem; valid as a state key prefix
  Block root;        // the whole document, for errors located at top-level keys
  ConnectorSpec source;
  ConnectorSpec sink;
  // In application order: pipeline.transforms, then pipeline.source.transforms (the reference's
  // T_pipeline then T_source); `inherit_transforms: false` on the source drops the former.
  std::vector<ConnectorSpec> transforms;
  std::optional<ConnectorSpec> state;
  std::optional<DlqSpec> dlq;
  std::optional<SchemaSpec> schema;                // absent: the default policy (warn)
  std::optional<ObservabilitySpec> observability;  // absent: no listener
  RequestedDelivery delivery = RequestedDelivery::kAtLeastOnce;
  // `mirror:`, or its alias `replication:` (the block's path is the key the file used). Only
  // its shape as a mapping is checked here; the mirror command reads the rest.
  std::optional<Block> mirror;
  // Accepted but ineffective settings, as "file:line:col: key.path: message".
  std::vector<std::string> warnings;
};

// Reads and parses the config file at `path`. An unreadable file is kInvalidArgument naming the
// path; otherwise as ParseDocument.
Result<Document> LoadDocument(const std::string& path);

// Parses the source connector spec at `parent.key` with the same rules as pipeline.source
// (used for the mirror's snapshot.source). Warnings are appended to `warnings`.
Result<ConnectorSpec> ParseSourceSpec(const Block& parent, const std::string& key,
                                      std::vector<std::string>& warnings);

// Parses a drift policy mapping ({on_drift, allow_type_widening, on_incompatible,
// relax_nullability_on_missing}) with the reference's defaults.
Result<SchemaSpec> ParseSchemaSpec(const Block& block);

// Parses config `text` as if read from `file_name`, which is used in messages and for the
// default name. Resolves ${env:}, ${secret:}, ${file:} (relative to the working directory) and
// ${vars.} in every scalar value before checking the grammar; mapping keys are taken literally.
Result<Document> ParseDocument(const std::string& text, const std::string& file_name);

// The pipeline name a file gets without `name:`: its stem ("conf/orders.yaml" -> "orders").
std::string DefaultPipelineName(const std::string& path);

}  // namespace faucet::config
