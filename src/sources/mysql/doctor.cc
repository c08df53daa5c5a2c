#include "sources/mysql/doctor.h"

#include <mysqld_error.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "clients/mysql/connection.h"
#include "core/redact.h"

namespace faucet::mysql {
namespace {

// Binlogs kept for less than this are worth a warning: the time a snapshot of a large table,
// or a pipeline stopped over a night, may need before it reads them.
constexpr int64_t kRetentionWarnSeconds = 24 * 3600;

// At most this many names in one detail.
constexpr size_t kMaxListed = 20;

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string List(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxListed; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > kMaxListed) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

// "7 days", "36 hours", "90 minutes", "45 seconds".
std::string Duration(int64_t seconds) {
  auto unit = [](int64_t n, const char* name) {
    return std::to_string(n) + " " + name + (n == 1 ? "" : "s");
  };
  if (seconds % 86400 == 0) return unit(seconds / 86400, "day");
  if (seconds % 3600 == 0) return unit(seconds / 3600, "hour");
  if (seconds % 60 == 0) return unit(seconds / 60, "minute");
  return unit(seconds, "second");
}

std::optional<double> Number(const std::string& text) {
  double v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

// One identifier of a SHOW GRANTS target: `name` (backquotes doubled inside) or bare.
std::string Unquote(std::string_view s) {
  if (s.size() < 2 || s.front() != '`' || s.back() != '`') return std::string(s);
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    out += s[i];
    if (s[i] == '`' && i + 2 < s.size() && s[i + 1] == '`') ++i;
  }
  return out;
}

// The privileges of the connected user, from SHOW GRANTS lines such as
//   GRANT REPLICATION SLAVE, SELECT (a, b) ON *.* TO `u`@`%` IDENTIFIED BY PASSWORD '*...'
//   GRANT ALL PRIVILEGES ON `db`.* TO `u`@`%`
//   GRANT SELECT ON `db`.`t` TO `u`@`%`
//   GRANT `role` TO `u`@`%`
// Column privileges ("SELECT (a, b)") grant no table-wide SELECT; routine grants are skipped.
class Grants {
 public:
  void Parse(const std::string& line) {
    const std::string upper = Upper(line);
    if (upper.rfind("GRANT ", 0) != 0) return;
    const size_t on = FindTopLevel(upper, " ON ");
    if (on == std::string::npos) {  // GRANT `role` TO ...
      has_roles_ = true;
      return;
    }
    std::string target = line.substr(on + 4);
    target = target.substr(0, FindTopLevel(target, " TO "));
    target = Trim(target);
    const std::string target_upper = Upper(target);
    if (target_upper.rfind("FUNCTION ", 0) == 0 || target_upper.rfind("PROCEDURE ", 0) == 0 ||
        target_upper.rfind("PACKAGE", 0) == 0) {
      return;
    }
    std::set<std::string>& privs = target == "*.*" ? global_ : on_[Target(target)];
    std::string list = upper.substr(6, on - 6);
    size_t depth = 0;
    std::string item;
    for (char c : list + ",") {
      if (c == '(') ++depth;
      if (c == ')' && depth > 0) --depth;
      if (c == ',' && depth == 0) {
        item = Trim(item);
        if (item.find('(') == std::string::npos) privs.insert(item);  // column grants: no
        item.clear();
      } else {
        item += c;
      }
    }
  }

  bool Global(const std::string& priv) const {
    return global_.count("ALL PRIVILEGES") > 0 || global_.count("ALL") > 0 ||
           global_.count(priv) > 0;
  }
  bool MaySelect(const std::string& db, const std::string& table) const {
    if (Global("SELECT")) return true;
    for (const auto& key : {db + ".*", db + "." + table}) {
      auto it = on_.find(key);
      if (it != on_.end() &&
          (it->second.count("SELECT") > 0 || it->second.count("ALL PRIVILEGES") > 0 ||
           it->second.count("ALL") > 0)) {
        return true;
      }
    }
    return false;
  }
  bool has_roles() const { return has_roles_; }

