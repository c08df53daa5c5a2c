#include "config/document.h"

#include <arpa/inet.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <sstream>
#include <string_view>
#include <utility>

namespace faucet::config {
namespace {

using KeyList = std::span<const std::string_view>;

constexpr std::string_view kTopKeys[] = {"version", "name",        "kind",
                                         "vars",    "pipeline",    "delivery",
                                         "mirror",  "replication", "observability"};
// Reference features this build does not implement. Refusing them, rather than ignoring them,
// keeps a config from running silently without, say, its retry policy or its matrix rows.
constexpr std::string_view kTopUnsupported[] = {
    "matrix",    "execution",    "selection", "resilience",    "sla",
    "reconcile", "lineage",      "catalog",   "notifications", "metadata_columns",
    "backfill",  "partition",    "shard",     "schedule",      "params",
    "auth",      "local_outputs"};
constexpr std::string_view kObservabilityKeys[] = {"prometheus", "auth_token"};
constexpr std::string_view kObservabilityUnsupported[] = {"tracing", "otel"};
constexpr std::string_view kPrometheusKeys[] = {"listen", "buckets"};
constexpr std::string_view kPipelineKeys[] = {"source", "sink", "transforms",
                                              "state",  "dlq",  "schema"};
constexpr std::string_view kPipelineUnsupported[] = {"sources", "sinks", "quality", "contract",
                                                     "masking", "nodes", "edges"};
constexpr std::string_view kSourceKeys[] = {"type",   "config", "transforms", "inherit_transforms",
                                            "status", "tags"};
constexpr std::string_view kSourceUnsupported[] = {"complete_for"};
// Keys of a source spec that the reference rejects on any other connector.
constexpr std::string_view kSourceOnlyKeys[] = {"transforms", "inherit_transforms", "complete_for"};
constexpr std::string_view kSinkKeys[] = {"type", "config", "status", "tags"};
constexpr std::string_view kStateKeys[] = {"type", "config"};
constexpr std::string_view kTransformKeys[] = {"type", "config", "key"};
constexpr std::string_view kSchemaKeys[] = {"on_drift", "allow_type_widening", "on_incompatible",
                                            "relax_nullability_on_missing"};
constexpr std::string_view kDlqKeys[] = {"sink", "on_batch_error", "max_failures_per_page",
                                         "max_failures_total", "include_original_payload"};

// The name prefixes every state key ("{name}::row-0", "{name}::__replication__"), whose
// grammar (core/state_store.h) allows 256 characters of [A-Za-z0-9_:.-], not starting with '.'.
// The name may not contain ':', which separates it from the rest of the key, and must leave
// room for the longest suffix.
constexpr std::string_view kLongestStateKeySuffix = "::__replication__";
constexpr std::size_t kMaxNameLength = 256 - kLongestStateKeySuffix.size();

// ${file:} injects tokens and certificates; anything larger is a mistake such as /dev/zero.
constexpr std::size_t kMaxInterpolatedFileBytes = 1 << 20;
constexpr std::size_t kMaxConfigFileBytes = 16 << 20;

// Deeper than any real config; stops a self-referencing alias (`a: &x [*x]`) from recursing
// forever.
constexpr int kMaxDepth = 100;
// Aliases share nodes, so a small file can name a huge tree (`b: [*a, *a]`, `c: [*b, *b]`, ...)
// or a huge string (`b: ${vars.a}${vars.a}`, ...). Far beyond any real config, far below what
// would exhaust memory.
constexpr std::size_t kMaxValues = 100000;
constexpr std::size_t kMaxExpandedBytes = 1 << 20;

bool Contains(KeyList keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::string Join(KeyList keys) {
  std::string out;
  for (std::string_view k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

// Rejects keys outside `allowed`. The reference features in `unsupported` get their own message
// so that the user does not hunt for a typo.
Status CheckKeys(const Block& block, KeyList allowed, KeyList unsupported) {
  for (const std::string& key : block.Keys()) {
    if (Contains(allowed, key)) continue;
    if (Contains(unsupported, key)) {
      return block.KeyError(key, "'" + key + "' is not supported by this build");
    }
    return block.KeyError(key,
                          "unknown key '" + key + "' (expected one of: " + Join(allowed) + ")");
  }
  return Status::Ok();
}

void Warn(const Block& block, const std::string& key, const std::string& message,
          std::vector<std::string>& warnings) {
  warnings.push_back(block.Error(key, message).message());
}

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
  });
}

std::string NameGrammar() {
  return "1 to " + std::to_string(kMaxNameLength) +
         " characters of A-Z a-z 0-9 _ . - not starting with '.' (the name prefixes every state "
         "key)";
}

// Reads at most `limit` bytes of `path`; the error message is the reason alone.
Result<std::string> ReadSmallFile(const std::string& path, std::size_t limit) {
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Closer> f(std::fopen(path.c_str(), "rb"));
  if (!f) return InvalidArgument(std::strerror(errno));
  std::string out;
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) {
    out.append(buf, n);
    if (out.size() > limit) {
      return InvalidArgument("larger than " + std::to_string(limit) + " bytes");
    }
  }
  if (std::ferror(f.get())) return InvalidArgument(std::strerror(errno));
  return out;
}

// Resolves ${...} references in every scalar value of a document, in place. Substituted text is
// never scanned again, so a password containing "${" stays as it is.
class Interpolator {
 public:
  Interpolator(std::shared_ptr<const std::string> file, const YAML::Node& vars)
      : file_(std::move(file)) {
    // The walk rewrites the vars block too; references resolve from the text as written.
    if (!vars.IsMap()) return;
    for (auto it = vars.begin(); it != vars.end(); ++it) {
      std::string name = it->first.Scalar();
      if (!var_defs_.count(name)) {
        var_defs_.emplace(name,
                          VarDef{it->second.IsScalar() ? it->second.Scalar() : "", it->second});
      }
    }
  }

