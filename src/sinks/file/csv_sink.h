// CsvSink (type `csv`): the row of each change as one RFC 4180 record in a local file.
#pragma once

#include <memory>
#include <string>

#include "config/block.h"
#include "core/file_system.h"
#include "core/sink.h"
#include "sinks/file/buffered_file.h"

namespace faucet {

struct CsvSinkOptions {
  std::string path;
  char delimiter = ',';
  bool write_headers = true;
  // Keep what the file holds when a run starts fresh. A resuming run always keeps it.
  bool append = false;

  // Reads `path` (required), `delimiter` (one character other than a quote, CR or LF),
  // `write_headers`, `append` and `batch_size` (accepted for compatibility; pages are sized by
  // the pipeline). Errors name the file, line and key. No I/O.
  static Result<CsvSinkOptions> FromConfig(const config::Block& cfg);
};

// Records: one per change, holding its row image (`after`, or `before` for a delete); a
// truncate has no row and writes nothing. The op and position are not recorded: CSV is for
// rows (query, snapshot or generator sources, cdc_unwrap output); change events belong in
// jsonl. Records end with "\n".
//
// Fields: the source's text form, bool as true/false. Null is an empty field and the empty
// string a quoted "", as Postgres COPY writes CSV. An unchanged TOAST cell, whose value the
// source did not send, is empty like null. A field holding the delimiter, a quote, CR or LF is
// quoted, its quotes doubled.
//
// Header: the column names of the first row's relation, written when write_headers is set and
// the file was empty at Open, so that appending and resuming runs never repeat it. Every later
// row must come from a relation with the same column names, or Write fails with
// kFailedPrecondition: a schema change must not shift values under the wrong header.
//
// Durability and truncation are JsonlSink's (jsonl_sink.h): Flush fdatasyncs; only a fresh,
// non-append run truncates; a resuming run cuts off a torn last line. A record is found torn
// by its missing final "\n", so one torn after a line break inside a quoted field leaves its
// start in the file.
//
// Not thread-safe: one pipeline thread calls it.
class CsvSink : public Sink {
 public:
  // `fs` must outlive the sink.
  explicit CsvSink(CsvSinkOptions options, FileSystem& fs = PosixFileSystem());

  Status Open(bool resuming) override;
  Status Write(const Page& page) override;
  Status Flush() override;

 private:
  // Fixes the columns at the first row's relation (writing the header if due) and checks that
  // `relation` has the same ones.
  Status CheckColumns(const RelationPtr& relation);
  void AppendField(std::string_view text);
  void AppendRecord(const Relation& relation, const Row& row);

  const CsvSinkOptions options_;
  BufferedFile file_;
  RelationPtr first_relation_;    // whose column names the records follow
  RelationPtr checked_relation_;  // the last relation found to have those names
};

// The sink for a `csv` config block, not yet opened (no I/O: `faucet validate`).
Result<std::unique_ptr<Sink>> MakeCsvSink(const config::Block& cfg);

}  // namespace faucet
