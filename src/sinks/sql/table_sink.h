// TableSink: what the postgres, sqlite and mysql sinks share: the page -> plan -> one
// transaction flow, row isolation, the commit token and the overwrite lifecycle. A subclass
// connects and reads the target in Open, then implements the database-specific hooks.
//
// Sinks writing to one destination share its sessions (session_pool.h): a page takes one for
// its transaction and gives it back, a bulk load keeps its own until it ends.
//
// Every Write* call writes the page in one transaction and commits it before returning, so the
// page is durable once the call returns ok (Flush has nothing left to do):
//   Write            all rows or none; the first refused row fails the page with an error
//                    naming the table, the key and the column.
//   WriteIsolating   refused rows are left out and reported; the rest is committed.
//   WriteIdempotent  as Write, plus the commit token in the same transaction.
// Before a page is planned, each source relation it brings is checked against the target once
// and the schema policy applied (sinks/sql/schema_drift.h): evolve alters the table being
// written (AlterTarget) before the page's transaction begins.
// Overwrite mode writes into a new table created before the first page; Finish(true) swaps it
// in, Finish(false) drops it and leaves the old table as it was.
//
// The exception is a bulk load (BeginBulkLoad) into a sink that implements the Bulk* hooks:
// its Writes go into one transaction that Flush commits and Finish(false) rolls back. The load
// ends at Flush, or at a page that deletes (written the usual way after committing the load);
// a sink that answers false from BulkStart (e.g. a keyed target already holding rows) writes
// every page the usual way.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/sink.h"
#include "sinks/sql/apply_isolating.h"
#include "sinks/sql/schema_drift.h"
#include "sinks/sql/target_table.h"
#include "sinks/sql/write_plan.h"
#include "sinks/sql/write_spec.h"

namespace faucet::sql {

// The watermark table of the atomic-watermark delivery (spec §2.4), in every SQL sink.
inline constexpr char kCommitTokenTable[] = "_faucet_commit_token";

class TableSink : public Sink {
 public:
  // Connects and reads the target table (OpenTable). An overwrite cannot continue from a
  // bookmark: it would swap in a table holding only the rows after it.
  // Tokens in every mode but overwrite (WriteIdempotent refuses it); upsert and delete write
  // by key; rows written as columns (auto_map, not delete mode) have a schema, which evolves.
  SinkCapabilities Capabilities() const final;
  void SetSchemaPolicy(const SchemaPolicy& policy) final { policy_ = policy; }
  Status Open(bool resuming) final;
  Status Write(const Page& page) final;
  Status WriteIsolating(const Page& page, std::vector<RejectedRow>* rejected) final;
  Status WriteIdempotent(const Page& page, const std::string& scope,
                         const std::string& token) final;
  // Works before Open (the pipeline asks first, to re-anchor the source).
  Result<std::optional<std::string>> CommittedToken(const std::string& scope) final;
  // One transaction already: `atomic` changes nothing (a redone load writes over the first).
  void BeginBulkLoad(const AtomicLoad& atomic) final {
    (void)atomic;
    bulk_ = Bulk::kRequested;
  }
  // Every Write* commits before it returns: only a bulk load is left to commit.
  Status Flush() final;
  Status Finish(bool completed) final;

 protected:
  explicit TableSink(WriteSpec spec) : spec_(std::move(spec)) {}

  // Connects and reads the target table from the catalog, then calls SetTarget.
  virtual Status OpenTable() = 0;
  // Called by OpenTable (and AlterTarget) once the target table is read: checks the spec
  // against it.
  Status SetTarget(TargetTable target);
  const TargetTable& target() const { return target_; }
  // True once SetTarget succeeded (Open ran): CommittedToken may come before it.
  bool has_target() const { return plan_ != nullptr; }
  // REQUIRES: has_target().
  const WritePlan& plan() const { return *plan_; }

  // Sessions. The subclass writes on a session of its destination's pool (session_pool.h):
  // every public call holds one from its start to its end (Hold, which takes one unless one is
  // held; Release gives it back), and a bulk load keeps it from BulkStart to its end. Hold
  // opens a new session when the pool has none idle; a lost one is closed when given back.
  virtual Status Hold() = 0;
  virtual void Release() = 0;

