#include "destinations.h"

#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "kafka_tail.h"
#include "mysql_client.h"

namespace faucet::torture {
namespace {

constexpr const char* kDestTable = "torture_dst";

// The same rendering in SQLite's SQL (CAST for the integers, || and coalesce as in Postgres;
// length() counts characters of text in both).
constexpr const char* kSqliteRow =
    "coalesce(CAST(id AS TEXT), 'N') || '|' || coalesce(CAST(version AS TEXT), 'N') || '|' || "
    "coalesce(length(small) || ':' || small, 'N') || '|' || "
    "coalesce(length(big) || ':' || big, 'N')";

// The same rendering in MariaDB's SQL (CHAR_LENGTH counts characters, as length() does in
// Postgres; CONCAT is NULL when a part is).
constexpr const char* kMariadbRow =
    "CONCAT(COALESCE(CAST(id AS CHAR), 'N'), '|', COALESCE(CAST(version AS CHAR), 'N'), '|', "
    "COALESCE(CONCAT(CHAR_LENGTH(small), ':', small), 'N'), '|', "
    "COALESCE(CONCAT(CHAR_LENGTH(big), ':', big), 'N'))";

// Rows per GROUP_CONCAT page: a row renders to at most ~9,200 bytes (big is at most 9,000
// ASCII characters, small 40 characters), so a page stays well under max_allowed_packet.
constexpr int kMariadbPageRows = 1000;

// The pipeline part of a SQL destination's config: cdc_unwrap into an upsert of kDestTable by
// id, `locate` being the sink's connection entry ("connection_url: ...").
std::string UpsertPipelineYaml(const std::string& type, const std::string& locate) {
  return "  transforms:\n"
         "    - type: cdc_unwrap\n"
         "      config: {}\n"
         "  sink:\n"
         "    type: " +
         type +
         "\n"
         "    config:\n"
         "      " +
         locate +
         "\n"
         "      table_name: " +
         kDestTable +
         "\n"
         "      column_mapping: auto_map\n"
         "      write_mode: upsert\n"
         "      key: [id]\n"
         "      delete_marker: {field: __op, values: [d]}\n";
}

size_t Utf8Length(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// For messages: control characters escaped, each field cut to 40 characters (never inside a
// UTF-8 sequence).
std::string Summarize(const std::string& rendering) {
  std::string out, field;
  auto flush = [&] {
    size_t cut = 0, n = 0;
    while (cut < field.size() && n < 40) {
      ++cut;
      while (cut < field.size() && (static_cast<unsigned char>(field[cut]) & 0xC0) == 0x80) ++cut;
      ++n;
    }
    out += field.substr(0, cut);
    if (cut < field.size()) out += "...(" + std::to_string(field.size()) + " bytes)";
  };
  for (char c : rendering) {
    if (c == '|') {
      flush();
      out += '|';
      field.clear();
    } else if (c == '\n') {
      field += "\\n";
    } else if (c == '\t') {
      field += "\\t";
    } else {
      field += c;
    }
  }
  flush();
  return out;
}

using RowMap = std::map<int64_t, std::string>;

RowMap PgRowMap(PgConn& conn, const std::string& table) {
  PgRows rows = conn.Exec("SELECT id, " + PgRowRendering() + " FROM " + table);
  RowMap out;
  for (int i = 0; i < rows.size(); ++i)
    out[rows.Int(i, 0)] = rows.Get(i, 1).value_or("<NULL rendering>");
  return out;
}

// The single source table, rendered by the database that holds it: Postgres, or MariaDB (its
// text hashed by Postgres).
class SourceTable {
 public:
  explicit SourceTable(const DestinationContext& ctx) : ctx_(ctx) {}

  // `pg`: the source database, or the Postgres server that hashes MariaDB's text.
  Aggregate Get(PgConn& pg) {
    if (ctx_.source == SourceKind::kPostgres) return PgAggregate(pg, "public." + ctx_.source_table);
    mysql::Rows pages =
        My().Fetch(std::string("SELECT COUNT(*), GROUP_CONCAT(r ORDER BY id SEPARATOR '\\n'), "
                               "SUM(LENGTH(r)) + COUNT(*) - 1 FROM (SELECT id, ") +
                   kMariadbRow + " AS r, (ROW_NUMBER() OVER (ORDER BY id) - 1) DIV " +
                   std::to_string(kMariadbPageRows) + " AS page FROM " + ctx_.source_table +
                   ") p GROUP BY page ORDER BY page");
    Aggregate a;
    std::string text;
    for (const auto& page : pages) {
      const std::string& t = page.at(1).value_or("");
      if (std::to_string(t.size()) != page.at(2).value_or("")) {
        throw TortureError("MariaDB's GROUP_CONCAT page is " + std::to_string(t.size()) +
                           " bytes, its rows " + page.at(2).value_or("NULL") + " (truncated?)");
      }
      if (a.rows > 0) text += '\n';
      text += t;
      a.rows += std::stoll(page.at(0).value_or("0"));
    }
    a.md5 = pg.Md5(text);
    return a;
  }

  std::map<int64_t, std::string> Rows(PgConn& pg) {
    if (ctx_.source == SourceKind::kPostgres) return PgRowMap(pg, "public." + ctx_.source_table);
    std::map<int64_t, std::string> out;
    for (const auto& row :
         My().Fetch(std::string("SELECT id, ") + kMariadbRow + " FROM " + ctx_.source_table)) {
      out[std::stoll(row.at(0).value_or("0"))] = row.at(1).value_or("<NULL rendering>");
    }
    return out;
  }

  std::string Who() const {
    return ctx_.source == SourceKind::kPostgres ? "Postgres"
                                                : "pages of text by MariaDB, md5 by Postgres";
  }

 private:
  MyConn& My() {
    if (!my_) {
      my_ = std::make_unique<MyConn>(ctx_.mysql_url);
      // Capped by max_allowed_packet in any case; the pages stay below both.
      my_->Exec("SET SESSION group_concat_max_len = 1073741824");
    }
    return *my_;
  }

  const DestinationContext& ctx_;
  std::unique_ptr<MyConn> my_;
};

// Row-by-row diff, for the report when the checksums differ.
void DiffRows(const RowMap& src, const RowMap& dst, Verdict& v) {
  int shown = 0;
  auto show = [&](const std::string& s) {
    if (shown++ < 12) v.details.push_back(s);
  };
  for (const auto& [id, r] : src) {
    auto it = dst.find(id);
    if (it == dst.end()) {
      ++v.lost;
      show("missing at destination: id " + std::to_string(id) + " source " + Summarize(r));
    } else if (it->second != r) {
      ++v.lost;
      show("differs: id " + std::to_string(id) + " source " + Summarize(r) + " destination " +
           Summarize(it->second));
    }
  }
  for (const auto& [id, r] : dst) {
    if (!src.count(id)) {
      ++v.extra;
      show("not in source (a delete not applied?): id " + std::to_string(id) + " destination " +
           Summarize(r));
    }
  }
}

// ---- Postgres -------------------------------------------------------------------------------

class PostgresDestination : public Destination {
 public:
  explicit PostgresDestination(const DestinationContext& ctx)
      : ctx_(ctx),
        db_("torture_dst_" + ctx.suffix),
        url_(WithDatabase(ctx.pg_url, db_)),
        source_(ctx_) {}

  std::string name() const override { return "postgres"; }

  void Create() override {
    PgConn admin(ctx_.pg_url);
    admin.Exec("DROP DATABASE IF EXISTS " + db_ + " WITH (FORCE)");
    admin.Exec("CREATE DATABASE " + db_);
    PgConn c(url_);
    c.Exec(std::string("CREATE TABLE ") + kDestTable +
           " (id int8 PRIMARY KEY, version int8, small text, big text)");
  }

  std::string PipelineYaml() const override {
    return UpsertPipelineYaml("postgres", "connection_url: " + url_);
  }

  bool CaughtUp(PgConn& source, std::string& why) override {
    Aggregate s = source_.Get(source);
    Aggregate d = PgAggregate(Dst(), kDestTable);
    why = "source " + s.ToString() + ", destination " + d.ToString();
    return s == d;
  }

  Verdict Verify(PgConn& source, int64_t, int64_t) override {
    Verdict v;
    Aggregate s = source_.Get(source);
    Aggregate d = PgAggregate(Dst(), kDestTable);
    v.checksums_equal = s == d;
    v.details.push_back("source " + s.ToString() + " (" + source_.Who() + "); destination " +
                        d.ToString() + " (Postgres)");
    if (!v.checksums_equal) DiffRows(source_.Rows(source), PgRowMap(Dst(), kDestTable), v);
    return v;
  }

  void Drop() override {
    dst_.reset();
    PgConn admin(ctx_.pg_url);
    admin.Exec("DROP DATABASE IF EXISTS " + db_ + " WITH (FORCE)");
  }

  std::string Where() const override { return "database " + db_ + ", table " + kDestTable; }

 private:
  PgConn& Dst() {
    if (!dst_) dst_ = std::make_unique<PgConn>(url_);
    return *dst_;
  }

  DestinationContext ctx_;
  std::string db_;
  std::string url_;
  SourceTable source_;  // reads ctx_
  std::unique_ptr<PgConn> dst_;
};

// ---- SQLite ---------------------------------------------------------------------------------

class Sqlite {
 public:
  explicit Sqlite(const std::string& path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
        SQLITE_OK) {
      throw TortureError("cannot open " + path + ": " + sqlite3_errmsg(db_));
    }
    sqlite3_busy_timeout(db_, 30000);
  }
  ~Sqlite() { sqlite3_close(db_); }

  void Exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "?";
      sqlite3_free(err);
      throw TortureError("sqlite: " + sql + ": " + msg);
    }
  }