  Status Run(const YAML::Node& root) { return Walk(root, "", 0); }

 private:
  struct Expansion {
    std::string text;
    bool sensitive = false;  // some of the text came from the environment or a file
  };
  struct VarDef {
    std::string text;
    YAML::Node node;
  };

  Status Fail(const YAML::Node& at, const std::string& path, const std::string& message) const {
    return Block(at, file_, path).Error("", message);
  }

  Status Walk(YAML::Node node, const std::string& path, int depth) {
    if (depth > kMaxDepth) {
      return Fail(node, path,
                  "nested more than " + std::to_string(kMaxDepth) +
                      " levels deep (a self-referencing YAML alias?)");
    }
    if (++values_ > kMaxValues) {
      return Fail(node, path,
                  "the document has more than " + std::to_string(kMaxValues) +
                      " values once its YAML aliases are expanded");
    }
    if (node.IsScalar()) {
      // An alias shares its anchor's node; expanding it twice would undo a "$${" escape.
      for (const YAML::Node& done : rewritten_) {
        if (done.is(node)) return Status::Ok();
      }
    }
    const std::string& tag = node.Tag();
    if (tag.size() > 1 && tag[0] == '!') {
      return Fail(node, path, "the YAML tag '" + tag + "' is not supported by this build");
    }
    if (node.IsScalar()) {
      if (node.Scalar().find("${") == std::string::npos) return Status::Ok();
      ASSIGN_OR_RETURN(Expansion e, Expand(node.Scalar(), node, path));
      node = e.text;
      if (e.sensitive) node.SetTag(kInterpolatedTag);
      rewritten_.push_back(node);
      return Status::Ok();
    }
    if (node.IsSequence()) {
      std::size_t i = 0;
      for (YAML::Node item : node) {
        RETURN_IF_ERROR(Walk(item, path + "[" + std::to_string(i++) + "]", depth + 1));
      }
      return Status::Ok();
    }
    if (node.IsMap()) {
      std::set<std::string> seen;
      for (auto it = node.begin(); it != node.end(); ++it) {
        YAML::Node key = it->first;  // a copy: `it->` yields a temporary
        if (!key.IsScalar()) return Fail(key, path, "expected a string key");
        std::string child = path.empty() ? key.Scalar() : path + "." + key.Scalar();
        // yaml-cpp keeps both entries and lookups see only the first.
        if (!seen.insert(key.Scalar()).second) {
          return Fail(key, child, "duplicate key (each key may appear once)");
        }
        RETURN_IF_ERROR(Walk(it->second, child, depth + 1));
      }
    }
    return Status::Ok();
  }