  // The hooks, all on the held session. Begin and Commit/Rollback frame one page.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;  // best effort: the transaction is abandoned either way
  // Applies plan rows [begin, end) inside the open transaction, all or nothing (see
  // RangeResult), with errors that are the database's own: the caller adds table, key, column.
  virtual RangeResult ApplyRange(const WritePlan& plan, size_t begin, size_t end) = 0;
  // The token stored for `scope` (ScopeKey-fitted), nullopt when none or no token table.
  virtual Result<std::optional<std::string>> ReadToken(const std::string& scope) = 0;
  // Creates the commit token table if needed; called outside a page's transaction.
  virtual Status EnsureTokenTable() = 0;
  // Upserts (scope, token) inside the open transaction; `scope` already fits the key column.
  virtual Status StoreToken(const std::string& scope, const std::string& token) = 0;
  // The width of the token table's scope column (for ScopeKey).
  virtual size_t ScopeWidth() const = 0;
  // Schema evolution. TypeFor: the type a column for `source` gets (ADD COLUMN, widening), as
  // the database spells it. AlterTarget: applies `changes` to the table being written (idempotent
  // where the database allows: ADD COLUMN IF NOT EXISTS), outside a page's transaction, then
  // reads the table again and calls SetTarget; a change the database cannot make is an error
  // naming it.
  virtual std::string TypeFor(const Column& source) const = 0;
  virtual Status AlterTarget(const std::vector<SchemaChange>& changes) = 0;
  // Overwrite: create "{table}__faucet_new" like the target (dropping a leftover of an earlier
  // run) and direct writes to it; swap it in atomically; or drop it.
  virtual Status CreateOverwriteTable() = 0;
  virtual Status SwapOverwriteTable() = 0;
  virtual Status DropOverwriteTable() = 0;
  // Bulk load: BulkStart opens the load's transaction, or answers false when the target cannot
  // take the load (nothing is then open); BulkAppend adds the plan's rows, all inserts or
  // upserts of new keys, to it; BulkCommit commits it; BulkRollback abandons it (best effort).
  // The defaults decline: every page gets its own transaction.
  virtual Result<bool> BulkStart(const WritePlan& plan) {
    (void)plan;
    return false;
  }
  virtual Status BulkAppend(const WritePlan& plan) {
    (void)plan;
    return Internal("bulk load not supported");
  }
  virtual Status BulkCommit() { return Status::Ok(); }
  virtual void BulkRollback() {}
  // A row a bulk load's target refused, by its place in the load (0-based; the row itself is
  // gone): BulkLoadRefusal (core/sink.h) naming the table.
  Status BulkRefusal(std::optional<size_t> row, const std::string& column,
                     const Status& error) const {
    return BulkLoadRefusal("table " + target_.display_name, row, column, error);
  }

 private:
  // Writes the page into the bulk load when one is requested or open; false when the page
  // must take the usual path.
  Result<bool> WriteBulk(const WritePlan& plan);
  // Applies the schema policy to the relations of `page` not checked yet.
  Status ResolveDrift(const Page& page);
  // Applies it to one relation; true when it evolved the table (which has a new plan now).
  // `evolved`: the relations this page evolved the table for already.
  Result<bool> CheckRelation(const RelationPtr& relation, std::set<const Relation*>& evolved);
  Status WritePage(const Page& page, const std::string* scope, const std::string* token,
                   std::vector<RejectedRow>* rejected);
  // Runs `call` holding a session, given back after it unless a bulk load is open.
  template <typename Call>
  Status Holding(Call call);

  WriteSpec spec_;
  SchemaPolicy policy_;
  TargetTable target_;
  std::unique_ptr<WritePlan> plan_;
  // Relations checked against the target (kept alive, so an address is never reused).
  std::unordered_map<const Relation*, RelationPtr> checked_;
  bool overwrite_created_ = false;
  bool token_table_ready_ = false;
  enum class Bulk { kOff, kRequested, kOpen };
  Bulk bulk_ = Bulk::kOff;
};

}  // namespace faucet::sql
