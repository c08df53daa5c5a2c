// faucet_torture: random SIGKILLs under a live workload, then a convergence check.
//
//   faucet_torture --dest=postgres|sqlite|jsonl|kafka [--kills=N] [--seed=S] [--rate=CHANGES_PER_S]
//                  [--pg-url=URL] [--workdir=DIR] [--max-kill-delay-ms=MS] [--catchup-timeout=S]
//   faucet_torture --dest=mirror-tables [--sink=postgres|sqlite] [--tables=N] ...
//   faucet_torture --source=mariadb --dest=postgres|sqlite [--mysql-url=URL] ...
//
// --source=mariadb mirrors a MariaDB table (mysql-cdc, snapshot by the mysql query source):
// the same workload in MariaDB's SQL (source_sql.h), no slot, so the sampler checks only that
// the persisted bookmark {file, pos} never moves backwards; MariaDB renders the source side of
// the comparison.
//
// --dest=mirror-tables runs the multi-table mirror (`mirror.tables`): N source tables in one
// schema (published FOR TABLES IN SCHEMA), one change stream, one destination table each; the
// workload spreads over the tables (multi-table transactions, 10,000-row transactions in one
// table or across all of them); the kills include the snapshots' own crash point
// (mirror.table_snapshot_page: the first kill is there, during the initial load); every table
// is compared with its destination table and every table's bookmark is sampled.
//
// 1. Creates the source table (id int8 PK, version int8, small text, big text) with initial
//    rows and a publication, and the destination (a table in a second database, a SQLite file,
//    a jsonl path or a Kafka topic), then writes a `faucet mirror` config: postgres-cdc -> the
//    destination, snapshot_then_cdc, continuous, file state store.
// 2. Starts a writer thread (workload.h) that changes the source continuously once the slot
//    exists, and a sampler thread that polls the slot's confirmed_flush_lsn and the persisted
//    bookmark file: the slot must never be ahead of the bookmark, and the bookmark must never
//    move backwards.
// 3. Runs `faucet mirror` and kills it N times: the first in the snapshot, then half at a random
//    named crash point (FAUCET_CRASH_AT=name:k, k in 1..8, the points this pipeline can reach),
//    half with SIGKILL after a random delay; each time it restarts it at once.
// 4. Stops the writer, lets the last mirror catch up, stops it with SIGTERM (it must exit 0) and
//    compares the destination with the source (destinations.h says exactly what is compared).
//
// Ends with exactly one line
//   torture: dest=<name> kills=<n> changes=<n> lost=<n> duplicates=<n> converged_in=<s>s
// and exits 1 on any loss, mismatch, invariant violation or unexpected faucet exit.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "core/crash_point.h"
#include "core/lsn.h"
#include "core/mutex.h"
#include "core/position.h"
#include "destinations.h"
#include "mysql_client.h"
#include "pg_client.h"
#include "testing/process.h"
#include "testing/services.h"
#include "workload.h"

