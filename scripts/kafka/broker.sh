#!/usr/bin/env bash
# A single-node Apache Kafka 4.4.0 broker (KRaft, broker+controller in one JVM) for
# faucet's integration tests. Everything binds 127.0.0.1 only.
#
#   scripts/kafka/broker.sh fetch              # download the jars once (Maven Central)
#   scripts/kafka/broker.sh start DIR PORT [CONTROLLER_PORT [SASL_PORT]]
#                                              # format DIR/data, start, wait ready; prints the pid
#   scripts/kafka/broker.sh stop DIR           # SIGTERM, up to 20 s, then SIGKILL; ok if not running
#   scripts/kafka/broker.sh kill DIR           # SIGKILL (crash tests)
#   scripts/kafka/broker.sh restart DIR        # start again on the same data and ports; prints the pid
#
# Guarantees:
# - The jars live in ${FAUCET_KAFKA_CACHE:-/var/cache/faucet/kafka-4.4.0}/libs, outside the repo,
#   with Maven's local repository in <cache>/m2 (no use of ~/.m2). They are downloaded into a
#   temp dir and renamed into place, so an interrupted fetch never leaves a half cache; a fetch
#   with the cache present does nothing.
# - `start` and `restart` print only the broker's pid on stdout, and only once the broker has
#   logged "Kafka Server started" in this run (polled, 90 s timeout). The broker listens on
#   127.0.0.1:PORT, its controller on 127.0.0.1:CONTROLLER_PORT (default PORT+1), and a
#   SASL_PLAINTEXT listener (PLAIN, user faucet, password faucet-test-secret) on
#   127.0.0.1:SASL_PORT (default PORT+2). DIR holds server.properties, data/,
#   broker.log (appended across restarts) and broker.pid.
# - If the JVM exits or is not ready in time, the last 40 lines of DIR/broker.log and the run's
#   first ERROR lines go to stderr, no broker is left running, and the exit status is non-zero.
# - stop and kill only signal the pid in DIR/broker.pid if that process is this DIR's broker,
#   and return once it is gone.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${FAUCET_KAFKA_CACHE:-/var/cache/faucet/kafka-4.4.0}
LIBS=$CACHE/libs
# A fixed cluster id (22 chars of base64url) saves a JVM start for `StorageTool random-uuid`.
CLUSTER_ID=NeKptSiiTJK6WrZXbwkifg
READY_LINE='Kafka Server started'
READY_TIMEOUT_S=90
STOP_TIMEOUT_S=20
# Serial GC + C1 only: fastest start and smallest RSS measured (ready in ~3 s, ~190 MiB).
JVM_FLAGS=(-Xms128m -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
  "-Dlog4j2.configurationFile=$HERE/log4j2.properties")

log() { echo "kafka: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}
usage() { die "usage: $0 fetch | start DIR PORT [CONTROLLER_PORT [SASL_PORT]] | stop DIR | kill DIR | restart DIR"; }
now_ms() { date +%s%3N; }

# --- processes ----------------------------------------------------------------------------

# True if pid $1 exists and is not a zombie.
alive() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# Print the pid of DIR's running broker (the pid in DIR/broker.pid, if that process is a
# kafka.Kafka run on DIR/server.properties); fail if there is none.
broker_pid() {
  local dir=$1 pid cmdline
  pid=$(cat "$dir/broker.pid" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && alive "$pid" || return 1
  cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmdline == *" kafka.Kafka $dir/server.properties"* ]] || return 1
  echo "$pid"
}

# Wait up to $2 seconds for pid $1 to be gone.
wait_gone() {
  local pid=$1 deadline=$(($(now_ms) + $2 * 1000))
  while alive "$pid"; do
    (($(now_ms) < deadline)) || return 1
    sleep 0.05
  done
}

port_free() { [[ -z $(ss -Htln "sport = :$1" 2>/dev/null) ]]; }

# --- steps --------------------------------------------------------------------------------

fetch() {
  [[ -d $LIBS ]] && return 0
  command -v mvn >/dev/null || die "mvn not found"
  mkdir -p "$CACHE"
  local work attempt
  work=$(mktemp -d "$CACHE/fetch.XXXXXX")
  # shellcheck disable=SC2064 # expand $work now: it is local.
  trap "rm -rf '$work'" EXIT
  trap 'exit 1' INT TERM HUP # run the EXIT trap on these too
  cp "$HERE/pom.xml" "$work/pom.xml"
  log "fetching Kafka jars from Maven Central into $LIBS"
  for attempt in 1 2 3; do
    # -U: retry artifacts whose download failed in an earlier attempt.
    mvn -B -q -U -f "$work/pom.xml" -Dmaven.repo.local="$CACHE/m2" \
      dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$work/libs" \
      >"$work/mvn.log" 2>&1 && break
    tail -n 20 "$work/mvn.log" >&2
    ((attempt < 3)) || die "mvn failed 3 times"
    log "mvn failed (attempt $attempt); retrying in 5 s"
    sleep 5
  done
  [[ -f $work/libs/kafka_2.13-4.4.0.jar ]] || die "mvn did not produce kafka_2.13-4.4.0.jar"
  # A concurrent fetch may have won the rename: its libs are as good as ours.
  mv -T "$work/libs" "$LIBS" 2>/dev/null || [[ -d $LIBS ]] || die "cannot create $LIBS"
  rm -rf "$work"
  trap - EXIT INT TERM HUP
  log "fetched $(find "$LIBS" -name '*.jar' | wc -l) jars"
}