  // Rows of text columns (NULL as nullopt).
  std::vector<std::vector<std::optional<std::string>>> Query(const std::string& sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
      throw TortureError("sqlite: " + sql + ": " + sqlite3_errmsg(db_));
    }
    std::vector<std::vector<std::optional<std::string>>> out;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      std::vector<std::optional<std::string>> row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        if (sqlite3_column_type(st, c) == SQLITE_NULL) {
          row.push_back(std::nullopt);
        } else {
          const unsigned char* t = sqlite3_column_text(st, c);
          row.push_back(std::string(reinterpret_cast<const char*>(t),
                                    static_cast<size_t>(sqlite3_column_bytes(st, c))));
        }
      }
      out.push_back(std::move(row));
    }
    std::string msg = sqlite3_errmsg(db_);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) throw TortureError("sqlite: " + sql + ": " + msg);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

// SQLite's own aggregate text of `table`, hashed by Postgres.
Aggregate SqliteAggregate(const std::string& path, const std::string& table, PgConn& pg) {
  Sqlite db(path);
  auto rows = db.Query(std::string("SELECT count(*), coalesce(group_concat(r, char(10)), '') FROM "
                                   "(SELECT ") +
                       kSqliteRow + " AS r FROM " + table + " ORDER BY id)");
  Aggregate a;
  a.rows = std::stoll(rows.at(0).at(0).value_or("0"));
  a.md5 = pg.Md5(rows.at(0).at(1).value_or(""));
  return a;
}