 private:
  // `needle` outside backquotes and quotes.
  static size_t FindTopLevel(const std::string& s, const std::string& needle) {
    char quote = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (quote != 0) {
        if (s[i] == quote) quote = 0;
        continue;
      }
      if (s[i] == '`' || s[i] == '\'' || s[i] == '"') {
        quote = s[i];
        continue;
      }
      if (s.compare(i, needle.size(), needle) == 0) return i;
    }
    return std::string::npos;
  }
  // "`db`.`t`" -> "db.t", "`db`.*" -> "db.*" (db-level wildcards such as `db\_%` are kept as
  // written, with their escapes undone: an exact name only).
  static std::string Target(const std::string& target) {
    const size_t dot = FindTopLevel(target, ".");
    std::string db = Unquote(target.substr(0, dot));
    std::string unescaped;
    for (size_t i = 0; i < db.size(); ++i) {
      if (db[i] == '\\' && i + 1 < db.size()) ++i;
      unescaped += db[i];
    }
    const std::string table = dot == std::string::npos ? "*" : Unquote(target.substr(dot + 1));
    return unescaped + "." + table;
  }

  std::set<std::string> global_;
  std::map<std::string, std::set<std::string>> on_;  // "db.*" / "db.t" -> privileges
  bool has_roles_ = false;
};

class Doctor {
 public:
  Doctor(const MysqlCdcConfig& config, const DoctorResume& resume)
      : config_(config), resume_(resume) {}

  DoctorReport Run() {
    Result<ConnPtr> conn = Connect(config_.endpoint, "mysql-cdc");
    if (!conn.ok()) {
      report_.Add("connection", DoctorOutcome::kFail, conn.status().message());
      return std::move(report_);
    }
    conn_ = std::move(conn).value();
    std::string user = config_.endpoint.parts.user;
    if (Result<Rows> r = Fetch(conn_.get(), "SELECT CURRENT_USER()", "connection");
        r.ok() && !r->empty() && (*r)[0][0]) {
      user = *(*r)[0][0];
    }
    report_.Add("connection", DoctorOutcome::kOk,
                Redact("connected to " + config_.endpoint.url + " as " + user));
    if (!ReadVariables()) return std::move(report_);
    CheckVersion();
    CheckBinlogSettings();
    CheckPrivileges();
    CheckServerId();
    CheckRetention();
    CheckStartPosition();
    CheckTables();
    return std::move(report_);
  }

 private:
  // Runs `sql`; a failure becomes a failed check named `check` and returns nullopt.
  std::optional<Rows> RunQuery(const std::string& check, const std::string& sql) {
    Result<Rows> r = Fetch(conn_.get(), sql, check);
    if (!r.ok()) {
      report_.Add(check, DoctorOutcome::kFail, Redact(r.status().message()));
      return std::nullopt;
    }
    return std::move(r).value();
  }

  // The first query whose statement the server knows (MariaDB and MySQL renamed some SHOW
  // statements), or the last one's failure.
  Result<Rows> FirstKnown(const std::vector<std::string>& statements, const std::string& what) {
    Result<Rows> r = Rows();
    for (const std::string& sql : statements) {
      r = Fetch(conn_.get(), sql, what);
      if (r.ok() || mysql_errno(conn_.get()) != ER_PARSE_ERROR) return r;
    }
    return r;
  }

  // Server variables, read with SHOW (a variable this server does not have is just absent).
  bool ReadVariables() {
    std::optional<Rows> rows = RunQuery(
        "server_version",
        "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('version', 'version_comment', 'log_bin',"
        " 'binlog_format', 'binlog_row_image', 'binlog_row_metadata', 'binlog_checksum',"
        " 'server_id', 'expire_logs_days', 'binlog_expire_logs_seconds',"
        " 'binlog_expire_logs_auto_purge', 'max_binlog_total_size', 'binlog_space_limit')");
    if (!rows) return false;
    for (const auto& row : *rows) {
      if (row.size() >= 2 && row[0] && row[1]) vars_[*row[0]] = *row[1];
    }
    return true;
  }

  std::optional<std::string> Var(const std::string& name) const {
    auto it = vars_.find(name);
    if (it == vars_.end()) return std::nullopt;
    return it->second;
  }

  void CheckVersion() {
    const std::string version = Var("version").value_or("?");
    const bool mariadb = version.find("MariaDB") != std::string::npos;
    mariadb_ = mariadb;
    report_.Add("server_version", DoctorOutcome::kOk,
                std::string(mariadb ? "" : "MySQL ") + version +
                    (Var("version_comment") ? " (" + *Var("version_comment") + ")" : ""));
  }

