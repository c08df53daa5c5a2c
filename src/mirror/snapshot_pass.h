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
  // Under the atomic watermark, the bulk load's one transaction (Sink::BeginBulkLoad,
  // SnapshotLoad); an empty scope otherwise.
  AtomicLoad atomic;
  // The source's row estimate, asked once before the read (Source::EstimateRows).
  std::function<void(std::optional<int64_t>)> on_estimate;
  // Rows written so far, after each page (on the sink thread).
  std::function<void(uint64_t)> on_rows;
};

// SnapshotRead::atomic for attempt `id` (NewSnapshotId) of a read of the pipeline whose stream
// writes under `stream_scope` (its state key), part `shard` of a split read (-1: the whole
// table): scope "<stream_scope>::snapshot[-<shard>]" and token `id`; empty unless `delivery` is
// the atomic watermark.
AtomicLoad SnapshotLoad(Delivery delivery, const std::string& stream_scope, const std::string& id,
                        int64_t shard = -1);

// A new attempt's id: random, so that no two attempts of a scope share it.
std::string NewSnapshotId();

// Whether `load` (an attempt whose end a crash kept the mirror from recording) committed in the
// sink that `sink` configures: its token is the scope's last (Sink::CommittedToken). Such an
// attempt must not be read again: its rows would be there twice. False for an empty scope or
// id.
Result<bool> SnapshotCommitted(const config::ConnectorSpec& sink, const AtomicLoad& load);

// Reads the table into the sink. Without a DLQ the read is one bulk load (Sink::BeginBulkLoad):
// a refused row fails it whole, and it is then redone page by page (outside `exported`,
// which a redo cannot have any more), which names the row, its key and column.
Result<PipelineStats> ReadSnapshot(const SnapshotRead& read);

}  // namespace faucet::mirror