namespace faucet::torture {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kName = "torture";  // the pipeline's name: state keys torture::...

struct Options {
  std::string source = "postgres";  // or mariadb: a mysql-cdc mirror from MariaDB
  std::string dest;
  std::string sink = "postgres";  // mirror-tables: the sink every table writes through
  int tables = 6;                 // mirror-tables: source tables
  int kills = 10;
  uint64_t seed = 0;
  double rate = 1000;  // changes/s in small transactions, plus the bulk ones
  std::string pg_url;
  std::string mysql_url;      // --source=mariadb
  std::string kafka_brokers;  // --dest=kafka: FAUCET_TEST_KAFKA_BROKERS
  std::string workdir;
  std::string faucet = FAUCET_BINARY;
  int min_kill_delay_ms = 150;
  int max_kill_delay_ms = 4000;
  int crash_wait_ms = 6000;  // a crash point not reached by then: SIGKILL instead
  int catchup_timeout_s = 120;
  double final_write_s = 2;  // the writer keeps going this long after the last restart
  int initial_rows = -1;     // per table; default 5,000 (single table) or 2,500 (mirror-tables)
  int batch_size = 500;
  double bulk_every_s = 10;
  bool key_change_keeps_toast = true;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(
      stderr,
      "faucet_torture: %s\nusage: faucet_torture --dest=postgres|sqlite|jsonl|kafka|mirror-tables "
      "[--sink=postgres|sqlite] [--tables=N] [--source=postgres|mariadb] "
      "[--kills=N] [--seed=S] [--rate=N] [--pg-url=URL] [--mysql-url=URL] [--workdir=DIR] "
      "[--max-kill-delay-ms=MS] [--crash-wait-ms=MS] [--catchup-timeout=S] "
      "[--final-write-s=S] [--initial-rows=N] [--batch-size=N] [--bulk-every-s=S] "
      "[--key-change-keeps-toast=1|0] [--faucet=PATH]\n",
      why.c_str());
  std::exit(2);
}

Options ParseFlags(int argc, char** argv) {
  Options o;
  o.seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) %
           1000000007;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    size_t eq = a.find('=');
    if (a.rfind("--", 0) != 0 || eq == std::string::npos) Usage("bad argument '" + a + "'");
    std::string k = a.substr(2, eq - 2), v = a.substr(eq + 1);
    try {
      if (k == "dest")
        o.dest = v;
      else if (k == "source")
        o.source = v;
      else if (k == "mysql-url")
        o.mysql_url = v;
      else if (k == "sink")
        o.sink = v;
      else if (k == "tables")
        o.tables = std::stoi(v);
      else if (k == "kills")
        o.kills = std::stoi(v);
      else if (k == "seed")
        o.seed = std::stoull(v);
      else if (k == "rate")
        o.rate = std::stod(v);
      else if (k == "pg-url")
        o.pg_url = v;
      else if (k == "workdir")
        o.workdir = v;
      else if (k == "faucet")
        o.faucet = v;
      else if (k == "min-kill-delay-ms")
        o.min_kill_delay_ms = std::stoi(v);
      else if (k == "max-kill-delay-ms")
        o.max_kill_delay_ms = std::stoi(v);
      else if (k == "crash-wait-ms")
        o.crash_wait_ms = std::stoi(v);
      else if (k == "catchup-timeout")
        o.catchup_timeout_s = std::stoi(v);
      else if (k == "final-write-s")
        o.final_write_s = std::stod(v);
      else if (k == "initial-rows")
        o.initial_rows = std::stoi(v);
      else if (k == "batch-size")
        o.batch_size = std::stoi(v);
      else if (k == "bulk-every-s")
        o.bulk_every_s = std::stod(v);
      else if (k == "key-change-keeps-toast")
        o.key_change_keeps_toast = v != "0" && v != "false";
      else
        Usage("unknown flag --" + k);
    } catch (const std::invalid_argument&) {
      Usage("bad value for --" + k);
    }
  }
  if (o.dest != "postgres" && o.dest != "sqlite" && o.dest != "jsonl" && o.dest != "kafka" &&
      o.dest != "mirror-tables")
    Usage("--dest is required");
  if (o.dest == "kafka") o.kafka_brokers = testing::RequireEnv("FAUCET_TEST_KAFKA_BROKERS");
  if (o.dest == "mirror-tables" && o.sink != "postgres" && o.sink != "sqlite")
    Usage("--sink must be postgres or sqlite");
  if (o.tables < 1 || o.tables > 100) Usage("bad --tables");
  if (o.source != "postgres" && o.source != "mariadb")
    Usage("--source must be postgres or mariadb");
  if (o.source == "mariadb" && o.dest != "postgres" && o.dest != "sqlite")
    Usage("--source=mariadb mirrors into --dest=postgres or sqlite");
  if (o.source == "mariadb" && o.mysql_url.empty())
    o.mysql_url = testing::RequireEnv("FAUCET_TEST_MYSQL_URL");
  if (o.initial_rows < 0) o.initial_rows = o.dest == "mirror-tables" ? 2500 : 5000;
  if (o.kills < 0 || o.max_kill_delay_ms < o.min_kill_delay_ms) Usage("bad --kills or delays");
  if (o.pg_url.empty()) o.pg_url = testing::RequireEnv("FAUCET_TEST_PG_URL");
  if (o.workdir.empty()) {
    o.workdir = testing::TempDir("torture-" + (o.source == "mariadb" ? "mariadb-" : std::string()) +
                                 o.dest + (o.dest == "mirror-tables" ? "-" + o.sink : ""));
  }
  return o;
}

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string Fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// ---- invariants sampled during the run ------------------------------------------------------

std::optional<Lsn> LsnOf(const nlohmann::json& bookmark) {
  if (!bookmark.is_object() || !bookmark.contains("last_lsn") || !bookmark["last_lsn"].is_string())
    return std::nullopt;
  Result<Lsn> lsn = Lsn::Parse(bookmark["last_lsn"].get<std::string>());
  if (!lsn.ok()) return std::nullopt;
  return *lsn;
}

// A persisted bookmark as an ordered position (core/position.h): postgres-cdc's {last_lsn} as
// {lsn}; mysql-cdc's {file, pos} as {file number, pos}, the number being the file name's
// extension (binlog.000012), so that a ROTATE to the next file orders after every position in
// the one before.
std::optional<Position> PositionOf(SourceKind kind, const nlohmann::json& bookmark) {
  if (kind == SourceKind::kPostgres) {
    std::optional<Lsn> lsn = LsnOf(bookmark);
    if (!lsn) return std::nullopt;
    return Position{{lsn->value()}};
  }
  if (!bookmark.is_object() || !bookmark.contains("file") || !bookmark["file"].is_string() ||
      !bookmark.contains("pos") || !bookmark["pos"].is_number_unsigned())
    return std::nullopt;
  const std::string file = bookmark["file"].get<std::string>();
  const size_t dot = file.rfind('.');
  if (dot == std::string::npos || dot + 1 == file.size() ||
      file.find_first_not_of("0123456789", dot + 1) != std::string::npos)
    return std::nullopt;
  return Position{{std::stoull(file.substr(dot + 1)), bookmark["pos"].get<uint64_t>()}};
}

std::string PositionText(SourceKind kind, const std::optional<Position>& p) {
  if (!p) return "none";
  if (kind == SourceKind::kPostgres) return Lsn(p->parts.at(0)).ToString();
  return "binlog file " + std::to_string(p->parts.at(0)) + " pos " + std::to_string(p->parts.at(1));
}

