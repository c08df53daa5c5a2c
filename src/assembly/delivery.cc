#include "assembly/delivery.h"

#include "assembly/registry.h"

namespace faucet::assembly {
namespace {

template <typename Kind, typename Pred>
std::string Names(const std::vector<Kind>& kinds, Pred pred) {
  std::string list;
  for (const Kind& k : kinds) {
    if (pred(k)) list += (list.empty() ? "" : ", ") + k.type;
  }
  return list.empty() ? "none in this build" : list;
}

}  // namespace

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

void ApplyGuarantee(Guarantee g, PipelineOptions& options) {
  options.delivery = PipelineDelivery(g);
  options.group_bytes = g == Guarantee::kKeyedUpsert ? kGroupCommitBytes : 0;
}

Result<Guarantee> DeriveDelivery(const config::Document& doc, const SourceCapabilities& source,
                                 const SinkCapabilities& sink, Durability state) {
  const bool deterministic = source.deterministic_replay;
  bool durable_state = state != Durability::kNone;

  auto fail = [&](const std::string& why) {
    return doc.root.Error("delivery", "exactly_once " + why);
  };
  if (doc.delivery == config::RequestedDelivery::kAtLeastOnce) {
    if (sink.watermark_configured) {
      return doc.root.Error("delivery",
                            "is at_least_once, but the sink's exactly_once settings are only used "
                            "under delivery: exactly_once (set it, or remove them)");
    }
    return sink.dedups_by_key ? Guarantee::kKeyedUpsert : Guarantee::kAtLeastOnce;
  }
  if (sink.overwrites) return fail("is not compatible with write_mode: overwrite");
  const bool scopes = !source.tokens_per_part || sink.many_scopes;
  if (sink.atomic_watermark && deterministic && scopes && durable_state && !doc.dlq) {
    return Guarantee::kAtomicWatermark;
  }
  if (sink.dedups_by_key) return Guarantee::kKeyedUpsert;
  if (!deterministic) {
    return fail("is not supported by source '" + doc.source.type +
                "' (deterministic-replay sources only: " +
                Names(SourceKinds(), [](const SourceKind& k) { return k.deterministic_replay; }) +
                "; or configure the sink with write_mode: upsert and a key)");
  }
  if (!sink.atomic_watermark) {
    return fail("is not supported by sink '" + doc.sink.type +
                "': it appends, so a replayed page would be written twice (exactly-once needs a "
                "sink that commits a watermark with its rows: " +
                Names(SinkKinds(), [](const SinkKind& k) { return k.atomic_watermark; }) +
                "; or one of them with write_mode: upsert and a key)");
  }
  if (!scopes) {
    return fail("is not supported by sink '" + doc.sink.type + "' with source '" + doc.source.type +
                "': the source keeps a commit token per partition, and this sink one per "
                "pipeline (use a SQL sink, or one with write_mode: upsert and a key)");
  }
  if (!doc.state) return fail("requires a state store");
  if (!durable_state) return fail("requires a durable state store, not 'memory'");
  return fail("is not compatible with a DLQ in this version");
}

}  // namespace faucet::assembly
