#include "mirror/table_plan.h"

#include <gtest/gtest.h>

#include "testing/status_matchers.h"

namespace faucet::mirror {
namespace {

constexpr char kPostgresSink[] = "{type: postgres, config: {connection_url: 'postgres://dst'}}";
constexpr char kSnapshot[] =
    "  snapshot: {source: {type: postgres, config: {connection_url: 'postgres://src'}}}\n";

// The document "m.yaml": line 1 the pipeline with `sink`, line 2 `mirror:`, then `mirror`'s
// lines (so its first line is line 3 of the file).
Result<config::Document> Doc(const std::string& mirror, const std::string& sink = kPostgresSink) {
  return config::ParseDocument(
      "pipeline: {source: {type: postgres-cdc}, sink: " + sink + "}\nmirror:\n" + mirror, "m.yaml");
}

Result<std::optional<TablesConfig>> Parse(const std::string& mirror) {
  ASSIGN_OR_RETURN(config::Document doc, Doc(mirror));
  return ParseTablesConfig(*doc.mirror);
}

// A document with a multi-table mirror, its tables config and snapshot template: what
// PlanTable takes.
struct Loaded {
  config::Document doc;
  TablesConfig tables;
  config::ConnectorSpec snapshot;
};

// `mirror` is the `mirror:` block's lines after its snapshot source (tables, per_table).
Result<Loaded> Load(const std::string& mirror, const std::string& sink = kPostgresSink) {
  ASSIGN_OR_RETURN(config::Document doc, Doc(kSnapshot + mirror, sink));
  ASSIGN_OR_RETURN(std::optional<TablesConfig> tables, ParseTablesConfig(*doc.mirror));
  if (!tables) return InvalidArgument("no mirror.tables");
  ASSIGN_OR_RETURN(config::Block snapshot, doc.mirror->Child("snapshot"));
  std::vector<std::string> warnings;
  ASSIGN_OR_RETURN(config::ConnectorSpec source,
                   config::ParseSourceSpec(snapshot, "source", warnings));
  return Loaded{std::move(doc), std::move(*tables), std::move(source)};
}

// A discovered "schema.table" as the postgres source reports it.
DiscoveredTable Table(const std::string& name, std::vector<std::string> key) {
  DiscoveredTable t;
  t.name = name;
  t.schema = name.substr(0, name.find('.'));
  t.table = name.substr(name.find('.') + 1);
  t.key = std::move(key);
  t.read_patch = {{"query", "SELECT * FROM \"" + t.schema + "\".\"" + t.table + "\""}};
  return t;
}

TablePlan Plan(const Loaded& loaded, const DiscoveredTable& table, bool sink_upserts = true) {
  return PlanTable(loaded.tables, loaded.doc, loaded.snapshot, table, sink_upserts);
}

std::string Text(const YAML::Node& node) {
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

// The scalar at `key`, or "<absent>".
std::string Get(const YAML::Node& map, const std::string& key) {
  return map[key] ? map[key].Scalar() : "<absent>";
}

// --- ParseTablesConfig ---

TEST(ParseTablesConfig, NoTablesIsASingleTableMirror) {
  Result<std::optional<TablesConfig>> parsed =
      Parse("  mode: snapshot_then_cdc\n  continuous: false\n" + std::string(kSnapshot));
  ASSERT_OK(parsed);
  EXPECT_FALSE(parsed->has_value());
}

TEST(ParseTablesConfig, NullTablesIsASingleTableMirror) {
  Result<std::optional<TablesConfig>> parsed = Parse("  tables:\n");
  ASSERT_OK(parsed);
  EXPECT_FALSE(parsed->has_value());
}

TEST(ParseTablesConfig, SingleTableMirrorAcceptsOneShardAndAnyConcurrency) {
  // The reference checks concurrency only for a multi-table mirror, where it is used.
  Result<std::optional<TablesConfig>> parsed = Parse("  snapshot: {shards: 1, concurrency: 0}\n");
  ASSERT_OK(parsed);
  EXPECT_FALSE(parsed->has_value());
}

TEST(ParseTablesConfig, EmptyTablesTakesEveryDefault) {
  Result<std::optional<TablesConfig>> parsed = Parse("  mode: snapshot_then_cdc\n  tables: {}\n");
  ASSERT_OK(parsed);
  ASSERT_TRUE(parsed->has_value());
  const TablesConfig& c = **parsed;
  EXPECT_EQ(c.include, std::vector<std::string>{"*"});
  EXPECT_TRUE(c.exclude.empty());
  EXPECT_EQ(c.new_tables, NewTables::kFollow);
  EXPECT_EQ(c.discover_interval_secs, 300);
  EXPECT_EQ(c.without_primary_key, WithoutPrimaryKey::kRefuse);
  EXPECT_FALSE(c.destination.IsDefined() && !c.destination.IsNull());
  EXPECT_EQ(c.on_table_error, OnTableError::kPause);
  EXPECT_EQ(c.max_table_failures, 3);
  EXPECT_EQ(c.retry_paused_secs, 300);
  EXPECT_EQ(c.lag_warning_secs, 300);
  EXPECT_EQ(c.concurrency, 4);
  EXPECT_EQ(c.shards, 0);
  EXPECT_TRUE(c.per_table.empty());
}

TEST(ParseTablesConfig, ReadsEveryKey) {
  Result<std::optional<TablesConfig>> parsed = Parse(
      "  mode: snapshot_then_cdc\n"
      "  continuous: true\n"
      "  snapshot:\n"
      "    source: {type: postgres, config: {connection_url: 'postgres://src'}}\n"
      "    concurrency: 2\n"
      "    shards: 8\n"
      "  tables:\n"
      "    include: ['shop.*', billing.invoices]\n"
      "    exclude: ['*.tmp_*']\n"
      "    new_tables: ignore\n"
      "    discover_interval_secs: 0\n"
      "    without_primary_key: append\n"
      "    destination: {table_name: '{schema}_{table_name}'}\n"
      "    on_table_error: fail\n"
      "    max_table_failures: 0\n"
      "    retry_paused_secs: 0\n"
      "    lag_warning_secs: 60\n"
      "  per_table:\n"
      "    shop.orders:\n"
      "      key: [tenant, id]\n"
      "      write_mode: delete\n"
      "      sink: {table_name: orders_v2}\n"
      "      snapshot: {query: 'SELECT * FROM {table} WHERE live'}\n"
      "    shop.audit: {write_mode: append}\n");
  ASSERT_OK(parsed);
  ASSERT_TRUE(parsed->has_value());
  const TablesConfig& c = **parsed;
  EXPECT_EQ(c.include, (std::vector<std::string>{"shop.*", "billing.invoices"}));
  EXPECT_EQ(c.exclude, std::vector<std::string>{"*.tmp_*"});
  EXPECT_EQ(c.new_tables, NewTables::kIgnore);
  EXPECT_EQ(c.discover_interval_secs, 0);
  EXPECT_EQ(c.without_primary_key, WithoutPrimaryKey::kAppend);
  EXPECT_EQ(Text(c.destination), "{table_name: \"{schema}_{table_name}\"}");
  EXPECT_EQ(c.on_table_error, OnTableError::kFail);
  EXPECT_EQ(c.max_table_failures, 0);
  EXPECT_EQ(c.retry_paused_secs, 0);
  EXPECT_EQ(c.lag_warning_secs, 60);
  EXPECT_EQ(c.concurrency, 2);
  EXPECT_EQ(c.shards, 8);
  ASSERT_EQ(c.per_table.size(), 2u);
  const TableOverride& orders = c.per_table.at("shop.orders");
  EXPECT_EQ(orders.key, (std::vector<std::string>{"tenant", "id"}));
  EXPECT_EQ(orders.write_mode, "delete");
  EXPECT_EQ(Text(orders.sink), "{table_name: orders_v2}");
  EXPECT_EQ(Text(orders.snapshot), "{query: \"SELECT * FROM {table} WHERE live\"}");
  const TableOverride& audit = c.per_table.at("shop.audit");
  EXPECT_FALSE(audit.key.has_value());
  EXPECT_EQ(audit.write_mode, "append");
  EXPECT_TRUE(audit.sink.IsNull());
  EXPECT_TRUE(audit.snapshot.IsNull());
}

TEST(ParseTablesConfig, AnEmptyPerTableKeyIsKeptAsGiven) {
  // PlanTable then refuses the table or appends, as without_primary_key says.
  Result<std::optional<TablesConfig>> parsed =
      Parse("  tables: {}\n  per_table: {shop.orders: {key: []}}\n");
  ASSERT_OK(parsed);
  EXPECT_EQ((**parsed).per_table.at("shop.orders").key, std::vector<std::string>{});
}

TEST(ParseTablesConfig, ReplicationAliasNamesItsOwnPath) {
  Result<config::Document> doc = config::ParseDocument(
      "pipeline: {source: {type: postgres-cdc}, sink: {type: postgres}}\n"
      "replication:\n"
      "  tables: {new_tables: always}\n",
      "m.yaml");
  ASSERT_OK(doc);
  EXPECT_EQ(ParseTablesConfig(*doc->mirror).status().message(),
            "m.yaml:3:24: replication.tables.new_tables: expected one of follow, ignore, got "
            "'always'");
}

struct BadConfigCase {
  const char* name;
  const char* mirror;  // the `mirror:` block's lines, from line 3 of the file
  const char* message;
};

const BadConfigCase kBadConfigs[] = {
    {"PerTableWithoutTables",
     "  mode: snapshot_then_cdc\n  per_table:\n    shop.orders: {key: [id]}\n",
     "m.yaml:4:3: mirror.per_table: mirror.per_table needs mirror.tables (a multi-table mirror)"},
    {"ShardsWithoutTables", "  snapshot: {shards: 4}\n",
     "m.yaml:3:22: mirror.snapshot.shards: mirror.snapshot.shards applies to a multi-table mirror "
     "(mirror.tables)"},
    {"NegativeShards", "  snapshot: {shards: -1}\n  tables: {}\n",
     "m.yaml:3:22: mirror.snapshot.shards: expected an integer >= 0, got '-1'"},
    {"ZeroConcurrency", "  snapshot: {concurrency: 0}\n  tables: {}\n",
     "m.yaml:3:27: mirror.snapshot.concurrency: mirror.snapshot.concurrency must be at least 1"},
    {"UnknownSnapshotKey", "  snapshot: {source: {type: postgres}, parallelism: 2}\n",
     "m.yaml:3:40: mirror.snapshot.parallelism: unknown key 'parallelism' (expected one of: "
     "source, concurrency, shards)"},
    {"TablesNotAMapping", "  tables: [a]\n",
     "m.yaml:3:11: mirror.tables: expected a mapping, got a list"},
    {"EmptyInclude", "  tables: {include: []}\n",
     "m.yaml:3:21: mirror.tables.include: mirror.tables.include must name at least one glob"},
    {"ExcludeNotAList", "  tables: {exclude: tmp}\n",
     "m.yaml:3:21: mirror.tables.exclude: expected a list of strings, got 'tmp'"},
    {"UnknownTablesKey", "  tables:\n    includes: ['*']\n",
     "m.yaml:4:5: mirror.tables.includes: unknown key 'includes' (expected one of: include, "
     "exclude, new_tables, discover_interval_secs, without_primary_key, destination, "
     "on_table_error, max_table_failures, retry_paused_secs, lag_warning_secs)"},
    {"UnknownNewTables", "  tables:\n    new_tables: always\n",
     "m.yaml:4:17: mirror.tables.new_tables: expected one of follow, ignore, got 'always'"},
    {"NegativeDiscoverInterval", "  tables:\n    discover_interval_secs: -1\n",
     "m.yaml:4:29: mirror.tables.discover_interval_secs: expected an integer >= 0, got '-1'"},
    {"UnknownWithoutPrimaryKey", "  tables:\n    without_primary_key: skip\n",
     "m.yaml:4:26: mirror.tables.without_primary_key: expected one of refuse, append, got "
     "'skip'"},
    {"DestinationAString", "  tables:\n    destination: \"out/{table}\"\n",
     "m.yaml:4:18: mirror.tables.destination: mirror.tables.destination must be a mapping of "
     "sink-config fields"},
    {"DestinationAList", "  tables: {destination: [a]}\n",
     "m.yaml:3:25: mirror.tables.destination: mirror.tables.destination must be a mapping of "
     "sink-config fields"},
    {"UnknownOnTableError", "  tables:\n    on_table_error: retry\n",
     "m.yaml:4:21: mirror.tables.on_table_error: expected one of pause, fail, got 'retry'"},
    {"NegativeMaxTableFailures", "  tables:\n    max_table_failures: -1\n",
     "m.yaml:4:25: mirror.tables.max_table_failures: expected an integer >= 0, got '-1'"},
    {"NegativeRetryPaused", "  tables:\n    retry_paused_secs: -5\n",
     "m.yaml:4:24: mirror.tables.retry_paused_secs: expected an integer >= 0, got '-5'"},
    {"LagWarningNotAnInteger", "  tables:\n    lag_warning_secs: x\n",
     "m.yaml:4:23: mirror.tables.lag_warning_secs: expected an integer >= 0, got 'x'"},
    {"PerTableEntryNotAMapping", "  tables: {}\n  per_table:\n    shop.orders: upsert\n",
     "m.yaml:5:18: mirror.per_table.shop.orders: expected a mapping, got 'upsert'"},
    {"UnknownPerTableKey", "  tables: {}\n  per_table:\n    shop.orders:\n      keys: [id]\n",
     "m.yaml:6:7: mirror.per_table.shop.orders.keys: unknown key 'keys' (expected one of: key, "
     "write_mode, sink, snapshot, schema_drift)"},
    {"SchemaDrift",
     "  tables: {}\n  per_table:\n    shop.orders:\n      schema_drift: {on_incompatible: warn}\n",
     "m.yaml:6:39: mirror.per_table.shop.orders.schema_drift.on_incompatible: expected one of "
     "fail, quarantine, got 'warn'"},
    {"UnknownWriteMode", "  tables: {}\n  per_table:\n    shop.orders:\n      write_mode: merge\n",
     "m.yaml:6:19: mirror.per_table.shop.orders.write_mode: expected one of append, upsert, "
     "delete, got 'merge'"},
    {"KeyNotAList", "  tables: {}\n  per_table:\n    shop.orders:\n      key: id\n",
     "m.yaml:6:12: mirror.per_table.shop.orders.key: expected a list of strings, got 'id'"},
    {"SinkPatchNotAMapping",
     "  tables: {}\n  per_table:\n    shop.orders:\n      sink: out.jsonl\n",
     "m.yaml:6:13: mirror.per_table.shop.orders.sink: expected a mapping, got 'out.jsonl'"},
    {"SnapshotPatchNotAMapping",
     "  tables: {}\n  per_table:\n    shop.orders:\n      snapshot: [a]\n",
     "m.yaml:6:17: mirror.per_table.shop.orders.snapshot: expected a mapping, got a list"},
};

class BadTablesConfigTest : public testing::TestWithParam<BadConfigCase> {};

TEST_P(BadTablesConfigTest, IsRejectedWithLocatedMessage) {
  Result<std::optional<TablesConfig>> parsed = Parse(GetParam().mirror);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(ParseTablesConfig, BadTablesConfigTest, testing::ValuesIn(kBadConfigs),
                         [](const testing::TestParamInfo<BadConfigCase>& info) {
                           return std::string(info.param.name);
                         });

// --- GlobMatch, Selected ---

TEST(GlobMatch, StarMatchesAnyRunIncludingDotsAndNone) {
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_TRUE(GlobMatch("*", "shop.orders"));
  EXPECT_TRUE(GlobMatch("shop.*", "shop.orders"));
  EXPECT_TRUE(GlobMatch("shop.*", "shop."));
  EXPECT_TRUE(GlobMatch("*.orders", "a.b.orders"));
  EXPECT_TRUE(GlobMatch("s*p.o*s", "shop.orders"));
  EXPECT_TRUE(GlobMatch("**", "x"));
  EXPECT_FALSE(GlobMatch("shop.*", "shopx.orders"));
  EXPECT_FALSE(GlobMatch("*.orders", "shop.orders_old"));
}

TEST(GlobMatch, StarBacktracks) {
  EXPECT_TRUE(GlobMatch("*a*b", "xaxxb"));
  EXPECT_TRUE(GlobMatch("*ab", "aab"));
  EXPECT_TRUE(GlobMatch("a*a", "aaa"));
  EXPECT_FALSE(GlobMatch("a*", "ba"));
  EXPECT_FALSE(GlobMatch("*a*a*a*a*b", std::string(40, 'a')));
}

TEST(GlobMatch, QuestionMarkMatchesExactlyOneCharacter) {
  EXPECT_TRUE(GlobMatch("shop.order?", "shop.orders"));
  EXPECT_FALSE(GlobMatch("shop.order?", "shop.order"));
  EXPECT_FALSE(GlobMatch("shop.order?", "shop.orderss"));
  EXPECT_FALSE(GlobMatch("?", ""));
  EXPECT_TRUE(GlobMatch("???.x", "a.b.x"));
  // One character, not one byte.
  EXPECT_TRUE(GlobMatch("caf?", "caf\u00e9"));
  EXPECT_FALSE(GlobMatch("caf??", "caf\u00e9"));
}

TEST(GlobMatch, EmptyGlobMatchesOnlyTheEmptyName) {
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
  EXPECT_FALSE(GlobMatch("a", ""));
}

TEST(GlobMatch, IsCaseSensitiveWithNoClassesOrEscapes) {
  EXPECT_FALSE(GlobMatch("Shop.*", "shop.orders"));
  EXPECT_FALSE(GlobMatch("shop.ORDERS", "shop.orders"));
  EXPECT_FALSE(GlobMatch("[ab]", "a"));
  EXPECT_TRUE(GlobMatch("[ab]", "[ab]"));
  EXPECT_TRUE(GlobMatch("\\*", "\\anything"));
  EXPECT_FALSE(GlobMatch("\\*", "*"));
}

TEST(Selected, NeedsAnIncludeAndNoExclude) {
  TablesConfig c;
  EXPECT_TRUE(Selected(c, "shop.orders"));
  c.include = {"shop.*", "billing.invoices"};
  c.exclude = {"*.tmp_*", "shop.audit"};
  EXPECT_TRUE(Selected(c, "shop.orders"));
  EXPECT_TRUE(Selected(c, "billing.invoices"));
  EXPECT_FALSE(Selected(c, "billing.payments"));
  EXPECT_FALSE(Selected(c, "shop.tmp_load"));
  EXPECT_FALSE(Selected(c, "shop.audit"));
}

// --- NodeId ---

TEST(NodeId, KeepsSafeCharacters) {
  EXPECT_EQ(NodeId("shop.orders"), "shop.orders");
  EXPECT_EQ(NodeId("Shop-1.t_x"), "Shop-1.t_x");
  EXPECT_EQ(NodeId("_private"), "_private");
  EXPECT_EQ(NodeId(""), "");
}

TEST(NodeId, ReplacesEachOtherCharacterWithUnderscore) {
  EXPECT_EQ(NodeId("my schema.order items"), "my_schema.order_items");
  EXPECT_EQ(NodeId("a/b:c::d"), "a_b_c__d");
  EXPECT_EQ(NodeId("\"q\".\"t\""), "_q_._t_");
  // One underscore per character, not per byte.
  EXPECT_EQ(NodeId("caf\u00e9.t"), "caf_.t");
}

TEST(NodeId, LeadingDotBecomesUnderscore) {
  EXPECT_EQ(NodeId(".hidden"), "_hidden");
  EXPECT_EQ(NodeId("..x"), "_.x");
}

TEST(NodeId, NoTableTakesTheMarkerKey) {
  EXPECT_EQ(NodeId("__replication__"), "t__replication__");
  EXPECT_EQ(NodeId("__x"), "t__x");
  EXPECT_EQ(NodeId("?_x"), "t__x");
  EXPECT_EQ(NodeId("._x"), "t__x");
}

// --- RenderPlaceholders ---

TEST(RenderPlaceholders, ReplacesInNestedMappingsAndSequences) {
  YAML::Node tmpl = YAML::Load(
      "{table_name: '{table_name}', path: 'out/{schema}/{table}.jsonl', port: 5432,"
      " nested: {list: ['{table}', x, {deep: '{schema}_{table_name}'}]}, '{table}': key}");
  const std::string before = Text(tmpl);
  YAML::Node out = RenderPlaceholders(tmpl, "shop.orders");
  EXPECT_EQ(Text(out),
            "{table_name: orders, path: out/shop/shop.orders.jsonl, port: 5432, nested: {list: "
            "[shop.orders, x, {deep: shop_orders}]}, \"{table}\": key}");
  EXPECT_EQ(Text(tmpl), before);
}

TEST(RenderPlaceholders, SchemaIsBeforeTheLastDot) {
  YAML::Node tmpl = YAML::Load("['{schema}', '{table_name}', '{table}']");
  EXPECT_EQ(Text(RenderPlaceholders(tmpl, "orders")), "[\"\", orders, orders]");
  EXPECT_EQ(Text(RenderPlaceholders(tmpl, "db.shop.orders")), "[db.shop, orders, db.shop.orders]");
}

TEST(RenderPlaceholders, ReplacesTableNameThenSchemaThenTable) {
  // The reference's order: a {schema} that {table_name} brought in is replaced as well.
  EXPECT_EQ(RenderPlaceholders(YAML::Node("{table_name}"), "s.{schema}").Scalar(), "s");
}

TEST(RenderPlaceholders, NullStaysNull) {
  EXPECT_TRUE(RenderPlaceholders(YAML::Node(), "shop.orders").IsNull());
}

TEST(RenderPlaceholders, KeepsTheInterpolationTag) {
  YAML::Node tmpl = YAML::Load("{url: 'postgres://{schema}'}");
  YAML::Node url = tmpl["url"];
  url.SetTag(config::kInterpolatedTag);
  YAML::Node out = RenderPlaceholders(tmpl, "shop.orders");
  EXPECT_EQ(Get(out, "url"), "postgres://shop");
  EXPECT_EQ(out["url"].Tag(), config::kInterpolatedTag);
}

// --- DeepMerge ---

TEST(DeepMerge, MappingsMergeRecursively) {
  YAML::Node base = YAML::Load("{a: {x: 1, y: 2}, b: 1}");
  YAML::Node patch = YAML::Load("{a: {y: 3, z: 4}, c: 5}");
  EXPECT_EQ(Text(DeepMerge(base, patch)), "{a: {x: 1, y: 3, z: 4}, b: 1, c: 5}");
}

TEST(DeepMerge, ScalarsAndSequencesReplace) {
  YAML::Node base = YAML::Load("{l: [1, 2, 3], s: a, m: {x: 1}, t: text}");
  YAML::Node patch = YAML::Load("{l: [9], s: b, m: flat, t: {now: map}}");
  EXPECT_EQ(Text(DeepMerge(base, patch)), "{l: [9], s: b, m: flat, t: {now: map}}");
  EXPECT_EQ(Text(DeepMerge(YAML::Load("[1]"), YAML::Load("{a: 1}"))), "{a: 1}");
  EXPECT_EQ(Text(DeepMerge(YAML::Load("{a: 1}"), YAML::Load("[1]"))), "[1]");
}

TEST(DeepMerge, NullValueInAPatchReplaces) {
  EXPECT_TRUE(DeepMerge(YAML::Load("{a: 1}"), YAML::Load("{a: ~}"))["a"].IsNull());
}

TEST(DeepMerge, NullPatchLeavesACopyOfTheBase) {
  YAML::Node base = YAML::Load("{a: {x: 1}}");
  YAML::Node out = DeepMerge(base, YAML::Node());
  EXPECT_EQ(Text(out), "{a: {x: 1}}");
  out["a"]["x"] = "changed";
  EXPECT_EQ(Text(base), "{a: {x: 1}}");
}

TEST(DeepMerge, LeavesBaseAndPatchUntouched) {
  YAML::Node base = YAML::Load("{a: {x: 1, y: [1, 2]}, b: 1}");
  YAML::Node patch = YAML::Load("{a: {y: [3], n: {deep: 1}}, c: 5}");
  YAML::Node out = DeepMerge(base, patch);
  EXPECT_EQ(Text(base), "{a: {x: 1, y: [1, 2]}, b: 1}");
  EXPECT_EQ(Text(patch), "{a: {y: [3], n: {deep: 1}}, c: 5}");
  // The result shares no node with either: editing it reaches neither.
  out["a"]["x"] = "2";
  out["a"]["y"][0] = "0";
  out["a"]["n"]["deep"] = "2";
  out["c"] = "6";
  EXPECT_EQ(Text(base), "{a: {x: 1, y: [1, 2]}, b: 1}");
  EXPECT_EQ(Text(patch), "{a: {y: [3], n: {deep: 1}}, c: 5}");
}

TEST(DefaultDestinationField, SqlSinksNameATableFileSinksNothing) {
  EXPECT_EQ(DefaultDestinationField("postgres"), "table_name");
  EXPECT_EQ(DefaultDestinationField("mysql"), "table_name");
  EXPECT_EQ(DefaultDestinationField("sqlite"), "table_name");
  EXPECT_EQ(DefaultDestinationField("jsonl"), "");
  EXPECT_EQ(DefaultDestinationField("stdout"), "");
}

// --- PlanTable ---

TEST(PlanTable, PostgresSinkWritesTheTableNamePartByDefault) {
  Result<Loaded> loaded = Load("  tables: {}\n");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}));
  EXPECT_EQ(plan.refused, "");
  EXPECT_EQ(plan.table, "shop.orders");
  EXPECT_EQ(plan.id, "shop.orders");
  EXPECT_EQ(plan.write_mode, "upsert");
  EXPECT_EQ(plan.key, std::vector<std::string>{"id"});
  EXPECT_EQ(plan.sink.type, "postgres");
  EXPECT_EQ(plan.sink.config.path(), "pipeline.sink.config");
  EXPECT_EQ(plan.sink.spec.path(), "pipeline.sink");
  EXPECT_EQ(Text(plan.sink.config.node()),
            "{connection_url: postgres://dst, table_name: orders, write_mode: upsert, key: "
            "[id]}");
  EXPECT_EQ(Text(plan.sink.spec.node()["config"]), Text(plan.sink.config.node()));
  EXPECT_EQ(Get(plan.sink.spec.node(), "type"), "postgres");
  // Errors about the table's sink config name the file and the sink's key path.
  EXPECT_EQ(plan.sink.config.Error("table_name", "bad").message().substr(0, 7), "m.yaml:");
  EXPECT_NE(plan.sink.config.Error("table_name", "bad")
                .message()
                .find("pipeline.sink.config.table_name: bad"),
            std::string::npos);

