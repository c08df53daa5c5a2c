#include "mirror/snapshot_progress.h"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "core/bookmark.h"

namespace faucet::mirror {

using namespace std::chrono_literals;

SnapshotProgress::SnapshotProgress(std::optional<int64_t> estimate, bool terminal)
    : estimate_(estimate),
      terminal_(terminal),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_),
      last_save_(start_) {}

std::string SnapshotProgress::Line(uint64_t rows) const {
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double rate = secs > 0 ? rows / secs : 0;
  char buf[160];
  if (estimate_ && *estimate_ > 0) {
    std::snprintf(buf, sizeof buf, "snapshot: %llu rows, %.0f rows/s, %.0f%% of ~%lld",
                  static_cast<unsigned long long>(rows), rate, 100.0 * rows / *estimate_,
                  static_cast<long long>(*estimate_));
  } else {
    std::snprintf(buf, sizeof buf, "snapshot: %llu rows, %.0f rows/s",
                  static_cast<unsigned long long>(rows), rate);
  }
  return buf;
}

bool SnapshotProgress::Tick(uint64_t rows) {
  auto now = std::chrono::steady_clock::now();
  if (now - last_print_ >= (terminal_ ? 500ms : 10s)) {
    last_print_ = now;
    if (terminal_) {
      std::fprintf(stderr, "\r%s   ", Line(rows).c_str());
    } else {
      spdlog::info("{}", Line(rows));
    }
  }
  if (now - last_save_ >= 2s) {
    last_save_ = now;
    return true;
  }
  return false;
}

void SnapshotProgress::Finish(uint64_t rows) {
  if (terminal_) {
    std::fprintf(stderr, "\r%s   \n", Line(rows).c_str());
  } else {
    spdlog::info("{}", Line(rows));
  }
}

std::optional<int64_t> EstimateSnapshotRows(const config::ConnectorSpec& source) {
  if (source.type != "postgres") return std::nullopt;
  const YAML::Node& cfg = source.config.node();
  if (!cfg["connection_url"] || !cfg["query"]) return std::nullopt;
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn(
      PQconnectdb(cfg["connection_url"].Scalar().c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) return std::nullopt;
  std::string sql = "EXPLAIN (FORMAT JSON) " + cfg["query"].Scalar();
  std::unique_ptr<PGresult, decltype(&PQclear)> res(PQexec(conn.get(), sql.c_str()), &PQclear);
  if (PQresultStatus(res.get()) != PGRES_TUPLES_OK || PQntuples(res.get()) < 1) {
    return std::nullopt;
  }
  Json plan = Json::parse(PQgetvalue(res.get(), 0, 0), nullptr, false);
  if (plan.is_discarded() || !plan.is_array() || plan.empty()) return std::nullopt;
  const Json& rows = plan[0]["Plan"]["Plan Rows"];
  if (!rows.is_number()) return std::nullopt;
  return rows.get<int64_t>();
}

}  // namespace faucet::mirror
