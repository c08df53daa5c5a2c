// A read written as one bulk load, the one code path of a mirror's snapshot and of `faucet run`
// of a one-shot source (SourceCapabilities::one_shot, a query).
#pragma once

#include <functional>
#include <string>

#include "config/document.h"
#include "core/pipeline.h"

namespace faucet::assembly {

// One run of the read, on parts built for it (a source opened anew reads everything again).
struct ReadAttempt {
  bool bulk = false;  // run it as one bulk load (PipelineOptions::bulk_load)
  bool redo = false;  // the page-by-page run after a refused bulk load
};

// Without a DLQ, runs `attempt({bulk: true})`: the sink may write the whole read in one
// transaction (all or nothing, at the speed of a raw COPY; the attempt sets
// PipelineOptions::bulk_load, so a stopped run or a failed source commits nothing). A row
// the target refuses then fails the load naming only its place in it (IsBulkLoadRefusal), so
// the read is redone page by page, `attempt({bulk: false, redo: true})`, which names the row's
// key and column; any other error is the result. With a DLQ (rows isolated page by page) it
// runs `attempt({})` alone. `label` names the read in the log.
Result<PipelineStats> RunBulkRead(const config::Document& doc, const std::string& label,
                                  const std::function<Result<PipelineStats>(ReadAttempt)>& attempt);

}  // namespace faucet::assembly