  EXPECT_EQ(plan.snapshot.type, "postgres");
  EXPECT_EQ(plan.snapshot.config.path(), "mirror.snapshot.source.config");
  EXPECT_EQ(plan.snapshot.config.node().size(), 2u);
  EXPECT_EQ(Get(plan.snapshot.config.node(), "connection_url"), "postgres://src");
  EXPECT_EQ(Get(plan.snapshot.config.node(), "query"), "SELECT * FROM \"shop\".\"orders\"");
  EXPECT_EQ(Text(plan.snapshot.spec.node()["config"]), Text(plan.snapshot.config.node()));
}

TEST(PlanTable, LeavesTheTemplatesUntouched) {
  Result<Loaded> loaded = Load(
      "  tables: {destination: {table_name: '{table}'}}\n"
      "  per_table: {shop.orders: {sink: {x: '{schema}'}, snapshot: {query: q}}}\n",
      "{type: postgres, config: {connection_url: 'postgres://dst', key: [tenant]}}");
  ASSERT_OK(loaded);
  const std::string sink = Text(loaded->doc.sink.spec.node());
  const std::string snapshot = Text(loaded->snapshot.spec.node());
  const std::string destination = Text(loaded->tables.destination);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}));
  EXPECT_EQ(Text(loaded->doc.sink.spec.node()), sink);
  EXPECT_EQ(Text(loaded->doc.sink.config.node()),
            "{connection_url: postgres://dst, key: [tenant]}");
  EXPECT_EQ(Text(loaded->snapshot.spec.node()), snapshot);
  EXPECT_EQ(Text(loaded->tables.destination), destination);
  EXPECT_EQ(Text(loaded->tables.per_table.at("shop.orders").sink), "{x: \"{schema}\"}");
}

