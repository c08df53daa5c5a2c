#include "sources/postgres/postgres_config.h"

#include <libpq-fe.h>

#include "core/redact.h"

namespace faucet {
namespace {

using std::chrono::milliseconds;

constexpr int64_t kMaxSeconds = 365LL * 24 * 3600;

// Syntax only (libpq's own parser, no connection), so that a typo is a config error.
Status CheckConnectionUrl(const config::Block& block, const std::string& url) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (options == nullptr) {
    std::string why = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return block.Error("connection_url",
                       "is not a valid PostgreSQL connection URL: " + Redact(why));
  }
  PQconninfoFree(options);
  return Status::Ok();
}

bool ValidSlotName(const std::string& name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// A whole number of seconds >= 1 written under `key`, or nothing when the key is absent.
Result<std::optional<milliseconds>> OptionalSeconds(const config::Block& block,
                                                    const std::string& key) {
  ASSIGN_OR_RETURN(std::optional<int64_t> s, block.OptionalInt(key, 1, kMaxSeconds));
  if (!s) return std::optional<milliseconds>();
  return std::optional<milliseconds>(*s * 1000);
}

}  // namespace

Result<PostgresCdcConfig> ParsePostgresCdcConfig(const config::Block& block) {
  PostgresCdcConfig c;
  ASSIGN_OR_RETURN(c.connection_url, block.RequiredString("connection_url"));
  RETURN_IF_ERROR(CheckConnectionUrl(block, c.connection_url));
  ASSIGN_OR_RETURN(c.slot_name, block.RequiredString("slot_name"));
  if (!ValidSlotName(c.slot_name)) {
    return block.Error("slot_name",
                       "must be 1-63 characters of a-z, 0-9 and _, got '" + c.slot_name + "'");
  }
  ASSIGN_OR_RETURN(c.publication_name, block.RequiredString("publication_name"));
  ASSIGN_OR_RETURN(c.create_slot_if_missing, block.Bool("create_slot_if_missing", true));
  ASSIGN_OR_RETURN(std::string slot_type,
                   block.Enum("slot_type", "permanent", {"permanent", "temporary"}));
  c.temporary_slot = slot_type == "temporary";
  ASSIGN_OR_RETURN(std::optional<std::string> start_lsn, block.OptionalString("start_lsn"));
  if (start_lsn) {
    Result<Lsn> lsn = Lsn::Parse(*start_lsn);
    if (!lsn.ok()) return block.Error("start_lsn", lsn.status().message());
    c.start_lsn = *lsn;
  }
  ASSIGN_OR_RETURN(int64_t proto, block.Int("proto_version", 2, 1, 2));
  c.proto_version = static_cast<int>(proto);
  ASSIGN_OR_RETURN(std::optional<milliseconds> max_cycle,
                   OptionalSeconds(block, "max_cycle_duration"));
  c.max_cycle_duration = max_cycle.value_or(c.max_cycle_duration);
  // The status interval must stay below the idle timeout, or an idle cycle could end before its
  // first status update moved the slot. A plain default (c holds them) that would contradict the
  // value written for the other key follows it instead; only a pair the user wrote can clash.
  ASSIGN_OR_RETURN(std::optional<milliseconds> idle, OptionalSeconds(block, "idle_timeout"));
  ASSIGN_OR_RETURN(std::optional<milliseconds> status,
                   OptionalSeconds(block, "status_update_interval"));
  c.idle_timeout = idle.value_or(c.idle_timeout);
  c.status_update_interval = status.value_or(c.status_update_interval);
  if (!idle && c.status_update_interval >= c.idle_timeout) {
    c.idle_timeout = 2 * c.status_update_interval;
  }
  if (!status && c.status_update_interval >= c.idle_timeout) {
    c.status_update_interval = c.idle_timeout / 2;
  }
  if (c.status_update_interval >= c.idle_timeout) {
    return block.Error(
        "status_update_interval",
        "must be less than idle_timeout (" + std::to_string(c.idle_timeout.count() / 1000) + " s)");
  }
  ASSIGN_OR_RETURN(int64_t batch, block.Int("batch_size", 1000, 1, 1'000'000));
  c.batch_size = static_cast<size_t>(batch);
  ASSIGN_OR_RETURN(int64_t retries, block.Int("slot_acquire_retries", 10, 0, 1000));
  c.slot_acquire_retries = static_cast<int>(retries);
  ASSIGN_OR_RETURN(c.tls, postgres::ParseTls(block));
  return c;
}

Result<PostgresQueryConfig> ParsePostgresQueryConfig(const config::Block& block) {
  PostgresQueryConfig c;
  ASSIGN_OR_RETURN(c.connection_url, block.RequiredString("connection_url"));
  RETURN_IF_ERROR(CheckConnectionUrl(block, c.connection_url));
  ASSIGN_OR_RETURN(c.tls, postgres::ParseTls(block));
  ASSIGN_OR_RETURN(c.query, block.RequiredString("query"));
  ASSIGN_OR_RETURN(int64_t batch, block.Int("batch_size", 1000, 1, 1'000'000));
  c.batch_size = static_cast<size_t>(batch);
  return c;
}

}  // namespace faucet
