#include "source_sql.h"

#include <chrono>
#include <thread>

#include "mysql_client.h"

namespace faucet::torture {
namespace {

std::string Join(const std::vector<int64_t>& ids, const char* open, const char* close) {
  std::string s = open;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + close;
}

// ---- Postgres -------------------------------------------------------------------------------

class PgSourceSql : public SourceSql {
 public:
  explicit PgSourceSql(SourceSqlOptions o)
      : o_(std::move(o)), conn_(o_.url), nextval_("nextval(" + Quote(Sequence()) + ")") {}

  void CreateTables(const std::vector<std::string>& qualified,
                    const std::string& publication) override {
    DropTables(qualified, publication);
    PgConn c(o_.url);
    const bool several = qualified.size() > 1;
    if (several) c.Exec("CREATE SCHEMA " + o_.schema);
    c.Exec("CREATE SEQUENCE " + Sequence());
    for (const std::string& t : qualified) {
      c.Exec("CREATE TABLE " + t +
             " (id int8 PRIMARY KEY, version int8 NOT NULL, small text, big text)");
    }
    c.Exec("CREATE PUBLICATION " + publication +
           (several ? " FOR TABLES IN SCHEMA " + o_.schema : " FOR TABLE " + qualified[0]));
  }

  void DropTables(const std::vector<std::string>& qualified,
                  const std::string& publication) override {
    PgConn c(o_.url);
    c.Exec("DROP PUBLICATION IF EXISTS " + publication);
    if (qualified.size() > 1) {
      c.Exec("DROP SCHEMA IF EXISTS " + o_.schema + " CASCADE");
      return;
    }
    c.Exec("DROP TABLE IF EXISTS " + qualified[0]);
    c.Exec("DROP SEQUENCE IF EXISTS " + Sequence());
  }