TEST(PlanTable, DestinationIsRenderedPerTable) {
  Result<Loaded> loaded =
      Load("  tables: {destination: {table_name: '{schema}_{table_name}', schema: mirror}}\n");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}));
  EXPECT_EQ(Get(plan.sink.config.node(), "table_name"), "shop_orders");
  EXPECT_EQ(Get(plan.sink.config.node(), "schema"), "mirror");
}

TEST(PlanTable, TemplateValuesAreNotRendered) {
  Result<Loaded> loaded =
      Load("  tables: {}\n", "{type: postgres, config: {connection_url: 'postgres://{table}'}}");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}));
  EXPECT_EQ(Get(plan.sink.config.node(), "connection_url"), "postgres://{table}");
}

TEST(PlanTable, WriteModeIsTheTemplatesElseWhatTheSinkSupports) {
  Result<Loaded> plain = Load("  tables: {}\n");
  ASSERT_OK(plain);
  EXPECT_EQ(Plan(*plain, Table("shop.orders", {"id"}), true).write_mode, "upsert");
  TablePlan append = Plan(*plain, Table("shop.orders", {"id"}), false);
  EXPECT_EQ(append.write_mode, "append");
  EXPECT_TRUE(append.key.empty());
  // A sink that does not write by key appends by default: it is told no write mode.
  EXPECT_EQ(Get(append.sink.config.node(), "write_mode"), "<absent>");
  EXPECT_EQ(Get(append.sink.config.node(), "key"), "<absent>");

  Result<Loaded> templated =
      Load("  tables: {}\n", "{type: postgres, config: {write_mode: append, key: [id]}}");
  ASSERT_OK(templated);
  TablePlan plan = Plan(*templated, Table("shop.orders", {"id"}), true);
  EXPECT_EQ(plan.write_mode, "append");
  EXPECT_TRUE(plan.key.empty());
  EXPECT_EQ(Get(plan.sink.config.node(), "key"), "<absent>");
}

