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
  if (doc.dlq) {
    ASSIGN_OR_RETURN(parts.dlq_sink, MakeSink(doc.dlq->sink, warnings));
  }
  return parts;
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
  ASSIGN_OR_RETURN(built.guarantee, DeriveDelivery(d, built.parts.source->Capabilities(),
                                                   built.parts.sink->Capabilities(),
                                                   built.state ? DurabilityOf(built.state->type)
                                                               : Durability::kNone));
  return built;
}

Result<std::unique_ptr<StateStore>> OpenState(const BuiltPipeline& built) {
  if (!built.state) return std::unique_ptr<StateStore>(new MemoryStateStore());
  return OpenStateStore(*built.state);
}

}  // namespace faucet::assembly