  Result<Expansion> Expand(const std::string& text, const YAML::Node& at, const std::string& path) {
    Expansion out;
    std::size_t i = 0;
    while (i < text.size()) {
      if (text.compare(i, 3, "$${") == 0) {
        out.text += "${";
        i += 3;
        continue;
      }
      if (text.compare(i, 2, "${") != 0) {
        out.text += text[i++];
        continue;
      }
      std::size_t end = text.find('}', i + 2);
      if (end == std::string::npos) {
        return Fail(at, path, "unterminated '${' (write '$${' for a literal '${')");
      }
      ASSIGN_OR_RETURN(Expansion part, Resolve(text.substr(i + 2, end - i - 2), at, path));
      if (out.text.size() + part.text.size() > kMaxExpandedBytes) {
        return Fail(at, path,
                    "expands to more than " + std::to_string(kMaxExpandedBytes) +
                        " bytes (variables that repeat each other?)");
      }
      out.text += part.text;
      out.sensitive = out.sensitive || part.sensitive;
      i = end + 1;
    }
    return out;
  }

  // `ref` is the text between "${" and "}".
  Result<Expansion> Resolve(const std::string& ref, const YAML::Node& at, const std::string& path) {
    std::size_t colon = ref.find(':');
    std::string kind = ref.substr(0, colon);
    std::string arg = colon == std::string::npos ? "" : ref.substr(colon + 1);
    if (colon != std::string::npos && (kind == "env" || kind == "secret")) {
      if (arg.empty()) return Fail(at, path, "'${" + ref + "}' names no variable");
      const char* value = std::getenv(arg.c_str());
      if (value == nullptr) {
        return Fail(at, path,
                    "environment variable '" + arg + "' is not set (referenced as ${" + ref + "})");
      }
      return Expansion{value, true};
    }
    if (colon != std::string::npos && kind == "file") {
      if (arg.empty()) return Fail(at, path, "'${file:}' names no file");
      Result<std::string> content = ReadSmallFile(arg, kMaxInterpolatedFileBytes);
      if (!content.ok()) {
        return Fail(at, path,
                    "cannot read '" + arg + "' for ${" + ref + "}: " + content.status().message());
      }
      std::string text = std::move(content).value();
      text.erase(text.find_last_not_of(" \t\r\n") + 1);
      return Expansion{std::move(text), true};
    }
    if (colon == std::string::npos && ref.starts_with("vars.")) {
      return Var(ref.substr(5), at, path);
    }
    return Fail(at, path,
                "unsupported reference '${" + ref +
                    "}' (this build resolves ${env:VAR}, ${secret:VAR}, ${file:PATH} and "
                    "${vars.NAME}; write '$${' for a literal '${')");
  }

  Result<Expansion> Var(const std::string& name, const YAML::Node& at, const std::string& path) {
    if (auto done = var_values_.find(name); done != var_values_.end()) return done->second;
    auto def = var_defs_.find(name);
    if (def == var_defs_.end()) {
      std::string known;
      for (const auto& [k, v] : var_defs_) known += (known.empty() ? "" : ", ") + k;
      return Fail(at, path,
                  "unknown variable '${vars." + name + "}' (" +
                      (known.empty() ? "the file has no vars: block" : "vars: defines " + known) +
                      ")");
    }
    const std::string var_path = "vars." + name;
    if (!def->second.node.IsScalar()) {
      return Fail(def->second.node, var_path,
                  "expected a string, since ${" + var_path + "} is substituted into text");
    }
    if (std::find(var_stack_.begin(), var_stack_.end(), name) != var_stack_.end()) {
      std::string chain;
      for (const std::string& v : var_stack_) chain += "vars." + v + " -> ";
      return Fail(at, path, "variables refer to each other in a cycle: " + chain + var_path);
    }
    var_stack_.push_back(name);
    Result<Expansion> e = Expand(def->second.text, def->second.node, var_path);
    var_stack_.pop_back();
    if (e.ok()) var_values_.emplace(name, *e);
    return e;
  }

