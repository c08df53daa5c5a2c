// GeneratorSource (type `generator`): deterministic rows for demos, benchmarks and engine tests.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>

#include "config/block.h"
#include "core/source.h"

namespace faucet {

struct GeneratorOptions {
  // Total rows of the stream, ids 1..count; absent: endless.
  std::optional<int64_t> count;
  // Rows per second, on average; absent: as fast as the pipeline takes them.
  std::optional<double> rate;
  int64_t batch_size = 1000;  // most rows per page

  // Reads `count` (>= 0), `rate` (> 0) and `batch_size` (1..1000000). Errors name the file,
  // line and key. No I/O.
  static Result<GeneratorOptions> FromConfig(const config::Block& cfg);
};

// Row `id` of relation public.generator is a pure function of id:
//   id          kInt          id (the key)
//   name        kText         "name-<id>"
//   amount      kNumeric      "<id*7 mod 100000>.<id mod 100, two digits>"
//   active      kBool         "t" for even ids, "f" for odd
//   created_at  kTimestampTz  2026-01-01 00:00:00+00 plus id seconds, "2026-01-01 00:00:01+00"
// Changes are op kRead, ids ascend from 1 without gaps, and each page carries the bookmark
// {"last_id": <its last id>}. Open(bookmark) continues at last_id + 1, so a pipeline that
// crashes and resumes emits every id of 1..count at least once and, per run, in order.
//
// Pacing: with `rate`, the row of the nth id this run is not emitted before n / rate seconds
// after Open. Next emits a full page as soon as its last row is due; within `wait` it returns
// the rows that came due (a partial page) or kIdle when none did, so low rates still deliver
// every `wait`, and a consumer that fell behind catches up in full pages.
//
// Next returns kEnd once id `count` was emitted.
class GeneratorSource : public Source {
 public:
  explicit GeneratorSource(const GeneratorOptions& options);

  // kInvalidArgument when `start` has no integer last_id >= 0.
  Status Open(const std::optional<Bookmark>& start) override;
  Result<SourceEvent> Next(std::chrono::milliseconds wait) override;

 private:
  // A page of ids [next_id_, next_id_ + rows).
  Page MakePage(int64_t rows);

  const GeneratorOptions options_;
  const RelationPtr relation_;
  int64_t next_id_ = 1;
  int64_t emitted_ = 0;  // rows emitted since Open, the basis of pacing
  std::chrono::steady_clock::time_point opened_at_;
};

// The source for a `generator` config block, not yet opened (no I/O: `faucet validate`).
Result<std::unique_ptr<Source>> MakeGeneratorSource(const config::Block& cfg);

}  // namespace faucet
