// faucet_torture: random SIGKILLs under a live workload, then a convergence check.
//
//   faucet_torture --dest=postgres|sqlite|jsonl [--kills=N] [--seed=S] [--rate=CHANGES_PER_S]
//                  [--pg-url=URL] [--workdir=DIR] [--max-kill-delay-ms=MS] [--catchup-timeout=S]
//
// 1. Creates the source table (id int8 PK, version int8, small text, big text) with initial
//    rows and a publication, and the destination (a table in a second database, a SQLite file
//    or a jsonl path), then writes a `faucet mirror` config: postgres-cdc -> the destination,
//    snapshot_then_cdc, continuous, file state store.
// 2. Starts a writer thread (workload.h) that changes the source continuously once the slot
//    exists, and a sampler thread that polls the slot's confirmed_flush_lsn and the persisted
//    bookmark file: the slot must never be ahead of the bookmark, and the bookmark must never
//    move backwards.
// 3. Runs `faucet mirror` and kills it N times: half at a random named crash point
//    (FAUCET_CRASH_AT=name:k, k in 1..8, the points this pipeline can reach), half with SIGKILL
//    after a random delay; each time it restarts it at once.
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
#include "destinations.h"
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
  std::string dest;
  int kills = 10;
  uint64_t seed = 0;
  double rate = 1000;  // changes/s in small transactions, plus the bulk ones
  std::string pg_url;
  std::string workdir;
  std::string faucet = FAUCET_BINARY;
  int min_kill_delay_ms = 150;
  int max_kill_delay_ms = 4000;
  int crash_wait_ms = 6000;  // a crash point not reached by then: SIGKILL instead
  int catchup_timeout_s = 120;
  double final_write_s = 2;  // the writer keeps going this long after the last restart
  int initial_rows = 5000;
  int batch_size = 500;
  double bulk_every_s = 10;
  bool key_change_keeps_toast = true;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "faucet_torture: %s\nusage: faucet_torture --dest=postgres|sqlite|jsonl "
               "[--kills=N] [--seed=S] [--rate=N] [--pg-url=URL] [--workdir=DIR] "
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
  if (o.dest != "postgres" && o.dest != "sqlite" && o.dest != "jsonl") Usage("--dest is required");
  if (o.kills < 0 || o.max_kill_delay_ms < o.min_kill_delay_ms) Usage("bad --kills or delays");
  if (o.pg_url.empty()) o.pg_url = testing::RequireEnv("FAUCET_TEST_PG_URL");
  if (o.workdir.empty()) o.workdir = testing::TempDir("torture-" + o.dest);
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