  void CheckBinlogSettings() {
    const std::string log_bin = Upper(Var("log_bin").value_or("OFF"));
    if (log_bin == "ON" || log_bin == "1") {
      report_.Add("log_bin", DoctorOutcome::kOk, "ON");
    } else {
      report_.Add("log_bin", DoctorOutcome::kFail,
                  "binary logging is off: start the server with log_bin (log-bin = <basename>), "
                  "binlog_format = ROW and a server_id");
    }

    const std::string format = Upper(Var("binlog_format").value_or("?"));
    if (format == "ROW") {
      report_.Add("binlog_format", DoctorOutcome::kOk, "ROW");
    } else {
      report_.Add("binlog_format", DoctorOutcome::kFail,
                  "binlog_format is " + format +
                      ": statements are logged instead of rows, and mysql-cdc reads rows. Set "
                      "binlog_format = ROW in the server's config and SET GLOBAL binlog_format "
                      "= 'ROW' (sessions already connected keep their format until they "
                      "reconnect)");
    }

    const std::optional<std::string> image = Var("binlog_row_image");
    if (image && Upper(*image) == "FULL") {
      report_.Add("binlog_row_image", DoctorOutcome::kOk, "FULL");
    } else {
      report_.Add("binlog_row_image", DoctorOutcome::kWarn,
                  "binlog_row_image is " + (image ? Upper(*image) : std::string("unknown")) +
                      ": updates and deletes then leave out columns they did not change, which "
                      "the stream marks as unchanged (like Postgres' unchanged TOAST): an "
                      "upsert keeps their old values, but `before` images are partial. Set "
                      "binlog_row_image = FULL");
    }

    const std::optional<std::string> metadata = Var("binlog_row_metadata");
    const std::string catalog_caveat =
        ": column names, keys and ENUM/SET members are then read from the catalog, which is "
        "wrong for a row written before an ALTER TABLE that the source has not read past yet";
    if (metadata && Upper(*metadata) == "FULL") {
      report_.Add("binlog_row_metadata", DoctorOutcome::kOk, "FULL");
    } else if (metadata) {
      report_.Add("binlog_row_metadata", DoctorOutcome::kWarn,
                  "binlog_row_metadata is " + Upper(*metadata) + catalog_caveat +
                      ". Set binlog_row_metadata = FULL");
    } else {
      report_.Add("binlog_row_metadata", DoctorOutcome::kWarn,
                  "this server has no binlog_row_metadata (MariaDB before 10.5, MySQL before "
                  "8.0.1)" +
                      catalog_caveat);
    }

    const std::string checksum = Upper(Var("binlog_checksum").value_or("NONE"));
    if (checksum == "NONE" || checksum == "CRC32") {
      report_.Add("binlog_checksum", DoctorOutcome::kOk,
                  checksum + (checksum == "CRC32" ? " (verified on every event)" : ""));
    } else {
      report_.Add("binlog_checksum", DoctorOutcome::kFail,
                  "binlog_checksum " + checksum + " is not supported: set NONE or CRC32");
    }
  }

  // The streamed tables that exist, as "db.table" -> has a primary key. Read once.
  const std::map<std::string, bool>* Tables() {
    if (tables_read_) return tables_ok_ ? &tables_ : nullptr;
    tables_read_ = true;
    std::optional<Rows> rows = RunQuery(
        "tables",
        "SELECT t.TABLE_SCHEMA, t.TABLE_NAME, EXISTS (SELECT 1 FROM "
        "information_schema.TABLE_CONSTRAINTS c WHERE c.TABLE_SCHEMA = t.TABLE_SCHEMA AND "
        "c.TABLE_NAME = t.TABLE_NAME AND c.CONSTRAINT_TYPE = 'PRIMARY KEY') FROM "
        "information_schema.TABLES t WHERE t.TABLE_TYPE = 'BASE TABLE' AND t.TABLE_SCHEMA NOT "
        "IN ('mysql', 'information_schema', 'performance_schema', 'sys')");
    if (!rows) return nullptr;
    for (const auto& row : *rows) {
      if (row.size() < 3 || !row[0] || !row[1]) continue;
      if (!config_.Streams(*row[0], *row[1])) continue;
      tables_[*row[0] + "." + *row[1]] = row[2].value_or("0") == "1";
    }
    tables_ok_ = true;
    return &tables_;
  }