  std::shared_ptr<const std::string> file_;
  std::map<std::string, VarDef> var_defs_;
  std::map<std::string, Expansion> var_values_;
  std::vector<std::string> var_stack_;  // vars being expanded, innermost last
  std::vector<YAML::Node> rewritten_;   // scalars already expanded
  std::size_t values_ = 0;              // nodes walked, aliases counted each time
};

enum class Role { kSource, kSink, kTransform, kState };

Result<ConnectorSpec> ParseSpec(Block spec, Role role, std::vector<std::string>& warnings) {
  switch (role) {
    case Role::kSource:
      RETURN_IF_ERROR(CheckKeys(spec, kSourceKeys, kSourceUnsupported));
      break;
    case Role::kSink:
      for (std::string_view key : kSourceOnlyKeys) {
        if (spec.Has(std::string(key))) {
          return spec.KeyError(std::string(key),
                               "'" + std::string(key) + "' is only allowed on pipeline.source");
        }
      }
      RETURN_IF_ERROR(CheckKeys(spec, kSinkKeys, {}));
      break;
    case Role::kTransform:
      RETURN_IF_ERROR(CheckKeys(spec, kTransformKeys, {}));
      break;
    case Role::kState:
      RETURN_IF_ERROR(CheckKeys(spec, kStateKeys, {}));
      break;
  }
  ConnectorSpec out;
  ASSIGN_OR_RETURN(out.type, spec.RequiredString("type"));
  ASSIGN_OR_RETURN(out.config, spec.Child("config"));
  if (role == Role::kSource || role == Role::kSink) {
    ASSIGN_OR_RETURN(
        std::string status,
        spec.Enum("status", "active", {"mandatory", "active", "available", "draft", "archived"}));
    if (role == Role::kSink && spec.Has("status")) {
      Warn(spec, "status", "has no effect on a sink", warnings);
    } else if (status != "mandatory" && status != "active") {
      // The reference leaves such a source out of a bare `faucet run`; running it would surprise.
      return spec.Error("status", "'" + status +
                                      "' is not supported by this build, which has no run "
                                      "selection (expected mandatory or active)");
    }
    ASSIGN_OR_RETURN(std::vector<std::string> tags, spec.StringList("tags"));
    if (!tags.empty()) {
      Warn(spec, "tags", "has no effect in this build (tags select matrix rows)", warnings);
    }
  }
  out.spec = std::move(spec);
  return out;
}

Result<ConnectorSpec> RequiredSpec(const Block& parent, const std::string& key, Role role,
                                   std::vector<std::string>& warnings) {
  ASSIGN_OR_RETURN(std::optional<Block> spec, parent.OptionalChild(key));
  if (!spec) return parent.Error(key, "is required (expected a mapping with type and config)");
  return ParseSpec(std::move(*spec), role, warnings);
}

Result<std::vector<ConnectorSpec>> ParseTransforms(const Block& parent,
                                                   std::vector<std::string>& warnings) {
  ASSIGN_OR_RETURN(std::vector<Block> items, parent.BlockList("transforms"));
  std::vector<ConnectorSpec> out;
  for (Block& item : items) {
    ASSIGN_OR_RETURN(ConnectorSpec t, ParseSpec(std::move(item), Role::kTransform, warnings));
    out.push_back(std::move(t));
  }
  return out;
}

// "host:port", "[v6]:port"; the host an IP address or localhost.
Result<ObservabilitySpec> ParseObservability(const Block& block) {
  RETURN_IF_ERROR(CheckKeys(block, kObservabilityKeys, kObservabilityUnsupported));
  ObservabilitySpec out;
  out.block = block;
  ASSIGN_OR_RETURN(out.auth_token, block.String("auth_token", ""));
  ASSIGN_OR_RETURN(Block prometheus, block.Child("prometheus"));
  RETURN_IF_ERROR(CheckKeys(prometheus, kPrometheusKeys, {}));
  ASSIGN_OR_RETURN(std::string listen, prometheus.String("listen", "127.0.0.1:9187"));
  const std::string expected =
      "expected host:port with an IP address or localhost (e.g. 127.0.0.1:9187; port 0 picks "
      "a free one), got '" +
      listen + "'";
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return prometheus.Error("listen", expected);
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") host = "127.0.0.1";
  unsigned char addr[16];
  const bool v4 = inet_pton(AF_INET, host.c_str(), addr) == 1;
  const bool v6 = !v4 && inet_pton(AF_INET6, host.c_str(), addr) == 1;
  const std::string port_text = listen.substr(colon + 1);
  int port = -1;
  if (!port_text.empty() && port_text.size() <= 5 &&
      std::all_of(port_text.begin(), port_text.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    port = std::stoi(port_text);
  }
  if ((!v4 && !v6) || port < 0 || port > 65535) return prometheus.Error("listen", expected);
  out.host = host;
  out.port = port;
  static const unsigned char kV6Loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  out.loopback = v4 ? addr[0] == 127 : std::memcmp(addr, kV6Loopback, 16) == 0;
  if (!out.loopback && out.auth_token.empty()) {
    return prometheus.Error(
        "listen", "listens on " + host +
                      ", which is not a loopback address, without a token: set "
                      "observability.auth_token (e.g. ${env:FAUCET_TOKEN}); clients then send "
                      "Authorization: Bearer <token>");
  }
  if (prometheus.Has("buckets")) {
    const YAML::Node list = prometheus.node()["buckets"];
    prometheus.MarkRead("buckets");
    const std::string want = "expected an ascending list of positive numbers of seconds";
    if (!list.IsSequence() || list.size() == 0) return prometheus.Error("buckets", want);
    for (const YAML::Node& item : list) {
      double v = 0;
      if (!item.IsScalar() || !YAML::convert<double>::decode(item, v) || !std::isfinite(v) ||
          !(v > 0) || (!out.buckets.empty() && v <= out.buckets.back())) {
        return prometheus.Error("buckets", want);
      }
      out.buckets.push_back(v);
    }
  }
  return out;
}

Result<DlqSpec> ParseDlq(const Block& dlq, std::vector<std::string>& warnings) {
  RETURN_IF_ERROR(CheckKeys(dlq, kDlqKeys, {}));
  DlqSpec out;
  ASSIGN_OR_RETURN(out.sink, RequiredSpec(dlq, "sink", Role::kSink, warnings));
  ASSIGN_OR_RETURN(out.on_batch_error,
                   dlq.Enum("on_batch_error", "propagate", {"propagate", "dlq_all"}));
  ASSIGN_OR_RETURN(out.max_failures_per_page, dlq.OptionalInt("max_failures_per_page", 0));
  ASSIGN_OR_RETURN(out.max_failures_total, dlq.OptionalInt("max_failures_total", 0));
  ASSIGN_OR_RETURN(out.include_original_payload, dlq.Bool("include_original_payload", true));
  return out;
}

Result<Document> Build(const YAML::Node& root, const std::shared_ptr<const std::string>& file) {
  if (!root.IsMap()) {
    if (!root.IsDefined() || root.IsNull()) {
      return InvalidArgument(*file + ": the config is empty (expected a mapping with pipeline:)");
    }
    return InvalidArgument(MarkText(*file, root.Mark()) +
                           ": expected a mapping with pipeline: at the top level, got " +
                           (root.IsSequence() ? "a list" : "'" + root.Scalar() + "'"));
  }
  Document doc;
  doc.file = *file;
  doc.root = Block(root, file, "");
  const Block& top = doc.root;
  RETURN_IF_ERROR(CheckKeys(top, kTopKeys, kTopUnsupported));
  ASSIGN_OR_RETURN(Block vars, top.Child("vars"));
  RETURN_IF_ERROR(Interpolator(file, vars.node()).Run(root));

  ASSIGN_OR_RETURN(std::optional<int64_t> version, top.OptionalInt("version"));
  if (version && *version != 1) {
    return top.Error(
        "version", "expected 1 (the only config format version), got " + std::to_string(*version));
  }
  RETURN_IF_ERROR(top.Enum("kind", "pipeline", {"pipeline"}).status());

  ASSIGN_OR_RETURN(std::optional<std::string> name, top.OptionalString("name"));
  if (name) {
    if (!ValidName(*name)) {
      return top.Error("name", "expected " + NameGrammar() + ", got '" + *name + "'");
    }
    doc.name = *name;
  } else {
    doc.name = DefaultPipelineName(*file);
    if (!ValidName(doc.name)) {
      return top.Error("name", "is not set, and the file stem '" + doc.name +
                                   "' is not a valid name (expected " + NameGrammar() +
                                   "); set name:");
    }
  }

  ASSIGN_OR_RETURN(std::string delivery,
                   top.Enum("delivery", "at_least_once", {"at_least_once", "exactly_once"}));
  doc.delivery = delivery == "exactly_once" ? RequestedDelivery::kExactlyOnce
                                            : RequestedDelivery::kAtLeastOnce;

  ASSIGN_OR_RETURN(std::optional<Block> pipeline, top.OptionalChild("pipeline"));
  if (!pipeline) {
    return top.Error("pipeline", "is required (expected a mapping with source and sink)");
  }
  RETURN_IF_ERROR(CheckKeys(*pipeline, kPipelineKeys, kPipelineUnsupported));
  ASSIGN_OR_RETURN(doc.source, RequiredSpec(*pipeline, "source", Role::kSource, doc.warnings));
  ASSIGN_OR_RETURN(doc.sink, RequiredSpec(*pipeline, "sink", Role::kSink, doc.warnings));

  ASSIGN_OR_RETURN(std::vector<ConnectorSpec> pipeline_transforms,
                   ParseTransforms(*pipeline, doc.warnings));
  ASSIGN_OR_RETURN(std::vector<ConnectorSpec> source_transforms,
                   ParseTransforms(doc.source.spec, doc.warnings));
  ASSIGN_OR_RETURN(bool inherit, doc.source.spec.Bool("inherit_transforms", true));
  if (inherit) {
    doc.transforms = std::move(pipeline_transforms);
  } else if (!pipeline_transforms.empty()) {
    Warn(doc.source.spec, "inherit_transforms",
         "is false, so pipeline.transforms are not applied to this source", doc.warnings);
  }
  for (ConnectorSpec& t : source_transforms) doc.transforms.push_back(std::move(t));

  ASSIGN_OR_RETURN(std::optional<Block> state, pipeline->OptionalChild("state"));
  if (state) {
    ASSIGN_OR_RETURN(doc.state, ParseSpec(std::move(*state), Role::kState, doc.warnings));
  }
  ASSIGN_OR_RETURN(std::optional<Block> dlq, pipeline->OptionalChild("dlq"));
  if (dlq) {
    ASSIGN_OR_RETURN(doc.dlq, ParseDlq(*dlq, doc.warnings));
  }
  ASSIGN_OR_RETURN(std::optional<Block> schema, pipeline->OptionalChild("schema"));
  if (schema) {
    ASSIGN_OR_RETURN(doc.schema, ParseSchemaSpec(*schema));
  }

  ASSIGN_OR_RETURN(std::optional<Block> observability, top.OptionalChild("observability"));
  if (observability) {
    ASSIGN_OR_RETURN(doc.observability, ParseObservability(*observability));
  }

  if (top.Has("mirror") && top.Has("replication")) {
    return top.KeyError("replication",
                        "'replication' is another name for 'mirror'; give only one of them");
  }
  ASSIGN_OR_RETURN(doc.mirror, top.OptionalChild(top.Has("mirror") ? "mirror" : "replication"));
  return doc;
}

}  // namespace

Result<SchemaSpec> ParseSchemaSpec(const Block& block) {
  RETURN_IF_ERROR(CheckKeys(block, kSchemaKeys, {}));
  SchemaSpec out{SchemaPolicy{}, block};
  ASSIGN_OR_RETURN(
      std::string on_drift,
      block.Enum("on_drift", "warn", {"warn", "evolve", "ignore", "quarantine", "fail"}));
  for (OnDrift d :
       {OnDrift::kWarn, OnDrift::kEvolve, OnDrift::kIgnore, OnDrift::kQuarantine, OnDrift::kFail}) {
    if (on_drift == OnDriftName(d)) out.policy.on_drift = d;
  }
  ASSIGN_OR_RETURN(out.policy.allow_type_widening, block.Bool("allow_type_widening", true));
  ASSIGN_OR_RETURN(std::string incompatible,
                   block.Enum("on_incompatible", "fail", {"fail", "quarantine"}));
  out.policy.on_incompatible =
      incompatible == "quarantine" ? OnIncompatible::kQuarantine : OnIncompatible::kFail;
  ASSIGN_OR_RETURN(out.policy.relax_nullability_on_missing,
                   block.Bool("relax_nullability_on_missing", false));
  return out;
}

std::string DefaultPipelineName(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

namespace {

// Records where each document of a stream starts (its first node, as YAML::Node::Mark gives);
// ignores the rest.
class DocumentStarts final : public YAML::EventHandler {
 public:
  const std::vector<YAML::Mark>& marks() const { return marks_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    marks_.push_back(mark);
    first_node_ = true;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (first_node_) marks_.back() = mark;
    first_node_ = false;
  }

  std::vector<YAML::Mark> marks_;
  bool first_node_ = false;
};

}  // namespace

Result<Document> LoadDocument(const std::string& path) {
  Result<std::string> text = ReadSmallFile(path, kMaxConfigFileBytes);
  if (!text.ok()) {
    return InvalidArgument("cannot read config file '" + path + "': " + text.status().message());
  }
  return ParseDocument(*text, path);
}

Result<Document> ParseDocument(const std::string& text, const std::string& file_name) {
  auto file = std::make_shared<const std::string>(file_name);
  // yaml-cpp reports through exceptions; none may leave this module.
  try {
    // The stream is scanned for a second document before it is loaded: yaml-cpp 0.7's LoadAll
    // loops without end, allocating, on a document it neither consumes nor refuses (a stray
    // ',': jbeder/yaml-cpp#1040), and Load reads only the first document. Such a document
    // repeats: two that start at the same place.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    while (starts.marks().size() < 3 && parser.HandleNextDocument(starts)) {
    }
    const std::vector<YAML::Mark>& marks = starts.marks();
    for (size_t i = 1; i < marks.size(); ++i) {
      if (marks[i].pos == marks[i - 1].pos) {
        return InvalidArgument(MarkText(file_name, marks[i]) +
                               ": unexpected ',' outside a [...] or {...} collection");
      }
    }
    if (marks.size() > 1) {
      return InvalidArgument(MarkText(file_name, marks[1]) +
                             ": expected one YAML document, found more (separated by '---')");
    }
    return Build(marks.empty() ? YAML::Node() : YAML::Load(text), file);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(MarkText(file_name, e.mark) + ": " + e.msg);
  }
}

Result<ConnectorSpec> ParseSourceSpec(const Block& parent, const std::string& key,
                                      std::vector<std::string>& warnings) {
  return RequiredSpec(parent, key, Role::kSource, warnings);
}

}  // namespace faucet::config