write_config() {
  local dir=$1 port=$2 controller_port=$3 sasl_port=$4
  sed -e "s|@PORT@|$port|g" -e "s|@CONTROLLER_PORT@|$controller_port|g" \
    -e "s|@SASL_PORT@|$sasl_port|g" -e "s|@DATA@|$dir/data|g" \
    "$HERE/server.properties.in" >"$dir/server.properties"
}

format_storage() {
  local dir=$1
  java "${JVM_FLAGS[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format --standalone \
    -t "$CLUSTER_ID" -c "$dir/server.properties" </dev/null >>"$dir/broker.log" 2>&1 ||
    fail "$dir" "formatting $dir/data failed"
}

# Lines of DIR/broker.log written before this command: readiness and errors are looked for
# only after them (the log is appended across restarts).
LOG_START=0
mark_log() {
  LOG_START=0
  if [[ -f $1/broker.log ]]; then LOG_START=$(wc -l <"$1/broker.log"); fi
}

# True once the broker has logged its readiness line since mark_log.
ready() {
  awk -v s="$LOG_START" -v l="$READY_LINE" 'NR > s && index($0, l) { f = 1; exit } END { exit !f }' \
    "$1/broker.log" 2>/dev/null
}

# Print the log's tail (and this run's first errors: the shutdown that follows a fatal error
# pushes them out of the tail), make sure no broker of DIR is left, and exit non-zero.
fail() {
  local dir=$1 pid
  shift
  tail -n 40 "$dir/broker.log" >&2 || true
  log "first errors of this run:"
  # Each with the line after it when that is not a log line (the exception's message).
  awk -v s="$LOG_START" 'NR > s && /^\[[^]]*\] (ERROR|FATAL) / {
    print; if ((getline) > 0 && !/^\[/) print; if (++n == 3) exit }' "$dir/broker.log" >&2 || true
  if pid=$(broker_pid "$dir"); then
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 10 || true
  fi
  rm -f "$dir/broker.pid"
  die "$* (log: $dir/broker.log)"
}

# Start the broker on DIR's config and data, wait until it is ready, print its pid.
launch() {
  local dir=$1 pid t0 deadline
  t0=$(now_ms)
  deadline=$((t0 + READY_TIMEOUT_S * 1000))
  # setsid: its own session, so signals to the caller's process group do not reach it. Run
  # in the background without job control, setsid does not fork: $! is the JVM's pid.
  (cd "$dir" && exec setsid java "${JVM_FLAGS[@]}" -cp "$LIBS/*" kafka.Kafka \
    "$dir/server.properties" </dev/null >>"$dir/broker.log" 2>&1) &
  pid=$!
  disown "$pid" # no "Killed" job notice from bash if fail() has to kill it
  echo "$pid" >"$dir/broker.pid"
  until ready "$dir"; do
    alive "$pid" || fail "$dir" "the broker exited during startup"
    (($(now_ms) < deadline)) || fail "$dir" "the broker was not ready after $READY_TIMEOUT_S s"
    sleep 0.1
  done
  log "ready on $(grep -m1 '^advertised.listeners=' "$dir/server.properties" | cut -d/ -f3)" \
    "in $(($(now_ms) - t0)) ms (pid $pid)"
  echo "$pid"
}

# --- commands -----------------------------------------------------------------------------

cmd_start() {
  local dir=$1 port=$2 controller_port=${3:-$(($2 + 1))} sasl_port=${4:-$(($2 + 2))}
  local p
  for p in "$port" "$controller_port" "$sasl_port"; do
    if [[ ! $p =~ ^[0-9]+$ ]] || ((p < 1024 || p > 65535)); then die "bad port '$p'"; fi
  done
  fetch
  mkdir -p "$dir"
  dir=$(realpath "$dir")
  ! broker_pid "$dir" >/dev/null || die "a broker is already running on $dir"
  [[ ! -e $dir/data ]] || die "$dir/data exists: use restart, or remove it first"
  port_free "$port" || die "port $port is in use"
  port_free "$controller_port" || die "port $controller_port (controller) is in use"
  port_free "$sasl_port" || die "port $sasl_port (SASL) is in use"
  write_config "$dir" "$port" "$controller_port" "$sasl_port"
  mark_log "$dir"
  format_storage "$dir"
  launch "$dir"
}

cmd_restart() {
  local dir
  dir=$(realpath -m "$1")
  [[ -f $dir/server.properties && -f $dir/data/meta.properties ]] ||
    die "$dir has no formatted broker: use start"
  fetch
  cmd_stop "$dir"
  mark_log "$dir"
  launch "$dir"
}

cmd_stop() {
  local dir pid
  dir=$(realpath -m "$1")
  if pid=$(broker_pid "$dir"); then
    kill -TERM "$pid" 2>/dev/null || true
    if ! wait_gone "$pid" "$STOP_TIMEOUT_S"; then
      log "broker $pid did not exit within $STOP_TIMEOUT_S s: killing it"
      kill -KILL "$pid" 2>/dev/null || true
      wait_gone "$pid" 10 || die "broker $pid survived SIGKILL"
    fi
  fi
  rm -f "$dir/broker.pid"
}

cmd_kill() {
  local dir pid
  dir=$(realpath -m "$1")
  if pid=$(broker_pid "$dir"); then
    kill -KILL "$pid" 2>/dev/null || true
    wait_gone "$pid" 10 || die "broker $pid survived SIGKILL"
  fi
  rm -f "$dir/broker.pid"
}

main() {
  local cmd=${1:-}
  shift || true
  case "$cmd:$#" in
  fetch:0) fetch ;;
  start:2 | start:3 | start:4) cmd_start "$@" ;;
  stop:1) cmd_stop "$@" ;;
  kill:1) cmd_kill "$@" ;;
  restart:1) cmd_restart "$@" ;;
  *) usage ;;
  esac
}

main "$@"
