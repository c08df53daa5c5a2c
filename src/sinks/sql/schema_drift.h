// Schema drift in the SQL sinks: how the rows a source sends can differ from the destination
// table, and what a SchemaPolicy (core/schema_policy.h) does about each difference.
//
// A sink checks every source relation once, when its first row arrives (a DDL on the source
// produces a new relation). The differences, for the columns the rows write (the delete marker
// is never a difference):
//
//   missing       the source has a column the destination lacks
//   widen         the destination column's type cannot hold every value of the source's type,
//                 and a wider type of the same kind would (integer -> bigint, varchar(20) ->
//                 varchar(50) or text, integer -> numeric, timestamp -> timestamptz)
//   incompatible  the destination column's type cannot hold the source's (json <- text)
//   unfilled      a destination column that is NOT NULL without a default is not sent (the
//                 source dropped it): inserts would be refused
//
// What each policy does with them:
//
//   warn        log each once; write the columns the destination has (as without a policy)
//   ignore      the same, logged at debug level only
//   fail        fail the page with the first difference: nothing is written
//   quarantine  a row carrying a value (not NULL) in a drifting column, or any inserted row of
//               a relation with an unfilled column, is refused (to the DLQ); the rest is written
//   evolve      missing: ADD COLUMN with the sink's type for the source column; widen: ALTER the
//               column to it when allow_type_widening; unfilled: DROP NOT NULL when
//               relax_nullability_on_missing; everything else (incompatible, or widening or
//               relaxing not allowed) goes by on_incompatible: fail or quarantine
//
// Types are judged by TypeClass: the kind of value a type holds and its width, not how it is
// spelled; a class the sink does not know (an enum, SQLite's dynamic types) always fits. The
// judgement is of kinds, not of every value: a floating-point column is taken to fit integers
// (a 64-bit one is rounded past 2^53) and a numeric one floats (MySQL's DECIMAL refuses NaN
// and infinities, which then fail their row as any refused value does).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/change.h"
#include "core/schema_policy.h"
#include "core/status.h"
#include "sinks/sql/target_table.h"

namespace faucet::sql {

// The class of a source column: from its logical type and, when the source is Postgres, its
// type OID and modifier (int4 is 32 bits, varchar(20) holds 20 characters). This file is where
// the sinks read a Postgres type modifier.
TypeClass SourceClass(const Column& column);

// A numeric column's declared precision and scale (Postgres numeric(p,s), from its type
// modifier); nullopt for an unconstrained numeric or another column.
struct NumericPrecision {
  int precision = 0;
  int scale = 0;
};
std::optional<NumericPrecision> DeclaredPrecision(const Column& column);

enum class Fit { kFits, kWiden, kIncompatible };
// Whether a destination column of class `target` holds values of class `source` (see above).
Fit FitOf(TypeClass target, TypeClass source);

struct Drift {
  enum Kind { kMissing, kWiden, kIncompatible, kUnfilled };
  Kind kind = kMissing;
  int source = -1;      // relation column index; -1 for kUnfilled
  int target = -1;      // target column index; -1 for kMissing
  std::string message;  // "column c is ...": what differs, for logs and errors
};

// The differences between `relation` and `target`. `target_of` maps each relation column to its
// target column, -1 when the target lacks it, -2 for a column never written (the delete
// marker). `type_name` spells a source column's type for messages.
std::vector<Drift> DiffSchema(const Relation& relation, const std::vector<int>& target_of,
                              const TargetTable& target,
                              const std::function<std::string(const Column&)>& type_name);

// A DDL change evolve makes to the destination table.
struct SchemaChange {
  enum Kind { kAddColumn, kWidenColumn, kDropNotNull };
  Kind kind = kAddColumn;
  std::string column;
  std::string type;  // kAddColumn, kWidenColumn: the sink's type for the source column
  bool operator==(const SchemaChange&) const = default;
};

// Rows of a relation refused to the DLQ: those with a value (not NULL) in relation column
// `source`, or with source -1 every inserted or upserted row. `column` and `message` make the
// row's error.
struct QuarantineRule {
  int source = -1;
  std::string column;
  std::string message;
};

// What a policy decides for one relation's differences.
struct DriftDecision {
  std::optional<Status> error;        // fail the page with it
  std::vector<SchemaChange> changes;  // evolve: apply, then check the relation again
  std::vector<QuarantineRule> quarantine;
  std::vector<std::string> warnings;  // to log at warn level (debug for ignore)
};

// Applies `policy` to `drifts`. `type_for` is the sink's type for a source column (for ADD
// COLUMN and widening).
DriftDecision Decide(const std::vector<Drift>& drifts, const Relation& relation,
                     const TargetTable& target, const SchemaPolicy& policy,
                     const std::function<std::string(const Column&)>& type_for);

}  // namespace faucet::sql