// Polls the slot's confirmed_flush_lsn, then the persisted bookmark files (in that order: a
// bookmark is persisted before the slot is acknowledged, and bookmarks only grow, so the slot
// read first can never legitimately exceed a bookmark read after it).
//
// Single-table mirror: one bookmark file, {name}::cdc. Multi-table mirror: one per table,
// {name}::{schema.table} (seeded with its snapshot's join point before the snapshot reads),
// and the marker {name}::__replication__ for the tables' phases; the slot is acknowledged at
// the minimum every table persisted (a table being snapshotted holds it at its join point), so
// the slot must never be ahead of a table that holds the log: one pending, being snapshotted
// or streaming, as the marker last said (paused, dropped and refused tables no longer hold
// it). Each table's bookmark must never move backwards.
//
// A MariaDB source (no slot: the server keeps no replica position) has only the latter: the
// bookmark file never moves backwards.
class Sampler {
 public:
  struct Bookmarks {
    std::string label;  // a table's name, or "bookmark"
    std::string path;
  };
  // `slot` empty: no slot to compare (a MariaDB source).
  Sampler(SourceKind kind, std::string url, std::string slot, std::vector<Bookmarks> files,
          std::string marker_path = "")
      : kind_(kind),
        url_(std::move(url)),
        slot_(std::move(slot)),
        files_(std::move(files)),
        marker_path_(std::move(marker_path)) {}
  ~Sampler() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      try {
        std::unique_ptr<PgConn> conn = slot_.empty() ? nullptr : std::make_unique<PgConn>(url_);
        while (!stop_.load()) {
          SampleOnce(conn.get());
          std::this_thread::sleep_for(10ms);
        }
        SampleOnce(conn.get());
      } catch (const std::exception& e) {
        Violation(std::string("sampler failed: ") + e.what());
      }
    });
  }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  // The lowest persisted bookmark now (nullopt while one of the files does not exist yet).
  std::optional<Position> ReadBookmark() {
    std::optional<Position> low;
    for (const Bookmarks& f : files_) {
      std::optional<Position> b = ReadFile(f.path);
      if (!b) return std::nullopt;
      if (!low || *b < *low) low = b;
    }
    return low;
  }

  // The marker's tables: name -> {phase, join point} (empty for a single-table mirror or
  // before the first marker).
  struct TableEntry {
    std::string phase;
    std::optional<Lsn> position;
    int64_t snapshot_attempts = 0;
    bool resync_required = false;  // faucet says stale rows may remain
  };
  std::map<std::string, TableEntry> ReadMarker() {
    std::map<std::string, TableEntry> out;
    if (marker_path_.empty()) return out;
    std::optional<nlohmann::json> j = ReadJson(marker_path_);
    if (!j) return out;
    if (!j->is_object() || !j->contains("tables") || !(*j)["tables"].is_object()) {
      Violation("unreadable marker " + marker_path_ + ": " + j->dump().substr(0, 300));
      return out;
    }
    for (const auto& [name, t] : (*j)["tables"].items()) {
      TableEntry e;
      e.phase = t.value("phase", std::string("?"));
      if (t.contains("position")) e.position = LsnOf(t["position"]);
      if (t.contains("snapshot") && t["snapshot"].is_object())
        e.snapshot_attempts = t["snapshot"].value("attempts", int64_t{0});
      e.resync_required = t.contains("resync_required");
      out[name] = e;
    }
    return out;
  }

  int64_t samples() const { return samples_.load(); }
  int64_t compared() const { return compared_.load(); }
  std::vector<std::string> violations() {
    MutexLock lock(mu_);
    return violations_;
  }
  int64_t violation_count() {
    MutexLock lock(mu_);
    return violation_count_;
  }

  std::optional<Lsn> SlotPosition(PgConn& conn) {
    if (slot_.empty()) return std::nullopt;
    std::optional<std::string> s = conn.Scalar(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", {slot_});
    if (!s) return std::nullopt;
    Result<Lsn> lsn = Lsn::Parse(*s);
    if (!lsn.ok()) return std::nullopt;
    return *lsn;
  }

 private:
  static bool HoldsLog(const std::string& phase) {
    return phase == "pending" || phase == "snapshotting" || phase == "active";
  }

  std::optional<nlohmann::json> ReadJson(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_discarded()) {
      Violation("unreadable state file " + path + ": '" + ss.str().substr(0, 300) + "'");
      return std::nullopt;
    }
    return j;
  }

  std::optional<Position> ReadFile(const std::string& path) {
    std::optional<nlohmann::json> j = ReadJson(path);
    if (!j) return std::nullopt;
    if (j->is_object() && j->contains("bookmark")) j = (*j)["bookmark"];  // exactly-once wrapper
    std::optional<Position> p = PositionOf(kind_, *j);
    if (!p) Violation("no position in bookmark file " + path + ": '" + j->dump() + "'");
    return p;
  }

  void SampleOnce(PgConn* conn) {
    std::optional<Position> slot;
    if (conn) {
      if (std::optional<Lsn> lsn = SlotPosition(*conn)) slot = Position{{lsn->value()}};
    }
    std::map<std::string, TableEntry> marker = ReadMarker();
    std::vector<std::optional<Position>> bookmarks;
    for (const Bookmarks& f : files_) bookmarks.push_back(ReadFile(f.path));
    samples_.fetch_add(1);
    MutexLock lock(mu_);
    for (size_t i = 0; i < files_.size(); ++i) {
      const std::optional<Position>& b = bookmarks[i];
      if (!b) continue;
      std::optional<Position>& max = max_[files_[i].label];
      if (max && *b < *max) {
        AddViolation(files_[i].label + ": persisted bookmark moved backwards: " +
                     PositionText(kind_, b) + " after " + PositionText(kind_, max));
      }
      if (!max || *b > *max) max = b;
      std::string phase = "active";
      if (!marker_path_.empty()) {
        auto it = marker.find(files_[i].label);
        phase = it == marker.end() ? "absent" : it->second.phase;
      }
      if (slot && HoldsLog(phase)) {
        compared_.fetch_add(1);
        if (*slot > *b) {
          AddViolation("slot confirmed_flush_lsn " + PositionText(kind_, slot) + " is ahead of " +
                       files_[i].label + "'s persisted bookmark " + PositionText(kind_, b) + " (" +
                       phase + ", read after it)");
        }
      }
    }
  }
  void Violation(const std::string& what) {
    MutexLock lock(mu_);
    AddViolation(what);
  }
  void AddViolation(const std::string& what) REQUIRES(mu_) {
    if (violation_count_++ < 20) violations_.push_back(what);
  }

  SourceKind kind_;
  std::string url_, slot_;
  std::vector<Bookmarks> files_;
  std::string marker_path_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> samples_{0}, compared_{0};
  Mutex mu_;
  std::vector<std::string> violations_ GUARDED_BY(mu_);
  int64_t violation_count_ GUARDED_BY(mu_) = 0;
  std::map<std::string, std::optional<Position>> max_ GUARDED_BY(mu_);  // by label
};

