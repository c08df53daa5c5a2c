#include "workload.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace faucet::torture {
namespace {

using Clock = std::chrono::steady_clock;

// Characters of the small text column: punctuation that escaping gets wrong (quote, backslash,
// tab, newline, the separators of the checksum rendering) and multi-byte UTF-8.
const std::vector<std::string> kSmallAlphabet = {
    "a", "b",  "c",  "x",  "y",  "z", "0", "1", "9", " ", ",",  "|",  ":",
    "'", "\"", "\\", "\t", "\n", "{", "}", "%", "é", "ß", "漢", "字", "😀",
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

Workload::Workload(WorkloadOptions options)
    : o_(std::move(options)), rng_(o_.seed), sequence_(o_.schema + "." + o_.sequence) {
  if (o_.tables.empty()) throw TortureError("workload: no tables");
  for (const std::string& t : o_.tables) models_.push_back(TableModel{o_.schema + "." + t, {}, {}});
}

Workload::~Workload() { Stop(); }

std::string Workload::NextVal() const { return "nextval(" + Quote(sequence_) + ")"; }

void Workload::CreateSource(const std::string& publication, int rows) {
  PgConn c(o_.url);
  DropSource(publication);
  const bool several = models_.size() > 1;
  if (several) c.Exec("CREATE SCHEMA " + o_.schema);
  c.Exec("CREATE SEQUENCE " + sequence_);
  for (const TableModel& m : models_) {
    c.Exec("CREATE TABLE " + m.qualified +
           " (id int8 PRIMARY KEY, version int8 NOT NULL, small text, big text)");
  }
  c.Exec("CREATE PUBLICATION " + publication +
         (several ? " FOR TABLES IN SCHEMA " + o_.schema : " FOR TABLE " + models_[0].qualified));
  min_rows_ = static_cast<size_t>(rows) * 2 / 5;
  max_rows_ = static_cast<size_t>(rows) * 6;
  c.Exec("BEGIN");
  for (int t = 0; t < static_cast<int>(models_.size()); ++t) {
    for (int i = 0; i < rows; ++i) {
      Param big = rng_() % 10 == 0 ? Param(BigValue()) : std::nullopt;
      PgRows r =
          c.Exec("INSERT INTO " + models_[t].qualified + " (id, version, small, big) VALUES (" +
                     NextVal() + ", 1, $1, $2) RETURNING id",
                 {SmallParam(), big});
      AddLive(t, r.Int(0, 0), 1);
    }
  }
  c.Exec("COMMIT");
}

void Workload::DropSource(const std::string& publication) {
  PgConn c(o_.url);
  c.Exec("DROP PUBLICATION IF EXISTS " + publication);
  if (models_.size() > 1) {
    c.Exec("DROP SCHEMA IF EXISTS " + o_.schema + " CASCADE");
    return;
  }
  c.Exec("DROP TABLE IF EXISTS " + models_[0].qualified);
  c.Exec("DROP SEQUENCE IF EXISTS " + sequence_);
}

void Workload::Start() {
  thread_ = std::thread([this] {
    try {
      conn_ = std::make_unique<PgConn>(o_.url);
      WaitForSlot();
      if (!stop_.load()) Run();
    } catch (const std::exception& e) {
      MutexLock lock(error_mu_);
      error_ = e.what();
    }
  });
}

void Workload::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Workload::WaitForSlot() {
  while (!stop_.load()) {
    std::optional<std::string> ready = conn_->Scalar(
        "SELECT confirmed_flush_lsn IS NOT NULL FROM pg_replication_slots WHERE slot_name = $1",
        {o_.slot});
    if (ready && *ready == "t") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void Workload::Run() {
  started_.store(true);
  Clock::time_point start = Clock::now();
  // The first 10,000-row transaction comes early, so that even a short run has one.
  Clock::time_point next_bulk = start + std::chrono::milliseconds(1500);
  std::uniform_real_distribution<double> unit(0, 1);
  while (!stop_.load()) {
    Clock::time_point now = Clock::now();
    if (now >= next_bulk) {
      BulkTransaction();
      next_bulk = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(
                                     o_.bulk_every_s * 1000 * (0.5 + unit(rng_))));
    } else {
      double r = unit(rng_);
      if (r < 0.03) {
        RolledBackTransaction();
      } else if (r < 0.45) {
        SmallTransaction(1);
      } else {
        SmallTransaction(2 + static_cast<int>(rng_() % 29));
      }
    }
    // Pace the small transactions to `rate`; bulk ones come on top, so the stream of small
    // transactions never pauses (a kill then always lands amid traffic).
    while (!stop_.load() &&
           changes_.load() - bulk_changes_ > o_.rate * Seconds(Clock::now() - start)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

void Workload::SmallTransaction(int ops) {
  std::vector<Event> txn;
  conn_->Exec("BEGIN");
  // With several tables, half the transactions of several operations spread them over tables.
  const bool spread = models_.size() > 1 && ops > 1 && rng_() % 2 == 0;
  const int table = PickTable();
  for (int i = 0; i < ops; ++i) RandomOp(spread ? PickTable() : table, txn);
  Commit(txn);
}

void Workload::RandomOp(int t, std::vector<Event>& txn) {
  // Keep the table between about min_rows_ and max_rows_ rows.
  size_t n = models_[t].ids.size();
  int insert = 30, update = 45, key = 10, del = 15;
  if (n < min_rows_) del = 2;
  if (n > max_rows_) del = 40;
  if (n == 0) {
    Insert(t, txn);
    return;
  }
  int r = static_cast<int>(rng_() % static_cast<uint64_t>(insert + update + key + del));
  if (r < insert) {
    Insert(t, txn);
  } else if (r < insert + update) {
    Update(t, txn);
  } else if (r < insert + update + key) {
    ChangeKey(t, txn);
  } else {
    Delete(t, txn);
  }
}

void Workload::Insert(int t, std::vector<Event>& txn) {
  Param big = rng_() % 4 == 0 ? Param(BigValue()) : std::nullopt;
  PgRows r =
      conn_->Exec("INSERT INTO " + models_[t].qualified + " (id, version, small, big) VALUES (" +
                      NextVal() + ", 1, $1, $2) RETURNING id, version",
                  {SmallParam(), big});
  Event e{'c', r.Int(0, 0), r.Int(0, 1), r.Int(0, 0), t};
  AddLive(t, e.id, e.version);
  txn.push_back(e);
}

void Workload::Update(int t, std::vector<Event>& txn) {
  int64_t id = PickId(t);
  std::string set;
  std::vector<Param> params = {std::to_string(id)};
  int kind = static_cast<int>(rng_() % 100);
  if (kind < 50) {  // small only: a TOAST-sized big stays unchanged (not in the WAL record)
    set = "small = $2";
    params.push_back(SmallParam());
  } else if (kind < 70) {  // a new TOAST-sized value
    set = "big = $2";
    params.push_back(BigValue());
  } else if (kind < 75) {
    set = "big = NULL";
  } else if (kind < 80) {
    set = "big = $2";
    params.push_back(SmallValue());
  } else {
    set = "small = $2, big = $3";
    params.push_back(SmallParam());
    params.push_back(BigValue());
  }
  PgRows r = conn_->Exec("UPDATE " + models_[t].qualified + " SET version = version + 1, " + set +
                             " WHERE id = $1 RETURNING id, version",
                         params);
  if (r.size() != 1) throw TortureError("update of id " + std::to_string(id) + " found no row");
  Event e{'u', id, r.Int(0, 1), id, t};
  models_[t].live[id].second = e.version;
  txn.push_back(e);
}

void Workload::ChangeKey(int t, std::vector<Event>& txn) {
  int64_t id = PickId(t);
  // Mostly the key and version only: a TOAST-sized big is then an unchanged value in the new
  // row, which a mirror must carry over from the old key.
  std::string set = "id = " + NextVal() + ", version = version + 1";
  std::vector<Param> params = {std::to_string(id)};
  if (rng_() % 10 < 4) {
    set += ", small = $" + std::to_string(params.size() + 1);
    params.push_back(SmallParam());
  }
  if (!o_.key_change_keeps_toast) {
    set += ", big = $" + std::to_string(params.size() + 1);
    params.push_back(rng_() % 2 ? Param(BigValue()) : std::nullopt);
  }
  PgRows r = conn_->Exec(
      "UPDATE " + models_[t].qualified + " SET " + set + " WHERE id = $1 RETURNING id, version",
      params);
  if (r.size() != 1) throw TortureError("key change of id " + std::to_string(id) + " found no row");
  Event e{'u', r.Int(0, 0), r.Int(0, 1), id, t};
  RemoveLive(t, id);
  AddLive(t, e.id, e.version);
  txn.push_back(e);
}

void Workload::Delete(int t, std::vector<Event>& txn) {
  int64_t id = PickId(t);
  PgRows r = conn_->Exec("DELETE FROM " + models_[t].qualified + " WHERE id = $1 RETURNING id",
                         {std::to_string(id)});
  if (r.size() != 1) throw TortureError("delete of id " + std::to_string(id) + " found no row");
  RemoveLive(t, id);
  txn.push_back(Event{'d', id, 0, id, t});
}

void Workload::Commit(std::vector<Event>& txn) {
  conn_->Exec("COMMIT");
  for (const Event& e : txn) {
    if (e.table != txn.front().table) {
      multi_table_.fetch_add(1);
      break;
    }
  }
  committed_.insert(committed_.end(), txn.begin(), txn.end());
  changes_.fetch_add(static_cast<int64_t>(txn.size()));
  transactions_.fetch_add(1);
  if (static_cast<int64_t>(txn.size()) > max_txn_.load())
    max_txn_.store(static_cast<int64_t>(txn.size()));
}

void Workload::RolledBackTransaction() {
  // Inserts, an update and a delete that must never reach the destination. The model is left
  // alone (nothing here is applied to it); the burned sequence values are never used again.
  conn_->Exec("BEGIN");
  int inserts = 1 + static_cast<int>(rng_() % 5);
  for (int i = 0; i < inserts; ++i) {
    conn_->Exec("INSERT INTO " + models_[PickTable()].qualified +
                    " (id, version, small, big) VALUES (" + NextVal() + ", 1, $1, $2)",
                {std::string("rolled back"), rng_() % 2 ? Param(BigValue()) : std::nullopt});
  }
  int t = PickTable(), u = PickTable();
  if (models_[t].ids.size() > 10 && models_[u].ids.size() > 10) {
    int64_t a = PickId(t), b = PickId(u);
    conn_->Exec("UPDATE " + models_[t].qualified +
                    " SET version = version + 1, small = 'rolled back' WHERE id = $1",
                {std::to_string(a)});
    if (a != b) {
      conn_->Exec("DELETE FROM " + models_[u].qualified + " WHERE id = $1", {std::to_string(b)});
    }
  }
  conn_->Exec("ROLLBACK");
  rollbacks_.fetch_add(1);
}

void Workload::BulkTransaction() {
  const int n = o_.bulk_rows;
  std::vector<Event> txn;
  conn_->Exec("BEGIN");
  const int kind = bulk_kind_++ % 4;
  const int tables = static_cast<int>(models_.size());
  if (tables > 1 && rng_() % 2 == 0) {
    // Spread over every table, the same kind in each.
    for (int t = 0; t < tables; ++t) BulkRows(t, n / tables + (t < n % tables ? 1 : 0), kind, txn);
  } else {
    BulkRows(PickTable(), n, kind, txn);
  }
  bulk_changes_ += static_cast<int64_t>(txn.size());
  Commit(txn);
  bulk_.fetch_add(1);
}

void Workload::BulkRows(int t, int n, int kind, std::vector<Event>& txn) {
  TableModel& m = models_[t];
  const size_t before = txn.size();
  auto insert_rows = [&](int count) {
    if (count <= 0) return;
    PgRows r = conn_->Exec("INSERT INTO " + m.qualified + " (id, version, small, big) SELECT " +
                           NextVal() + ", 1, 'bulk ' || g, NULL FROM generate_series(1, " +
                           std::to_string(count) + ") g RETURNING id, version");
    for (int i = 0; i < r.size(); ++i) {
      Event e{'c', r.Int(i, 0), r.Int(i, 1), r.Int(i, 0), t};
      AddLive(t, e.id, e.version);
      txn.push_back(e);
    }
  };
  auto pick_distinct = [&](size_t count) {
    std::vector<int64_t> ids = m.ids;
    std::shuffle(ids.begin(), ids.end(), rng_);
    ids.resize(std::min(count, ids.size()));
    return ids;
  };
  auto update_rows = [&](const std::vector<int64_t>& ids) {
    PgRows r = conn_->Exec("UPDATE " + m.qualified +
                               " SET version = version + 1, small = 'bulk v' || (version + 1) "
                               "WHERE id = ANY($1::int8[]) RETURNING id, version",
                           {IdArray(ids)});
    for (int i = 0; i < r.size(); ++i) {
      Event e{'u', r.Int(i, 0), r.Int(i, 1), r.Int(i, 0), t};
      m.live[e.id].second = e.version;
      txn.push_back(e);
    }
  };
  auto delete_rows = [&](const std::vector<int64_t>& ids) {
    PgRows r = conn_->Exec(
        "DELETE FROM " + m.qualified + " WHERE id = ANY($1::int8[]) RETURNING id", {IdArray(ids)});
    for (int i = 0; i < r.size(); ++i) {
      int64_t id = r.Int(i, 0);
      RemoveLive(t, id);
      txn.push_back(Event{'d', id, 0, id, t});
    }
  };
  if (kind == 0 || m.ids.size() < static_cast<size_t>(n)) {
    insert_rows(n);
  } else if (kind == 1) {
    update_rows(pick_distinct(static_cast<size_t>(n)));
  } else if (kind == 2) {
    // Mixed: updates and deletes of distinct rows, then inserts.
    std::vector<int64_t> ids = pick_distinct(static_cast<size_t>(n * 7 / 10));
    std::vector<int64_t> upd(ids.begin(), ids.begin() + static_cast<long>(ids.size() * 4 / 7));
    std::vector<int64_t> del(ids.begin() + static_cast<long>(upd.size()), ids.end());
    update_rows(upd);
    delete_rows(del);
    insert_rows(n - static_cast<int>(txn.size() - before));
  } else if (m.ids.size() > static_cast<size_t>(n) * 2) {
    delete_rows(pick_distinct(static_cast<size_t>(n)));
  } else {
    update_rows(pick_distinct(static_cast<size_t>(n)));
  }
}

// One table draws nothing from the generator: a single-table run's workload is the same for a
// seed as before tables were added.
int Workload::PickTable() {
  return models_.size() == 1 ? 0 : static_cast<int>(rng_() % models_.size());
}

int64_t Workload::PickId(int t) { return models_[t].ids[rng_() % models_[t].ids.size()]; }

void Workload::AddLive(int t, int64_t id, int64_t version) {
  TableModel& m = models_[t];
  m.live[id] = {m.ids.size(), version};
  m.ids.push_back(id);
}

void Workload::RemoveLive(int t, int64_t id) {
  TableModel& m = models_[t];
  auto it = m.live.find(id);
  if (it == m.live.end()) throw TortureError("model: id " + std::to_string(id) + " is not live");
  size_t idx = it->second.first;
  int64_t last = m.ids.back();
  m.ids[idx] = last;
  m.live[last].first = idx;
  m.ids.pop_back();
  m.live.erase(id);
}

std::string Workload::SmallValue() {
  size_t len = rng_() % 41;
  std::string s;
  for (size_t i = 0; i < len; ++i) s += kSmallAlphabet[rng_() % kSmallAlphabet.size()];
  return s;
}

Param Workload::SmallParam() {
  int r = static_cast<int>(rng_() % 100);
  if (r < 10) return std::nullopt;
  if (r < 15) return std::string();
  return SmallValue();
}

std::string Workload::BigValue() {
  // Random alphanumerics do not compress: 2,500+ characters are stored out of line (TOAST).
  static const char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  size_t len = 2500 + rng_() % 6500;
  std::string s(len, ' ');
  for (char& c : s) c = kChars[rng_() % 62];
  return s;
}

std::string Workload::IdArray(const std::vector<int64_t>& ids) {
  std::string s = "{";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(ids[i]);
  }
  return s + "}";
}

}  // namespace faucet::torture
