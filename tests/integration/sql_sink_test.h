// What the SQL sink integration tests share: a Backend per database (the sink under test and a
// side connection to inspect the destination), and page builders. The scenarios every SQL sink
// must pass are in sql_sink_scenarios_test.cc; database-specific tests beside each backend.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/block.h"
#include "core/page.h"
#include "core/sink.h"

namespace faucet::sqltest {

using Rows = std::vector<std::vector<std::optional<std::string>>>;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string Name() const = 0;
  // Runs `sql` on the destination through a side connection; fails the test on error.
  virtual void Exec(const std::string& sql) = 0;
  // The rows of `sql` as text, nullopt for NULL.
  virtual Rows Query(const std::string& sql) = 0;
  // The table name as it appears in SQL ("public"."t", `t`, "t").
  virtual std::string Quote(const std::string& table) const = 0;
  // DDL of the test table: id integer primary key, name text, doc text, qty integer, where a
  // value the type cannot take (text into qty) is refused.
  virtual std::string ItemsDdl(const std::string& table) const = 0;
  // The YAML flow-mapping entries that locate `table` ("connection_url: ..., table_name: t").
  virtual std::string Locate(const std::string& table) const = 0;
  virtual Result<std::unique_ptr<Sink>> MakeSink(const config::Block& cfg) const = 0;
};

std::unique_ptr<Backend> MakePostgresBackend();
std::unique_ptr<Backend> MakeSqliteBackend();
std::unique_ptr<Backend> MakeMysqlBackend();

inline config::Block Yaml(const std::string& text) {
  return config::Block(YAML::Load(text), std::make_shared<const std::string>("test.yaml"),
                       "pipeline.sink.config");
}

// Opens a sink for `table` configured with `extra` YAML entries (", write_mode: upsert, ...").
inline std::unique_ptr<Sink> OpenSink(const Backend& b, const std::string& table,
                                      const std::string& extra) {
  auto sink = b.MakeSink(Yaml("{" + b.Locate(table) + extra + "}"));
  EXPECT_TRUE(sink.ok()) << sink.status().ToString();
  if (!sink.ok()) return nullptr;
  Status st = (*sink)->Open(false);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return std::move(sink).value();
}

// A relation of a source table with columns `names` (text-typed: the sinks go by the target).
inline RelationPtr Relation(std::vector<std::string> names) {
  auto r = std::make_shared<faucet::Relation>();
  r->schema = "src";
  r->name = "items";
  for (auto& n : names) r->columns.push_back(Column{n, ValueType::kText, 25, -1, n == "id"});
  return r;
}

inline Page PageOf(std::vector<Change> changes) {
  Page page;
  page.changes = std::move(changes);
  return page;
}

inline Cell T(const char* text) { return Cell::Value(text); }
inline Cell Null() { return Cell::Null(); }
inline Cell Toast() { return Cell::UnchangedToast(); }

inline Change Make(ChangeOp op, const RelationPtr& rel, std::optional<Row> before,
                   std::optional<Row> after) {
  Change c;
  c.op = op;
  c.relation = rel;
  c.before = std::move(before);
  c.after = std::move(after);
  return c;
}
inline Change Insert(const RelationPtr& rel, Row after) {
  return Make(ChangeOp::kInsert, rel, std::nullopt, std::move(after));
}
inline Change Update(const RelationPtr& rel, Row after, std::optional<Row> before = {}) {
  return Make(ChangeOp::kUpdate, rel, std::move(before), std::move(after));
}
inline Change Delete(const RelationPtr& rel, Row before) {
  return Make(ChangeOp::kDelete, rel, std::move(before), std::nullopt);
}
inline Change Read(const RelationPtr& rel, Row row) {
  return Make(ChangeOp::kRead, rel, std::nullopt, std::move(row));
}

// The rows of the test table as "id|name|doc|qty;..." ordered by id, NULL for null.
inline std::string Dump(Backend& b, const std::string& table) {
  std::string out;
  for (const auto& row :
       b.Query("SELECT id, name, doc, qty FROM " + b.Quote(table) + " ORDER BY id")) {
    if (!out.empty()) out += ";";
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) out += "|";
      out += row[i].value_or("NULL");
    }
  }
  return out;
}

}  // namespace faucet::sqltest
