// Sink: where pages are written.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/page.h"
#include "core/schema_policy.h"
#include "core/status.h"

namespace faucet {

// What a built sink does with a page that is written again (a replay after a crash), as parsed
// from its config. The delivery guarantee is derived from these, never from the YAML text.
struct SinkCapabilities {
  // WriteIdempotent commits a page's rows and a commit token in one transaction, and
  // CommittedToken reads the token back (the atomic watermark).
  bool atomic_watermark = false;
  // Every write is an upsert or delete by a key, so a replayed row overwrites itself.
  bool dedups_by_key = false;
  // The run writes a new copy of the whole target, swapped in at the end of a completed run.
  bool overwrites = false;
  // Writes rows into a destination with columns, so rows can drift from it: SetSchemaPolicy
  // decides what happens then. False for sinks that take any shape (files, a JSON column).
  bool has_schema = false;
  // Can change the destination's schema (add a column, widen a type): SchemaPolicy kEvolve.
  bool evolves_schema = false;
  // The config holds settings only the atomic watermark uses (kafka's `exactly_once:`), so a
  // pipeline that would run without it is refused rather than silently at-least-once.
  bool watermark_configured = false;
  // WriteIdempotent and CommittedToken take any number of scopes in one run, one token each: what
  // a source with SourceCapabilities::tokens_per_part needs.
  bool many_scopes = false;
  // Stage keeps a transaction's changes out of sight until its commit: a source may then hand a
  // large transaction over while it still runs (Source::AllowStaging).
  bool stages = false;
};

// The error of a bulk load (Sink::BeginBulkLoad) that a row of its target refused:
// kInvalidArgument, "<where>: bulk load[, row N][, column c]: <error>", `row` the row's
// 0-based place in the load (N is 1-based). Only such an error means that redoing the load page by
// page would name the row; any other ends the run as it is.
Status BulkLoadRefusal(const std::string& where, std::optional<size_t> row,
                       const std::string& column, const Status& error);
bool IsBulkLoadRefusal(const Status& status);

// A bulk load under the atomic watermark (Sink::BeginBulkLoad).
struct AtomicLoad {
  std::string scope;  // unique among loads that run at once; "": not atomic
  std::string token;  // names this attempt of the load
};

class Sink {
 public:
  virtual ~Sink() = default;

  // What this sink does with replayed pages. Known from the config alone (before Open).
  virtual SinkCapabilities Capabilities() const { return {}; }

  // What to do when the rows no longer match the destination's schema; the default policy
  // (warn) until called. Called before Open; ignored by sinks without has_schema.
  virtual void SetSchemaPolicy(const SchemaPolicy& policy) { (void)policy; }

  // Prepares for writing. `resuming` is true when the pipeline continues from a persisted
  // bookmark: a sink must then keep what earlier runs wrote (never truncate).
  virtual Status Open(bool resuming) = 0;

  // Writes the page. Data may still be buffered; it is durable only after Flush returns ok.
  virtual Status Write(const Page& page) = 0;

  // Blocks until everything written so far is durable (for files: written and fsync'ed). After
  // an error nothing written since the last successful Flush may be assumed durable.
  virtual Status Flush() = 0;

  // Announces, before the first Write, that the run is one bulk load (a mirror's snapshot, or
  // `faucet run` of a one-shot read: assembly/bulk_read.h): its pages carry no bookmark and
  // insert rows, and when the run fails the caller redoes the whole load. A sink may then keep one
  // transaction (one COPY) open across Writes until Flush, so an error may surface at a later Write
  // or at Flush, discarding every page since the last Flush; a row the target refuses then fails
  // the load with BulkLoadRefusal, without being isolated (the caller redoes the load without this
  // call to name the row). Sinks may ignore it.
  //
  // `atomic` is set when the pipeline that follows the load runs under the atomic watermark
  // (a mirror's snapshot under `delivery: exactly_once`): a sink whose Writes would otherwise be
  // visible one by one (kafka) then makes the whole load one transaction of `atomic.scope`,
  // committed with `atomic.token` under that scope (CommittedToken(scope) returns it afterwards)
  // by the final Flush and never visible when the load is abandoned (Finish(false)) or the
  // process dies, so a redone load is not seen twice, and one that committed is known not to
  // need redoing. Sinks whose load is one transaction anyway ignore it.
  virtual void BeginBulkLoad(const AtomicLoad& atomic) { (void)atomic; }

  // Like Write, but a row the target cannot take (missing or null key, a value the column
  // cannot hold) does not fail the page: it is left out, reported in `rejected` with its index
  // in page.changes and an error naming the table, key and column, and the rest is written.
  // Used when the pipeline has a DLQ. Sinks that cannot isolate rows return kFailedPrecondition.
  struct RejectedRow {
    size_t index;
    Status error;
  };
  virtual Status WriteIsolating(const Page& page, std::vector<RejectedRow>* rejected) {
    (void)page, (void)rejected;
    return FailedPrecondition("sink cannot isolate failing rows (no DLQ support)");
  }

  // Takes a step of a transaction whose outcome is not known yet (page.staged, core/page.h):
  // kChanges keeps the changes where no reader sees them, kAbort discards those of the
  // subtransaction (or of the whole transaction), kCommit writes the transaction's surviving
  // changes in their order as Write would, with the commit position and time the step names;
  // like a Write's, they are durable after the next Flush. Staged changes live as long as the
  // sink object and no longer than until the next Open: a run that ends before the commit leaves
  // nothing behind, and the source hands the transaction over again. Called only when
  // Capabilities().stages; others return kFailedPrecondition.
  virtual Status Stage(const Page& page) {
    (void)page;
    return FailedPrecondition("sink does not stage open transactions");
  }

  // Called once at the end of a run, after the final Flush. `completed` is true when the source
  // ended normally (not on an error or a stop request): an overwrite sink swaps its new table
  // in only then, and otherwise discards it.
  virtual Status Finish(bool completed) {
    (void)completed;
    return Status::Ok();
  }

  // Atomic-watermark sinks commit the page's rows and `token` under `scope` in one
  // transaction, replacing the scope's previous token: the SQL sinks before returning, kafka
  // by the next Flush (its transaction may hold several pages; all of them or none commit).
  // Others return kFailedPrecondition.
  virtual Status WriteIdempotent(const Page& page, const std::string& scope,
                                 const std::string& token) {
    (void)page, (void)scope, (void)token;
    return FailedPrecondition("sink does not support idempotent writes");
  }

  // The last token committed by WriteIdempotent under `scope`, if any.
  virtual Result<std::optional<std::string>> CommittedToken(const std::string& scope) {
    (void)scope;
    return std::optional<std::string>();
  }
};

}  // namespace faucet