TEST(PlanTable, TemplateKeyIsIgnored) {
  Result<Loaded> loaded =
      Load("  tables: {}\n", "{type: postgres, config: {write_mode: upsert, key: [tenant]}}");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id", "line"}));
  EXPECT_EQ(plan.key, (std::vector<std::string>{"id", "line"}));
  EXPECT_EQ(Text(plan.sink.config.node()["key"]), "[id, line]");
}

TEST(PlanTable, PerTableOverridesWin) {
  Result<Loaded> loaded = Load(
      "  tables: {destination: {table_name: '{schema}_{table_name}'}}\n"
      "  per_table:\n"
      "    shop.orders:\n"
      "      key: [order_id]\n"
      "      write_mode: delete\n"
      "      sink: {table_name: 'special_{table_name}', options: {b: 3}}\n"
      "      snapshot: {query: 'SELECT * FROM {table} WHERE live'}\n",
      "{type: postgres, config: {write_mode: append, options: {a: 1, b: 2}}}");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}));
  EXPECT_EQ(plan.refused, "");
  EXPECT_EQ(plan.write_mode, "delete");
  EXPECT_EQ(plan.key, std::vector<std::string>{"order_id"});
  EXPECT_EQ(Text(plan.sink.config.node()),
            "{write_mode: delete, options: {a: 1, b: 3}, table_name: special_orders, key: "
            "[order_id]}");
  EXPECT_EQ(Get(plan.snapshot.config.node(), "query"), "SELECT * FROM shop.orders WHERE live");

  // Other tables keep the shared settings.
  TablePlan other = Plan(*loaded, Table("shop.items", {"id"}));
  EXPECT_EQ(other.write_mode, "append");
  EXPECT_EQ(Get(other.sink.config.node(), "table_name"), "shop_items");
  EXPECT_EQ(Get(other.snapshot.config.node(), "query"), "SELECT * FROM \"shop\".\"items\"");
}

