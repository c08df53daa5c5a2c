// WritePlan: turns a page into the rows a SQL sink applies, once for all SQL sinks.
//
// Input changes are flat rows (op kRead: snapshot rows, or cdc_unwrap output carrying a marker
// column) or raw CDC changes (kInsert/kUpdate/kDelete/kTruncate). By write mode:
//
//   append, overwrite without key  every row is inserted: the `after` image of inserts, updates
//                                  and flat rows. Raw deletes and truncates are skipped (warned).
//   upsert, overwrite with key     the page is reduced to one final action per key, applied in
//                                  page order: insert/update/flat row = upsert of `after`; an
//                                  update that changes the key = delete of the old key, then
//                                  upsert of the new one; delete = delete of `before`'s key; a
//                                  flat row whose marker is a delete value = delete. So insert,
//                                  delete, insert leaves the last values; insert, delete leaves
//                                  nothing; update after insert leaves the updated values.
//   delete                         every row's key is deleted.
//   JSON mapping (not auto_map)    every change but a truncate is inserted whole, rendered as one
//                                  JSON document (core/json_render.h) into the JSON column.
//
// Column mapping: a row column maps by name to the target column of that name (TargetTable::
// Find); a row column the target lacks is not written (schema drift, which the sink's policy
// judges first: sinks/sql/schema_drift.h); a target column the row lacks is not written. The delete
// marker column (delete_marker.field, or cdc_unwrap's
// "__op" when the target has no such column) is never written as data. Without delete_marker,
// an upsert still treats "__op" = "d" as a delete: upserting the before image of a deleted row
// would resurrect it (the reference's defect, spec §9).
//
// Unchanged TOAST: a kUnchangedToast cell is never written, so the destination keeps its value.
// When an earlier change of the same key in the page carried a value for that column, the
// reduced row takes that value instead. Rows are grouped by the set of columns they write
// (groups()), so a sink writes each group with its own column list and one row's unchanged
// column can never be overwritten because another row of the page carries it.
//
// Rows come out deletes first, then inserts/upserts, each in page order of first appearance of
// the key. A change whose key is missing, null or unchanged-TOAST, a delete without a before
// image, and a row with no column of the target are refused: listed in rejected(), not planned.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/page.h"
#include "core/sink.h"
#include "sinks/sql/schema_drift.h"
#include "sinks/sql/target_table.h"
#include "sinks/sql/write_spec.h"

namespace faucet::sql {

enum class RowAction : uint8_t { kInsert, kUpsert, kDelete };

struct PlannedRow {
  RowAction action = RowAction::kInsert;
  uint32_t group = 0;  // kInsert/kUpsert: index into WritePlan::groups(); 0 for kDelete
  size_t change = 0;   // index in page.changes of the last change that shaped this row
};

class WritePlan {
 public:
  // Checks `spec` against `target` (key columns and, for upsert, a unique index on them; the
  // JSON column) and returns a plan that borrows `target`, which must outlive it.
  static Result<std::unique_ptr<WritePlan>> Make(const TargetTable& target, const WriteSpec& spec);
  // The key index refers back to the plan.
  WritePlan(const WritePlan&) = delete;
  WritePlan& operator=(const WritePlan&) = delete;

  // Per column of `relation`: the target column it is written to, -1 when the target lacks it,
  // -2 when it is never written (the delete marker).
  const std::vector<int>& TargetOf(const RelationPtr& relation) {
    return MappingFor(relation).target_of;
  }
  // From the next Build on, changes of `relation` that `rules` select are refused (rejected()).
  void Quarantine(const RelationPtr& relation, std::vector<QuarantineRule> rules);

  // Replaces the plan with the one for `page`. Cells point into `page` (and into the plan, for
  // rendered JSON): `page` must outlive every use of the plan until the next Build.
  void Build(const Page& page);

