// The destinations of the torture test and how each is compared with the source.
//
// What is compared (upsert destinations): every row is rendered as the text
//   id|version|<len>:small|<len>:big        (a NULL column renders as N; len in characters)
// by the database that holds it, the renderings are joined with '\n' in id order, and the
// count of rows plus the md5 of that text must equal the source's. Postgres computes the
// source's and a Postgres destination's aggregate itself (string_agg ... ORDER BY id, md5);
// SQLite builds its own aggregate text (group_concat over the id-ordered rows, with the same
// rendering written in SQLite's SQL) and Postgres hashes that text.
//
// A MariaDB source (--source=mariadb, into postgres or sqlite): MariaDB renders its rows with
// the same rendering written in MariaDB's SQL and joins them with GROUP_CONCAT, a page of 1,000
// rows at a time (a GROUP_CONCAT result is capped at max_allowed_packet, 16 MiB by default);
// the driver joins the pages with '\n' and Postgres hashes the text.
//
// jsonl (at-least-once): every change the workload committed must be in the file, identified by
// (op, id, version) -- with the old key as `before` for a key change -- duplicates are counted
// (bounded by one page or transaction per kill), and replaying the file (snapshot rows, then
// the change envelopes in order) must rebuild the source table, compared as above with the
// rendering done by the driver and the md5 by Postgres.
//
// kafka (exactly-once): what a read_committed consumer of the topic reads, judged as jsonl, with
// no change and no snapshot row allowed twice.
//
// mirror-tables (the multi-table mirror, `mirror.tables`, into a Postgres database or a SQLite
// file, upsert by the discovered key): every source table against its destination table of
// the same name, compared as above table by table; duplicates are count(*) - count(DISTINCT
// id) per destination table, computed by the destination database, and must be 0.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pg_client.h"
#include "source_sql.h"
#include "workload.h"

namespace faucet::torture {

// SQL that renders one row of a table with columns id, version, small, big (Postgres).
std::string PgRowRendering();

struct Aggregate {
  int64_t rows = 0;
  std::string md5;
  bool operator==(const Aggregate&) const = default;
  std::string ToString() const { return std::to_string(rows) + " rows, md5 " + md5; }
};

// The source table's aggregate, computed by Postgres.
Aggregate PgAggregate(PgConn& conn, const std::string& table);

struct Verdict {
  int64_t lost = 0;        // committed state or changes missing (or wrong) at the destination
  int64_t duplicates = 0;  // jsonl: change lines beyond the first of each change
  int64_t extra = 0;       // rows/changes at the destination the source never committed
  int64_t duplicate_bound = 0;
  bool checksums_equal = false;
  std::vector<std::string> details;  // human-readable findings, a few examples each
};

class Destination {
 public:
  virtual ~Destination() = default;
  virtual std::string name() const = 0;
  // Creates the destination (table, database or directory) before the mirror first runs.
  virtual void Create() = 0;
  // The `sink:` block (and `transforms:` before it) of the mirror config, indented for
  // `pipeline:`.
  virtual std::string PipelineYaml() const = 0;
  // Top-level keys of the mirror config the destination needs (kafka: `delivery`).
  virtual std::string DocumentYaml() const { return ""; }
  // Called between kills: lets a destination read its output as it grows (jsonl).
  virtual void Poll() {}
  // Cheap check while catching up: does the destination hold everything yet? `source` is the
  // Postgres server: the source database, or (a MariaDB source) the one that hashes texts.
  virtual bool CaughtUp(PgConn& source, std::string& why) = 0;
  // The final, complete comparison (the mirror is stopped).
  virtual Verdict Verify(PgConn& source, int64_t kills, int64_t batch_size) = 0;
  // Removes what Create made (on success only: a failed run leaves it for inspection).
  virtual void Drop() = 0;
  virtual std::string Where() const = 0;
};

struct DestinationContext {
  std::string dest;                        // postgres | sqlite | jsonl | mirror-tables
  std::string sink;                        // mirror-tables: postgres | sqlite
  std::string pg_url;                      // the server (source database)
  std::string source_table;                // the single table's name (in public)
  std::vector<std::string> source_tables;  // mirror-tables: schema-qualified, in table order
  std::string suffix;                      // unique per run
  std::string workdir;
  const Workload* workload = nullptr;
  SourceKind source = SourceKind::kPostgres;
  std::string mysql_url;      // a MariaDB source: source_table is in the URL's database
  std::string kafka_brokers;  // --dest=kafka
};

std::unique_ptr<Destination> MakeDestination(const DestinationContext& ctx);

}  // namespace faucet::torture
