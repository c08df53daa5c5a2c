// The connector registry: maps the `type:` names of a config to factories. The only place that
// knows concrete connectors; callers decide from what a built connector declares
// (Source::Capabilities, Sink::Capabilities).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/document.h"
#include "core/sink.h"
#include "core/source.h"
#include "core/transform.h"

namespace faucet::assembly {

struct SourceKind {
  std::string type;
  // Replays the same changes from the same bookmark, in some configuration: only for naming
  // such sources in errors. What a built source does is its Capabilities().
  bool deterministic_replay = false;
  std::function<Result<std::unique_ptr<Source>>(const config::Block&)> make;
};

struct SinkKind {
  std::string type;
  // Can commit rows and a commit token in one transaction (atomic watermark), in some write
  // mode: only for naming such sinks in errors. What a built sink does is its Capabilities().
  bool atomic_watermark = false;
  // Can write by a key (write_mode upsert/delete with `key:`): a multi-table mirror's default
  // write mode for keyed tables.
  bool writes_by_key = false;
  std::function<Result<std::unique_ptr<Sink>>(const config::Block&)> make;
};

struct TransformKind {
  std::string type;
  // Gets the whole spec (cdc_unwrap takes `key:` beside `config:`).
  std::function<Result<std::unique_ptr<Transform>>(const config::ConnectorSpec&)> make;
};

// Adds "file:line:col: path.key: unknown key, ignored" to `warnings` for every key of `block`
// that nothing read.
void WarnUnread(const config::Block& block, std::vector<std::string>& warnings);

const std::vector<SourceKind>& SourceKinds();
// SinkKind::writes_by_key of `type` (false for an unknown type).
bool SinkWritesByKey(const std::string& type);
const std::vector<SinkKind>& SinkKinds();
const std::vector<TransformKind>& TransformKinds();

// Builds the connector a spec names; no I/O happens until Open. Safe to call from several
// threads on specs of one config (they read it one at a time). An unknown type, or one the
// reference system has but this build does not, is kInvalidArgument naming the type and its
// location. Keys of the connector's `config:` that it did not read are appended to `warnings`.
Result<std::unique_ptr<Source>> MakeSource(const config::ConnectorSpec& spec,
                                           std::vector<std::string>& warnings);
Result<std::unique_ptr<Sink>> MakeSink(const config::ConnectorSpec& spec,
                                       std::vector<std::string>& warnings);
Result<std::unique_ptr<Transform>> MakeTransform(const config::ConnectorSpec& spec,
                                                 std::vector<std::string>& warnings);

}  // namespace faucet::assembly
