#include "cli/pipeline_builder.h"

#include "cli/registry.h"
#include "state/memory_state_store.h"

namespace faucet::cli {

Result<BuiltPipeline> BuildPipeline(const std::string& path) {
  ASSIGN_OR_RETURN(config::Document doc, config::LoadDocument(path));
  BuiltPipeline built{std::move(doc)};
  built.warnings = built.doc.warnings;
  const config::Document& d = built.doc;

  ASSIGN_OR_RETURN(built.source, MakeSource(d.source, built.warnings));
  for (const config::ConnectorSpec& spec : d.transforms) {
    ASSIGN_OR_RETURN(std::unique_ptr<Transform> t, MakeTransform(spec, built.warnings));
    built.transforms.push_back(std::move(t));
  }
  ASSIGN_OR_RETURN(built.sink, MakeSink(d.sink, built.warnings));
  if (d.dlq) {
    return d.dlq->sink.spec.Error("", "a DLQ is not available in this build");
  }
  if (d.state) {
    ASSIGN_OR_RETURN(StateConfig state, ParseStateConfig(d.state->type, d.state->config));
    for (const std::string& key : d.state->config.UnreadKeys()) {
      built.warnings.push_back(d.state->config.Where(key) + ": " + d.state->config.path() + "." +
                               key + ": unknown key, ignored");
    }
    if (d.state->type == "redis") {
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
  ASSIGN_OR_RETURN(built.guarantee, DeriveDelivery(d));
  return built;
}

Result<std::unique_ptr<StateStore>> OpenState(const BuiltPipeline& built) {
  if (!built.state) return std::unique_ptr<StateStore>(new MemoryStateStore());
  return OpenStateStore(*built.state);
}

}  // namespace faucet::cli