TEST(PlanTable, PerTableSchemaDriftReplacesPipelineSchema) {
  Result<Loaded> loaded =
      Load("  tables: {}\n  per_table: {shop.orders: {schema_drift: {on_drift: evolve}}}\n");
  ASSERT_OK(loaded);
  EXPECT_FALSE(
      Plan(*loaded, Table("shop.orders", {"id"})).schema->policy.relax_nullability_on_missing);
  EXPECT_EQ(Plan(*loaded, Table("shop.orders", {"id"})).schema->policy.on_drift, OnDrift::kEvolve);
  EXPECT_FALSE(Plan(*loaded, Table("shop.items", {"id"})).schema) << "no pipeline.schema";

  loaded->doc.schema = config::SchemaSpec{SchemaPolicy{OnDrift::kFail}, loaded->doc.root};
  EXPECT_EQ(Plan(*loaded, Table("shop.orders", {"id"})).schema->policy.on_drift, OnDrift::kEvolve);
  EXPECT_EQ(Plan(*loaded, Table("shop.items", {"id"})).schema->policy.on_drift, OnDrift::kFail);
}

TEST(PlanTable, PerTableWriteModeMakesAnAppendTemplateKeyed) {
  Result<Loaded> loaded = Load("  tables: {}\n  per_table: {shop.orders: {write_mode: upsert}}\n",
                               "{type: postgres, config: {write_mode: append}}");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}), false);
  EXPECT_EQ(plan.write_mode, "upsert");
  EXPECT_EQ(plan.key, std::vector<std::string>{"id"});
}