RowMap SqliteRowMap(const std::string& path, const std::string& table) {
  Sqlite db(path);
  RowMap out;
  for (auto& row : db.Query(std::string("SELECT id, ") + kSqliteRow + " FROM " + table)) {
    out[std::stoll(row.at(0).value_or("0"))] = row.at(1).value_or("<NULL rendering>");
  }
  return out;
}

class SqliteDestination : public Destination {
 public:
  explicit SqliteDestination(const DestinationContext& ctx)
      : ctx_(ctx), path_(ctx.workdir + "/dest.sqlite"), source_(ctx_) {}

  std::string name() const override { return "sqlite"; }

  void Create() override {
    std::filesystem::remove(path_);
    Sqlite db(path_);
    db.Exec(std::string("CREATE TABLE ") + kDestTable +
            " (id INTEGER PRIMARY KEY, version INTEGER, small TEXT, big TEXT)");
  }

  std::string PipelineYaml() const override {
    return UpsertPipelineYaml("sqlite", "database_url: sqlite://" + path_);
  }

  Aggregate Aggregate_(PgConn& pg) { return SqliteAggregate(path_, kDestTable, pg); }

  bool CaughtUp(PgConn& source, std::string& why) override {
    Aggregate s = source_.Get(source);
    Aggregate d = Aggregate_(source);
    why = "source " + s.ToString() + ", destination " + d.ToString();
    return s == d;
  }

  Verdict Verify(PgConn& source, int64_t, int64_t) override {
    Verdict v;
    Aggregate s = source_.Get(source);
    Aggregate d = Aggregate_(source);
    v.checksums_equal = s == d;
    v.details.push_back("source " + s.ToString() + " (" + source_.Who() + "); destination " +
                        d.ToString() + " (aggregate text by SQLite, md5 by Postgres)");
    if (!v.checksums_equal) DiffRows(source_.Rows(source), SqliteRowMap(path_, kDestTable), v);
    return v;
  }

  void Drop() override {
    for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + ext);
  }

  std::string Where() const override { return path_; }

 private:
  DestinationContext ctx_;
  std::string path_;
  SourceTable source_;  // reads ctx_
};