// ---- the faucet process ---------------------------------------------------------------------

bool HasExited(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;
  return info.si_pid == pid;
}

// The crash points a mirror from `source` ("postgres": postgres-cdc, "mysql": mysql-cdc) into
// sink `dest` with a file state store can reach: every registered point except other sources',
// other sinks' and other state stores' own points, and the multi-table mirror's own
// (mirror.table_*) unless `multi_table`.
std::vector<std::string> ReachableCrashPoints(const std::string& faucet, const std::string& source,
                                              const std::string& dest, bool multi_table) {
  testing::ProcessResult r = testing::RunProcess({faucet, "debug", "crash-points"});
  if (r.exit_code != 0) throw TortureError("faucet debug crash-points failed: " + r.output);
  std::vector<std::string> out;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    if (!(words >> name)) continue;
    if (!multi_table && name.rfind("mirror.table_", 0) == 0) continue;
    if (name == "mirror.snapshot_committed") continue;  // passed once a snapshot: the second kill
    // <area>.<connector>.<what> belongs to one connector: keep it only when it is ours.
    size_t dot1 = name.find('.'), dot2 = name.find('.', dot1 + 1);
    if (dot1 != std::string::npos && dot2 != std::string::npos) {
      std::string area = name.substr(0, dot1), connector = name.substr(dot1 + 1, dot2 - dot1 - 1);
      if (area == "sink" && connector != dest) continue;
      if (area == "state" && connector != "file") continue;
      if (area == "source" && connector.rfind(source, 0) != 0) continue;
    }
    out.push_back(name);
  }
  if (out.empty()) throw TortureError("no crash points listed by faucet debug crash-points");
  return out;
}

class MirrorRunner {
 public:
  MirrorRunner(const Options& o, std::string config, const std::string& log_path)
      : o_(o), config_(std::move(config)), log_(log_path, std::ios::app) {}

  void Start(const std::string& crash_at) {
    crash_at_ = crash_at;
    started_ = Clock::now();
    proc_ = std::make_unique<testing::Process>(
        std::vector<std::string>{o_.faucet, "mirror", config_},
        std::map<std::string, std::string>{{"FAUCET_CRASH_AT", crash_at}});
    ++runs_;
  }
  bool Exited() const { return HasExited(proc_->pid()); }
  void Signal(int sig) { proc_->Kill(sig); }
  testing::ProcessResult Wait() {
    testing::ProcessResult r = proc_->Wait();
    log_ << "===== run " << runs_ << " crash_at='" << crash_at_ << "' lived "
         << Fixed(Since(started_), 2) << " s exit=" << r.exit_code << " signal=" << r.signal << "\n"
         << r.output << "\n";
    log_.flush();
    proc_.reset();
    return r;
  }
  bool running() const { return proc_ != nullptr; }

 private:
  const Options& o_;
  std::string config_;
  std::ofstream log_;
  std::unique_ptr<testing::Process> proc_;
  std::string crash_at_;
  Clock::time_point started_;
  int runs_ = 0;
};