TEST(PlanTable, KeylessTableIsRefusedUnderRefuse) {
  Result<Loaded> loaded = Load("  tables: {}\n");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.log", {}));
  EXPECT_EQ(plan.refused,
            "table 'shop.log' has no primary key — set mirror.per_table.\"shop.log\".key or "
            "mirror.tables.without_primary_key: append");
}

TEST(PlanTable, EmptyPerTableKeyIsRefusedLikeNoPrimaryKey) {
  Result<Loaded> loaded = Load("  tables: {}\n  per_table: {shop.orders: {key: []}}\n");
  ASSERT_OK(loaded);
  EXPECT_NE(Plan(*loaded, Table("shop.orders", {"id"})).refused, "");
}

TEST(PlanTable, KeylessTableIsAppendedUnderAppend) {
  Result<Loaded> loaded =
      Load("  tables: {without_primary_key: append}\n", "{type: postgres, config: {key: [id]}}");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.log", {}));
  EXPECT_EQ(plan.refused, "");
  EXPECT_EQ(plan.write_mode, "append");
  EXPECT_TRUE(plan.key.empty());
  EXPECT_EQ(Text(plan.sink.config.node()), "{table_name: log, write_mode: append}");
  // A keyed table still upserts.
  EXPECT_EQ(Plan(*loaded, Table("shop.orders", {"id"})).write_mode, "upsert");
}