  void CheckPrivileges() {
    std::optional<Rows> rows = RunQuery("privileges", "SHOW GRANTS");
    if (!rows) return;
    Grants grants;
    for (const auto& row : *rows) {
      if (!row.empty() && row[0]) grants.Parse(*row[0]);
    }
    std::vector<std::string> missing;
    if (!grants.Global("REPLICATION SLAVE") && !grants.Global("REPLICATION REPLICA")) {
      missing.emplace_back("REPLICATION SLAVE");
    }
    if (!grants.Global("REPLICATION CLIENT") && !grants.Global("BINLOG MONITOR")) {
      missing.emplace_back(mariadb_ ? "BINLOG MONITOR" : "REPLICATION CLIENT");
    }
    const std::string roles =
        grants.has_roles() ? " (privileges granted through roles are not followed)" : "";
    if (!missing.empty()) {
      std::string list;
      for (const std::string& p : missing) list += (list.empty() ? "" : ", ") + p;
      report_.Add("privileges", DoctorOutcome::kFail,
                  "the user lacks " + list + " (needed to read the binlog and its positions)" +
                      roles + ": GRANT " + list + " ON *.* TO <user>");
      return;
    }
    std::vector<std::string> no_select;
    if (!grants.Global("SELECT")) {
      if (!config_.include_tables.empty()) {
        for (const std::string& name : config_.include_tables) {
          const size_t dot = name.find('.');
          if (!grants.MaySelect(name.substr(0, dot), name.substr(dot + 1))) {
            no_select.push_back(name);
          }
        }
      } else if (const auto* tables = Tables()) {
        for (const auto& [name, has_key] : *tables) {
          const size_t dot = name.find('.');
          if (!grants.MaySelect(name.substr(0, dot), name.substr(dot + 1))) {
            no_select.push_back(name);
          }
        }
      }
    }
    if (!no_select.empty()) {
      report_.Add("privileges", DoctorOutcome::kWarn,
                  "replication privileges granted, but not SELECT on " + List(no_select) + roles +
                      ": a mirror's snapshot reads the tables, and without FULL row metadata "
                      "the source reads their columns from the catalog. GRANT SELECT ON ... "
                      "TO <user>");
      return;
    }
    if (grants.Global("ALL PRIVILEGES")) {
      report_.Add("privileges", DoctorOutcome::kOk,
                  "ALL PRIVILEGES ON *.*: replication and SELECT included");
      return;
    }
    report_.Add(
        "privileges", DoctorOutcome::kOk,
        "REPLICATION SLAVE, " +
            std::string(grants.Global("BINLOG MONITOR") ? "BINLOG MONITOR" : "REPLICATION CLIENT") +
            " and SELECT on the streamed tables");
  }

  void CheckServerId() {
    const std::string own_text = Var("server_id").value_or("?");
    const std::string id = std::to_string(config_.server_id);
    if (own_text == id) {
      report_.Add("server_id", DoctorOutcome::kFail,
                  "server_id " + id +
                      " is the server's own @@server_id: choose another number, unique among "
                      "the server's replicas");
      return;
    }
    Result<Rows> replicas = FirstKnown({"SHOW SLAVE HOSTS", "SHOW REPLICAS"}, "server_id");
    if (!replicas.ok()) {
      report_.Add("server_id", DoctorOutcome::kOk,
                  "server_id " + id + " differs from the server's own (" + own_text +
                      "); its replicas could not be listed to check for a clash (" +
                      Redact(replicas.status().message()) + ")");
      return;
    }
    for (const auto& row : *replicas) {
      if (row.size() >= 3 && row[0] && *row[0] == id) {
        report_.Add("server_id", DoctorOutcome::kWarn,
                    "server_id " + id + " is used by a replica connected from " +
                        row[1].value_or("?") + ":" + row[2].value_or("?") +
                        " (SHOW SLAVE HOSTS): unless that is this pipeline running now, the "
                        "server disconnects one of the two when both read the binlog; choose "
                        "another number");
        return;
      }
    }
    report_.Add("server_id", DoctorOutcome::kOk,
                "server_id " + id + " differs from the server's own (" + own_text +
                    ") and no replica of the server uses it (" + std::to_string(replicas->size()) +
                    " listed)");
  }

