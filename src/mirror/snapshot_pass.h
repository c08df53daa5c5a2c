// One snapshot read of a table into its sink, shared by the single-table and the multi-table
// mirror. Not resumable: its progress lives in memory and a crash redoes it.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "config/document.h"
#include "core/pipeline.h"
#include "core/source.h"

namespace faucet::mirror {

struct SnapshotRead {
  const config::Document* doc = nullptr;          // its sink, transforms and DLQ
  const config::ConnectorSpec* source = nullptr;  // the query source reading the table
  const ConsistentSnapshot* exported = nullptr;   // read inside it when set (an exact cut)
  std::string label;                              // for logs: the mirror or table name
  const std::atomic<bool>* stop = nullptr;
  // Under the atomic watermark, the scope of the bulk load's one transaction
  // (Sink::BeginBulkLoad), unique among reads that run at once; "" otherwise.
  std::string atomic_scope;
  // The source's row estimate, asked once before the read (Source::EstimateRows).
  std::function<void(std::optional<int64_t>)> on_estimate;
  // Rows written so far, after each page (on the sink thread).
  std::function<void(uint64_t)> on_rows;
};

// SnapshotRead::atomic_scope for a read of the pipeline whose stream writes under `stream_scope`
// (its state key), part `shard` of a split read (-1: the whole table): "" unless `delivery` is
// the atomic watermark.
std::string SnapshotScope(Delivery delivery, const std::string& stream_scope, int64_t shard = -1);

// Reads the table into the sink. Without a DLQ the read is one bulk load (Sink::BeginBulkLoad):
// a refused row fails it whole, and it is then redone page by page (outside `exported`,
// which a redo cannot have any more), which names the row, its key and column.
Result<PipelineStats> ReadSnapshot(const SnapshotRead& read);

}  // namespace faucet::mirror