TEST(PlanTable, KeylessTableDropsTheDeleteMarker) {
  Result<Loaded> loaded = Load("  tables: {without_primary_key: append}\n",
                               "{type: postgres, config: {delete_marker: {field: __op}}}");
  ASSERT_OK(loaded);
  EXPECT_EQ(Text(Plan(*loaded, Table("shop.log", {})).sink.config.node()),
            "{table_name: log, write_mode: append}");
  // A keyed table keeps it: it deletes by its key.
  EXPECT_NE(
      Text(Plan(*loaded, Table("shop.orders", {"id"})).sink.config.node()).find("delete_marker"),
      std::string::npos);
}

TEST(PlanTable, KeylessTableIsNotRefusedForAnAppendSink) {
  Result<Loaded> loaded = Load("  tables: {}\n");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.log", {}), false);
  EXPECT_EQ(plan.refused, "");
  EXPECT_EQ(plan.write_mode, "append");
}

TEST(PlanTable, FileSinkWithoutDestinationIsRefused) {
  Result<Loaded> loaded = Load("  tables: {}\n", "{type: jsonl, config: {path: out.jsonl}}");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}), false);
  EXPECT_EQ(plan.refused,
            "sink 'jsonl' has no default destination field — set mirror.tables.destination "
            "(e.g. { path: \"out/{table}.jsonl\" })");
}

TEST(PlanTable, FileSinkWithDestinationWritesAFilePerTable) {
  Result<Loaded> loaded = Load("  tables: {destination: {path: 'out/{table}.jsonl'}}\n",
                               "{type: jsonl, config: {path: out.jsonl}}");
  ASSERT_OK(loaded);
  TablePlan plan = Plan(*loaded, Table("shop.orders", {"id"}), false);
  EXPECT_EQ(plan.refused, "");
  EXPECT_EQ(plan.sink.type, "jsonl");
  EXPECT_EQ(Text(plan.sink.config.node()), "{path: out/shop.orders.jsonl}");
}

TEST(PlanTable, IdIsTheNodeId) {
  Result<Loaded> loaded = Load("  tables: {}\n");
  ASSERT_OK(loaded);
  EXPECT_EQ(Plan(*loaded, Table("shop.order items", {"id"})).id, "shop.order_items");
}

