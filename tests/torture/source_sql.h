// The SQL the torture workload runs on its source, in two dialects: Postgres (the postgres-cdc
// runs) and MariaDB (the mysql-cdc run). The workload (workload.h) decides what to change --
// which operation, table, ids and values -- and this interface says it in one database's SQL,
// so that both sources get the same kinds of changes from the same code.
//
// Every table has the columns id (int8 PK), version (int8), small (text), big (text). Ids come
// from the dialect (a sequence shared by every table, or a counter of the writer) and are never
// reused, not even those of rolled-back inserts. Every call but the DDL runs on the one
// connection of this object, inside the transaction the caller opened with Begin, and throws
// TortureError when a statement fails or touches other rows than the ones named.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pg_client.h"

namespace faucet::torture {

enum class SourceKind { kPostgres, kMariadb };

// A column assignment: nullopt leaves the column as it is; a Param sets it (nullopt Param: NULL).
using Assign = std::optional<Param>;

struct IdVersion {
  int64_t id = 0;
  int64_t version = 0;
};

class SourceSql {
 public:
  virtual ~SourceSql() = default;

  // Creates the tables (`qualified`, each <schema>.<table>; several: the schema too) and what
  // the source's capture needs (Postgres: the id sequence and `publication`). Drops any
  // leftovers of an earlier run first.
  virtual void CreateTables(const std::vector<std::string>& qualified,
                            const std::string& publication) = 0;
  virtual void DropTables(const std::vector<std::string>& qualified,
                          const std::string& publication) = 0;
  // Returns once a change committed now is certain to reach the destination through the change
  // stream or the snapshot, or when `stop` is set.
  virtual void WaitUntilCaptured(const std::atomic<bool>& stop) = 0;

  virtual void Begin() = 0;
  virtual void Commit() = 0;
  virtual void Rollback() = 0;

  // Inserts a row with a fresh id and version 1; returns the id.
  virtual int64_t Insert(const std::string& table, const Param& small, const Param& big) = 0;
  // Increments the version of row `row.id` (whose version is `row.version`), sets the columns
  // given, and with `new_key` moves the row to a fresh id. Returns the row's id and version.
  virtual IdVersion Update(const std::string& table, IdVersion row, bool new_key,
                           const Assign& small, const Assign& big) = 0;
  virtual void Delete(const std::string& table, int64_t id) = 0;

  // `count` rows with fresh ids, version 1, small 'bulk <n>' (n = 1..count), big NULL, in one
  // statement; returns their ids.
  virtual std::vector<int64_t> BulkInsert(const std::string& table, int count) = 0;
  // Increments the version of every row and sets small to 'bulk v<new version>', in one
  // statement; returns the rows' new versions.
  virtual std::vector<IdVersion> BulkUpdate(const std::string& table,
                                            const std::vector<IdVersion>& rows) = 0;
  // Deletes the rows in one statement.
  virtual void BulkDelete(const std::string& table, const std::vector<int64_t>& ids) = 0;
};

struct SourceSqlOptions {
  SourceKind kind = SourceKind::kPostgres;
  std::string url;
  std::string schema;    // Postgres: the tables' schema; MariaDB: the URL's database
  std::string sequence;  // Postgres: the id sequence, in `schema`
  std::string slot;      // Postgres: WaitUntilCaptured waits for its confirmed position
};

// Connects to the source.
std::unique_ptr<SourceSql> MakeSourceSql(const SourceSqlOptions& options);

}  // namespace faucet::torture