  void CheckRetention() {
    // MySQL 8 and MariaDB 10.6+: binlog_expire_logs_seconds, which wins when set; before
    // them, expire_logs_days (fractional days in MariaDB).
    const std::optional<double> seconds = Number(Var("binlog_expire_logs_seconds").value_or("0"));
    const std::optional<double> days = Number(Var("expire_logs_days").value_or("0"));
    int64_t keep = 0;
    if (seconds && *seconds > 0) {
      keep = std::llround(*seconds);
    } else if (days && *days > 0) {
      keep = std::llround(*days * 86400);
    }
    const bool auto_purge = Upper(Var("binlog_expire_logs_auto_purge").value_or("ON")) != "OFF";
    std::string size_limit;
    for (const char* name : {"max_binlog_total_size", "binlog_space_limit"}) {
      std::optional<double> bytes = Number(Var(name).value_or("0"));
      if (bytes && *bytes > 0 && size_limit.empty()) {
        size_limit = std::string("; ") + name + " = " + *Var(name) +
                     ": the oldest binlogs are also purged when they exceed that size";
      }
    }
    if (keep == 0 || !auto_purge) {
      report_.Add("binlog_retention",
                  size_limit.empty() ? DoctorOutcome::kOk : DoctorOutcome::kWarn,
                  "binlogs are kept until purged by hand (expire_logs_days = 0, "
                  "binlog_expire_logs_seconds = 0): a stopped pipeline can always resume; "
                  "watch the disk" +
                      size_limit);
      return;
    }
    std::string text = "binlogs are purged after " + Duration(keep);
    if (keep < kRetentionWarnSeconds) {
      report_.Add("binlog_retention", DoctorOutcome::kWarn,
                  text +
                      ", less than a day: a snapshot of a large table or a pipeline stopped "
                      "longer than that loses its position and needs a resync. Raise "
                      "binlog_expire_logs_seconds (or expire_logs_days)" +
                      size_limit);
      return;
    }
    report_.Add("binlog_retention", size_limit.empty() ? DoctorOutcome::kOk : DoctorOutcome::kWarn,
                text + ": a pipeline stopped longer than that needs a resync" + size_limit);
  }

