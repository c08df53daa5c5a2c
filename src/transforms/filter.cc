// filter: keeps the changes whose value at `path` satisfies `op value`. Paths: for CDC changes
// "op", "schema", "table", "before.<column>", "after.<column>" (a bare column name reads
// `after`, else `before`); for flat rows the column name. Values compare as text, the source's
// own form.
#include <algorithm>

#include "transforms/transforms.h"

namespace faucet {
namespace {

enum class FilterOp { kEq, kNe, kExists, kIn, kNotIn };

class Filter : public Transform {
 public:
  Filter(const std::string& path, FilterOp op, std::vector<std::string> values)
      : op_(op), values_(std::move(values)) {
    size_t dot = path.find('.');
    if (dot != std::string::npos &&
        (path.compare(0, dot, "before") == 0 || path.compare(0, dot, "after") == 0)) {
      image_ = path.substr(0, dot);
      field_ = path.substr(dot + 1);
    } else {
      field_ = path;
    }
  }

  Status Apply(Page& page) override {
    auto drop = [&](const Change& c) { return !Matches(Lookup(c)); };
    page.changes.erase(std::remove_if(page.changes.begin(), page.changes.end(), drop),
                       page.changes.end());
    return Status::Ok();
  }

 private:
  // The value at the path, or nullopt when absent or null.
  std::optional<std::string> Lookup(const Change& c) const {
    if (image_.empty()) {
      if (field_ == "op") return std::string(1, ChangeOpCode(c.op));
      if (field_ == "schema") return c.relation->schema;
      if (field_ == "table") return c.relation->name;
    }
    int index = c.relation->FindColumn(field_);
    if (index < 0) return std::nullopt;
    const std::optional<Row>* row = &c.after;
    if (image_ == "before" || (image_.empty() && !c.after)) row = &c.before;
    if (!*row || static_cast<size_t>(index) >= (*row)->size()) return std::nullopt;
    const Cell& cell = (**row)[index];
    if (cell.state != CellState::kValue) return std::nullopt;
    return cell.text;
  }

  bool Matches(const std::optional<std::string>& v) const {
    bool in = v && std::find(values_.begin(), values_.end(), *v) != values_.end();
    switch (op_) {
      case FilterOp::kExists:
        return v.has_value();
      case FilterOp::kEq:
      case FilterOp::kIn:
        return in;
      case FilterOp::kNe:
      case FilterOp::kNotIn:
        return !in;
    }
    return false;
  }

  std::string image_;
  std::string field_;
  FilterOp op_;
  std::vector<std::string> values_;
};

}  // namespace

Result<std::unique_ptr<Transform>> MakeFilter(const config::ConnectorSpec& spec) {
  const config::Block& cfg = spec.config;
  ASSIGN_OR_RETURN(std::string path, cfg.RequiredString("path"));
  ASSIGN_OR_RETURN(std::string op_name,
                   cfg.Enum("op", "eq", {"eq", "ne", "exists", "in", "not_in"}));
  FilterOp op = op_name == "eq"       ? FilterOp::kEq
                : op_name == "ne"     ? FilterOp::kNe
                : op_name == "in"     ? FilterOp::kIn
                : op_name == "not_in" ? FilterOp::kNotIn
                                      : FilterOp::kExists;
  std::vector<std::string> values;
  if (op == FilterOp::kIn || op == FilterOp::kNotIn) {
    ASSIGN_OR_RETURN(values, cfg.StringList("value"));
    if (values.empty()) return cfg.Error("value", "expected a non-empty list for op " + op_name);
  } else if (op != FilterOp::kExists) {
    ASSIGN_OR_RETURN(std::string v, cfg.RequiredString("value"));
    values.push_back(v);
  }
  return std::unique_ptr<Transform>(new Filter(path, op, std::move(values)));
}

}  // namespace faucet
