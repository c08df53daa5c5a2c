// Source: where changes come from (a replication stream, a query, a generator).
#pragma once

#include <chrono>
#include <optional>

#include "core/bookmark.h"
#include "core/page.h"
#include "core/status.h"

namespace faucet {

struct SourceEvent {
  enum class Kind {
    kPage,  // `page` holds the next page
    kIdle,  // nothing arrived within the wait; call Next again
    kEnd,   // the source is done for this run (count reached, idle timeout ended the cycle)
  };
  Kind kind = Kind::kIdle;
  Page page;
};

class Source {
 public:
  virtual ~Source() = default;

  // Starts reading just after `start`, a bookmark this source produced earlier (possibly in a
  // previous process). Without one, the source starts at its configured default (a slot's
  // confirmed position, the first row). Called once, before Next.
  virtual Status Open(const std::optional<Bookmark>& start) = 0;

  // Waits at most `wait` for the next event. An error ends the run; what was written before it
  // is still flushed by the pipeline. Called from one thread only.
  virtual Result<SourceEvent> Next(std::chrono::milliseconds wait) = 0;

  // Tells the source that everything up to `durable` is written, flushed and persisted: only
  // now may it be acknowledged upstream (Postgres: the standby status flush/apply LSN). Called
  // from the sink thread, concurrently with Next: implementations publish it atomically and do
  // not block. Bookmarks arrive in increasing order. A bookmark this source cannot read is an
  // error naming it (the run then ends), never ignored.
  virtual Status Acknowledge(const Bookmark& durable) {
    (void)durable;
    return Status::Ok();
  }

  // Called on the source thread, about once a second, while the pipeline waits for the sink
  // to make room for the next page: a source whose server drops silent clients (Postgres'
  // wal_sender_timeout) sends what keeps the session alive. Must not consume data.
  virtual Status KeepAlive() { return Status::Ok(); }

  // Ensures the source retains its log from now on (e.g. creates the replication slot) and
  // returns the current position without consuming anything. Used by the mirror.
  virtual Result<Bookmark> CapturePosition() {
    return FailedPrecondition("this source cannot capture a resume position");
  }
};

}  // namespace faucet