// --- DestinationOf ---

TablePlan WithSinkConfig(const std::string& table, const std::string& config) {
  TablePlan plan;
  plan.table = table;
  plan.sink.config =
      config::Block(YAML::Load(config), std::make_shared<const std::string>("m.yaml"), "c");
  return plan;
}

TEST(DestinationOf, IsCanonicalWithoutKeyAndWriteMode) {
  EXPECT_EQ(DestinationOf(WithSinkConfig(
                "a", "{table_name: t, write_mode: upsert, key: [id], o: {z: 1, a: [x, '\"']}}")),
            "{\"o\":{\"a\":[\"x\",\"\\\"\"],\"z\":\"1\"},\"table_name\":\"t\"}");
  EXPECT_EQ(DestinationOf(WithSinkConfig("a", "{b: 1, a: {d: 1, c: 2}, key: [id]}")),
            DestinationOf(WithSinkConfig("b", "{a: {c: '2', d: 1}, write_mode: append, b: 1}")));
  EXPECT_NE(DestinationOf(WithSinkConfig("a", "{a: [1, 2]}")),
            DestinationOf(WithSinkConfig("b", "{a: [2, 1]}")));
  EXPECT_NE(DestinationOf(WithSinkConfig("a", "{a: ~}")),
            DestinationOf(WithSinkConfig("b", "{a: 'null'}")));
}

// --- RefuseCollisions ---

constexpr char kCollision[] =
    "writes the same destination as '%s' — set mirror.tables.destination (e.g. { table_name: "
    "\"{schema}_{table_name}\" })";

std::string CollidesWith(const std::string& other) {
  std::string text = kCollision;
  return text.replace(text.find("%s"), 2, other);
}

// Plans of "{schema}.orders" for the given schemas, all writing table_name "orders", in the
// given order; plus "shop.items", which writes its own table.
Result<std::vector<TablePlan>> OrdersPlans(const std::vector<std::string>& schemas) {
  ASSIGN_OR_RETURN(Loaded loaded, Load("  tables: {}\n"));
  std::vector<TablePlan> plans;
  for (const std::string& schema : schemas) {
    plans.push_back(Plan(loaded, Table(schema + ".orders", {"id"})));
  }
  plans.push_back(Plan(loaded, Table("shop.items", {"id"})));
  return plans;
}

TEST(RefuseCollisions, FirstNewcomerInNameOrderKeepsTheDestination) {
  Result<std::vector<TablePlan>> plans = OrdersPlans({"c", "a", "b"});
  ASSERT_OK(plans);
  RefuseCollisions(*plans, {});
  EXPECT_EQ((*plans)[0].refused, CollidesWith("a.orders"));
  EXPECT_EQ((*plans)[1].refused, "");
  EXPECT_EQ((*plans)[2].refused, CollidesWith("a.orders"));
  EXPECT_EQ((*plans)[3].refused, "");
}

TEST(RefuseCollisions, IncumbentKeepsTheDestination) {
  Result<std::vector<TablePlan>> plans = OrdersPlans({"c", "a", "b"});
  ASSERT_OK(plans);
  RefuseCollisions(*plans, {"c.orders", "shop.items"});
  EXPECT_EQ((*plans)[0].refused, "");
  EXPECT_EQ((*plans)[1].refused, CollidesWith("c.orders"));
  EXPECT_EQ((*plans)[2].refused, CollidesWith("c.orders"));
  EXPECT_EQ((*plans)[3].refused, "");
}

TEST(RefuseCollisions, RefusedPlansTakeNoPart) {
  Result<std::vector<TablePlan>> plans = OrdersPlans({"a", "b", "c"});
  ASSERT_OK(plans);
  (*plans)[0].refused = "earlier reason";
  RefuseCollisions(*plans, {"a.orders"});
  EXPECT_EQ((*plans)[0].refused, "earlier reason");
  EXPECT_EQ((*plans)[1].refused, "");
  EXPECT_EQ((*plans)[2].refused, CollidesWith("b.orders"));
}

TEST(RefuseCollisions, DistinctDestinationsDoNotCollide) {
  Result<Loaded> loaded = Load("  tables: {destination: {table_name: '{schema}_{table_name}'}}\n");
  ASSERT_OK(loaded);
  std::vector<TablePlan> plans = {Plan(*loaded, Table("a.orders", {"id"})),
                                  Plan(*loaded, Table("b.orders", {"id"}))};
  RefuseCollisions(plans, {});
  EXPECT_EQ(plans[0].refused, "");
  EXPECT_EQ(plans[1].refused, "");
}

TEST(RefuseCollisions, KeyAndWriteModeDoNotMakeADestination) {
  Result<Loaded> loaded =
      Load("  tables: {}\n  per_table: {b.orders: {write_mode: append}, c.orders: {key: [x]}}\n");
  ASSERT_OK(loaded);
  std::vector<TablePlan> plans = {Plan(*loaded, Table("a.orders", {"id"})),
                                  Plan(*loaded, Table("b.orders", {"id"})),
                                  Plan(*loaded, Table("c.orders", {"id"}))};
  RefuseCollisions(plans, {});
  EXPECT_EQ(plans[0].refused, "");
  EXPECT_EQ(plans[1].refused, CollidesWith("a.orders"));
  EXPECT_EQ(plans[2].refused, CollidesWith("a.orders"));
}

}  // namespace
}  // namespace faucet::mirror
