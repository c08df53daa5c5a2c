// PostgresStateStore: state in one table of a PostgreSQL database, in the reference system's
// layout (docs/state-format.md):
//
//   CREATE TABLE "faucet_state" (key TEXT PRIMARY KEY, value JSONB NOT NULL,
//                                updated_at TIMESTAMPTZ NOT NULL DEFAULT now())
//
// Put is one autocommit upsert, durable when the server acknowledges the commit (under the
// server's synchronous_commit setting, which defaults to on).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/mutex.h"
#include "core/state_store.h"

struct pg_conn;

namespace faucet {

// Thread-safe: one connection behind a mutex (state traffic is one small statement per page).
// Connection failures are kUnavailable; a connection that broke is re-opened once per call
// before giving up. Every statement is idempotent, so retrying one that may have committed
// is safe. No error message carries the password of the URL.
class PostgresStateStore : public StateStore {
 public:
  // Connects to `url` (a libpq URI or key=value string). With `ensure_table`, creates `table`
  // if it does not exist. REQUIRES: `table` matches [A-Za-z0-9_]{1,63} (ParseStateConfig).
  static Result<std::unique_ptr<PostgresStateStore>> Open(const std::string& url,
                                                          const std::string& table,
                                                          bool ensure_table);
  ~PostgresStateStore() override;

  // A missing table is kFailedPrecondition saying how to create it; a stored value that is not
  // JSON cannot exist (the column is JSONB).
  Result<std::optional<Json>> Get(const std::string& key) override;
  Status Put(const std::string& key, const Json& value) override;
  Status Delete(const std::string& key) override;
  Durability durability() const override { return Durability::kDurable; }
  // A session-level advisory lock on (table, key), on a connection the lease keeps open. A
  // holder is waited for up to 3 s (one that just died is released a moment after it).
  Result<std::unique_ptr<StateLease>> Lease(const std::string& key) override;

 private:
  struct Rows {
    std::vector<std::optional<std::string>> first_column;
  };

  PostgresStateStore(std::string url, const std::string& table);
  Status Connect() REQUIRES(mu_);
  // Runs `sql` with text parameters and returns the first column of the rows, reconnecting
  // once when the connection broke.
  Result<Rows> Exec(const std::string& sql, const std::vector<std::string>& params) EXCLUDES(mu_);
  Result<Rows> ExecOnce(const std::string& sql, const std::vector<std::string>& params)
      REQUIRES(mu_);
  std::string Describe() const;

  const std::string url_;
  const std::string quoted_table_;
  Mutex mu_;
  pg_conn* conn_ GUARDED_BY(mu_) = nullptr;  // null when not connected
};

}  // namespace faucet
