#include "sources/postgres/query_source.h"

#include <poll.h>

#include <algorithm>
#include <cctype>
#include <cerrno>

#include "core/text.h"
#include "sources/postgres/copy_text.h"
#include "sources/postgres/pg_types.h"

namespace faucet {

Result<std::unique_ptr<Source>> MakePostgresQuerySource(const config::Block& block) {
  ASSIGN_OR_RETURN(PostgresQueryConfig config, ParsePostgresQueryConfig(block));
  return std::unique_ptr<Source>(
      std::make_unique<postgres::PostgresQuerySource>(std::move(config)));
}

namespace postgres {
namespace {

using Clock = std::chrono::steady_clock;

// COPY (...) takes one statement without its terminator.
std::string StripTerminator(std::string query) {
  while (!query.empty() &&
         (query.back() == ';' || std::isspace(static_cast<unsigned char>(query.back())))) {
    query.pop_back();
  }
  return query;
}

// The server rejected the user's query: a syntax or name error (class 42) is the user's input.
Status QueryError(PGconn* conn, const PGresult* r, const std::string& what) {
  Status s = StatementError(conn, r, what);
  std::string state = SqlState(r);
  if (state.rfind("42", 0) == 0 && state != "42501") return InvalidArgument(s.message());
  return s;
}

// The tables DiscoverTables lists, one row each: schema, table, primary-key columns (JSON array,
// key order: the position in pg_index.indkey, without INCLUDE columns), leaf partitions (JSON
// array of "schema.leaf"; pg_partition_tree also lists the root and intermediate levels, which
// isleaf leaves out) and the row estimate. Since PG14 reltuples is -1 until the first VACUUM or
// ANALYZE, and a partitioned table has no rows of its own: its leaves' known estimates add up.
// User schemas cannot start with "pg_" (reserved), so that prefix removes pg_catalog, pg_toast*
// and the temporary schemas. The one-time `c.relkind = 'p'` filter spares ordinary tables the
// partition walk.
constexpr const char* kDiscoverTablesSql = R"sql(
SELECT n.nspname, c.relname,
  coalesce((SELECT json_agg(a.attname ORDER BY k.ord)
            FROM pg_index i
            CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indrelid = c.oid AND i.indisprimary AND k.ord <= i.indnkeyatts), '[]'),
  coalesce(leaves.names, '[]'),
  CASE WHEN c.relkind = 'p' THEN leaves.reltuples
       WHEN c.reltuples >= 0 THEN c.reltuples::bigint END
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL (
  SELECT json_agg(ln.nspname || '.' || l.relname ORDER BY ln.nspname, l.relname) AS names,
         sum(l.reltuples::float8) FILTER (WHERE l.reltuples >= 0)::bigint AS reltuples
  FROM pg_partition_tree(c.oid) t
  JOIN pg_class l ON l.oid = t.relid
  JOIN pg_namespace ln ON ln.oid = l.relnamespace
  WHERE c.relkind = 'p' AND t.isleaf AND t.relid <> c.oid::regclass) leaves
WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\_%'
  AND has_schema_privilege(n.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT')
)sql";

// A JSON array of strings from the catalog query, as a vector.
Result<std::vector<std::string>> StringArray(const std::string& text, const std::string& what) {
  Json array = Json::parse(text, nullptr, false);
  std::vector<std::string> out;
  if (array.is_array()) {
    for (const Json& item : array) {
      if (!item.is_string()) break;
      out.push_back(item.get<std::string>());
    }
    if (out.size() == array.size()) return out;
  }
  return Internal("discovering tables: unexpected " + what + " from the catalog: " + text);
}

}  // namespace

PostgresQuerySource::PostgresQuerySource(PostgresQueryConfig config) : config_(std::move(config)) {}

SourceCapabilities PostgresQuerySource::Capabilities() const {
  SourceCapabilities caps;
  caps.reads_snapshots = true;
  caps.discovers_tables = true;
  caps.one_shot = true;
  return caps;
}

Status PostgresQuerySource::ReadInSnapshot(const ConsistentSnapshot& snapshot) {
  if (conn_ != nullptr) return Internal("postgres query source: ReadInSnapshot after Open");
  snapshot_ = snapshot.id();
  return Status::Ok();
}

std::optional<int64_t> PostgresQuerySource::EstimateRows() const {
  Result<ConnPtr> conn = Connect(config_.connection_url, config_.tls, ConnectionKind::kSql);
  if (!conn.ok()) return std::nullopt;
  Result<ResultPtr> r = Exec(conn->get(), "EXPLAIN (FORMAT JSON) " + StripTerminator(config_.query),
                             "estimating the query's rows");
  if (!r.ok()) return std::nullopt;
  std::optional<std::string> text = Value(r->get(), 0, 0);
  if (!text) return std::nullopt;
  Json plan = Json::parse(*text, nullptr, false);
  if (plan.is_discarded() || !plan.is_array() || plan.empty()) return std::nullopt;
  const Json& rows = plan[0]["Plan"]["Plan Rows"];
  if (!rows.is_number()) return std::nullopt;
  return rows.get<int64_t>();
}

Result<std::vector<DiscoveredTable>> PostgresQuerySource::DiscoverTables() const {
  ASSIGN_OR_RETURN(ConnPtr conn,
                   Connect(config_.connection_url, config_.tls, ConnectionKind::kSql));
  ASSIGN_OR_RETURN(ResultPtr r, Exec(conn.get(), kDiscoverTablesSql, "discovering tables"));
  std::vector<DiscoveredTable> tables;
  for (int row = 0; row < PQntuples(r.get()); ++row) {
    DiscoveredTable t;
    t.schema = PQgetvalue(r.get(), row, 0);
    t.table = PQgetvalue(r.get(), row, 1);
    t.name = t.schema + "." + t.table;
    ASSIGN_OR_RETURN(t.key, StringArray(PQgetvalue(r.get(), row, 2), "key of " + t.name));
    ASSIGN_OR_RETURN(t.partitions,
                     StringArray(PQgetvalue(r.get(), row, 3), "partitions of " + t.name));
    if (std::optional<std::string> rows = Value(r.get(), row, 4)) {
      t.estimated_rows = std::stoll(*rows);
    }
    t.read_patch["query"] =
        "SELECT * FROM " + QuoteIdentifier(t.schema, '"') + "." + QuoteIdentifier(t.table, '"');
    tables.push_back(std::move(t));
  }
  // Bytewise, as the mirror's maps order names (ORDER BY would follow the server's collation).
  std::sort(tables.begin(), tables.end(),
            [](const DiscoveredTable& a, const DiscoveredTable& b) { return a.name < b.name; });
  return tables;
}

Result<std::vector<std::map<std::string, std::string>>> PostgresQuerySource::PlanShards(
    const DiscoveredTable& table, int64_t n) const {
  ASSIGN_OR_RETURN(ConnPtr conn,
                   Connect(config_.connection_url, config_.tls, ConnectionKind::kSql));
  const std::string qualified =
      QuoteIdentifier(table.schema, '"') + "." + QuoteIdentifier(table.table, '"');
  ASSIGN_OR_RETURN(std::string literal, Literal(conn.get(), qualified));
  ASSIGN_OR_RETURN(
      ResultPtr r,
      Exec(conn.get(),
           "SELECT coalesce(max(pg_relation_size(relid) / current_setting('block_size')::int8), "
           "0) FROM (SELECT " +
               literal +
               "::regclass AS relid UNION ALL SELECT relid FROM "
               "pg_partition_tree(" +
               literal + "::regclass) WHERE isleaf) parts",
           "sizing " + table.name));
  const int64_t blocks = std::stoll(PQgetvalue(r.get(), 0, 0));
  const int64_t parts = std::clamp<int64_t>(std::min(n, blocks), 1, 4096);
  const int64_t step = (blocks + parts - 1) / std::max<int64_t>(parts, 1);
  std::vector<std::map<std::string, std::string>> shards;
  for (int64_t i = 0; i < parts; ++i) {
    std::string where;
    if (i > 0) where = "ctid >= '(" + std::to_string(i * step) + ",0)'::tid";
    if (i + 1 < parts) {
      where += std::string(where.empty() ? "" : " AND ") + "ctid < '(" +
               std::to_string((i + 1) * step) + ",0)'::tid";
    }
    shards.push_back(
        {{"query", "SELECT * FROM " + qualified + (where.empty() ? "" : " WHERE " + where)}});
  }
  return shards;
}

Status PostgresQuerySource::Open(const std::optional<Bookmark>&) {
  if (conn_ != nullptr) return Internal("postgres query source opened twice");
  ASSIGN_OR_RETURN(conn_, Connect(config_.connection_url, config_.tls, ConnectionKind::kSql));
  const std::string query = StripTerminator(config_.query);
  if (!snapshot_.empty()) {
    // The COPY runs in a repeatable-read transaction that sees exactly the exported snapshot;
    // it stays open until the COPY is done (Finish commits it).
    ASSIGN_OR_RETURN(ResultPtr begin,
                     Exec(conn_.get(), "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
                          "starting the snapshot transaction", PGRES_COMMAND_OK));
    ASSIGN_OR_RETURN(std::string literal, Literal(conn_.get(), snapshot_));
    ASSIGN_OR_RETURN(ResultPtr set, Exec(conn_.get(), "SET TRANSACTION SNAPSHOT " + literal,
                                         "importing snapshot " + snapshot_, PGRES_COMMAND_OK));
  }
  RETURN_IF_ERROR(Describe(query));
  ResultPtr r(PQexec(conn_.get(), ("COPY (" + query + ") TO STDOUT").c_str()));
  if (PQresultStatus(r.get()) != PGRES_COPY_OUT) return QueryError(conn_.get(), r.get(), "query");
  return Status::Ok();
}

Status PostgresQuerySource::Describe(const std::string& query) {
  ResultPtr prepared(PQprepare(conn_.get(), "", query.c_str(), 0, nullptr));
  if (PQresultStatus(prepared.get()) != PGRES_COMMAND_OK) {
    return QueryError(conn_.get(), prepared.get(), "query");
  }
  ResultPtr d(PQdescribePrepared(conn_.get(), ""));
  if (PQresultStatus(d.get()) != PGRES_COMMAND_OK) {
    return QueryError(conn_.get(), d.get(), "describing the query");
  }
  auto rel = std::make_shared<Relation>();
  rel->name = "query";
  const int n = PQnfields(d.get());
  Oid table = n > 0 ? PQftable(d.get(), 0) : InvalidOid;
  for (int i = 0; i < n; ++i) {
    Column c;
    c.name = PQfname(d.get(), i);
    c.type_oid = PQftype(d.get(), i);
    c.type_modifier = PQfmod(d.get(), i);
    c.type = ValueTypeForOid(c.type_oid);
    rel->columns.push_back(std::move(c));
    if (PQftable(d.get(), i) != table) table = InvalidOid;
  }
  if (table != InvalidOid) {
    // One source table: its name, and its primary key for sinks that upsert.
    const std::string oid = std::to_string(table);
    ASSIGN_OR_RETURN(
        ResultPtr t,
        Exec(conn_.get(),
             "SELECT n.nspname, c.relname, coalesce((SELECT array_to_string(i.indkey, ' ')"
             " FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary), '')"
             " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = " +
                 oid,
             "describing the query's table"));
    if (PQntuples(t.get()) == 1) {
      rel->id = table;
      rel->schema = PQgetvalue(t.get(), 0, 0);
      rel->name = PQgetvalue(t.get(), 0, 1);
      std::string keys = std::string(" ") + PQgetvalue(t.get(), 0, 2) + " ";
      for (int i = 0; i < n; ++i) {
        int attnum = PQftablecol(d.get(), i);
        rel->columns[i].key =
            attnum > 0 && keys.find(" " + std::to_string(attnum) + " ") != std::string::npos;
      }
    }
  }
  relation_ = std::move(rel);
  return Status::Ok();
}

Result<SourceEvent> PostgresQuerySource::Next(std::chrono::milliseconds wait) {
  if (conn_ == nullptr) return Internal("postgres query source: Next before Open");
  const Clock::time_point deadline = Clock::now() + wait;
  while (!done_ && pending_.changes.size() < config_.batch_size) {
    char* buffer = nullptr;
    int n = PQgetCopyData(conn_.get(), &buffer, /*async=*/1);
    if (n > 0) {
      Change c;
      c.op = ChangeOp::kRead;
      c.relation = relation_;
      c.ordinal = static_cast<uint32_t>(pending_.changes.size());
      c.after.emplace();
      Status s = ParseCopyTextRow(std::string_view(buffer, static_cast<size_t>(n)),
                                  relation_->columns.size(), *c.after);
      PQfreemem(buffer);
      RETURN_IF_ERROR(s);
      pending_.changes.push_back(std::move(c));
      continue;
    }
    if (n == -1) {
      RETURN_IF_ERROR(Finish());
      done_ = true;
      break;
    }
    if (n == -2) return StatementError(conn_.get(), nullptr, "query");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return SourceEvent{SourceEvent::Kind::kIdle, {}};
    pollfd fd{PQsocket(conn_.get()), POLLIN, 0};
    int ready = poll(&fd, 1, static_cast<int>(left.count()) + 1);
    if (ready < 0 && errno != EINTR) return Unavailable("poll on query connection failed");
    if (ready > 0 && PQconsumeInput(conn_.get()) == 0) {
      return StatementError(conn_.get(), nullptr, "query");
    }
  }
  if (pending_.changes.empty()) return SourceEvent{SourceEvent::Kind::kEnd, {}};
  SourceEvent e{SourceEvent::Kind::kPage, std::move(pending_)};
  pending_ = Page();
  pending_.changes.reserve(std::min<size_t>(config_.batch_size, 1024));  // fewer regrowths
  return e;
}

Status PostgresQuerySource::Finish() {
  ResultPtr r(PQgetResult(conn_.get()));
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) return QueryError(conn_.get(), r.get(), "query");
  while (ResultPtr rest{PQgetResult(conn_.get())}) {
  }
  if (!snapshot_.empty()) {
    ASSIGN_OR_RETURN(ResultPtr commit, Exec(conn_.get(), "COMMIT",
                                            "ending the snapshot "
                                            "transaction",
                                            PGRES_COMMAND_OK));
  }
  return Status::Ok();
}

}  // namespace postgres
}  // namespace faucet
