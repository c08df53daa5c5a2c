#include "sinks/sql/table_sink.h"

#include <spdlog/spdlog.h>

#include <set>

namespace faucet::sql {

Status TableSink::SetTarget(TargetTable target) {
  target_ = std::move(target);
  ASSIGN_OR_RETURN(plan_, WritePlan::Make(target_, spec_));
  checked_.clear();
  return Status::Ok();
}

namespace {

std::string Describe(const SchemaChange& change) {
  switch (change.kind) {
    case SchemaChange::kAddColumn:
      return "added column " + change.column + " " + change.type;
    case SchemaChange::kWidenColumn:
      return "widened column " + change.column + " to " + change.type;
    case SchemaChange::kDropNotNull:
      return "dropped NOT NULL from column " + change.column;
  }
  return "";
}

}  // namespace

Status TableSink::ResolveDrift(const Page& page) {
  if (!spec_.WritesColumns()) return Status::Ok();
  std::set<const Relation*> evolved;
  bool altered = true;
  while (altered) {  // an evolved table has a new plan: its relations are checked again
    altered = false;
    const Relation* previous = nullptr;  // a page's changes mostly share one relation
    for (const Change& c : page.changes) {
      if (c.op == ChangeOp::kTruncate || !c.relation || c.relation.get() == previous) continue;
      previous = c.relation.get();
      if (checked_.count(previous)) continue;
      ASSIGN_OR_RETURN(altered, CheckRelation(c.relation, evolved));
      if (altered) break;
    }
  }
  return Status::Ok();
}

Result<bool> TableSink::CheckRelation(const RelationPtr& relation,
                                      std::set<const Relation*>& evolved) {
  auto type_for = [this](const Column& column) { return TypeFor(column); };
  std::vector<Drift> drifts = DiffSchema(*relation, plan_->TargetOf(relation), target_, type_for);
  DriftDecision decision = Decide(drifts, *relation, target_, policy_, type_for);
  if (decision.error) return *decision.error;
  for (const std::string& w : decision.warnings) {
    if (policy_.on_drift == OnDrift::kIgnore) {
      spdlog::debug("{}", w);
    } else {
      spdlog::warn("{}", w);
    }
  }
  if (decision.changes.empty()) {
    if (!decision.quarantine.empty()) plan_->Quarantine(relation, std::move(decision.quarantine));
    checked_.emplace(relation.get(), relation);
    return false;
  }
  if (!evolved.insert(relation.get()).second) {
    return Internal("table " + target_.display_name +
                    ": the destination still differs from the source after " +
                    Describe(decision.changes.front()));
  }
  if (bulk_ == Bulk::kOpen) {
    // Not within a load's transaction (its COPY may be in progress): the caller redoes the
    // load, whose first page then evolves the table before the load begins.
    bulk_ = Bulk::kOff;
    BulkRollback();
    return Unavailable("table " + target_.display_name +
                       ": the source's schema changed during a bulk load; the load is abandoned");
  }
  RETURN_IF_ERROR(AlterTarget(decision.changes)
                      .WithContext("table " + target_.display_name + ": on_drift: evolve"));
  for (const SchemaChange& change : decision.changes) {
    spdlog::info("table {}: {} (on_drift: evolve)", target_.display_name, Describe(change));
  }
  return true;
}

SinkCapabilities TableSink::Capabilities() const {
  SinkCapabilities c;
  c.atomic_watermark = spec_.mode != WriteMode::kOverwrite;
  c.many_scopes = c.atomic_watermark;  // a row of _faucet_commit_token per scope
  c.dedups_by_key = spec_.mode == WriteMode::kUpsert || spec_.mode == WriteMode::kDelete;
  c.overwrites = spec_.mode == WriteMode::kOverwrite;
  c.has_schema = spec_.WritesColumns();
  c.evolves_schema = c.has_schema;
  return c;
}

template <typename Call>
Status TableSink::Holding(Call call) {
  Status status = Hold();  // given back on failure too: it may be a broken session
  if (status.ok()) status = call();
  if (bulk_ != Bulk::kOpen) Release();
  return status;
}

Result<std::optional<std::string>> TableSink::CommittedToken(const std::string& scope) {
  std::optional<std::string> token;
  RETURN_IF_ERROR(Holding([&]() -> Status {
    ASSIGN_OR_RETURN(token, ReadToken(ScopeKey(scope, ScopeWidth())));
    return Status::Ok();
  }));
  return token;
}

Status TableSink::Open(bool resuming) {
  if (spec_.mode == WriteMode::kOverwrite && resuming) {
    return FailedPrecondition(
        "write_mode overwrite rewrites the whole table and cannot resume from a bookmark; "
        "delete the pipeline's state to run it again from the start");
  }
  return Holding([&] { return OpenTable(); });
}

Status TableSink::Write(const Page& page) {
  return Holding([&] { return WritePage(page, nullptr, nullptr, nullptr); });
}

Status TableSink::WriteIsolating(const Page& page, std::vector<RejectedRow>* rejected) {
  std::vector<RejectedRow> local;
  return Holding(
      [&] { return WritePage(page, nullptr, nullptr, rejected != nullptr ? rejected : &local); });
}

Status TableSink::WriteIdempotent(const Page& page, const std::string& scope,
                                  const std::string& token) {
  // The token would commit while the rows wait in the unswapped table: a crash then would
  // skip pages that never reached the target.
  if (spec_.mode == WriteMode::kOverwrite) {
    return FailedPrecondition("write_mode overwrite cannot commit tokens (exactly-once)");
  }
  const std::string key = ScopeKey(scope, ScopeWidth());
  return Holding([&] { return WritePage(page, &key, &token, nullptr); });
}

Status TableSink::WritePage(const Page& page, const std::string* scope, const std::string* token,
                            std::vector<RejectedRow>* rejected) {
  if (plan_ == nullptr) return FailedPrecondition("sink used before a successful Open");
  if (spec_.mode == WriteMode::kOverwrite && !overwrite_created_) {
    RETURN_IF_ERROR(CreateOverwriteTable());
    overwrite_created_ = true;
  }
  if (token != nullptr && !token_table_ready_) {
    RETURN_IF_ERROR(EnsureTokenTable());
    token_table_ready_ = true;
  }

  RETURN_IF_ERROR(ResolveDrift(page));
  WritePlan& plan = *plan_;
  plan.Build(page);
  if (!plan.rejected().empty()) {
    if (rejected == nullptr) return plan.rejected().front().error;
    rejected->insert(rejected->end(), plan.rejected().begin(), plan.rejected().end());
  }
  if (plan.size() == 0 && token == nullptr) return Status::Ok();
  if (bulk_ != Bulk::kOff && token == nullptr && rejected == nullptr) {
    ASSIGN_OR_RETURN(bool bulk, WriteBulk(plan));
    if (bulk) return Status::Ok();
  }

  RETURN_IF_ERROR(Begin());
  std::vector<FailedRow> failed;
  Status st = ApplyIsolating(
      plan.size(), [&](size_t begin, size_t end) { return ApplyRange(plan, begin, end); },
      /*stop_at_first=*/rejected == nullptr, failed);
  if (st.ok() && !failed.empty() && rejected == nullptr) {
    const FailedRow& f = failed.front();
    st = Status(f.error.code(), plan.RowMessage(f.row, f.column, f.error.message()));
  }
  if (st.ok() && token != nullptr) st = StoreToken(*scope, *token);
  if (!st.ok()) {
    Rollback();
    return st;
  }
  RETURN_IF_ERROR(Commit());
  if (rejected != nullptr) {
    for (const FailedRow& f : failed) {
      rejected->push_back(
          {plan.row(f.row).change,
           Status(f.error.code(), plan.RowMessage(f.row, f.column, f.error.message()))});
    }
  }
  return Status::Ok();
}

Result<bool> TableSink::WriteBulk(const WritePlan& plan) {
  if (plan.deletes() > 0) {  // not a load: commit what it holds and write the usual way
    const bool open = bulk_ == Bulk::kOpen;
    bulk_ = Bulk::kOff;
    if (open) RETURN_IF_ERROR(BulkCommit());
    return false;
  }
  if (bulk_ == Bulk::kRequested) {
    ASSIGN_OR_RETURN(bool started, BulkStart(plan));
    bulk_ = started ? Bulk::kOpen : Bulk::kOff;
    if (!started) return false;
  }
  Status appended = BulkAppend(plan);
  if (!appended.ok()) {
    bulk_ = Bulk::kOff;
    BulkRollback();
    return appended;
  }
  return true;
}

Status TableSink::Flush() {
  if (bulk_ == Bulk::kRequested) bulk_ = Bulk::kOff;
  if (bulk_ != Bulk::kOpen) return Status::Ok();
  bulk_ = Bulk::kOff;
  Status committed = BulkCommit();
  if (!committed.ok()) BulkRollback();
  Release();
  return committed;
}

Status TableSink::Finish(bool completed) {
  if (bulk_ == Bulk::kOpen) BulkRollback();  // not flushed: the load is abandoned
  bulk_ = Bulk::kOff;
  if (spec_.mode != WriteMode::kOverwrite) {
    Release();
    return Status::Ok();
  }
  return Holding([&] {
    if (!completed) {
      if (!overwrite_created_) return Status::Ok();
      overwrite_created_ = false;
      return DropOverwriteTable();
    }
    // A completed run that wrote nothing still replaces the table: the source is empty.
    if (!overwrite_created_) RETURN_IF_ERROR(CreateOverwriteTable());
    overwrite_created_ = false;
    return SwapOverwriteTable();
  });
}

}  // namespace faucet::sql
