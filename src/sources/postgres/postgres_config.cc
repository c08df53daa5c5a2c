#include "sources/postgres/postgres_config.h"

#include <libpq-fe.h>

#include "core/redact.h"

namespace faucet {
namespace {

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

Result<std::chrono::milliseconds> Seconds(const config::Block& block, const std::string& key,
                                          int64_t fallback) {
  ASSIGN_OR_RETURN(int64_t s, block.Int(key, fallback, 1, kMaxSeconds));
  return std::chrono::milliseconds(s * 1000);
}

Result<PostgresTls> ParseTls(const config::Block& block) {
  PostgresTls tls;
  ASSIGN_OR_RETURN(std::optional<config::Block> b, block.OptionalChild("tls"));
  if (!b) return tls;
  if (!b->Has("mode")) {
    return b->Error("mode", "is required (disable, require, verify_ca or verify_full)");
  }
  ASSIGN_OR_RETURN(std::string mode,
                   b->Enum("mode", "", {"disable", "require", "verify_ca", "verify_full"}));
  if (mode == "disable") tls.mode = PostgresTlsMode::kDisable;
  if (mode == "require") tls.mode = PostgresTlsMode::kRequire;
  if (mode == "verify_ca") tls.mode = PostgresTlsMode::kVerifyCa;
  if (mode == "verify_full") tls.mode = PostgresTlsMode::kVerifyFull;
  ASSIGN_OR_RETURN(tls.ca_path, b->OptionalString("ca_path"));
  if (tls.ca_path && tls.mode != PostgresTlsMode::kVerifyCa &&
      tls.mode != PostgresTlsMode::kVerifyFull) {
    return b->Error("ca_path", "applies only to mode verify_ca or verify_full");
  }
  return tls;
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
  ASSIGN_OR_RETURN(c.idle_timeout, Seconds(block, "idle_timeout", 30));
  ASSIGN_OR_RETURN(c.max_cycle_duration, Seconds(block, "max_cycle_duration", 300));
  ASSIGN_OR_RETURN(c.status_update_interval, Seconds(block, "status_update_interval", 10));
  if (c.status_update_interval >= c.idle_timeout) {
    // Otherwise an idle cycle could end before its first status update moved the slot.
    return block.Error(
        "status_update_interval",
        "must be less than idle_timeout (" + std::to_string(c.idle_timeout.count() / 1000) + " s)");
  }
  ASSIGN_OR_RETURN(int64_t batch, block.Int("batch_size", 1000, 1, 1'000'000));
  c.batch_size = static_cast<size_t>(batch);
  ASSIGN_OR_RETURN(int64_t retries, block.Int("slot_acquire_retries", 10, 0, 1000));
  c.slot_acquire_retries = static_cast<int>(retries);
  ASSIGN_OR_RETURN(c.tls, ParseTls(block));
  return c;
}

Result<PostgresQueryConfig> ParsePostgresQueryConfig(const config::Block& block) {
  PostgresQueryConfig c;
  ASSIGN_OR_RETURN(c.connection_url, block.RequiredString("connection_url"));
  RETURN_IF_ERROR(CheckConnectionUrl(block, c.connection_url));
  ASSIGN_OR_RETURN(c.query, block.RequiredString("query"));
  ASSIGN_OR_RETURN(int64_t batch, block.Int("batch_size", 1000, 1, 1'000'000));
  c.batch_size = static_cast<size_t>(batch);
  return c;
}

}  // namespace faucet
