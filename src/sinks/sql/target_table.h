// TargetTable: the destination table as its catalog describes it, read once when a sink opens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/change.h"
#include "core/status.h"

namespace faucet::sql {

// What values a column type holds, coarsely: enough to tell whether a destination column can
// take what a source column sends (sinks/sql/schema_drift.h). `kind` is the logical type whose
// values it holds; ValueType::kOther is a type not judged (an enum, a domain, SQLite's dynamic
// types), which always fits.
struct TypeClass {
  ValueType kind = ValueType::kOther;
  // kInt, kFloat: bits (16, 32, 64); kText: the maximum length in characters, 0 for unlimited.
  int width = 0;

  bool operator==(const TypeClass&) const = default;
};

struct TargetColumn {
  std::string name;
  // The type as the database spells it ("integer", "varchar(20)", "BLOB"): sinks derive their
  // per-column conversions from it, messages quote it.
  std::string type;
  TypeClass type_class;
  // NOT NULL without a default (nor identity or generation): an insert must give it a value.
  bool required = false;
};

struct TargetTable {
  // As messages name the table: "public.orders", "faucet.orders", "orders".
  std::string display_name;
  // The writable columns in table order. Generated columns are left out: a value for them would
  // be refused, and the database computes them anyway.
  std::vector<TargetColumn> columns;
  // Column names of the primary key and of every unique index without predicate or expression:
  // the key sets an upsert can name as its conflict target.
  std::vector<std::vector<std::string>> unique_keys;

  // Index of the column named `name`: the exact name, else the only column whose name equals it
  // ignoring ASCII case (so an Oracle-style "ID" finds a Postgres "id"); -1 when none.
  int Find(std::string_view name) const;
};

// The target column indices of `key`. kInvalidArgument naming the column when one does not exist
// and, with `need_unique`, when no unique key of the table consists of exactly those columns
// (an upsert needs one as its conflict target).
Result<std::vector<int>> ResolveKey(const TargetTable& table, const std::vector<std::string>& key,
                                    bool need_unique);

}  // namespace faucet::sql
