#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "transforms/relation_cache.h"
#include "transforms/transforms.h"

namespace faucet {
namespace {

// Which operations `ops` names, each by its one-letter code or by its long name (the
// reference's Postgres envelopes: "delete", "truncate"); indexed by ChangeOp. Worked out once, so
// a change costs a lookup rather than string comparisons.
using OpSet = std::array<bool, kChangeOps.size()>;
OpSet OpsNamed(const std::vector<std::string>& ops) {
  OpSet named{};
  for (const std::string& name : ops) {
    if (std::optional<ChangeOp> op = ParseChangeOp(name)) named[static_cast<size_t>(*op)] = true;
  }
  return named;
}

class CdcUnwrap : public Transform {
 public:
  CdcUnwrap(const std::string& marker_field, const std::vector<std::string>& delete_ops,
            const std::vector<std::string>& drop_ops, std::vector<std::string> key)
      : delete_ops_(OpsNamed(delete_ops)),
        drop_ops_(OpsNamed(drop_ops)),
        key_(std::move(key)),
        relations_([marker_field](const Relation& r) {
          Relation derived = r;
          derived.columns.push_back(Column{marker_field, ValueType::kText, 25, -1, false});
          return derived;
        }) {}

  Status Apply(Page& page) override {
    // An update with a before image (a key change, or REPLICA IDENTITY FULL) may become two
    // rows: room for them up front, rather than moving the page's rows to a larger vector.
    std::vector<Change> out;
    out.reserve(page.changes.size() +
                static_cast<size_t>(std::count_if(
                    page.changes.begin(), page.changes.end(),
                    [](const Change& c) { return c.op == ChangeOp::kUpdate && c.before; })));
    for (Change& c : page.changes) {
      if (c.op == ChangeOp::kRead) {  // already a flat row (a snapshot or query source)
        out.push_back(std::move(c));
        continue;
      }
      if (drop_ops_[static_cast<size_t>(c.op)]) continue;
      if (delete_ops_[static_cast<size_t>(c.op)]) {
        if (!c.before) {
          spdlog::warn("cdc_unwrap: delete on {}.{} without a before image, dropped",
                       c.relation->schema, c.relation->name);
          continue;
        }
        AddFlat(out, c, std::move(*c.before), "d");
        continue;
      }
      if (!c.after) continue;
      if (c.op == ChangeOp::kUpdate && c.before &&
          KeyChanged(*c.relation, *c.before, *c.after,
                     [this](const Column& col) { return IsKey(col); })) {
        AddFlat(out, c, std::move(*c.before), "d");
      }
      AddFlat(out, c, std::move(*c.after), "u");
    }
    page.changes = std::move(out);
    return Status::Ok();
  }

 private:
  // Appends to `out` the flat row of `c`: `row` with the marker cell. Built in place: this runs
  // once per change.
  void AddFlat(std::vector<Change>& out, const Change& c, Row row, const char* marker) {
    Change& flat = out.emplace_back();
    flat.op = ChangeOp::kRead;
    flat.relation = relations_.For(c.relation);
    row.emplace_back(CellState::kValue, marker);
    flat.after = std::move(row);
    flat.commit_time_us = c.commit_time_us;
    flat.commit_position = c.commit_position;
    flat.ordinal = c.ordinal;
    flat.txn = c.txn;
  }

  // The configured key columns, else the relation's own replica identity.
  bool IsKey(const Column& col) const {
    if (key_.empty()) return col.key;
    return std::find(key_.begin(), key_.end(), col.name) != key_.end();
  }

  OpSet delete_ops_;
  OpSet drop_ops_;
  std::vector<std::string> key_;
  DerivedRelations relations_;
};

}  // namespace

Result<std::unique_ptr<Transform>> MakeCdcUnwrap(const config::ConnectorSpec& spec) {
  const config::Block& cfg = spec.config;
  // The envelope field names describe the reference's JSON records; our changes are typed, so
  // they are accepted for compatibility but must keep their meaning.
  for (const char* key : {"op_field", "after_field", "before_field", "key_field"}) {
    ASSIGN_OR_RETURN(std::optional<std::string> v, cfg.OptionalString(key));
    (void)v;
  }
  ASSIGN_OR_RETURN(std::string marker, cfg.String("marker_field", "__op"));
  if (marker.empty()) return cfg.Error("marker_field", "must not be empty");
  ASSIGN_OR_RETURN(std::vector<std::string> delete_ops, cfg.StringList("delete_ops"));
  if (!cfg.Has("delete_ops")) delete_ops = {"d", "delete"};
  ASSIGN_OR_RETURN(std::vector<std::string> drop_ops, cfg.StringList("drop_ops"));
  if (!cfg.Has("drop_ops")) drop_ops = {"ddl", "truncate"};
  ASSIGN_OR_RETURN(std::vector<std::string> key, spec.spec.StringList("key"));
  return std::unique_ptr<Transform>(new CdcUnwrap(marker, delete_ops, drop_ops, key));
}

}  // namespace faucet
