#include "sinks/sql/schema_drift.h"

namespace faucet::sql {
namespace {

// Postgres type OIDs whose width the class records.
constexpr uint32_t kInt2Oid = 21, kInt4Oid = 23, kFloat4Oid = 700, kBpcharOid = 1042,
                   kVarcharOid = 1043, kNumericOid = 1700;
constexpr int32_t kVarHeader = 4;  // varchar/bpchar/numeric typmods count a 4-byte header

// Text of every kind fits a text column, as its text form; a limited one needs a length check.
Fit FitText(TypeClass target, TypeClass source) {
  if (target.width == 0) return Fit::kFits;
  if (source.kind != ValueType::kText) return Fit::kFits;  // short forms; the database checks
  return source.width != 0 && source.width <= target.width ? Fit::kFits : Fit::kWiden;
}

}  // namespace

TypeClass SourceClass(const Column& column) {
  if (column.type_inferred) return {ValueType::kOther, 0};  // fits any destination type
  if (column.width != 0) return {column.type, static_cast<int>(column.width)};
  switch (column.type_oid) {
    case kInt2Oid:
      return {ValueType::kInt, 16};
    case kInt4Oid:
      return {ValueType::kInt, 32};
    case kFloat4Oid:
      return {ValueType::kFloat, 32};
    case kVarcharOid:
    case kBpcharOid:
      return {ValueType::kText,
              column.type_modifier >= kVarHeader ? column.type_modifier - kVarHeader : 0};
    default:
      break;
  }
  // Without a narrower Postgres type, a number is taken at its widest.
  switch (column.type) {
    case ValueType::kInt:
    case ValueType::kFloat:
      return {column.type, 64};
    default:
      return {column.type, 0};
  }
}

std::optional<NumericPrecision> DeclaredPrecision(const Column& column) {
  const int32_t mod = column.type_modifier - kVarHeader;
  if (column.type_oid != kNumericOid || mod < 0) return std::nullopt;
  NumericPrecision p{mod >> 16, mod & 0xffff};
  if (p.scale > p.precision) return std::nullopt;  // a negative scale (Postgres 15): not kept
  return p;
}

Fit FitOf(TypeClass target, TypeClass source) {
  using K = ValueType;
  if (target.kind == K::kOther || source.kind == K::kOther) return Fit::kFits;
  if (target.kind == K::kText) return FitText(target, source);
  if (target.kind == source.kind) {
    if (target.kind == K::kInt || target.kind == K::kFloat) {
      return source.width <= target.width ? Fit::kFits : Fit::kWiden;
    }
    return Fit::kFits;
  }
  switch (target.kind) {
    case K::kNumeric:
      return source.kind == K::kInt || source.kind == K::kFloat ? Fit::kFits : Fit::kIncompatible;
    case K::kFloat:
      if (source.kind == K::kInt) return Fit::kFits;
      return source.kind == K::kNumeric ? Fit::kWiden : Fit::kIncompatible;
    case K::kInt:
      return source.kind == K::kFloat || source.kind == K::kNumeric ? Fit::kWiden
                                                                    : Fit::kIncompatible;
    case K::kTimestampTz:
      return source.kind == K::kTimestamp ? Fit::kFits : Fit::kIncompatible;
    case K::kTimestamp:
      return source.kind == K::kTimestampTz ? Fit::kWiden : Fit::kIncompatible;
    default:
      return Fit::kIncompatible;
  }
}

std::vector<Drift> DiffSchema(const Relation& relation, const std::vector<int>& target_of,
                              const TargetTable& target,
                              const std::function<std::string(const Column&)>& type_name) {
  std::vector<Drift> out;
  std::vector<bool> sent(target.columns.size(), false);
  for (size_t j = 0; j < relation.columns.size() && j < target_of.size(); ++j) {
    const Column& column = relation.columns[j];
    const int t = target_of[j];
    if (t == -2) continue;
    const int source = static_cast<int>(j);
    if (t < 0) {
      out.push_back({Drift::kMissing, source, -1,
                     "the source's column " + column.name + " (" + type_name(column) +
                         ") is not in the destination"});
      continue;
    }
    sent[t] = true;
    const TargetColumn& dest = target.columns[t];
    switch (FitOf(dest.type_class, SourceClass(column))) {
      case Fit::kFits:
        break;
      case Fit::kWiden:
        out.push_back({Drift::kWiden, source, t,
                       "column " + dest.name + " is " + dest.type +
                           " in the destination, narrower than the source's " + type_name(column)});
        break;
      case Fit::kIncompatible:
        out.push_back({Drift::kIncompatible, source, t,
                       "column " + dest.name + " is " + dest.type +
                           " in the destination, which cannot hold the source's " +
                           type_name(column)});
        break;
    }
  }
  for (size_t t = 0; t < target.columns.size(); ++t) {
    if (sent[t] || !target.columns[t].required) continue;
    out.push_back({Drift::kUnfilled, -1, static_cast<int>(t),
                   "column " + target.columns[t].name +
                       " is NOT NULL without a default in the destination, and the source "
                       "does not send it"});
  }
  return out;
}

DriftDecision Decide(const std::vector<Drift>& drifts, const Relation& relation,
                     const TargetTable& target, const SchemaPolicy& policy,
                     const std::function<std::string(const Column&)>& type_for) {
  DriftDecision out;
  if (drifts.empty()) return out;
  const std::string suffix = std::string(" (on_drift: ") + OnDriftName(policy.on_drift) + ")";
  const std::string table = "table " + target.display_name + ": ";
  auto column_of = [&](const Drift& d) {
    return d.target >= 0 ? target.columns[d.target].name : relation.columns[d.source].name;
  };
  auto quarantine = [&](const Drift& d, const std::string& message) {
    out.quarantine.push_back({d.kind == Drift::kUnfilled ? -1 : d.source, column_of(d), message});
  };
  auto fail = [&](const std::string& message) {
    if (!out.error) out.error = FailedPrecondition(table + message);
  };
  for (const Drift& d : drifts) {
    switch (policy.on_drift) {
      case OnDrift::kWarn:
      case OnDrift::kIgnore:
        out.warnings.push_back(table + d.message + suffix);
        break;
      case OnDrift::kFail:
        fail(d.message + suffix);
        break;
      case OnDrift::kQuarantine:
        quarantine(d, d.message + suffix);
        break;
      case OnDrift::kEvolve: {
        std::string why;
        if (d.kind == Drift::kMissing) {
          const Column& c = relation.columns[d.source];
          out.changes.push_back({SchemaChange::kAddColumn, c.name, type_for(c)});
          break;
        }
        if (d.kind == Drift::kWiden && policy.allow_type_widening) {
          out.changes.push_back({SchemaChange::kWidenColumn, target.columns[d.target].name,
                                 type_for(relation.columns[d.source])});
          break;
        }
        if (d.kind == Drift::kUnfilled && policy.relax_nullability_on_missing) {
          out.changes.push_back({SchemaChange::kDropNotNull, target.columns[d.target].name, ""});
          break;
        }
        if (d.kind == Drift::kWiden) why = "; allow_type_widening is false";
        if (d.kind == Drift::kUnfilled) why = "; relax_nullability_on_missing is false";
        const std::string message = d.message + why + " (on_drift: evolve, on_incompatible: ";
        if (policy.on_incompatible == OnIncompatible::kQuarantine) {
          quarantine(d, message + "quarantine)");
        } else {
          fail(message + "fail)");
        }
        break;
      }
    }
  }
  if (out.error) {
    out.changes.clear();
    out.quarantine.clear();
  }
  return out;
}

}  // namespace faucet::sql