// ---- jsonl ----------------------------------------------------------------------------------

struct Key {
  char op;  // c u d, or r for a snapshot row
  int64_t id;
  int64_t version;
  bool operator==(const Key&) const = default;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    return std::hash<int64_t>()(k.id * 1000003 + k.version * 131 + k.op);
  }
};

int64_t AsInt(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_string()) return std::stoll(v.get<std::string>());
  throw TortureError("not an integer: " + v.dump());
}

std::optional<std::string> AsText(const nlohmann::json& v) {
  if (v.is_null()) return std::nullopt;
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

struct ParsedLine {
  Key key{};
  int64_t before_id = 0;  // 'u': the old key (= id when the key did not change)
};

ParsedLine ParseLine(const nlohmann::json& j) {
  ParsedLine p;
  if (!j.contains("op")) {
    p.key = {'r', AsInt(j.at("id")), AsInt(j.at("version"))};
    return p;
  }
  std::string op = j.at("op").get<std::string>();
  const nlohmann::json& before = j.contains("before") ? j["before"] : nlohmann::json();
  const nlohmann::json& after = j.contains("after") ? j["after"] : nlohmann::json();
  if (op == "c") {
    p.key = {'c', AsInt(after.at("id")), AsInt(after.at("version"))};
  } else if (op == "u") {
    p.key = {'u', AsInt(after.at("id")), AsInt(after.at("version"))};
    p.before_id = before.is_object() && before.contains("id") ? AsInt(before["id"]) : p.key.id;
  } else if (op == "d") {
    p.key = {'d', AsInt(before.at("id")), 0};
  } else {
    p.key = {op.empty() ? '?' : op[0], 0, 0};
  }
  return p;
}

class JsonlDestination : public Destination {
 public:
  // `path`: the file the sink writes, or that a subclass fills with what its sink wrote.
  JsonlDestination(const DestinationContext& ctx, std::string path)
      : ctx_(ctx), path_(std::move(path)) {}

  std::string name() const override { return "jsonl"; }

  void Create() override { std::filesystem::remove(path_); }

  std::string PipelineYaml() const override {
    return "  sink:\n"
           "    type: jsonl\n"
           "    config:\n"
           "      path: " +
           path_ + "\n";
  }

  // Parses the lines appended since the last call (a truncated file, the snapshot redone, is
  // read again from the start), so that the catch-up check has only the tail left to read.
  void Poll() override {
    std::ifstream in(path_, std::ios::binary);
    if (!in) return;
    in.seekg(0, std::ios::end);
    const int64_t size = static_cast<int64_t>(in.tellg());
    if (size < offset_) {
      seen_.clear();
      offset_ = 0;
      missing_init_ = false;
    }
    while (offset_ < size) {
      std::string chunk(static_cast<size_t>(std::min<int64_t>(size - offset_, 64 << 20)), '\0');
      in.seekg(offset_);
      in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      size_t end = chunk.rfind('\n');
      if (end == std::string::npos) break;  // only a partial last line so far
      for (size_t start = 0; start <= end;) {
        size_t nl = chunk.find('\n', start);
        nlohmann::json j = nlohmann::json::parse(std::string_view(chunk.data() + start, nl - start),
                                                 nullptr, false);
        start = nl + 1;
        if (j.is_discarded()) continue;  // Verify reports it
        try {
          Key k = ParseLine(j).key;
          seen_.insert(k);
          if (missing_init_) missing_.erase(k);
        } catch (const std::exception&) {
        }
      }
      offset_ += static_cast<int64_t>(end + 1);
    }
  }

  bool CaughtUp(PgConn&, std::string& why) override {
    Poll();
    if (!missing_init_) {
      missing_.clear();
      for (const Event& e : ctx_.workload->committed()) {
        Key k{e.op, e.id, e.version};
        if (!seen_.count(k)) missing_.insert(k);
      }
      missing_init_ = true;
    }
    why = std::to_string(missing_.size()) + " committed changes not yet in " + path_;
    return missing_.empty();
  }

  Verdict Verify(PgConn& source, int64_t kills, int64_t batch_size) override {
    Verdict v;
    const std::vector<Event>& committed = ctx_.workload->committed();
    std::unordered_map<Key, const Event*, KeyHash> expected;
    for (const Event& e : committed) expected[{e.op, e.id, e.version}] = &e;

    struct Seen {
      int count = 0;
      int64_t before_id = 0;
    };
    std::unordered_map<Key, Seen, KeyHash> seen;
    struct Row {
      std::optional<std::string> version, small, big;
    };
    std::map<int64_t, Row> state;  // the file replayed
    int64_t unparseable = 0, snapshot_rows = 0, unresolved_toast = 0, lines = 0;
    std::unordered_map<int64_t, int> snapshot_ids;  // how many snapshot rows carry each id
    std::vector<std::string> examples;

    std::ifstream in(path_, std::ios::binary);
    std::string text;
    while (std::getline(in, text)) {
      ++lines;
      nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      ParsedLine p;
      try {
        if (j.is_discarded()) throw TortureError("not JSON");
        p = ParseLine(j);
      } catch (const std::exception& e) {
        if (unparseable++ < 3)
          v.details.push_back("unparseable line " + std::to_string(lines) + ": " +
                              text.substr(0, 200));
        continue;
      }
      if (p.key.op == 'r') {
        ++snapshot_rows;
        ++snapshot_ids[p.key.id];
        state[p.key.id] =
            Row{std::to_string(p.key.version), AsText(j.value("small", nlohmann::json())),
                AsText(j.value("big", nlohmann::json()))};
        continue;
      }
      Seen& s = seen[p.key];
      if (s.count++ == 0) s.before_id = p.before_id;
      // Replay into `state`.
      if (p.key.op == 'd') {
        state.erase(p.key.id);
      } else if (p.key.op == 'c' || p.key.op == 'u') {
        const nlohmann::json& after = j["after"];
        int64_t old_id = p.key.op == 'u' ? p.before_id : p.key.id;
        std::optional<Row> prev;
        if (auto it = state.find(old_id); it != state.end())
          prev = it->second;
        else if (auto it2 = state.find(p.key.id); it2 != state.end())
          prev = it2->second;
        if (old_id != p.key.id) state.erase(old_id);
        Row row{std::to_string(p.key.version), std::nullopt, std::nullopt};
        std::unordered_set<std::string> unchanged;
        if (after.contains("__unchanged_toast__")) {
          for (const auto& c : after["__unchanged_toast__"]) unchanged.insert(c.get<std::string>());
        }
        for (const char* col : {"small", "big"}) {
          std::optional<std::string>& dst = std::string(col) == "small" ? row.small : row.big;
          if (unchanged.count(col)) {
            if (prev) {
              dst = std::string(col) == "small" ? prev->small : prev->big;
            } else {
              ++unresolved_toast;
            }
          } else {
            dst = AsText(after.value(col, nlohmann::json()));
          }
        }
        state[p.key.id] = row;
      }
    }

    for (const Event& e : committed) {
      auto it = seen.find({e.op, e.id, e.version});
      if (it == seen.end()) {
        if (v.lost++ < 10) {
          v.details.push_back(std::string("committed change missing: op ") + e.op + " id " +
                              std::to_string(e.id) + " version " + std::to_string(e.version));
        }
      } else if (e.op == 'u' && it->second.before_id != e.old_id) {
        if (v.lost++ < 10) {
          v.details.push_back("key change " + std::to_string(e.old_id) + " -> " +
                              std::to_string(e.id) + " has before.id " +
                              std::to_string(it->second.before_id));
        }
      }
    }
    for (const auto& [k, s] : seen) {
      v.duplicates += s.count - 1;
      if (!expected.count(k)) {
        if (v.extra++ < 10) {
          v.details.push_back(std::string("change never committed (rolled back?): op ") + k.op +
                              " id " + std::to_string(k.id) + " version " +
                              std::to_string(k.version));
        }
      }
    }
    // A snapshot row twice: an earlier attempt of a redone snapshot still visible.
    int64_t snapshot_duplicates = 0;
    for (const auto& [id, n] : snapshot_ids) {
      snapshot_duplicates += n - 1;
      if (n > 1 && snapshot_duplicates <= 3) {
        v.details.push_back("snapshot row id " + std::to_string(id) + " " + std::to_string(n) +
                            " times");
      }
    }
    v.duplicates += snapshot_duplicates;
    v.duplicate_bound = DuplicateBound(kills, batch_size);
    if (unparseable) {
      v.extra += unparseable;
      v.details.push_back(std::to_string(unparseable) + " unparseable lines");
    }

    // The replayed file against the source table.
    std::string agg;
    for (const auto& [id, r] : state) {
      if (!agg.empty()) agg += '\n';
      agg += std::to_string(id) + "|" + r.version.value_or("N") + "|";
      agg += r.small ? std::to_string(Utf8Length(*r.small)) + ":" + *r.small : "N";
      agg += "|";
      agg += r.big ? std::to_string(Utf8Length(*r.big)) + ":" + *r.big : "N";
    }
    Aggregate s = PgAggregate(source, "public." + ctx_.source_table);
    Aggregate d{static_cast<int64_t>(state.size()), source.Md5(agg)};
    v.checksums_equal = s == d;
    v.details.push_back(std::to_string(lines) + " lines: " + std::to_string(snapshot_rows) +
                        " snapshot rows, " + std::to_string(lines - snapshot_rows - unparseable) +
                        " change lines for " + std::to_string(committed.size()) +
                        " committed changes; duplicates " + std::to_string(v.duplicates) + " (" +
                        std::to_string(snapshot_duplicates) + " of snapshot rows; bound " +
                        std::to_string(v.duplicate_bound) + " = " + BoundWhy() + ")");
    v.details.push_back("file replayed: " + d.ToString() + "; source " + s.ToString() +
                        (unresolved_toast ? "; " + std::to_string(unresolved_toast) +
                                                " unchanged-TOAST values with no earlier value"
                                          : ""));
    if (!v.checksums_equal) {
      RowMap dst;
      for (const auto& [id, r] : state) {
        dst[id] = std::to_string(id) + "|" + r.version.value_or("N") + "|" +
                  (r.small ? std::to_string(Utf8Length(*r.small)) + ":" + *r.small : "N") + "|" +
                  (r.big ? std::to_string(Utf8Length(*r.big)) + ":" + *r.big : "N");
      }
      Verdict diff;
      DiffRows(PgRowMap(source, "public." + ctx_.source_table), dst, diff);
      v.details.push_back("replayed file differs from the source in " + std::to_string(diff.lost) +
                          " rows, " + std::to_string(diff.extra) + " extra rows");
      v.details.insert(v.details.end(), diff.details.begin(), diff.details.end());
      v.lost += diff.lost;
      v.extra += diff.extra;
    }
    return v;
  }

  void Drop() override { std::filesystem::remove(path_); }

  std::string Where() const override { return path_; }

 protected:
  // How many lines may repeat one (at-least-once: a crash replays at most the page or
  // transaction in flight), and why.
  virtual int64_t DuplicateBound(int64_t kills, int64_t batch_size) const {
    return kills * (batch_size + ctx_.workload->max_txn_changes());
  }
  virtual std::string BoundWhy() const { return "kills x (batch_size + largest transaction)"; }

  DestinationContext ctx_;
  std::string path_;

 private:
  int64_t offset_ = 0;                     // Poll has parsed the file up to here
  std::unordered_set<Key, KeyHash> seen_;  // changes (and snapshot rows) parsed so far
  bool missing_init_ = false;
  std::unordered_set<Key, KeyHash> missing_;  // committed changes not seen yet
};

// ---- kafka ----------------------------------------------------------------------------------

// The kafka sink under delivery: exactly_once, into a topic of one partition (so the topic's
// order is the change order). A read_committed consumer copies what is committed into a file,
// which is then judged as a jsonl destination's, except that no line may repeat: not a change,
// not a snapshot row (a snapshot killed midway is one aborted Kafka transaction). Drop leaves the
// topic on the test broker.
class KafkaDestination : public JsonlDestination {
 public:
  explicit KafkaDestination(const DestinationContext& ctx)
      : JsonlDestination(ctx, ctx.workdir + "/topic.jsonl"), topic_("torture_" + ctx.suffix) {}

  std::string name() const override { return "kafka"; }

  void Create() override {
    JsonlDestination::Create();
    Result<rd_kafka_conf_t*> conf =
        kafka::NewConf({{"bootstrap.servers", ctx_.kafka_brokers}}, "torture");
    if (!conf.ok()) throw TortureError(conf.status().ToString());
    Result<kafka::Client> admin = kafka::NewClient(RD_KAFKA_PRODUCER, *conf, "torture");
    if (!admin.ok()) throw TortureError(admin.status().ToString());
    Status made =
        kafka::CreateTopic(admin->get(), topic_, 1, {}, std::chrono::seconds(30), "torture");
    if (!made.ok()) throw TortureError(made.ToString());
    tail_ = std::make_unique<KafkaTail>(ctx_.kafka_brokers, topic_);
  }

  std::string DocumentYaml() const override { return "delivery: exactly_once\n"; }

  std::string PipelineYaml() const override {
    return "  sink:\n"
           "    type: kafka\n"
           "    config:\n"
           "      brokers: '" +
           ctx_.kafka_brokers +
           "'\n"
           "      topic: {type: fixed, name: " +
           topic_ +
           "}\n"
           "      linger: 5\n"
           "      exactly_once: {transactional_id_prefix: torture-" +
           ctx_.suffix + ", commit_token_topic: torture_tokens_" + ctx_.suffix + "}\n";
  }

  // Copies what was committed since the last call into the file, then reads it as jsonl.
  void Poll() override {
    {
      std::ofstream out(path_, std::ios::binary | std::ios::app);
      tail_->AppendNew(out);
    }
    JsonlDestination::Poll();
  }

  Verdict Verify(PgConn& source, int64_t kills, int64_t batch_size) override {
    {
      std::ofstream out(path_, std::ios::binary | std::ios::app);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (!tail_->AppendNew(out)) {
        if (std::chrono::steady_clock::now() > deadline) {
          throw TortureError("topic " + topic_ + " not read to its end within 60 s");
        }
      }
    }
    Verdict v = JsonlDestination::Verify(source, kills, batch_size);
    v.details.push_back("read as a read_committed consumer: " + std::to_string(tail_->messages()) +
                        " messages on topic " + topic_);
    return v;
  }

  std::string Where() const override {
    return "topic " + topic_ + " on " + ctx_.kafka_brokers + " (committed messages in " + path_ +
           ")";
  }

 protected:
  int64_t DuplicateBound(int64_t, int64_t) const override { return 0; }
  std::string BoundWhy() const override { return "none under exactly_once"; }

 private:
  std::string topic_;
  std::unique_ptr<KafkaTail> tail_;
};

// ---- mirror-tables --------------------------------------------------------------------------

// The multi-table mirror: one destination table per source table, of the same name (the
// sink's default destination, {table_name}), in a Postgres database or a SQLite file.
class TablesDestination : public Destination {
 public:
  explicit TablesDestination(const DestinationContext& ctx)
      : ctx_(ctx),
        db_("torture_dst_" + ctx.suffix),
        url_(WithDatabase(ctx.pg_url, db_)),
        path_(ctx.workdir + "/dest.sqlite") {
    if (ctx_.sink != "postgres" && ctx_.sink != "sqlite") {
      throw TortureError("--sink must be postgres or sqlite, not '" + ctx_.sink + "'");
    }
    for (const std::string& t : ctx_.source_tables)
      dest_tables_.push_back(t.substr(t.find('.') + 1));
  }

  std::string name() const override { return "mirror-tables/" + ctx_.sink; }

  void Create() override {
    if (pg()) {
      PgConn admin(ctx_.pg_url);
      admin.Exec("DROP DATABASE IF EXISTS " + db_ + " WITH (FORCE)");
      admin.Exec("CREATE DATABASE " + db_);
      PgConn c(url_);
      for (const std::string& t : dest_tables_) {
        c.Exec("CREATE TABLE " + t + " (id int8 PRIMARY KEY, version int8, small text, big text)");
      }
    } else {
      for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + ext);
      Sqlite db(path_);
      for (const std::string& t : dest_tables_) {
        db.Exec("CREATE TABLE " + t +
                " (id INTEGER PRIMARY KEY, version INTEGER, small TEXT, big TEXT)");
      }
    }
  }

  // A sink template without table_name: each table writes its own name; the write mode
  // (upsert) and the key come from the discovered primary key.
  std::string PipelineYaml() const override {
    return std::string(
               "  transforms:\n"
               "    - type: cdc_unwrap\n"
               "      config: {}\n"
               "  sink:\n"
               "    type: ") +
           ctx_.sink +
           "\n"
           "    config:\n"
           "      " +
           (pg() ? "connection_url: " + url_ : "database_url: sqlite://" + path_) +
           "\n"
           "      column_mapping: auto_map\n"
           "      delete_marker: {field: __op, values: [d]}\n";
  }

  bool CaughtUp(PgConn& source, std::string& why) override {
    int behind = 0;
    why.clear();
    for (size_t i = 0; i < dest_tables_.size(); ++i) {
      Aggregate s = PgAggregate(source, ctx_.source_tables[i]);
      Aggregate d = DestAggregate(source, dest_tables_[i]);
      if (s == d) continue;
      if (behind++ == 0) {
        why = ctx_.source_tables[i] + ": source " + s.ToString() + ", destination " + d.ToString();
      }
    }
    if (behind) why += " (" + std::to_string(behind) + " tables differ)";
    return behind == 0;
  }

  Verdict Verify(PgConn& source, int64_t, int64_t) override {
    Verdict v;
    v.checksums_equal = true;
    std::vector<std::string> diffs;
    for (size_t i = 0; i < dest_tables_.size(); ++i) {
      const std::string& src = ctx_.source_tables[i];
      const std::string& dst = dest_tables_[i];
      Aggregate s = PgAggregate(source, src);
      Aggregate d = DestAggregate(source, dst);
      int64_t duplicates = Duplicates(dst);
      v.duplicates += duplicates;
      v.details.push_back(src + ": source " + s.ToString() + "; destination " + d.ToString() +
                          "; duplicate ids " + std::to_string(duplicates) +
                          (s == d ? "" : "  <-- DIFFERS"));
      if (s == d) continue;
      v.checksums_equal = false;
      Verdict diff;
      DiffRows(PgRowMap(source, src), pg() ? PgRowMap(Dst(), dst) : SqliteRowMap(path_, dst), diff);
      v.lost += diff.lost;
      v.extra += diff.extra;
      for (const std::string& d2 : diff.details) diffs.push_back(src + ": " + d2);
    }
    v.details.push_back(std::string("aggregates computed by Postgres") +
                        (pg() ? "" : " (destination aggregate text by SQLite, md5 by Postgres)"));
    v.details.insert(v.details.end(), diffs.begin(), diffs.end());
    return v;
  }

  void Drop() override {
    dst_.reset();
    if (pg()) {
      PgConn admin(ctx_.pg_url);
      admin.Exec("DROP DATABASE IF EXISTS " + db_ + " WITH (FORCE)");
    } else {
      for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path_ + ext);
    }
  }

  std::string Where() const override {
    std::string list;
    for (const std::string& t : dest_tables_) list += (list.empty() ? "" : ", ") + t;
    return (pg() ? "database " + db_ : path_) + ", tables " + list;
  }

 private:
  bool pg() const { return ctx_.sink == "postgres"; }

  PgConn& Dst() {
    if (!dst_) dst_ = std::make_unique<PgConn>(url_);
    return *dst_;
  }

  Aggregate DestAggregate(PgConn& source, const std::string& table) {
    return pg() ? PgAggregate(Dst(), table) : SqliteAggregate(path_, table, source);
  }

  // Rows beyond the first of each id, counted by the destination database.
  int64_t Duplicates(const std::string& table) {
    const std::string sql = "SELECT count(*) - count(DISTINCT id) FROM " + table;
    if (pg()) return std::stoll(Dst().Scalar(sql).value_or("0"));
    Sqlite db(path_);
    return std::stoll(db.Query(sql).at(0).at(0).value_or("0"));
  }

  DestinationContext ctx_;
  std::string db_;
  std::string url_;
  std::string path_;
  std::vector<std::string> dest_tables_;
  std::unique_ptr<PgConn> dst_;
};

}  // namespace

