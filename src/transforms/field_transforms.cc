// rename_fields and drop_fields: column-level rewrites through a derived relation.
#include <algorithm>
#include <map>
#include <set>

#include "transforms/relation_cache.h"
#include "transforms/transforms.h"

namespace faucet {
namespace {

class RenameFields : public Transform {
 public:
  explicit RenameFields(std::map<std::string, std::string> renames)
      : relations_([renames = std::move(renames)](const Relation& r) {
          Relation derived = r;
          for (Column& col : derived.columns) {
            auto it = renames.find(col.name);
            if (it != renames.end()) col.name = it->second;
          }
          return derived;
        }) {}

  Status Apply(Page& page) override {
    for (Change& c : page.changes) c.relation = relations_.For(c.relation);
    return Status::Ok();
  }

 private:
  DerivedRelations relations_;
};

class DropFields : public Transform {
 public:
  explicit DropFields(std::set<std::string> drop)
      : drop_(std::move(drop)), relations_([this](const Relation& r) {
          Relation derived = r;
          derived.columns.clear();
          for (const Column& col : r.columns) {
            if (!drop_.count(col.name)) derived.columns.push_back(col);
          }
          return derived;
        }) {}

  Status Apply(Page& page) override {
    for (Change& c : page.changes) {
      const Relation& source = *c.relation;
      auto strip = [&](std::optional<Row>& row) {
        if (!row) return;
        size_t kept = 0;
        for (size_t i = 0; i < row->size() && i < source.columns.size(); ++i) {
          if (drop_.count(source.columns[i].name)) continue;
          // A self-move would empty the string: only move cells that shift.
          if (kept != i) (*row)[kept] = std::move((*row)[i]);
          ++kept;
        }
        row->resize(kept);
      };
      strip(c.before);
      strip(c.after);
      c.relation = relations_.For(c.relation);
    }
    return Status::Ok();
  }

 private:
  std::set<std::string> drop_;
  DerivedRelations relations_;
};

}  // namespace

Result<std::unique_ptr<Transform>> MakeRenameFields(const config::ConnectorSpec& spec) {
  const config::Block& cfg = spec.config;
  ASSIGN_OR_RETURN(config::Block fields, cfg.Child("fields"));
  if (fields.Keys().empty()) return cfg.Error("fields", "expected a mapping of old: new names");
  std::map<std::string, std::string> renames;
  for (const std::string& old_name : fields.Keys()) {
    ASSIGN_OR_RETURN(std::string new_name, fields.RequiredString(old_name));
    renames[old_name] = new_name;
  }
  return std::unique_ptr<Transform>(new RenameFields(std::move(renames)));
}

Result<std::unique_ptr<Transform>> MakeDropFields(const config::ConnectorSpec& spec) {
  const config::Block& cfg = spec.config;
  ASSIGN_OR_RETURN(std::vector<std::string> fields, cfg.StringList("fields"));
  if (fields.empty()) return cfg.Error("fields", "expected a non-empty list of field names");
  return std::unique_ptr<Transform>(new DropFields({fields.begin(), fields.end()}));
}

}  // namespace faucet