// Polls the slot's confirmed_flush_lsn, then the persisted bookmark file (in that order: the
// bookmark is persisted before the slot is acknowledged, and bookmarks only grow, so the slot
// read first can never legitimately exceed the bookmark read after it).
class Sampler {
 public:
  Sampler(std::string url, std::string slot, std::string bookmark_path)
      : url_(std::move(url)), slot_(std::move(slot)), path_(std::move(bookmark_path)) {}
  ~Sampler() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      try {
        PgConn conn(url_);
        while (!stop_.load()) {
          SampleOnce(conn);
          std::this_thread::sleep_for(10ms);
        }
        SampleOnce(conn);
      } catch (const std::exception& e) {
        Violation(std::string("sampler failed: ") + e.what());
      }
    });
  }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }

  // The persisted bookmark now (nullopt when none yet).
  std::optional<Lsn> ReadBookmark() {
    std::ifstream in(path_);
    if (!in) return std::nullopt;
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_object() && j.contains("bookmark")) j = j["bookmark"];  // exactly-once wrapper
    if (j.is_discarded() || !j.is_object() || !j.contains("last_lsn") ||
        !j["last_lsn"].is_string()) {
      Violation("unreadable bookmark file " + path_ + ": '" + ss.str() + "'");
      return std::nullopt;
    }
    Result<Lsn> lsn = Lsn::Parse(j["last_lsn"].get<std::string>());
    if (!lsn.ok()) {
      Violation("bad LSN in bookmark file: " + ss.str());
      return std::nullopt;
    }
    return *lsn;
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
  std::optional<Lsn> max_bookmark() {
    MutexLock lock(mu_);
    return max_bookmark_;
  }

  std::optional<Lsn> SlotPosition(PgConn& conn) {
    std::optional<std::string> s = conn.Scalar(
        "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1", {slot_});
    if (!s) return std::nullopt;
    Result<Lsn> lsn = Lsn::Parse(*s);
    if (!lsn.ok()) return std::nullopt;
    return *lsn;
  }

 private:
  void SampleOnce(PgConn& conn) {
    std::optional<Lsn> slot = SlotPosition(conn);
    std::optional<Lsn> bookmark = ReadBookmark();
    samples_.fetch_add(1);
    MutexLock lock(mu_);
    if (bookmark) {
      if (max_bookmark_ && *bookmark < *max_bookmark_) {
        AddViolation("persisted bookmark moved backwards: " + bookmark->ToString() + " after " +
                     max_bookmark_->ToString());
      }
      if (!max_bookmark_ || *bookmark > *max_bookmark_) max_bookmark_ = bookmark;
    }
    if (slot && bookmark) {
      compared_.fetch_add(1);
      if (*slot > *bookmark) {
        AddViolation("slot confirmed_flush_lsn " + slot->ToString() +
                     " is ahead of the persisted bookmark " + bookmark->ToString() +
                     " (read after it)");
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

  std::string url_, slot_, path_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> samples_{0}, compared_{0};
  Mutex mu_;
  std::vector<std::string> violations_ GUARDED_BY(mu_);
  int64_t violation_count_ GUARDED_BY(mu_) = 0;
  std::optional<Lsn> max_bookmark_ GUARDED_BY(mu_);
};

// ---- the faucet process ---------------------------------------------------------------------

bool HasExited(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0) return true;
  return info.si_pid == pid;
}

// The crash points a postgres-cdc mirror into `dest` with a file state store can reach: every
// registered point except other sinks' and other state stores' own points.
std::vector<std::string> ReachableCrashPoints(const std::string& faucet, const std::string& dest) {
  testing::ProcessResult r = testing::RunProcess({faucet, "debug", "crash-points"});
  if (r.exit_code != 0) throw TortureError("faucet debug crash-points failed: " + r.output);
  std::vector<std::string> out;
  std::istringstream in(r.output);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string name;
    if (!(words >> name)) continue;
    // <area>.<connector>.<what> belongs to one connector: keep it only when it is ours.
    size_t dot1 = name.find('.'), dot2 = name.find('.', dot1 + 1);
    if (dot1 != std::string::npos && dot2 != std::string::npos) {
      std::string area = name.substr(0, dot1), connector = name.substr(dot1 + 1, dot2 - dot1 - 1);
      if (area == "sink" && connector != dest) continue;
      if (area == "state" && connector != "file") continue;
      if (area == "source" && connector.rfind("postgres", 0) != 0) continue;
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
  return pos == std::string::npos ? s : s.substr(pos + 1);
}

int Main(int argc, char** argv) {
  Options o = ParseFlags(argc, argv);
  // Children's output files (testing::Process) and faucet's spill files go inside the workdir,
  // set before any thread starts.
  const std::string tmp = o.workdir + "/tmp";
  std::filesystem::create_directories(tmp);
  setenv("TMPDIR", tmp.c_str(), 1);
  std::mt19937_64 rng(o.seed ^ 0x9e3779b97f4a7c15ULL);
  const std::string suffix = o.dest + "_" + std::to_string(getpid());
  const std::string table = "torture_src_" + suffix;
  const std::string publication = "torture_pub_" + suffix;
  const std::string slot = "torture_slot_" + suffix;
  const std::string state_dir = o.workdir + "/state";
  const std::string bookmark_path = state_dir + "/" + kName + "%3A%3Acdc.json";
  const std::string config_path = o.workdir + "/mirror.yaml";
  const std::string log_path = o.workdir + "/faucet.log";
  std::string tag = "torture[" + o.dest + "]: ";
  std::printf("%sseed=%llu kills=%d rate=%.0f/s workdir=%s (faucet output: %s)\n", tag.c_str(),
              static_cast<unsigned long long>(o.seed), o.kills, o.rate, o.workdir.c_str(),
              log_path.c_str());
  std::fflush(stdout);

  PgConn admin(o.pg_url);
  admin.Exec(
      "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = " +
      Quote(slot));

  WorkloadOptions wo;
  wo.url = o.pg_url;
  wo.table = table;
  wo.sequence = table + "_seq";
  wo.slot = slot;
  wo.seed = o.seed;
  wo.rate = o.rate;
  wo.bulk_every_s = o.bulk_every_s;
  wo.key_change_keeps_toast = o.key_change_keeps_toast;
  Workload workload(wo);
  workload.CreateSource(publication, o.initial_rows);

  DestinationContext dc{o.dest, o.pg_url, table, suffix, o.workdir, &workload};
  std::unique_ptr<Destination> dest = MakeDestination(dc);
  dest->Create();

  std::ofstream(config_path) << "version: 1\n"
                                "name: "
                             << kName
                             << "\n"
                                "pipeline:\n"
                                "  source:\n"
                                "    type: postgres-cdc\n"
                                "    config:\n"
                                "      connection_url: "
                             << o.pg_url
                             << "\n"
                                "      slot_name: "
                             << slot
                             << "\n"
                                "      publication_name: "
                             << publication
                             << "\n"
                                "      batch_size: "
                             << o.batch_size
                             << "\n"
                                "      idle_timeout: 3\n"
                                "      status_update_interval: 1\n"
                                "      max_cycle_duration: 20\n"
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
                                "    source:\n"
                                "      type: postgres\n"
                                "      config:\n"
                                "        connection_url: "
                             << o.pg_url
                             << "\n"
                                "        query: \"SELECT id, version, small, big FROM public."
                             << table
                             << "\"\n"
                                "        batch_size: "
                             << o.batch_size << "\n";

  std::vector<std::string> points = ReachableCrashPoints(o.faucet, o.dest);
  std::string point_list;
  for (const std::string& p : points) point_list += (point_list.empty() ? "" : ", ") + p;
  std::printf("%scrash points: %s\n", tag.c_str(), point_list.c_str());

  Sampler sampler(o.pg_url, slot, bookmark_path);
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
  Clock::time_point kills_start = Clock::now();
  for (int k = 0; k < o.kills; ++k) {
    // Half the kills at a crash point, the points dealt from a shuffled deck so that every one is
    // used as evenly as the count allows; the other half by SIGKILL at a random moment.
    bool at_point = rng() % 2 == 0;
    if (at_point) {
      if (deck.empty()) {
        deck = points;
        std::shuffle(deck.begin(), deck.end(), rng);
      }
      std::string point = deck.back();
      deck.pop_back();
      int nth = 1 + static_cast<int>(rng() % 8);
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
  std::string final_wal = admin.Scalar("SELECT pg_current_wal_lsn()::text").value_or("0/0");
  Result<Lsn> end_of_writes = Lsn::Parse(final_wal);
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
    std::optional<Lsn> b = sampler.ReadBookmark();
    if (!stream_applied && b && end_of_writes.ok() && *b >= *end_of_writes)
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
  sampler.Stop();
  std::optional<Lsn> final_bookmark = sampler.ReadBookmark();
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
      "%sworkload: %lld changes in %lld transactions (%lld of 10,000 rows, largest %lld), "
      "%lld rolled back; source WAL at stop %s\n",
      tag.c_str(), static_cast<long long>(workload.changes()),
      static_cast<long long>(workload.transactions()),
      static_cast<long long>(workload.bulk_transactions()),
      static_cast<long long>(workload.max_txn_changes()),
      static_cast<long long>(workload.rollbacks()), final_wal.c_str());
  std::printf(
      "%sinvariants: %lld samples, %lld slot/bookmark comparisons, %lld violations; final "
      "bookmark %s, slot confirmed_flush_lsn %s\n",
      tag.c_str(), static_cast<long long>(sampler.samples()),
      static_cast<long long>(sampler.compared()), static_cast<long long>(sampler.violation_count()),
      final_bookmark ? final_bookmark->ToString().c_str() : "none",
      final_slot ? final_slot->ToString().c_str() : "none");
  for (const std::string& s : sampler.violations()) failures.push_back("invariant: " + s);
  if (final_bookmark && final_slot && *final_slot > *final_bookmark) {
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
    admin.Exec(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = " +
        Quote(slot));
    admin.Exec("DROP PUBLICATION IF EXISTS " + publication);
    admin.Exec("DROP TABLE IF EXISTS public." + table);
    admin.Exec("DROP SEQUENCE IF EXISTS public." + table + "_seq");
    dest->Drop();
    std::filesystem::remove_all(tmp);  // every run's output is in faucet.log
  } else {
    // The slot would pin WAL; the tables and files stay for inspection.
    admin.Exec(
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = " +
        Quote(slot) + " AND NOT active");
    std::printf("%skept for inspection: source table public.%s, destination %s, workdir %s\n",
                tag.c_str(), table.c_str(), dest->Where().c_str(), o.workdir.c_str());
  }
  std::printf("torture: dest=%s kills=%d changes=%lld lost=%lld duplicates=%lld converged_in=%ss\n",
              o.dest.c_str(), kills, static_cast<long long>(workload.changes()),
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
