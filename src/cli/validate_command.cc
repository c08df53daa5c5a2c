#include <cstdio>
#include <nlohmann/json.hpp>

#include "assembly/pipeline_builder.h"
#include "cli/commands.h"
#include "cli/exit_code.h"
#include "core/redact.h"
#include "mirror/mirror_config.h"
#include "observability/server.h"

namespace faucet::cli {

namespace {

std::string DriftSummary(const SchemaPolicy& p) {
  std::string out = std::string("on_drift ") + OnDriftName(p.on_drift);
  if (p.on_drift == OnDrift::kEvolve) {
    out += std::string(", type widening ") + (p.allow_type_widening ? "on" : "off") +
           ", NOT NULL relaxed " + (p.relax_nullability_on_missing ? "on" : "off") +
           ", otherwise " +
           (p.on_incompatible == OnIncompatible::kQuarantine ? "quarantine" : "fail");
  }
  return out;
}

// A config with a mirror: block is checked as `faucet mirror` would run it; the result is a
// one-line summary, or the error.
Result<std::string> CheckMirror(assembly::BuiltPipeline& built) {
  if (!built.doc.mirror) return std::string();
  ASSIGN_OR_RETURN(mirror::MirrorConfig cfg, mirror::ParseMirrorConfig(built, built.warnings));
  std::string summary = std::string("snapshot_then_cdc from ") + cfg.snapshot_source.type +
                        (cfg.continuous ? ", continuous" : ", one-shot");
  if (cfg.tables) {
    std::string globs;
    for (const std::string& g : cfg.tables->include) globs += (globs.empty() ? "" : " ") + g;
    summary += ", tables " + globs + " (a pipeline per table over one stream, " +
               std::to_string(cfg.tables->concurrency) + " snapshots at once)";
    for (const auto& [table, over] : cfg.tables->per_table) {
      if (over.schema_drift) {
        summary += "; " + table + " schema drift: " + DriftSummary(over.schema_drift->policy);
      }
    }
  }
  return summary;
}

// Where `run` and `mirror` serve metrics and status (the parsed listener), or "off".
std::string ObservabilitySummary(const config::Document& doc) {
  if (!doc.observability) return "off";
  const config::ObservabilitySpec& o = *doc.observability;
  return "metrics and status on " + observability::ServerUrl(o.host, o.port) +
         (o.auth_token.empty() ? "" : " (bearer token required)");
}

// What the sink does when rows drift from its destination, from the built sink and the policy.
std::string SchemaSummary(const assembly::BuiltPipeline& built) {
  if (!built.parts.sink->Capabilities().has_schema) {
    return "none (the sink takes rows of any shape)";
  }
  return DriftSummary(built.doc.schema ? built.doc.schema->policy : SchemaPolicy{});
}

}  // namespace

int ValidateCommand(const std::string& config_path, bool json) {
  Result<assembly::BuiltPipeline> built = mirror::BuildMirrorPipeline(config_path);
  Result<std::string> mirror = built.ok() ? CheckMirror(*built) : Result<std::string>("");
  if (built.ok() && !mirror.ok()) built = mirror.status();
  if (json) {
    nlohmann::json out;
    out["config"] = config_path;
    out["valid"] = built.ok();
    if (built.ok()) {
      out["name"] = built->doc.name;
      out["source"] = built->doc.source.type;
      out["sink"] = built->doc.sink.type;
      out["state"] = built->doc.state ? built->doc.state->type : "none";
      out["delivery"] = assembly::GuaranteeName(built->guarantee);
      out["schema_drift"] = SchemaSummary(*built);
      out["observability"] = ObservabilitySummary(built->doc);
      out["warnings"] = built->warnings;
      if (!mirror->empty()) out["mirror"] = *mirror;
    } else {
      out["error"] = built.status().message();
    }
    std::printf("%s\n", Redact(out.dump(2)).c_str());
    return built.ok() ? kExitOk : ExitCodeFor(built.status());
  }
  if (!built.ok()) return ReportFailure(built.status());
  for (const std::string& w : built->warnings)
    std::fprintf(stderr, "warning: %s\n", Redact(w).c_str());
  std::printf(
      "%s: valid\n  name: %s\n  source: %s\n  sink: %s\n  state: %s\n  delivery: %s\n"
      "  schema drift: %s\n  observability: %s\n",
      config_path.c_str(), built->doc.name.c_str(), built->doc.source.type.c_str(),
      built->doc.sink.type.c_str(), built->doc.state ? built->doc.state->type.c_str() : "none",
      assembly::GuaranteeName(built->guarantee), SchemaSummary(*built).c_str(),
      ObservabilitySummary(built->doc).c_str());
  if (!mirror->empty()) std::printf("  mirror: %s\n", mirror->c_str());
  return kExitOk;
}

}  // namespace faucet::cli