std::string PgRowRendering() {
  return "coalesce(id::text, 'N') || '|' || coalesce(version::text, 'N') || '|' || "
         "coalesce(length(small)::text || ':' || small, 'N') || '|' || "
         "coalesce(length(big)::text || ':' || big, 'N')";
}

Aggregate PgAggregate(PgConn& conn, const std::string& table) {
  PgRows r = conn.Exec("SELECT count(*), md5(coalesce(string_agg(" + PgRowRendering() +
                       ", E'\\n' ORDER BY id), '')) FROM " + table);
  return Aggregate{r.Int(0, 0), r.Text(0, 1)};
}

std::unique_ptr<Destination> MakeDestination(const DestinationContext& ctx) {
  if (ctx.dest == "postgres") return std::make_unique<PostgresDestination>(ctx);
  if (ctx.dest == "sqlite") return std::make_unique<SqliteDestination>(ctx);
  if (ctx.dest == "jsonl")
    return std::make_unique<JsonlDestination>(ctx, ctx.workdir + "/out.jsonl");
  if (ctx.dest == "kafka") return std::make_unique<KafkaDestination>(ctx);
  if (ctx.dest == "mirror-tables") return std::make_unique<TablesDestination>(ctx);
  throw TortureError("unknown --dest '" + ctx.dest +
                     "' (postgres, sqlite, jsonl, kafka or mirror-tables)");
}

}  // namespace faucet::torture
