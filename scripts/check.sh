#!/usr/bin/env bash
# The checks beyond `make test` (README, "Checks"): each builds its own preset and fails on any
# finding. Usage: scripts/check.sh [asan] [tsan] [fuzz] [tidy]   (default: all four)
#
#   asan  AddressSanitizer + UndefinedBehaviorSanitizer (clang): unit, integration and crash
#         tests, servers and the faucet binary included
#   tsan  ThreadSanitizer (clang, with -Wthread-safety at compile time): the unit tests and the
#         integration tests of the threaded parts (pipeline, CDC source, mirror, state stores)
#   fuzz  every libFuzzer target of the asan build for FUZZ_SECONDS (default 30) each, from
#         its checked-in corpus (tests/fuzz/README.md)
#   tidy  clang-tidy (.clang-tidy) over every source file, warnings as errors
set -euo pipefail
cd "$(dirname "$0")/.."
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1

# A finding ends the test that hit it with a report on its output; no suppressions.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# Instrumented binaries are slower: tests stretch their deadlines (testing::TimeScale).
export FAUCET_TEST_TIME_SCALE=4

build() {
  cmake --preset "$1" >/dev/null
  cmake --build --preset "$1"
}

asan() {
  build asan
  # -O1, as the ASan manual advises for speed; -O0 finds nothing more.
  # Left to `make test`: the 100,000-row crash runs (minutes each under ASan), the bound on peak
  # memory, which ASan's shadow memory and quarantine inflate, and the mirror killed twice
  # under a writer's load of 300,000-row tables, which under ASan in a loaded run cannot work
  # off its backlog within its deadline (it runs under tsan too).
  bash scripts/test.sh build/asan -L 'unit|integration|crash' \
    -E '_100000|InBoundedMemory|MemoryStaysBoundedWhateverTheResultSize|SigkillDuringTheSnapshotAndDuringCdcLosesNothing'
}

tsan() {
  build tsan
  bash scripts/test.sh build/tsan -L unit
  # The threaded parts against real servers; as in asan, the 100,000-row crash runs and the
  # memory bound stay with `make test`. Not the kafka sink: librdkafka starts its threads with
  # C11 thrd_create, which glibc runs without the pthread_create that TSan intercepts, so TSan
  # crashes in the first allocation of such a thread (the sink's own calls are on one thread;
  # asan runs its tests).
  bash scripts/test.sh build/tsan -L 'integration|crash' \
    -R 'Cdc|Mirror|Observability|Store|ExactlyOnce|AtLeastOnce|Sigkill|CrashPoints|AllPoints' \
    -E '_100000|InBoundedMemory|Kafka'
}

fuzz() {
  build asan
  local seconds=${FUZZ_SECONDS:-30} failed=0 work fuzzer name
  work=$(mktemp -d)
  for fuzzer in build/asan/fuzz/*_fuzzer; do
    name=$(basename "$fuzzer" _fuzzer)
    mkdir -p "$work/$name/new"
    echo "fuzz: $name for ${seconds}s"
    # New inputs go to a scratch dir; the checked-in corpus is only read.
    # An input that hangs the target never ends libFuzzer's own report (its out-of-memory
    # handler waits for the stuck input): a hard deadline ends it, and names the input run last.
    if ! timeout -s KILL $((seconds + 60)) "$fuzzer" -max_total_time="$seconds" \
      -artifact_prefix="$work/$name/" -print_final_stats=1 \
      "$work/$name/new" "tests/fuzz/corpus/$name" >"$work/$name/log" 2>&1; then
      tail -n 60 "$work/$name/log"
      echo "fuzz: $name found a failing input: $(ls "$work/$name"/crash-* "$work/$name"/leak-* \
        "$work/$name"/timeout-* 2>/dev/null | head -1); add it to tests/fuzz/regressions/$name/" >&2
      failed=1
    else
      grep -E '^stat::number_of_executed_units' "$work/$name/log" || true
    fi
  done
  return $failed
}

tidy() {
  cmake --preset release >/dev/null
  mapfile -t files < <(git ls-files 'src/*.cc' 'tests/*.cc' 'bench/*.cc')
  run-clang-tidy -quiet -p build/release -j 2 "${files[@]}" >build/tidy.log 2>&1 || {
    grep -E 'warning:|error:' build/tidy.log | sort -u | head -50
    echo "tidy: findings above (whole log: build/tidy.log)" >&2
    return 1
  }
  echo "tidy: clean (${#files[@]} files)"
}

steps=("$@")
((${#steps[@]})) || steps=(asan tsan fuzz tidy)
for step in "${steps[@]}"; do
  case $step in
    asan | tsan | fuzz | tidy) "$step" ;;
    *) echo "usage: scripts/check.sh [asan] [tsan] [fuzz] [tidy]" >&2 && exit 2 ;;
  esac
done
