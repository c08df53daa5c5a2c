// The dead-letter envelope: a rejected row as a row of its own, in the reference system's
// shape (spec/reference-faucet-stream.md §1.10), so that any sink can be the DLQ:
//   {"error":{"kind","message"},"reason","payload","ts_ms","sink","pipeline","row",
//    "record_index"}
// payload is the rejected change rendered as JSON (json_render.h), or null when
// include_original_payload is false.
#pragma once

#include "core/change.h"
#include "core/pipeline.h"

namespace faucet {

Change MakeDlqEnvelope(const Change& rejected, size_t record_index, const Status& error,
                       const DlqOptions& options);

}  // namespace faucet
