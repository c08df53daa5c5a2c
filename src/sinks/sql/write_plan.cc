#include "sinks/sql/write_plan.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>

#include "core/json_render.h"

namespace faucet::sql {
namespace {

// Key values in messages are cut: a message is for a human, and a key may be a long text.
constexpr size_t kShownValueBytes = 64;

void AppendShown(const Cell* cell, std::string& out) {
  if (cell == nullptr) {
    out += "(missing)";
  } else if (cell->state == CellState::kNull) {
    out += "NULL";
  } else if (cell->state == CellState::kUnchangedToast) {
    out += "(unchanged TOAST)";
  } else if (cell->text.size() > kShownValueBytes) {
    out.append(cell->text, 0, kShownValueBytes);
    out += "...";
  } else {
    out += cell->text;
  }
}

}  // namespace

Result<std::unique_ptr<WritePlan>> WritePlan::Make(const TargetTable& target,
                                                   const WriteSpec& spec) {
  bool upsert =
      spec.mode == WriteMode::kUpsert || (spec.mode == WriteMode::kOverwrite && !spec.key.empty());
  Mode mode = Mode::kInsert;
  if (upsert) mode = Mode::kUpsert;
  if (spec.mode == WriteMode::kDelete) mode = Mode::kDelete;
  int json_column = -1;
  if (!spec.auto_map) {
    mode = Mode::kJson;
    json_column = target.Find(spec.json_column);
    if (json_column < 0) {
      return InvalidArgument("table " + target.display_name + " has no column " + spec.json_column +
                             " (column_mapping's JSON column)");
    }
  }
  std::vector<int> key;
  if (!spec.key.empty()) {
    ASSIGN_OR_RETURN(key, ResolveKey(target, spec.key, mode == Mode::kUpsert));
  }
  return std::unique_ptr<WritePlan>(new WritePlan(target, spec, mode, std::move(key), json_column));
}

WritePlan::WritePlan(const TargetTable& target, const WriteSpec& spec, Mode mode,
                     std::vector<int> key, int json_column)
    : target_(target),
      spec_(spec),
      mode_(mode),
      key_(std::move(key)),
      json_column_(json_column),
      width_(target.columns.size()),
      by_key_(64, KeyHash{this}, KeyEq{this}) {}

size_t WritePlan::KeyHash::operator()(uint32_t row) const {
  size_t h = 0;
  const Cell* const* cells = &plan->cells_[static_cast<size_t>(row) * plan->width_];
  for (int k : plan->key_) {
    h = h * 1000003 ^ std::hash<std::string_view>()(cells[k]->text);
  }
  return h;
}

bool WritePlan::KeyEq::operator()(uint32_t a, uint32_t b) const {
  const Cell* const* ca = &plan->cells_[static_cast<size_t>(a) * plan->width_];
  const Cell* const* cb = &plan->cells_[static_cast<size_t>(b) * plan->width_];
  for (int k : plan->key_) {
    if (ca[k]->text != cb[k]->text) return false;
  }
  return true;
}

const WritePlan::Mapping& WritePlan::MappingFor(const RelationPtr& relation) {
  auto it = mappings_.find(relation.get());
  if (it != mappings_.end()) return it->second;

  Mapping m;
  m.relation = relation;
  const Relation& rel = *relation;
  std::string marker;
  if (spec_.delete_marker) {
    marker = spec_.delete_marker->field;
    m.marker_values = &spec_.delete_marker->values;
  } else if (target_.Find(kUnwrapMarker) < 0) {
    marker = kUnwrapMarker;
    if (mode_ == Mode::kUpsert) m.marker_values = &implicit_marker_values_;
  }
  m.marker = marker.empty() ? -1 : rel.FindColumn(marker);

  m.target_of.assign(rel.columns.size(), -1);
  for (size_t j = 0; j < rel.columns.size(); ++j) {
    if (static_cast<int>(j) == m.marker) {
      m.target_of[j] = -2;
      continue;
    }
    const std::string& name = rel.columns[j].name;
    int t = target_.Find(name);
    // A case-insensitive match yields to a row column of exactly the target's name.
    if (t >= 0 && target_.columns[t].name != name && rel.FindColumn(target_.columns[t].name) >= 0) {
      t = -1;
    }
    m.target_of[j] = t;
  }
  m.key_source.assign(key_.size(), -1);
  for (size_t k = 0; k < key_.size(); ++k) {
    for (size_t j = 0; j < m.target_of.size(); ++j) {
      if (m.target_of[j] == key_[k]) {
        m.key_source[k] = static_cast<int>(j);
        break;
      }
    }
  }
  return mappings_.emplace(relation.get(), std::move(m)).first->second;
}

void WritePlan::Quarantine(const RelationPtr& relation, std::vector<QuarantineRule> rules) {
  MappingFor(relation);
  mappings_.at(relation.get()).quarantine = std::move(rules);
}

const QuarantineRule* WritePlan::Quarantined(const Mapping& m, const Row& row) const {
  for (const QuarantineRule& rule : m.quarantine) {
    if (rule.source < 0) return &rule;
    if (static_cast<size_t>(rule.source) < row.size() &&
        row[rule.source].state == CellState::kValue) {
      return &rule;
    }
  }
  return nullptr;
}

bool WritePlan::IsDeleteMarked(const Mapping& m, const Row& row) const {
  if (m.marker < 0 || m.marker_values == nullptr) return false;
  if (static_cast<size_t>(m.marker) >= row.size()) return false;
  const Cell& cell = row[m.marker];
  if (cell.state != CellState::kValue) return false;
  return std::find(m.marker_values->begin(), m.marker_values->end(), cell.text) !=
         m.marker_values->end();
}

bool WritePlan::KeyDiffers(const Mapping& m, const Row& a, const Row& b) const {
  for (int src : m.key_source) {
    if (src < 0 || static_cast<size_t>(src) >= a.size() || static_cast<size_t>(src) >= b.size()) {
      continue;
    }
    if (a[src].state != b[src].state || a[src].text != b[src].text) return true;
  }
  return false;
}

std::string WritePlan::KeyText(const Mapping& m, const Row& row) const {
  std::string names, values;
  for (size_t k = 0; k < key_.size(); ++k) {
    names += (k ? ", " : "") + target_.columns[key_[k]].name;
    if (k) values += ", ";
    int src = m.key_source[k];
    AppendShown(src >= 0 && static_cast<size_t>(src) < row.size() ? &row[src] : nullptr, values);
  }
  return "(" + names + ")=(" + values + ")";
}

void WritePlan::Reject(size_t change, const Mapping& m, const Row& row, const std::string& column,
                       const std::string& message) {
  std::string text = "table " + target_.display_name;
  text += key_.empty() ? ", row " + std::to_string(change) + " of the page"
                       : ", key " + KeyText(m, row);
  if (!column.empty()) text += ", column " + column;
  text += ": " + message;
  rejected_.push_back({change, InvalidArgument(std::move(text))});
}

void WritePlan::Add(RowAction action, size_t change, const Mapping& m, const Row& row) {
  bool keyed = action != RowAction::kInsert;
  if (keyed) {
    for (size_t k = 0; k < key_.size(); ++k) {
      const std::string& column = target_.columns[key_[k]].name;
      int src = m.key_source[k];
      if (src < 0 || static_cast<size_t>(src) >= row.size()) {
        return Reject(change, m, row, column, "the key column is missing from the row");
      }
      if (row[src].state == CellState::kNull) {
        return Reject(change, m, row, column, "the key column is null");
      }
      if (row[src].state == CellState::kUnchangedToast) {
        return Reject(change, m, row, column, "the key column is an unchanged TOAST value");
      }
    }
  }

  const uint32_t r = static_cast<uint32_t>(rows_.size());
  const size_t base = cells_.size();
  cells_.resize(base + width_, nullptr);
  bool any = false;
  if (action == RowAction::kDelete) {
    for (size_t k = 0; k < key_.size(); ++k) cells_[base + key_[k]] = &row[m.key_source[k]];
    any = true;
  } else {
    size_t n = std::min(row.size(), m.target_of.size());
    for (size_t j = 0; j < n; ++j) {
      int t = m.target_of[j];
      if (t < 0 || row[j].state == CellState::kUnchangedToast) continue;
      cells_[base + t] = &row[j];
      any = true;
    }
  }
  if (!any) {
    cells_.resize(base);
    return Reject(change, m, row, "", "no column of the row is a column of the table");
  }
  rows_.push_back({action, 0, change});
  if (!keyed) return;

  auto [it, inserted] = by_key_.insert(r);
  if (inserted) return;
  // The key already has a row in this page: fold this change into it, in page order.
  PlannedRow& earlier = rows_[*it];
  const Cell** old_cells = &cells_[static_cast<size_t>(*it) * width_];
  const Cell** new_cells = &cells_[base];
  if (action == RowAction::kDelete) {
    std::fill(old_cells, old_cells + width_, nullptr);
    for (int k : key_) old_cells[k] = new_cells[k];
  } else if (earlier.action == RowAction::kDelete) {
    std::copy(new_cells, new_cells + width_, old_cells);
  } else {
    // A column this change does not write (absent or unchanged TOAST) keeps the value an
    // earlier change of the page gave it.
    for (size_t c = 0; c < width_; ++c) {
      if (new_cells[c] != nullptr) old_cells[c] = new_cells[c];
    }
  }
  earlier.action = action;
  earlier.change = change;
  rows_.pop_back();
  cells_.resize(base);
}

void WritePlan::Build(const Page& page) {
  rows_.clear();
  cells_.clear();
  by_key_.clear();
  rejected_.clear();
  if (mode_ == Mode::kJson && json_.size() < page.changes.size()) {
    json_.resize(page.changes.size());
  }

  for (size_t i = 0; i < page.changes.size(); ++i) {
    const Change& c = page.changes[i];
    if (c.op == ChangeOp::kTruncate) {
      spdlog::warn("table {}: a truncate of {}.{} is not applied (truncates are skipped)",
                   target_.display_name, c.relation->schema, c.relation->name);
      continue;
    }
    if (mode_ == Mode::kJson) {
      Cell& doc = json_[i];
      doc.state = CellState::kValue;
      doc.text.clear();
      AppendChangeJson(c, doc.text);
      size_t base = cells_.size();
      cells_.resize(base + width_, nullptr);
      cells_[base + json_column_] = &doc;
      rows_.push_back({RowAction::kInsert, 0, i});
      continue;
    }
    const Mapping& m = MappingFor(c.relation);
    if (!m.quarantine.empty() && c.after && c.op != ChangeOp::kDelete &&
        !(c.op == ChangeOp::kRead && IsDeleteMarked(m, *c.after))) {
      if (const QuarantineRule* rule = Quarantined(m, *c.after)) {
        Reject(i, m, *c.after, rule->column, rule->message);
        continue;
      }
    }
    switch (mode_) {
      case Mode::kInsert:
        if (c.op == ChangeOp::kDelete) {
          if (warned_.insert("\x01raw delete").second) {
            spdlog::warn("table {}: write_mode {} does not apply deletes; skipped",
                         target_.display_name, WriteModeName(spec_.mode));
          }
        } else if (c.after) {
          Add(RowAction::kInsert, i, m, *c.after);
        }
        break;
      case Mode::kDelete: {
        const std::optional<Row>& row = c.op == ChangeOp::kDelete || !c.after ? c.before : c.after;
        if (row) {
          Add(RowAction::kDelete, i, m, *row);
        } else {
          Reject(i, m, {}, "", "the change has no row image to take the key from");
        }
        break;
      }
      case Mode::kUpsert:
        if (c.op == ChangeOp::kDelete) {
          if (c.before) {
            Add(RowAction::kDelete, i, m, *c.before);
          } else {
            Reject(i, m, {}, "", "a delete without a before image has no key");
          }
        } else if (c.after) {
          if (c.op == ChangeOp::kRead && IsDeleteMarked(m, *c.after)) {
            Add(RowAction::kDelete, i, m, *c.after);
            break;
          }
          if (c.op == ChangeOp::kUpdate && c.before && KeyDiffers(m, *c.before, *c.after)) {
            Add(RowAction::kDelete, i, m, *c.before);
          }
          Add(RowAction::kUpsert, i, m, *c.after);
        }
        break;
      case Mode::kJson:
        break;
    }
  }
  Finalize();
}

void WritePlan::Finalize() {
  order_.clear();
  for (uint32_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].action == RowAction::kDelete) order_.push_back(r);
  }
  deletes_ = order_.size();
  for (uint32_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].action != RowAction::kDelete) order_.push_back(r);
  }

  groups_.clear();
  group_signatures_.clear();
  for (size_t pos = deletes_; pos < order_.size(); ++pos) {
    const uint32_t r = order_[pos];
    const Cell* const* cells = &cells_[static_cast<size_t>(r) * width_];
    signature_.assign(width_, '0');
    for (size_t c = 0; c < width_; ++c) {
      if (cells[c] != nullptr) signature_[c] = '1';
    }
    size_t g = 0;
    while (g < group_signatures_.size() && group_signatures_[g] != signature_) ++g;
    if (g == group_signatures_.size()) {
      group_signatures_.push_back(signature_);
      std::vector<int> columns;
      for (size_t c = 0; c < width_; ++c) {
        if (cells[c] != nullptr) columns.push_back(static_cast<int>(c));
      }
      groups_.push_back(std::move(columns));
    }
    rows_[r].group = static_cast<uint32_t>(g);
  }
}

std::string WritePlan::RowMessage(size_t r, std::string_view column,
                                  std::string_view message) const {
  std::string text = "table " + target_.display_name;
  bool has_key = !key_.empty();
  for (int k : key_) has_key = has_key && cell(r, k) != nullptr;
  if (has_key) {
    std::string names, values;
    for (size_t k = 0; k < key_.size(); ++k) {
      names += (k ? ", " : "") + target_.columns[key_[k]].name;
      if (k) values += ", ";
      AppendShown(cell(r, key_[k]), values);
    }
    text += ", key (" + names + ")=(" + values + ")";
  } else {
    text += ", row " + std::to_string(row(r).change) + " of the page";
  }
  if (!column.empty()) text.append(", column ").append(column);
  text.append(": ").append(message);
  return text;
}

}  // namespace faucet::sql