  size_t size() const { return order_.size(); }
  const PlannedRow& row(size_t r) const { return rows_[order_[r]]; }
  // The cell to write into target column `column` for row `r`, or nullptr when the row does not
  // write that column. Never kUnchangedToast. A kDelete row has only its key cells.
  const Cell* cell(size_t r, size_t column) const {
    return cells_[static_cast<size_t>(order_[r]) * width_ + column];
  }
  // Number of kDelete rows: rows [0, deletes()) are deletes, the rest inserts/upserts.
  size_t deletes() const { return deletes_; }
  // For each group, the target column indices its rows write, ascending.
  const std::vector<std::vector<int>>& groups() const { return groups_; }
  // True when rows are upserts and deletes by key (upsert, delete, overwrite with a key), false
  // when every row is an insert (append, overwrite without key, JSON mapping).
  bool keyed() const { return mode_ == Mode::kUpsert || mode_ == Mode::kDelete; }
  // Target column indices of the key (empty when no key is configured).
  const std::vector<int>& key() const { return key_; }
  const TargetTable& target() const { return target_; }
  // Changes refused while planning, in page order, with errors naming table, key and column.
  const std::vector<Sink::RejectedRow>& rejected() const { return rejected_; }

  // "table <t>, key (id)=(7), column <column>: <message>" (", column ..." only when `column` is
  // not empty; "row <n> of the page" instead of the key when the plan has no key).
  std::string RowMessage(size_t r, std::string_view column, std::string_view message) const;

 private:
  enum class Mode { kInsert, kUpsert, kDelete, kJson };

  // How the columns of one source relation map to the target.
  struct Mapping {
    RelationPtr relation;         // kept alive so that its address is never reused as a key
    std::vector<int> target_of;   // per relation column: target column index or -1
    std::vector<int> key_source;  // per key column: relation column index or -1
    int marker = -1;              // relation column holding the delete marker, or -1
    const std::vector<std::string>* marker_values = nullptr;
    std::vector<QuarantineRule> quarantine;
  };

  // Hash and equality of internal rows by their key cells, for the per-key reduction.
  struct KeyHash {
    const WritePlan* plan;
    size_t operator()(uint32_t row) const;
  };
  struct KeyEq {
    const WritePlan* plan;
    bool operator()(uint32_t a, uint32_t b) const;
  };

  WritePlan(const TargetTable& target, const WriteSpec& spec, Mode mode, std::vector<int> key,
            int json_column);

  const Mapping& MappingFor(const RelationPtr& relation);
  bool IsDeleteMarked(const Mapping& m, const Row& row) const;
  // The first quarantine rule of `m` that `row` (an inserted or upserted image) falls under.
  const QuarantineRule* Quarantined(const Mapping& m, const Row& row) const;
  bool KeyDiffers(const Mapping& m, const Row& a, const Row& b) const;
  // Adds `row` of change `change` as `action`; keyed actions merge into the key's earlier row.
  void Add(RowAction action, size_t change, const Mapping& m, const Row& row);
  void Reject(size_t change, const Mapping& m, const Row& row, const std::string& column,
              const std::string& message);
  std::string KeyText(const Mapping& m, const Row& row) const;
  void Finalize();

  const TargetTable& target_;
  WriteSpec spec_;
  Mode mode_;
  std::vector<int> key_;
  int json_column_;
  size_t width_;
  std::vector<std::string> implicit_marker_values_ = {"d"};

  std::unordered_map<const Relation*, Mapping> mappings_;
  std::set<std::string> warned_;

  // Per page, reused across pages.
  std::vector<PlannedRow> rows_;
  std::vector<const Cell*> cells_;  // width_ per internal row
  std::vector<uint32_t> order_;     // plan position -> internal row
  std::unordered_set<uint32_t, KeyHash, KeyEq> by_key_;
  std::vector<Cell> json_;  // rendered JSON documents, one per change
  std::vector<std::vector<int>> groups_;
  std::vector<std::string> group_signatures_;
  std::string signature_;
  size_t deletes_ = 0;
  std::vector<Sink::RejectedRow> rejected_;
};

}  // namespace faucet::sql
