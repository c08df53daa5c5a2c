#include "core/crash_point.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace faucet {

const std::vector<CrashPointInfo>& RegisteredCrashPoints() {
  static const std::vector<CrashPointInfo> kPoints = {
      {"source.after_page", "the source produced a page; nothing of it is written yet"},
      {"pipeline.after_write", "the page is written to the sink but not flushed"},
      {"pipeline.after_flush", "the sink flushed the page; its bookmark is not persisted"},
      {"pipeline.after_persist", "the bookmark is persisted; it is not yet acknowledged upstream"},
      {"sink.jsonl.mid_page", "half of a page's lines reached the jsonl file, unflushed"},
      {"sink.kafka.before_commit",
       "a page's messages and commit token are in the brokers' logs, their transaction not "
       "committed"},
      {"state.file.after_temp_write", "the new state is in a temp file that is not fsync'ed"},
      {"state.file.before_rename", "the temp state file is fsync'ed but not renamed into place"},
      {"state.file.after_rename", "the state file was renamed; its directory is not fsync'ed"},
      {"mirror.snapshot_committed",
       "a mirror's snapshot (or a table's, or a part of it) committed in its sink; the mirror has "
       "not recorded that it ended"},
      {"mirror.table_snapshot_page",
       "a multi-table mirror wrote a page of a table's snapshot (the table is still being read)"},
  };
  return kPoints;
}

namespace {

bool IsRegistered(const char* name) {
  for (const CrashPointInfo& p : RegisteredCrashPoints()) {
    if (std::strcmp(p.name, name) == 0) return true;
  }
  return false;
}

struct Armed {
  std::string name;
  long nth = 1;
};

const Armed& ArmedPoint() {
  static const Armed armed = [] {
    Armed a;
    const char* env = std::getenv("FAUCET_CRASH_AT");
    if (env == nullptr || *env == '\0') return a;
    std::string spec = env;
    size_t colon = spec.rfind(':');
    if (colon != std::string::npos && colon + 1 < spec.size() &&
        spec.find_first_not_of("0123456789", colon + 1) == std::string::npos) {
      a.nth = std::strtol(spec.c_str() + colon + 1, nullptr, 10);
      spec.resize(colon);
    }
    a.name = spec;
    if (!IsRegistered(a.name.c_str())) {
      std::fprintf(stderr,
                   "faucet: FAUCET_CRASH_AT names unknown crash point '%s' (see `faucet debug "
                   "crash-points`)\n",
                   a.name.c_str());
      std::exit(2);
    }
    return a;
  }();
  return armed;
}

}  // namespace

bool CrashPointArmed(const char* name) { return ArmedPoint().name == name; }

void CrashPoint(const char* name) {
  const Armed& armed = ArmedPoint();
  if (armed.name.empty()) return;
  // Under test, every point reached must be registered, so a test never arms a dead name.
  if (!IsRegistered(name)) std::abort();
  if (armed.name != name) return;
  // Counts hits of the armed point only; the hot path for every other point is one compare.
  static std::atomic<long> hits{0};
  if (hits.fetch_add(1) + 1 < armed.nth) return;
  static const char kMsg[] = "faucet: crash point hit: ";
  (void)!write(2, kMsg, sizeof kMsg - 1);
  (void)!write(2, name, std::strlen(name));
  (void)!write(2, "\n", 1);
  // Not _exit: a sanitizer intercepts it and would report the threads a crash leaves running.
  syscall(SYS_exit_group, kCrashExitCode);
}

}  // namespace faucet
