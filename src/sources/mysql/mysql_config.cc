#include "sources/mysql/mysql_config.h"

#include <charconv>

namespace faucet {
namespace {

constexpr int64_t kMaxSeconds = 365LL * 24 * 3600;

Result<mysql::Endpoint> ParseEndpoint(const config::Block& block, bool database_required) {
  mysql::Endpoint e;
  ASSIGN_OR_RETURN(e.url, block.RequiredString("connection_url"));
  Result<MysqlUrl> parts = ParseMysqlUrl(e.url, database_required);
  if (!parts.ok()) return block.Error("connection_url", parts.status().message());
  e.parts = *std::move(parts);
  ASSIGN_OR_RETURN(e.tls, mysql::ParseTls(block));
  return e;
}

Result<std::set<std::string>> TableList(const config::Block& block, const std::string& key) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, block.StringList(key));
  std::set<std::string> out;
  for (const std::string& name : names) {
    const size_t dot = name.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) {
      return block.Error(key, "'" + name + "' is not a db.table name");
    }
    out.insert(name);
  }
  return out;
}

// `start_position: {type: current | earliest | gtid_set (value) | file_pos (file, pos)}`.
Result<MysqlStartPosition> ParseStart(const config::Block& block) {
  MysqlStartPosition p;
  if (!block.Has("start_position")) return p;
  ASSIGN_OR_RETURN(config::Block b, block.Child("start_position"));
  if (!b.Has("type")) return b.Error("type", "is required (current, earliest, gtid_set, file_pos)");
  ASSIGN_OR_RETURN(std::string kind,
                   b.Enum("type", "", {"current", "earliest", "gtid_set", "file_pos"}));
  if (kind == "earliest") p.kind = MysqlStartPosition::Kind::kEarliest;
  if (kind == "gtid_set") {
    p.kind = MysqlStartPosition::Kind::kGtidSet;
    ASSIGN_OR_RETURN(p.gtid_set, b.RequiredString("value"));
    if (p.gtid_set.empty()) return b.Error("value", "must not be empty");
  }
  if (kind == "file_pos") {
    p.kind = MysqlStartPosition::Kind::kFilePos;
    ASSIGN_OR_RETURN(p.file, b.RequiredString("file"));
    if (p.file.empty() || p.file.find('/') != std::string::npos) {
      return b.Error("file", "must be a binlog file name such as binlog.000001");
    }
    ASSIGN_OR_RETURN(int64_t pos, b.Int("pos", 4, 4, int64_t{1} << 40));
    p.pos = static_cast<uint64_t>(pos);
  }
  return p;
}

}  // namespace

bool MysqlCdcConfig::Streams(const std::string& db, const std::string& table) const {
  if (include_tables.empty() && exclude_tables.empty()) return true;
  const std::string name = db + "." + table;
  if (!include_tables.empty()) return include_tables.count(name) > 0;
  return exclude_tables.count(name) == 0;
}

Result<MysqlCdcConfig> ParseMysqlCdcConfig(const config::Block& block) {
  MysqlCdcConfig c;
  ASSIGN_OR_RETURN(c.endpoint, ParseEndpoint(block, /*database_required=*/false));
  if (!block.Has("server_id")) {
    return block.Error("server_id",
                       "is required: a number from 1 to 4294967295, unique among the "
                       "server's replicas");
  }
  ASSIGN_OR_RETURN(int64_t server_id, block.Int("server_id", 0, 1, 4294967295LL));
  c.server_id = static_cast<uint32_t>(server_id);
  ASSIGN_OR_RETURN(c.include_tables, TableList(block, "include_tables"));
  ASSIGN_OR_RETURN(c.exclude_tables, TableList(block, "exclude_tables"));
  ASSIGN_OR_RETURN(c.start_position, ParseStart(block));
  ASSIGN_OR_RETURN(c.include_columns, block.Bool("include_columns", true));
  ASSIGN_OR_RETURN(c.emit_schema_changes, block.Bool("emit_schema_changes", false));
  if (c.emit_schema_changes) {
    return block.Error("emit_schema_changes",
                       "true is not supported: faucet does not emit DDL statements as records; "
                       "a schema change is read from the binlog and applies to the changes "
                       "after it (their columns)");
  }
  ASSIGN_OR_RETURN(int64_t idle, block.Int("idle_timeout", 30, 1, kMaxSeconds));
  c.idle_timeout = std::chrono::seconds(idle);
  ASSIGN_OR_RETURN(int64_t batch, block.Int("batch_size", 1000, 1, 1'000'000));
  c.batch_size = static_cast<size_t>(batch);
  return c;
}

Result<MysqlQueryConfig> ParseMysqlQueryConfig(const config::Block& block) {
  MysqlQueryConfig c;
  ASSIGN_OR_RETURN(c.endpoint, ParseEndpoint(block, /*database_required=*/true));
  ASSIGN_OR_RETURN(c.query, block.RequiredString("query"));
  ASSIGN_OR_RETURN(int64_t batch, block.Int("batch_size", 1000, 1, 1'000'000));
  c.batch_size = static_cast<size_t>(batch);
  return c;
}

}  // namespace faucet
