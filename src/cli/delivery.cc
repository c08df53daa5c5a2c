#include "cli/delivery.h"

#include "cli/registry.h"

namespace faucet::cli {
namespace {

template <typename Kind, typename Pred>
std::string Names(const std::vector<Kind>& kinds, Pred pred) {
  std::string list;
  for (const Kind& k : kinds) {
    if (pred(k)) list += (list.empty() ? "" : ", ") + k.type;
  }
  return list.empty() ? "none in this build" : list;
}

// write_mode upsert|delete with a non-empty key: a replayed row overwrites itself.
bool SinkDedupsByKey(const config::Document& doc) {
  std::string mode = SinkWriteMode(doc);
  if (mode != "upsert" && mode != "delete") return false;
  const YAML::Node& cfg = doc.sink.config.node();
  return cfg["key"] && cfg["key"].IsSequence() && cfg["key"].size() > 0;
}

}  // namespace

std::string SinkWriteMode(const config::Document& doc) {
  const YAML::Node& cfg = doc.sink.config.node();
  if (!cfg.IsMap() || !cfg["write_mode"] || !cfg["write_mode"].IsScalar()) return "append";
  return cfg["write_mode"].Scalar();
}

const char* GuaranteeName(Guarantee g) {
  switch (g) {
    case Guarantee::kAtLeastOnce:
      return "at-least-once";
    case Guarantee::kAtomicWatermark:
      return "effectively-once (atomic watermark)";
    case Guarantee::kKeyedUpsert:
      return "effectively-once (keyed upsert)";
  }
  return "?";
}

Delivery PipelineDelivery(Guarantee g) {
  return g == Guarantee::kAtomicWatermark ? Delivery::kAtomicWatermark : Delivery::kAtLeastOnce;
}

Result<Guarantee> DeriveDelivery(const config::Document& doc, Durability state) {
  const SourceKind* source = FindSourceKind(doc.source.type);
  const SinkKind* sink = FindSinkKind(doc.sink.type);
  bool deterministic = source != nullptr && source->deterministic_replay;
  bool atomic = sink != nullptr && sink->atomic_watermark;
  bool durable_state = state != Durability::kNone;
  bool keyed = SinkDedupsByKey(doc);

  if (doc.delivery == config::RequestedDelivery::kAtLeastOnce) {
    return keyed ? Guarantee::kKeyedUpsert : Guarantee::kAtLeastOnce;
  }
  auto fail = [&](const std::string& why) {
    return doc.root.Error("delivery", "exactly_once " + why);
  };
  if (SinkWriteMode(doc) == "overwrite")
    return fail("is not compatible with write_mode: overwrite");
  if (atomic && deterministic && durable_state && !doc.dlq) return Guarantee::kAtomicWatermark;
  if (keyed) return Guarantee::kKeyedUpsert;
  if (!deterministic) {
    return fail("is not supported by source '" + doc.source.type +
                "' (deterministic-replay sources only: " +
                Names(SourceKinds(), [](const SourceKind& k) { return k.deterministic_replay; }) +
                "; or configure the sink with write_mode: upsert and a key)");
  }
  if (!atomic) {
    return fail("is not supported by sink '" + doc.sink.type + "' (idempotent sinks only: " +
                Names(SinkKinds(), [](const SinkKind& k) { return k.atomic_watermark; }) +
                "; or configure write_mode: upsert and a key)");
  }
  if (!doc.state) return fail("requires a state store");
  if (!durable_state) return fail("requires a durable state store, not 'memory'");
  return fail("is not compatible with a DLQ in this version");
}

}  // namespace faucet::cli