std::string Tail(const std::string& s, size_t lines) {
  size_t pos = s.size();
  for (size_t n = 0; n <= lines && pos != std::string::npos && pos > 0; ++n)
    pos = s.rfind('\n', pos - 1);
  return pos == std::string::npos || pos == 0 ? s : s.substr(pos + 1);
}

int Main(int argc, char** argv) {
  Options o = ParseFlags(argc, argv);
  // Children's output files (testing::Process) and faucet's spill files go inside the workdir,
  // set before any thread starts.
  const std::string tmp = o.workdir + "/tmp";
  std::filesystem::create_directories(tmp);
  setenv("TMPDIR", tmp.c_str(), 1);
  // Every run of this torture uses one faucet binary: a copy, so that a rebuild meanwhile (the
  // file replaced while it is relinked) neither fails a start nor mixes two versions.
  {
    const std::string copy = tmp + "/faucet";
    std::filesystem::copy_file(o.faucet, copy, std::filesystem::copy_options::overwrite_existing);
    o.faucet = copy;
  }
  std::mt19937_64 rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
  const bool multi = o.dest == "mirror-tables";
  const bool mariadb = o.source == "mariadb";
  const SourceKind source_kind = mariadb ? SourceKind::kMariadb : SourceKind::kPostgres;
  // As printed.
  const std::string label = multi     ? o.dest + "/" + o.sink
                            : mariadb ? "mariadb-source/" + o.dest
                                      : o.dest;
  const std::string suffix = (multi     ? "mt_" + o.sink
                              : mariadb ? "my_" + o.dest
                                        : o.dest) +
                             "_" + std::to_string(getpid());
  // Single table: public.<table>, or <database>.<table> in MariaDB.
  const std::string table = "torture_src_" + suffix;
  const std::string schema = "torture_" + suffix;  // mirror-tables: <schema>.t0 ...
  const std::string publication = "torture_pub_" + suffix;
  const std::string slot = "torture_slot_" + suffix;
  const std::string state_dir = o.workdir + "/state";
  const std::string config_path = o.workdir + "/mirror.yaml";
  const std::string log_path = o.workdir + "/faucet.log";
  std::string tag = "torture[" + label + "]: ";
  std::printf("%sseed=%llu kills=%d rate=%.0f/s%s workdir=%s (faucet output: %s)\n", tag.c_str(),
              static_cast<unsigned long long>(o.seed), o.kills, o.rate,
              multi ? (" tables=" + std::to_string(o.tables) +
                       " rows/table=" + std::to_string(o.initial_rows))
                          .c_str()
                    : "",
              o.workdir.c_str(), log_path.c_str());
  std::fflush(stdout);

  PgConn admin(o.pg_url);
  if (!mariadb) {
    admin.Exec(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = " +
        Quote(slot));
  }
  std::string mysql_db;  // the MariaDB source's database, from its URL
  if (mariadb) {
    Result<MysqlUrl> parts = ParseMysqlUrl(o.mysql_url);
    if (!parts.ok()) throw TortureError(parts.status().ToString());
    mysql_db = parts->database;
  }

  WorkloadOptions wo;
  wo.source = source_kind;
  wo.url = mariadb ? o.mysql_url : o.pg_url;
  if (mariadb) {
    wo.schema = mysql_db;
    wo.tables = {table};
  } else if (multi) {
    wo.schema = schema;
    for (int i = 0; i < o.tables; ++i) wo.tables.push_back("t" + std::to_string(i));
    wo.sequence = "torture_seq";
  } else {
    wo.tables = {table};
    wo.sequence = table + "_seq";
  }
  wo.slot = slot;
  wo.seed = o.seed;
  wo.rate = o.rate;
  wo.bulk_every_s = o.bulk_every_s;
  wo.key_change_keeps_toast = o.key_change_keeps_toast;
  Workload workload(wo);
  workload.CreateSource(publication, o.initial_rows);

  DestinationContext dc{o.dest,    o.sink,      o.pg_url,    table,          {}, suffix, o.workdir,
                        &workload, source_kind, o.mysql_url, o.kafka_brokers};
  for (int i = 0; multi && i < o.tables; ++i) dc.source_tables.push_back(workload.Qualified(i));
  std::unique_ptr<Destination> dest = MakeDestination(dc);
  dest->Create();

  // The source and the mirror's snapshot query: postgres-cdc and postgres, or mysql-cdc and
  // mysql (server_id: unique among the replicas of the shared test server).
  std::string source_yaml, snapshot_yaml;
  if (mariadb) {
    const uint64_t server_id =
        100000 + (static_cast<uint64_t>(getpid()) * 1000003 + o.seed) % 4'000'000'000ULL;
    source_yaml =
        "    type: mysql-cdc\n"
        "    config:\n"
        "      connection_url: '" +
        o.mysql_url + "'\n      server_id: " + std::to_string(server_id) +
        "\n      include_tables: [" + mysql_db + "." + table + "]\n";
    snapshot_yaml =
        "      type: mysql\n"
        "      config:\n"
        "        connection_url: '" +
        o.mysql_url + "'\n        query: \"SELECT * FROM " + mysql_db + "." + table + "\"\n";
  } else {
    source_yaml =
        "    type: postgres-cdc\n"
        "    config:\n"
        "      connection_url: " +
        o.pg_url + "\n      slot_name: " + slot + "\n      publication_name: " + publication +
        "\n"
        "      status_update_interval: 1\n"
        "      max_cycle_duration: 20\n";
    snapshot_yaml =
        "      type: postgres\n"
        "      config:\n"
        "        connection_url: " +
        o.pg_url + "\n        query: \"" +
        (multi ? "SELECT 1" : "SELECT id, version, small, big FROM public." + table) + "\"\n";
  }
  std::ofstream(config_path) << "version: 1\n"
                                "name: "
                             << kName << "\n"
                             << dest->DocumentYaml()
                             << "pipeline:\n"
                                "  source:\n"
                             << source_yaml << "      batch_size: " << o.batch_size
                             << "\n"
                                "      idle_timeout: 3\n"
                             << dest->PipelineYaml()
                             << "  state:\n"
                                "    type: file\n"
                                "    config: {path: "
                             << state_dir
                             << "}\n"
                                "mirror:\n"
                                "  mode: snapshot_then_cdc\n"
                                "  continuous: true\n"
                                "  snapshot:\n"
                             << (multi ? "    concurrency: 2\n" : "") << "    source:\n"
                             << snapshot_yaml << "        batch_size: " << o.batch_size << "\n"
                             << (multi ? "  tables:\n    include: ['" + schema + ".*']\n" : "");

  std::vector<std::string> points = ReachableCrashPoints(o.faucet, mariadb ? "mysql" : "postgres",
                                                         multi ? o.sink : o.dest, multi);
  std::string point_list;
  for (const std::string& p : points) point_list += (point_list.empty() ? "" : ", ") + p;
  std::printf("%scrash points: %s\n", tag.c_str(), point_list.c_str());

  // State keys: {name}::cdc (single table); {name}::{schema.table} per table and the marker
  // {name}::__replication__ (mirror-tables). ':' is %3A in the file store's file names.
  const std::string state_prefix = state_dir + "/" + kName + "%3A%3A";
  std::vector<Sampler::Bookmarks> bookmark_files;
  if (multi) {
    for (int i = 0; i < o.tables; ++i) {
      bookmark_files.push_back(
          {workload.Qualified(i), state_prefix + workload.Qualified(i) + ".json"});
    }
  } else {
    bookmark_files.push_back({"bookmark", state_prefix + "cdc.json"});
  }
  Sampler sampler(source_kind, o.pg_url, mariadb ? "" : slot, bookmark_files,
                  multi ? state_prefix + "__replication__.json" : "");
  sampler.Start();
  workload.Start();

  // ---- kills ----
  MirrorRunner mirror(o, config_path, log_path);
  std::vector<std::string> failures;
  int crash_point_kills = 0, timed_kills = 0, fallback_kills = 0;
  std::map<std::string, int> hits;
  std::vector<std::string> deck;
  auto unexpected = [&](const testing::ProcessResult& r, const std::string& when) {
    failures.push_back("faucet exited on its own " + when + " (exit " +
                       std::to_string(r.exit_code) + ", signal " + std::to_string(r.signal) +
                       "); last output:\n" + Tail(r.output, 15));
  };
  // mirror-tables: true once the marker has every table streaming (no snapshot left to crash
  // in).
  auto snapshots_done = [&] {
    std::map<std::string, Sampler::TableEntry> marker = sampler.ReadMarker();
    if (marker.size() < static_cast<size_t>(o.tables)) return false;
    for (const auto& [name, t] : marker) {
      if (t.phase != "active") return false;
    }
    return true;
  };
  Clock::time_point kills_start = Clock::now();
  for (int k = 0; k < o.kills; ++k) {
    // Half the kills at a crash point, the points dealt from a shuffled deck so that every one is
    // used as evenly as the count allows; the other half by SIGKILL at a random moment.
    // The first kill is in the initial load: after a page of the snapshot is written
    // (mirror-tables: mirror.table_snapshot_page, a point passed over once every table streams,
    // as it could not be reached; one table: pipeline.after_write, after its 6th to 9th page).
    // The second is in the redone load, once a snapshot committed and before the mirror
    // recorded its end (mirror.snapshot_committed).
    const bool in_initial_load = k == 0;
    const bool at_load_end = k == 1;
    bool at_point = in_initial_load || at_load_end || rng() % 2 == 0;
    if (at_point) {
      std::string point;
      if (in_initial_load) point = multi ? "mirror.table_snapshot_page" : "pipeline.after_write";
      if (at_load_end) point = "mirror.snapshot_committed";
      for (size_t draws = 0; point.empty() && draws <= 2 * points.size(); ++draws) {
        if (deck.empty()) {
          deck = points;
          std::shuffle(deck.begin(), deck.end(), rng);
        }
        std::string card = deck.back();
        deck.pop_back();
        if (multi && card.rfind("mirror.table_", 0) == 0 && snapshots_done()) continue;
        point = card;
      }
      // One table's snapshot has 10 pages or more (5,000 rows or more, pages of --batch-size,
      // 500): the initial-load kill comes after its 6th to 9th page, once most of the earlier
      // ones have reached the destination.
      const int nth = at_load_end                 ? 1
                      : in_initial_load && !multi ? 6 + static_cast<int>(rng() % 4)
                                                  : 1 + static_cast<int>(rng() % 8);
      mirror.Start(point + ":" + std::to_string(nth));
      Clock::time_point t = Clock::now();
      while (!mirror.Exited() && Since(t) * 1000 < o.crash_wait_ms)
        std::this_thread::sleep_for(10ms);
      if (mirror.Exited()) {
        testing::ProcessResult r = mirror.Wait();
        if (r.exit_code == kCrashExitCode) {
          ++crash_point_kills;
          ++hits[point];
        } else {
          unexpected(r, "while armed at " + point + ":" + std::to_string(nth));
        }
      } else {
        mirror.Signal(SIGKILL);
        mirror.Wait();
        ++fallback_kills;
      }
    } else {
      int delay = o.min_kill_delay_ms +
                  static_cast<int>(
                      rng() % static_cast<uint64_t>(o.max_kill_delay_ms - o.min_kill_delay_ms + 1));
      mirror.Start("");
      Clock::time_point t = Clock::now();
      while (!mirror.Exited() && Since(t) * 1000 < delay) std::this_thread::sleep_for(5ms);
      if (mirror.Exited()) {
        unexpected(mirror.Wait(), "before its SIGKILL");
      } else {
        mirror.Signal(SIGKILL);
        mirror.Wait();
        ++timed_kills;
      }
    }
    dest->Poll();
    if (!workload.error().empty()) break;
  }
  double kill_phase_s = Since(kills_start);
  const int kills = crash_point_kills + timed_kills + fallback_kills;

  // ---- the last run: let the writer go on a little, stop it, catch up ----
  mirror.Start("");
  Clock::time_point writer_deadline = Clock::now() + 60s;
  while (!workload.started() && Clock::now() < writer_deadline && workload.error().empty()) {
    std::this_thread::sleep_for(50ms);
  }
  std::this_thread::sleep_for(
      std::chrono::milliseconds(static_cast<int64_t>(o.final_write_s * 1000)));
  workload.Stop();
  if (!workload.error().empty()) failures.push_back("workload writer failed: " + workload.error());
  if (!workload.started()) failures.push_back("the writer never started: the slot never appeared");
  // The source's position after the last write: the WAL insert position, or the binlog's end.
  std::optional<Position> end_of_writes;
  if (mariadb) {
    mysql::Rows status = MyConn(o.mysql_url).Fetch("SHOW MASTER STATUS");
    if (!status.empty() && status[0].size() >= 2 && status[0][0] && status[0][1]) {
      end_of_writes = PositionOf(source_kind, nlohmann::json{{"file", *status[0][0]},
                                                             {"pos", std::stoull(*status[0][1])}});
    }
  } else {
    Result<Lsn> lsn = Lsn::Parse(admin.Scalar("SELECT pg_current_wal_lsn()::text").value_or("0/0"));
    if (lsn.ok()) end_of_writes = Position{{lsn->value()}};
  }
  const std::string final_wal = PositionText(source_kind, end_of_writes);
  Clock::time_point stop_time = Clock::now();
  std::optional<Clock::time_point> stream_applied;  // when the bookmark passed end_of_writes
  double converged_in = -1;
  std::string why;
  while (Since(stop_time) < o.catchup_timeout_s) {
    if (mirror.Exited()) {
      unexpected(mirror.Wait(), "while catching up");
      break;
    }
    if (dest->CaughtUp(admin, why)) {
      converged_in = Since(stop_time);
      break;
    }
    // Everything written is applied and persisted, yet the destination differs: waiting longer
    // would change nothing (10 s of grace for a slow last page).
    std::optional<Position> b = sampler.ReadBookmark();
    if (!stream_applied && b && end_of_writes && *b >= *end_of_writes)
      stream_applied = Clock::now();
    if (stream_applied && Since(*stream_applied) > 10) {
      why += " (the persisted bookmark passed the end of the writes " + final_wal + " " +
             Fixed(Since(*stream_applied)) + " s ago)";
      break;
    }
    std::this_thread::sleep_for(200ms);
  }
  if (converged_in < 0) {
    failures.push_back("did not converge (" + Fixed(Since(stop_time)) +
                       " s after the writer stopped): " + why);
  }
  if (mirror.running()) {
    mirror.Signal(SIGTERM);
    Clock::time_point t = Clock::now();
    while (!mirror.Exited() && Since(t) < 60) std::this_thread::sleep_for(20ms);
    if (!mirror.Exited()) {
      failures.push_back("faucet did not stop within 60 s of SIGTERM");
      mirror.Signal(SIGKILL);
    }
    testing::ProcessResult r = mirror.Wait();
    if (r.exit_code != 0) unexpected(r, "on SIGTERM with a non-zero status");
  }
  // mirror-tables: every table streams at the end (none paused, refused or left behind).
  std::string phases;
  if (multi) {
    std::map<std::string, Sampler::TableEntry> marker = sampler.ReadMarker();
    std::map<std::string, int> by_phase;
    int64_t attempts = 0, resync = 0;
    for (const auto& [name, t] : marker) {
      ++by_phase[t.phase];
      attempts += t.snapshot_attempts;
      resync += t.resync_required;
    }
    for (const auto& [phase, n] : by_phase) phases += " " + phase + "=" + std::to_string(n);
    // Informational: a table snapshotted again after a kill in its snapshot, and the tables
    // faucet flags resync_required for (the comparison decides whether rows really remain).
    phases += "; snapshots " + std::to_string(attempts) + " for " + std::to_string(marker.size()) +
              " tables; resync_required on " + std::to_string(resync);
    for (int i = 0; i < o.tables; ++i) {
      auto it = marker.find(workload.Qualified(i));
      std::string phase = it == marker.end() ? "absent" : it->second.phase;
      if (phase != "active") {
        failures.push_back("table " + workload.Qualified(i) + " is " + phase +
                           " in the marker at the end, not active");
      }
    }
  }
  sampler.Stop();
  std::optional<Position> final_bookmark = sampler.ReadBookmark();
  std::optional<Lsn> final_slot = sampler.SlotPosition(admin);

  // ---- verdict ----
  Verdict v = dest->Verify(admin, kills, o.batch_size);
  std::printf(
      "%skills: %d at crash points, %d SIGKILL after a random delay, %d SIGKILL because "
      "the armed point was not reached within %d ms; kill phase %.1f s\n",
      tag.c_str(), crash_point_kills, timed_kills, fallback_kills, o.crash_wait_ms, kill_phase_s);
  std::string hit_list;
  for (const auto& [p, n] : hits) hit_list += " " + p + "=" + std::to_string(n);
  std::printf("%scrash points hit:%s\n", tag.c_str(),
              hit_list.empty() ? " none" : hit_list.c_str());
  std::printf(
      "%sworkload: %lld changes in %lld transactions (%lld of 10,000 rows, largest %lld, %lld "
      "across tables), %lld rolled back; source %s at stop %s\n",
      tag.c_str(), static_cast<long long>(workload.changes()),
      static_cast<long long>(workload.transactions()),
      static_cast<long long>(workload.bulk_transactions()),
      static_cast<long long>(workload.max_txn_changes()),
      static_cast<long long>(workload.multi_table_transactions()),
      static_cast<long long>(workload.rollbacks()), mariadb ? "binlog" : "WAL", final_wal.c_str());
  if (multi) std::printf("%stable phases at the end:%s\n", tag.c_str(), phases.c_str());
  std::printf(
      "%sinvariants: %lld samples, %lld slot/bookmark comparisons, %lld violations; final "
      "bookmark %s, slot confirmed_flush_lsn %s\n",
      tag.c_str(), static_cast<long long>(sampler.samples()),
      static_cast<long long>(sampler.compared()), static_cast<long long>(sampler.violation_count()),
      PositionText(source_kind, final_bookmark).c_str(),
      mariadb ? "none (MariaDB keeps no replica position)"
              : (final_slot ? final_slot->ToString() : "none").c_str());
  for (const std::string& s : sampler.violations()) failures.push_back("invariant: " + s);
  if (final_bookmark && final_slot && Position{{final_slot->value()}} > *final_bookmark) {
    failures.push_back("invariant: final slot position is ahead of the final bookmark");
  }
  for (const std::string& d : v.details) std::printf("%s%s\n", tag.c_str(), d.c_str());
  if (!v.checksums_equal) failures.push_back("destination does not match the source");
  if (v.lost) failures.push_back(std::to_string(v.lost) + " lost");
  if (v.extra)
    failures.push_back(std::to_string(v.extra) + " rows/changes the source does not have");
  if (v.duplicates > v.duplicate_bound) {
    failures.push_back("duplicates " + std::to_string(v.duplicates) + " exceed the bound " +
                       std::to_string(v.duplicate_bound));
  }
  for (const std::string& f : failures) std::printf("%sFAIL: %s\n", tag.c_str(), f.c_str());

  if (failures.empty()) {
    if (!mariadb) {
      admin.Exec(
          "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE "
          "slot_name = " +
          Quote(slot));
    }
    workload.DropSource(publication);
    dest->Drop();
    std::filesystem::remove_all(tmp);  // every run's output is in faucet.log
  } else {
    // The slot would pin WAL; the tables and files stay for inspection.
    admin.Exec(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = " +
        Quote(slot) + " AND NOT active");
    const std::string where = multi     ? "schema " + schema
                              : mariadb ? "MariaDB table " + mysql_db + "." + table
                                        : "table public." + table;
    std::printf("%skept for inspection: source %s, destination %s, workdir %s\n", tag.c_str(),
                where.c_str(), dest->Where().c_str(), o.workdir.c_str());
  }
  std::printf("torture: dest=%s kills=%d changes=%lld lost=%lld duplicates=%lld converged_in=%ss\n",
              label.c_str(), kills, static_cast<long long>(workload.changes()),
              static_cast<long long>(v.lost), static_cast<long long>(v.duplicates),
              converged_in < 0 ? "-1" : Fixed(converged_in).c_str());
  std::fflush(stdout);
  return failures.empty() ? 0 : 1;
}

}  // namespace
}  // namespace faucet::torture

int main(int argc, char** argv) {
  try {
    return faucet::torture::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "faucet_torture: %s\n", e.what());
    return 1;
  }
}