  void CheckStartPosition() {
    std::string file;
    uint64_t pos = 0;
    std::string origin;
    if (!resume_.error.empty()) {
      report_.Add("start_position", DoctorOutcome::kWarn,
                  "the persisted position could not be read: " + Redact(resume_.error));
      return;
    }
    if (resume_.bookmark) {
      const Json& b = resume_.bookmark->value;
      if (!b.is_object() || !b.contains("file") || !b["file"].is_string() || !b.contains("pos") ||
          !b["pos"].is_number_integer() || b["pos"].get<int64_t>() < 0) {
        report_.Add("start_position", DoctorOutcome::kFail,
                    "the persisted bookmark" +
                        (resume_.where.empty() ? "" : " under " + resume_.where) + " (" +
                        resume_.bookmark->ToString() +
                        ") is not a mysql-cdc bookmark {\"file\": ..., \"pos\": ...}");
        return;
      }
      file = b["file"].get<std::string>();
      pos = static_cast<uint64_t>(b["pos"].get<int64_t>());
      origin = "the persisted bookmark" + (resume_.where.empty() ? "" : " (" + resume_.where + ")");
    } else if (config_.start_position.kind == MysqlStartPosition::Kind::kFilePos) {
      file = config_.start_position.file;
      pos = config_.start_position.pos;
      origin = "start_position file_pos";
    }
    Result<Rows> logs = Fetch(conn_.get(), "SHOW BINARY LOGS", "start_position");
    if (!logs.ok()) {
      report_.Add("start_position", DoctorOutcome::kFail,
                  "cannot list the server's binlogs: " + Redact(logs.status().message()));
      return;
    }
    if (logs->empty()) {
      report_.Add("start_position", DoctorOutcome::kFail, "the server lists no binlogs");
      return;
    }
    const std::string oldest = (*logs).front()[0].value_or("?");
    const std::string newest = (*logs).back()[0].value_or("?");
    if (!file.empty()) {
      const std::string where = file + ":" + std::to_string(pos);
      for (const auto& row : *logs) {
        if (row.size() < 2 || row[0] != file) continue;
        const std::optional<double> size = Number(row[1].value_or(""));
        if (size && static_cast<double>(pos) > *size) {
          report_.Add("start_position", DoctorOutcome::kFail,
                      origin + " " + where + " is past the end of " + file + " (" + *row[1] +
                          " bytes): not a position this server wrote");
          return;
        }
        report_.Add("start_position", DoctorOutcome::kOk,
                    origin + " " + where + ": the server still has " + file + " (binlogs " +
                        oldest + " to " + newest + ")");
        return;
      }
      // Binlog names share a base and a zero-padded sequence number: one older than the
      // oldest left was purged.
      if (file < oldest) {
        report_.Add("start_position", DoctorOutcome::kFail,
                    origin + " " + where + ": binlog " + file +
                        " was purged (the oldest the server has is " + oldest +
                        "): binlog purged, a resync is needed (a mirror from scratch, or a new "
                        "start position after deleting the pipeline's state)");
      } else {
        report_.Add("start_position", DoctorOutcome::kFail,
                    origin + " " + where + ": the server has no binlog " + file + " (it has " +
                        oldest + " to " + newest +
                        "): a position from another server? A resync is needed");
      }
      return;
    }
    switch (config_.start_position.kind) {
      case MysqlStartPosition::Kind::kEarliest:
        report_.Add("start_position", DoctorOutcome::kOk,
                    "no persisted bookmark: the first run starts at the oldest binlog, " + oldest);
        return;
      case MysqlStartPosition::Kind::kGtidSet:
        report_.Add("start_position", DoctorOutcome::kOk,
                    "no persisted bookmark: the first run starts after GTID set " +
                        config_.start_position.gtid_set +
                        " (the server refuses it then if it no longer has those binlogs)");
        return;
      default: {
        Result<Rows> status =
            FirstKnown({"SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"}, "start_position");
        std::string now;
        if (status.ok() && !status->empty() && status->front().size() >= 2) {
          now =
              ", now " + status->front()[0].value_or("?") + ":" + status->front()[1].value_or("?");
        }
        report_.Add("start_position", DoctorOutcome::kOk,
                    "no persisted bookmark: the first run starts at the binlog's end" + now);
        return;
      }
    }
  }

  void CheckTables() {
    const std::map<std::string, bool>* tables = Tables();
    if (tables == nullptr) return;  // the failed query is already reported
    std::vector<std::string> absent;
    for (const std::string& name : config_.include_tables) {
      if (tables->count(name) == 0) absent.push_back(name);
    }
    std::vector<std::string> no_key;
    for (const auto& [name, has_key] : *tables) {
      if (!has_key) no_key.push_back(name);
    }
    std::vector<std::string> problems;
    if (!absent.empty()) {
      problems.push_back(
          "include_tables names tables that do not exist (or that the user may "
          "not see): " +
          List(absent));
    }
    if (!no_key.empty()) {
      problems.push_back("no primary key on " + List(no_key) +
                         ": keyed upserts and deletes need one (add a primary key, or write "
                         "in append mode)");
    }
    if (tables->empty() && absent.empty()) {
      problems.emplace_back("no existing table is streamed yet: nothing will be captured");
    }
    if (!problems.empty()) {
      std::string text;
      for (const std::string& p : problems) text += (text.empty() ? "" : "; ") + p;
      report_.Add("tables", DoctorOutcome::kWarn, text);
      return;
    }
    std::vector<std::string> names;
    for (const auto& [name, has_key] : *tables) names.push_back(name);
    report_.Add("tables", DoctorOutcome::kOk,
                std::to_string(names.size()) + " table" + (names.size() == 1 ? "" : "s") +
                    " streamed, each with a primary key: " + List(names));
  }

  const MysqlCdcConfig& config_;
  const DoctorResume& resume_;
  ConnPtr conn_;
  DoctorReport report_;
  std::map<std::string, std::string> vars_;
  bool mariadb_ = false;
  bool tables_read_ = false;
  bool tables_ok_ = false;
  std::map<std::string, bool> tables_;
};

}  // namespace

Result<DoctorReport> RunDoctor(const MysqlCdcConfig& config, const DoctorResume& resume) {
  return Doctor(config, resume).Run();
}

}  // namespace faucet::mysql
