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
    : o_(std::move(options)),
      sql_(MakeSourceSql({o_.source, o_.url, o_.schema, o_.sequence, o_.slot})),
      rng_(o_.seed) {
  if (o_.tables.empty()) throw TortureError("workload: no tables");
  for (const std::string& t : o_.tables) models_.push_back(TableModel{o_.schema + "." + t, {}, {}});
}

Workload::~Workload() { Stop(); }

std::vector<std::string> Workload::Qualified() const {
  std::vector<std::string> out;
  for (const TableModel& m : models_) out.push_back(m.qualified);
  return out;
}

void Workload::CreateSource(const std::string& publication, int rows) {
  sql_->CreateTables(Qualified(), publication);
  min_rows_ = static_cast<size_t>(rows) * 2 / 5;
  max_rows_ = static_cast<size_t>(rows) * 6;
  sql_->Begin();
  for (int t = 0; t < static_cast<int>(models_.size()); ++t) {
    for (int i = 0; i < rows; ++i) {
      Param big = rng_() % 10 == 0 ? Param(BigValue()) : std::nullopt;
      AddLive(t, sql_->Insert(models_[t].qualified, SmallParam(), big), 1);
    }
  }
  sql_->Commit();
}

void Workload::DropSource(const std::string& publication) {
  sql_->DropTables(Qualified(), publication);
}

void Workload::Start() {
  thread_ = std::thread([this] {
    try {
      sql_->WaitUntilCaptured(stop_);
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
  sql_->Begin();
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
  const int64_t id = sql_->Insert(models_[t].qualified, SmallParam(), big);
  Event e{'c', id, 1, id, t};
  AddLive(t, e.id, e.version);
  txn.push_back(e);
}

void Workload::Update(int t, std::vector<Event>& txn) {
  int64_t id = PickId(t);
  Assign small, big;
  int kind = static_cast<int>(rng_() % 100);
  if (kind < 50) {  // small only: a TOAST-sized big stays unchanged (not in the WAL record)
    small = SmallParam();
  } else if (kind < 70) {  // a new TOAST-sized value
    big = BigValue();
  } else if (kind < 75) {
    big = Param();  // NULL
  } else if (kind < 80) {
    big = SmallValue();
  } else {
    small = SmallParam();
    big = BigValue();
  }
  IdVersion r = sql_->Update(models_[t].qualified, {id, models_[t].live.at(id).second},
                             /*new_key=*/false, small, big);
  Event e{'u', id, r.version, id, t};
  models_[t].live[id].second = e.version;
  txn.push_back(e);
}

void Workload::ChangeKey(int t, std::vector<Event>& txn) {
  int64_t id = PickId(t);
  // Mostly the key and version only: a TOAST-sized big is then an unchanged value in the new
  // row, which a mirror must carry over from the old key.
  Assign small, big;
  if (rng_() % 10 < 4) small = SmallParam();
  if (!o_.key_change_keeps_toast) big = rng_() % 2 ? Param(BigValue()) : std::nullopt;
  IdVersion r = sql_->Update(models_[t].qualified, {id, models_[t].live.at(id).second},
                             /*new_key=*/true, small, big);
  Event e{'u', r.id, r.version, id, t};
  RemoveLive(t, id);
  AddLive(t, e.id, e.version);
  txn.push_back(e);
}

void Workload::Delete(int t, std::vector<Event>& txn) {
  int64_t id = PickId(t);
  sql_->Delete(models_[t].qualified, id);
  RemoveLive(t, id);
  txn.push_back(Event{'d', id, 0, id, t});
}

void Workload::Commit(std::vector<Event>& txn) {
  sql_->Commit();
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
  // alone (nothing here is applied to it); the burned ids are never used again.
  sql_->Begin();
  int inserts = 1 + static_cast<int>(rng_() % 5);
  for (int i = 0; i < inserts; ++i) {
    const int t = PickTable();
    Param big = rng_() % 2 ? Param(BigValue()) : std::nullopt;
    sql_->Insert(models_[t].qualified, std::string("rolled back"), big);
  }
  int t = PickTable(), u = PickTable();
  if (models_[t].ids.size() > 10 && models_[u].ids.size() > 10) {
    int64_t a = PickId(t), b = PickId(u);
    sql_->Update(models_[t].qualified, {a, models_[t].live.at(a).second}, /*new_key=*/false,
                 std::string("rolled back"), std::nullopt);
    if (a != b) sql_->Delete(models_[u].qualified, b);
  }
  sql_->Rollback();
  rollbacks_.fetch_add(1);
}

void Workload::BulkTransaction() {
  const int n = o_.bulk_rows;
  std::vector<Event> txn;
  sql_->Begin();
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
    for (int64_t id : sql_->BulkInsert(m.qualified, count)) {
      Event e{'c', id, 1, id, t};
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
    std::vector<IdVersion> rows;
    for (int64_t id : ids) rows.push_back({id, m.live.at(id).second});
    for (const IdVersion& r : sql_->BulkUpdate(m.qualified, rows)) {
      Event e{'u', r.id, r.version, r.id, t};
      m.live[e.id].second = e.version;
      txn.push_back(e);
    }
  };
  auto delete_rows = [&](const std::vector<int64_t>& ids) {
    sql_->BulkDelete(m.qualified, ids);
    for (int64_t id : ids) {
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

}  // namespace faucet::torture
