// PipelineObserver: what a pipeline reports as each page moves through its stages (received
// from the source, written to the sink, flushed, persisted, acknowledged), for metrics.
//
// Opened once the source and sink are open, Closed when the run ends (however it ends).
// Received is called on the source thread; the others on the sink thread, in that order for a
// page with a bookmark (a chunk without one is only received and written). Implementations are
// thread-safe and cheap: they run on the hot path once per page.
#pragma once

#include <chrono>
#include <cstddef>

#include "core/page.h"

namespace faucet {

class PipelineObserver {
 public:
  virtual ~PipelineObserver() = default;

  virtual void Opened() = 0;
  virtual void Closed() = 0;
  virtual void Received(const Page& page) = 0;
  // The received page, past the transforms, enters the write queue taking `bytes`
  // (Page::ApproxBytes, which the queue's budget computes anyway).
  virtual void Queued(size_t bytes) = 0;
  // `received`: how many received pages `page` holds (more than 1 when group commit joined
  // pages waiting in the queue: PipelineOptions::group_bytes).
  virtual void Written(const Page& page, size_t received, std::chrono::nanoseconds took) = 0;
  virtual void Flushed(const Page& page, std::chrono::nanoseconds took) = 0;
  virtual void Persisted(const Page& page, std::chrono::nanoseconds took) = 0;
  virtual void Acknowledged(const Page& page) = 0;
  virtual void DeadLettered(size_t rows) = 0;
};

}  // namespace faucet
