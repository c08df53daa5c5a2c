#include "assembly/pipeline_builder.h"

#include "assembly/registry.h"
#include "state/memory_state_store.h"

namespace faucet::assembly {

std::vector<Transform*> PipelineParts::TransformPtrs() const {
  std::vector<Transform*> out;
  for (const auto& t : transforms) out.push_back(t.get());
  return out;
}

Result<PipelineParts> MakeParts(const config::Document& doc, const config::ConnectorSpec& source,
                                bool snapshot, std::vector<std::string>& warnings) {
  PipelineParts parts;
  ASSIGN_OR_RETURN(parts.source, MakeSource(source, warnings));
  for (const config::ConnectorSpec& spec : doc.transforms) {
    if (snapshot && spec.type == "cdc_unwrap") continue;
    ASSIGN_OR_RETURN(std::unique_ptr<Transform> t, MakeTransform(spec, warnings));
    parts.transforms.push_back(std::move(t));
  }
  ASSIGN_OR_RETURN(parts.sink, MakeSink(doc.sink, warnings));
  parts.sink->SetSchemaPolicy(doc.schema ? doc.schema->policy : SchemaPolicy{});
  if (doc.dlq) {
    ASSIGN_OR_RETURN(parts.dlq_sink, MakeSink(doc.dlq->sink, warnings));
  }
  return parts;
}

Status CheckSchemaPolicy(const config::Document& doc, const SinkCapabilities& sink,
                         std::vector<std::string>& warnings) {
  if (!doc.schema) return Status::Ok();
  const SchemaPolicy& policy = doc.schema->policy;
  const config::Block& block = doc.schema->block;
  const std::string sink_name = "sink '" + doc.sink.type + "'";
  if (!sink.has_schema) {
    warnings.push_back(block
                           .Error("on_drift", sink_name +
                                                  " in this configuration writes rows of any "
                                                  "shape, so they never drift: the policy has no "
                                                  "effect")
                           .message());
    return Status::Ok();
  }
  if (policy.on_drift == OnDrift::kEvolve && !sink.evolves_schema) {
    return block.Error("on_drift",
                       "evolve needs a sink that can change its destination's "
                       "schema; " +
                           sink_name + " in this configuration cannot");
  }
  const bool quarantines = policy.on_drift == OnDrift::kQuarantine ||
                           (policy.on_drift == OnDrift::kEvolve &&
                            policy.on_incompatible == OnIncompatible::kQuarantine);
  if (quarantines && !doc.dlq) {
    const std::string key =
        policy.on_drift == OnDrift::kQuarantine ? "on_drift" : "on_incompatible";
    return block.Error(key,
                       "quarantine sends drifting rows to the dead-letter queue, and the "
                       "pipeline has no dlq: block");
  }
  return Status::Ok();
}

std::optional<DlqOptions> DlqOptionsFor(const config::Document& doc, Sink* dlq_sink) {
  if (!doc.dlq) return std::nullopt;
  DlqOptions o;
  o.sink = dlq_sink;
  o.dlq_all_on_batch_error = doc.dlq->on_batch_error == "dlq_all";
  if (doc.dlq->max_failures_per_page) o.max_failures_per_page = *doc.dlq->max_failures_per_page;
  if (doc.dlq->max_failures_total) o.max_failures_total = *doc.dlq->max_failures_total;
  o.include_original_payload = doc.dlq->include_original_payload;
  o.pipeline_name = doc.name;
  o.sink_type = doc.sink.type;
  return o;
}

Result<BuiltPipeline> BuildPipeline(const std::string& path) {
  ASSIGN_OR_RETURN(config::Document doc, config::LoadDocument(path));
  return BuildPipeline(std::move(doc));
}

Result<BuiltPipeline> BuildPipeline(config::Document doc) {
  BuiltPipeline built{std::move(doc)};
  built.warnings = built.doc.warnings;
  const config::Document& d = built.doc;
  ASSIGN_OR_RETURN(built.parts, MakeParts(d, d.source, /*snapshot=*/false, built.warnings));
  RETURN_IF_ERROR(CheckSchemaPolicy(d, built.parts.sink->Capabilities(), built.warnings));
  if (d.state) {
    ASSIGN_OR_RETURN(StateConfig state, ParseStateConfig(d.state->type, d.state->config));
    WarnUnread(d.state->config, built.warnings);
    if (DurabilityOf(state.type) == Durability::kWeak) {
      built.warnings.push_back(d.state->spec.Where("type") +
                               ": pipeline.state: the redis state store is only as durable as "
                               "the Redis server's persistence settings (no fsync wait); prefer "
                               "file or postgres when the bookmark must survive a crash");
    }
    built.state = std::move(state);
  } else {
    built.warnings.push_back(d.file +
                             ": pipeline.state: no state store, so nothing is persisted and "
                             "every run starts from the beginning");
  }
  ASSIGN_OR_RETURN(
      built.guarantee,
      DeriveDelivery(d, built.parts.source->Capabilities(), built.parts.sink->Capabilities(),
                     built.state ? DurabilityOf(built.state->type) : Durability::kNone));
  return built;
}

Result<std::unique_ptr<StateStore>> OpenState(const BuiltPipeline& built) {
  if (!built.state) return std::unique_ptr<StateStore>(new MemoryStateStore());
  return OpenStateStore(*built.state);
}

}  // namespace faucet::assembly