  // The slot's confirmed position is the mirror's captured position P: a change committed
  // after it is in the stream.
  void WaitUntilCaptured(const std::atomic<bool>& stop) override {
    while (!stop.load()) {
      std::optional<std::string> ready = conn_.Scalar(
          "SELECT confirmed_flush_lsn IS NOT NULL FROM pg_replication_slots WHERE slot_name = $1",
          {o_.slot});
      if (ready && *ready == "t") return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void Begin() override { conn_.Exec("BEGIN"); }
  void Commit() override { conn_.Exec("COMMIT"); }
  void Rollback() override { conn_.Exec("ROLLBACK"); }

  int64_t Insert(const std::string& table, const Param& small, const Param& big) override {
    PgRows r = conn_.Exec("INSERT INTO " + table + " (id, version, small, big) VALUES (" +
                              nextval_ + ", 1, $1, $2) RETURNING id",
                          {small, big});
    return r.Int(0, 0);
  }

  IdVersion Update(const std::string& table, IdVersion row, bool new_key, const Assign& small,
                   const Assign& big) override {
    std::vector<Param> params = {std::to_string(row.id)};
    std::string set = new_key ? "id = " + nextval_ + ", " : "";
    set += "version = version + 1";
    for (const auto& [column, value] : {std::pair{"small", &small}, std::pair{"big", &big}}) {
      if (!*value) continue;
      params.push_back(**value);
      set += std::string(", ") + column + " = $" + std::to_string(params.size());
    }
    PgRows r = conn_.Exec(
        "UPDATE " + table + " SET " + set + " WHERE id = $1 RETURNING id, version", params);
    if (r.size() != 1) {
      throw TortureError(std::string(new_key ? "key change" : "update") + " of id " +
                         std::to_string(row.id) + " found no row");
    }
    return IdVersion{r.Int(0, 0), r.Int(0, 1)};
  }

  void Delete(const std::string& table, int64_t id) override {
    PgRows r =
        conn_.Exec("DELETE FROM " + table + " WHERE id = $1 RETURNING id", {std::to_string(id)});
    if (r.size() != 1) throw TortureError("delete of id " + std::to_string(id) + " found no row");
  }

  std::vector<int64_t> BulkInsert(const std::string& table, int count) override {
    PgRows r = conn_.Exec("INSERT INTO " + table + " (id, version, small, big) SELECT " + nextval_ +
                          ", 1, 'bulk ' || g, NULL FROM generate_series(1, " +
                          std::to_string(count) + ") g RETURNING id");
    std::vector<int64_t> ids;
    for (int i = 0; i < r.size(); ++i) ids.push_back(r.Int(i, 0));
    return ids;
  }

  std::vector<IdVersion> BulkUpdate(const std::string& table,
                                    const std::vector<IdVersion>& rows) override {
    std::vector<int64_t> ids;
    for (const IdVersion& row : rows) ids.push_back(row.id);
    PgRows r = conn_.Exec("UPDATE " + table +
                              " SET version = version + 1, small = 'bulk v' || (version + 1) "
                              "WHERE id = ANY($1::int8[]) RETURNING id, version",
                          {Join(ids, "{", "}")});
    if (static_cast<size_t>(r.size()) != rows.size())
      throw TortureError("bulk update: rows missing");
    std::vector<IdVersion> out;
    for (int i = 0; i < r.size(); ++i) out.push_back(IdVersion{r.Int(i, 0), r.Int(i, 1)});
    return out;
  }

  void BulkDelete(const std::string& table, const std::vector<int64_t>& ids) override {
    PgRows r = conn_.Exec("DELETE FROM " + table + " WHERE id = ANY($1::int8[]) RETURNING id",
                          {Join(ids, "{", "}")});
    if (static_cast<size_t>(r.size()) != ids.size())
      throw TortureError("bulk delete: rows missing");
  }

 private:
  std::string Sequence() const { return o_.schema + "." + o_.sequence; }

  const SourceSqlOptions o_;
  PgConn conn_;
  const std::string nextval_;
};

// ---- MariaDB --------------------------------------------------------------------------------

// Ids come from a counter of this object (the only writer), so that an insert or key change
// needs no read back (MariaDB's UPDATE has no RETURNING); a bulk insert takes a range of them
// from the sequence engine's seq_1_to_<n>.
class MariadbSourceSql : public SourceSql {
 public:
  explicit MariadbSourceSql(SourceSqlOptions o) : o_(std::move(o)), conn_(o_.url) {}

  void CreateTables(const std::vector<std::string>& qualified,
                    const std::string& publication) override {
    if (qualified.size() != 1) throw TortureError("a MariaDB source has one table");
    DropTables(qualified, publication);
    MyConn c(o_.url);
    c.Exec("CREATE TABLE " + qualified[0] +
           " (id BIGINT PRIMARY KEY, version BIGINT NOT NULL, small VARCHAR(200), big LONGTEXT)"
           " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4");
  }

  void DropTables(const std::vector<std::string>& qualified, const std::string&) override {
    MyConn c(o_.url);
    for (const std::string& t : qualified) c.Exec("DROP TABLE IF EXISTS " + t);
  }

  // A mirror from MariaDB snapshots inside a consistent snapshot and streams from that
  // snapshot's own binlog position (an exact cut), so a change committed at any moment reaches
  // the destination by one or the other: the writer starts at once, and its changes during the
  // initial load test that cut.
  void WaitUntilCaptured(const std::atomic<bool>&) override {}

  void Begin() override { conn_.Exec("BEGIN"); }
  void Commit() override { conn_.Exec("COMMIT"); }
  void Rollback() override { conn_.Exec("ROLLBACK"); }

  int64_t Insert(const std::string& table, const Param& small, const Param& big) override {
    const int64_t id = next_id_++;
    Expect(1,
           conn_.Exec("INSERT INTO " + table + " (id, version, small, big) VALUES (" +
                      std::to_string(id) + ", 1, " + conn_.Literal(small) + ", " +
                      conn_.Literal(big) + ")"),
           "insert of id " + std::to_string(id));
    return id;
  }

  IdVersion Update(const std::string& table, IdVersion row, bool new_key, const Assign& small,
                   const Assign& big) override {
    const int64_t id = new_key ? next_id_++ : row.id;
    std::string set = new_key ? "id = " + std::to_string(id) + ", " : "";
    set += "version = version + 1";
    if (small) set += ", small = " + conn_.Literal(*small);
    if (big) set += ", big = " + conn_.Literal(*big);
    Expect(1,
           conn_.Exec("UPDATE " + table + " SET " + set + " WHERE id = " + std::to_string(row.id)),
           std::string(new_key ? "key change" : "update") + " of id " + std::to_string(row.id));
    return IdVersion{id, row.version + 1};
  }

  void Delete(const std::string& table, int64_t id) override {
    Expect(1, conn_.Exec("DELETE FROM " + table + " WHERE id = " + std::to_string(id)),
           "delete of id " + std::to_string(id));
  }

  std::vector<int64_t> BulkInsert(const std::string& table, int count) override {
    if (count <= 0) return {};
    const int64_t base = next_id_ - 1;
    next_id_ += count;
    Expect(
        static_cast<uint64_t>(count),
        conn_.Exec("INSERT INTO " + table + " (id, version, small, big) SELECT " +
                   std::to_string(base) + " + seq, 1, CONCAT('bulk ', seq), NULL FROM seq_1_to_" +
                   std::to_string(count)),
        "bulk insert");
    std::vector<int64_t> ids;
    for (int i = 1; i <= count; ++i) ids.push_back(base + i);
    return ids;
  }

  std::vector<IdVersion> BulkUpdate(const std::string& table,
                                    const std::vector<IdVersion>& rows) override {
    if (rows.empty()) return {};
    std::vector<int64_t> ids;
    for (const IdVersion& row : rows) ids.push_back(row.id);
    // small first: MariaDB assigns left to right, each assignment seeing the ones before it
    // (unless SIMULTANEOUS_ASSIGNMENT), so this order means the same under both modes.
    Expect(rows.size(),
           conn_.Exec("UPDATE " + table +
                      " SET small = CONCAT('bulk v', version + 1), version = version + 1 "
                      "WHERE id IN " +
                      Join(ids, "(", ")")),
           "bulk update");
    std::vector<IdVersion> out;
    for (const IdVersion& row : rows) out.push_back(IdVersion{row.id, row.version + 1});
    return out;
  }

  void BulkDelete(const std::string& table, const std::vector<int64_t>& ids) override {
    if (ids.empty()) return;
    Expect(ids.size(), conn_.Exec("DELETE FROM " + table + " WHERE id IN " + Join(ids, "(", ")")),
           "bulk delete");
  }

 private:
  static void Expect(uint64_t want, uint64_t got, const std::string& what) {
    if (got != want) {
      throw TortureError(what + " changed " + std::to_string(got) + " rows, not " +
                         std::to_string(want));
    }
  }

  const SourceSqlOptions o_;
  MyConn conn_;
  int64_t next_id_ = 1;
};

}  // namespace

std::unique_ptr<SourceSql> MakeSourceSql(const SourceSqlOptions& options) {
  if (options.kind == SourceKind::kMariadb) return std::make_unique<MariadbSourceSql>(options);
  return std::make_unique<PgSourceSql>(options);
}

}  // namespace faucet::torture
