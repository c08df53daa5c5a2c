#!/usr/bin/env bash
# faucet benchmarks, each beside the physical limit measured in the same run, on the same server
# and the same data (results and how to read them: BENCHMARKS.md).
#
#   bash bench/run.sh BUILD_DIR [cdc] [mysql-cdc] [kafka] [kafka-apply] [metrics] [apply] [snapshot] [copy]
#                               [tables-load] [tables-stream] [tables-rss]
#   bash bench/run.sh BUILD_DIR tables     # = tables-load tables-stream tables-rss
#
# Default: all. BENCH_ONLY="a b" selects scenarios too (when none are given as arguments).
# Env: BENCH_RUNS (default 5: repetitions, faucet and its limit interleaved), BENCH_BASELINE
# (another build dir: its faucet runs too, interleaved, labelled "baseline"), BENCH_ROWS
# (1000000), BENCH_TXNS (100000 single-row transactions), BENCH_OUT (also write the markdown
# report there), BENCH_REFERENCES=0 (cdc and mysql-cdc without the reference tools beside their
# limits: for long runs), BENCH_APPLY_DESTS (the apply scenario's destinations, default
# "postgres sqlite mysql"). Starts its own PostgreSQL servers (the source, and a destination of
# its own) and MariaDB (scripts/services.sh) and SQLite files in a temp dir, and removes them on
# exit. BUILD_DIR holds faucet and the limits bench/drain.cc and bench/replay.cc (targets
# faucet_drain, faucet_replay).
#
# Scenarios:
#   cdc       postgres-cdc -> jsonl (`faucet run`) beside its limit, the walsender's own rate:
#             bench/drain.cc, a client receiving the stream (pgoutput, proto 2, streaming on)
#             and dropping it; on copies of one slot created before the load, so all read the
#             same WAL: one ROWS-row transaction, and TXNS single-row transactions, each at the
#             end of the WAL when its rounds run (loaded again if not: load_big). Time to the
#             last row: faucet's output file's mtime minus the start (process start to the last
#             byte written, without the idle_timeout wait); drain's process time. For reference
#             (BENCH_REFERENCES=0 leaves them out): pg_recvlogical into a file, and for the big
#             transaction drain waiting in poll() and pg_recvlogical into /dev/null. For the big
#             transaction also "writing the output alone": faucet's output file copied by dd (what
#             writing it costs once its commit has arrived). Also reported: the server's CPU
#             over each drain and faucet run (nearly all the walsender's; as in apply, below).
#   mysql-cdc mysql-cdc -> jsonl (`faucet run`, batch_size 1000, idle_timeout 1) beside
#             mariadb-binlog --read-from-remote-server reading the same binlog range (from SHOW
#             MASTER STATUS before the load to after it; each case in a binlog file of its own):
#             --raw (the raw fetch) and --verbose --base64-output=DECODE-ROWS into a file (fetch
#             and decode, the issue's limit; for the big case also into /dev/null). One ROWS-row
#             transaction, then TXNS single-row transactions (a procedure's autocommitted
#             INSERTs), each loaded just before its rounds. Time to the last row: faucet's output
#             file's mtime minus the start (as cdc); mariadb-binlog's process time. Every run is
#             checked: faucet's line count and last bookmark (the range's end), mariadb-binlog's
#             decoded row count and raw byte count.
#   kafka     postgres-cdc -> kafka (`faucet run`, at-least-once: acks=all, idempotent, linger 5
#             ms; and `<label>-eo`: delivery exactly_once, Kafka transactions committed at each
#             page with a bookmark and at least every second, counted
#             and timed read_committed) on copies of the cdc scenario's slots, beside its limits:
#             decoding alone (drain, as in cdc) and kcat producing the
#             same messages (faucet's own, read back from its topic with their keys, one per
#             line) with the same producer settings. Both into a new one-partition topic of the
#             broker scripts/services.sh starts (created before, with a marker message), timed
#             from the start to the broker's append time of the last message (the broker stamps
#             LogAppendTime). Every run is checked: the topic holds exactly the rows (and the
#             marker).
#   metrics   the cdc scenario's faucet runs (both cases) without and with `observability:`,
#             scraped once a second meanwhile: the overhead of metrics on the hot path; and
#             ROWS generated rows into a jsonl file (no server: the hot path alone).
#   apply     ROWS changes (60% insert, 30% update of which 1% move a row to a new key, 10%
#             delete; 1001 transactions; one row in 100 has a 3200-byte TOAST value no update
#             changes) streamed by postgres-cdc -> cdc_unwrap -> upsert sink, into postgres,
#             sqlite and mariadb, beside its two halves alone: decoding (drain, as in cdc) and
#             applying (bench/replay.cc: the same pipeline's pages read into memory first, then
#             applied by the real pipeline, timed alone), and both halves at once with nothing
#             between them (the replay released as drain starts; until both have ended: a
#             reference for how the halves crowd each other on this machine, not a bound).
#             Time to the last row: the source's last transaction inserts a sentinel row; a
#             watcher polls the destination for it every 10 ms. Each destination is checked
#             against the source after every run.
#             Also reported: the walsender's CPU over each faucet run (to the sentinel) and over
#             each drain run (there the server's, as in its CPU column: nearly all the
#             walsender's), how many of the machine's cores were busy meanwhile, and the
#             destination server's CPU over the replay and over each faucet run (Postgres: its
#             server's processes; MariaDB: mariadbd; SQLite works inside faucet). A walsender
#             that needs more CPU for the same stream beside faucet than under drain, on a
#             machine whose cores are all busy, is the machine's limit, not faucet's. From these,
#             "the CPU a live run must fit in": (walsender under drain + destination under the
#             replay + faucet) / cores, an estimate of the least time the live run can take on
#             this machine (each part's CPU as measured alone), and the same from the CPU the
#             walsender and the destination took over the faucet runs, or the walsender's alone
#             when larger (the least time those runs could have taken), beside the time 0.95 of
#             the limit needs.
#   kafka-apply  the apply scenario's changes into postgres (upsert) through Kafka: written once
#             to a one-partition topic by postgres-cdc -> kafka (not timed), then each run a
#             `faucet run` of the kafka source (a new consumer group, so from the topic's start)
#             -> postgres upsert, timed and checked as the apply runs, beside its limit: the
#             postgres -> postgres apply run of the same round (recorded as postgres-apply).
#             Runs the apply scenario's postgres destination (all three with `apply`).
#   snapshot  `faucet mirror` (continuous: false) of a ROWS-row table into postgres (upsert) and
#             into sqlite (upsert), beside `psql COPY TO STDOUT | psql COPY FROM STDIN` (resp.
#             `| sqlite3 .import`) into an identical table, with the snapshot query's batch_size
#             1000 (the default) and 10000. Snapshot phase: from the log line "captured position"
#             to "snapshot done".
#   copy      `faucet run` of a query (postgres source `SELECT * FROM big`, batch_size 1000) into
#             postgres, sqlite and mariadb, append and upsert (key id), beside the raw pipe into
#             each (the snapshot scenario's two, and `COPY TO | mariadb LOAD DATA LOCAL INFILE`):
#             process start to exit, both. Each destination is emptied before a run and checked
#             after it (count and sum of id against the source).
#   tables-*  the multi-table mirror (`mirror.tables`): initial load of 20 tables beside 2
#             parallel COPY pipes, changes spread over 20 tables beside the same changes into
#             one table, peak RSS over 20 and 200 tables. Documented in bench/tables.sh.
#             BENCH_LOGS=DIR keeps their mirror logs; BENCH_RSS_TABLES ("20 200") the counts.
# Also: bench/decode_render.cc, a CPU micro-benchmark of the CDC decode/render path (no server).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=${1:?usage: bench/run.sh BUILD_DIR [cdc] [apply] [snapshot]}
shift
FAUCET=$(realpath "$BUILD/src/cli/faucet")
[[ -x $FAUCET ]] || { echo "bench: no faucet binary at $FAUCET" >&2; exit 2; }
# The limits built with faucet: bench/drain.cc and bench/replay.cc.
DRAIN=$(realpath "$BUILD/bench/faucet_drain")
REPLAY=$(realpath "$BUILD/bench/faucet_replay")
# BENCH_BASELINE=OTHER_BUILD_DIR also runs OTHER_BUILD_DIR's faucet, interleaved, as "baseline".
BINS=("$FAUCET")
LABELS=(faucet)
if [[ -n ${BENCH_BASELINE:-} ]]; then
  BINS+=("$(realpath "$BENCH_BASELINE/src/cli/faucet")")
  LABELS+=(baseline)
  [[ -x ${BINS[1]} ]] || { echo "bench: no faucet binary at ${BINS[1]}" >&2; exit 2; }
fi
SCENARIOS=("$@")
((${#SCENARIOS[@]})) || read -ra SCENARIOS <<<"${BENCH_ONLY:-}"
((${#SCENARIOS[@]})) || SCENARIOS=(cdc mysql-cdc kafka metrics apply snapshot copy tables)
EXPANDED=()
for scenario in "${SCENARIOS[@]}"; do
  if [[ $scenario == tables ]]; then EXPANDED+=(tables-load tables-stream tables-rss); else EXPANDED+=("$scenario"); fi
done
SCENARIOS=("${EXPANDED[@]}")
RUNS=${BENCH_RUNS:-5}
REFERENCES=${BENCH_REFERENCES:-1}
ROWS=${BENCH_ROWS:-1000000}
TXNS=${BENCH_TXNS:-100000}
((ROWS % 1000 == 0 && ROWS >= 10000)) || { echo "bench: BENCH_ROWS must be a multiple of 1000, >= 10000" >&2; exit 2; }

WORK=$(mktemp -d /tmp/faucet-bench.XXXXXX)
chmod 755 "$WORK"
# Our own services dir (as scripts/test.sh does), so that a stop never touches anyone else's run.
export FAUCET_SERVICES_DIR=/tmp/faucet-services-bench-$$
cleanup() {
  bash scripts/services.sh stop --all >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "bench: $*" >&2; }
now() { date +%s.%N; }
# sub A B -> A - B, in seconds
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a - b }'; }
rss_kb() { awk -F': ' '/Maximum resident set size/ { print $2 }' "$1"; }
# user + system CPU seconds of a /usr/bin/time -v report
cpu_s() { awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$1"; }
mtime() { stat -c %.Y "$1"; }

# An assignment, so that a failed start stops the script (a failing eval "$(...)" does not).
SERVICES=(pg mysql)
KAFKA_APPLY=""
if [[ " ${SCENARIOS[*]} " == *" kafka-apply "* ]]; then KAFKA_APPLY=1; fi
if [[ " ${SCENARIOS[*]} " == *" kafka "* || -n $KAFKA_APPLY ]]; then SERVICES+=(kafka); fi
# The Postgres destination is a server of its own, as in production: in the source's cluster its
# writes would follow the source's changes in the WAL, and every later run's walsender would
# decode them beside faucet (the multi-table scenarios, bench/tables.sh, keep theirs there).
# Started first, so that the source's env, eval'ed next, is the current run.
dst_env=$(bash scripts/services.sh start pg)
services_env=$(bash scripts/services.sh start "${SERVICES[@]}")
eval "$services_env"
SRC=$FAUCET_TEST_PG_URL
DST_SERVER=$(sed -n 's/^export FAUCET_TEST_PG_URL=//p' <<<"$dst_env")
DST=${DST_SERVER%/*}/bench_dst
MYSQL_URL=$FAUCET_TEST_MYSQL_URL
psqlq() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
sqlv() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
mysqlq() { mariadb -h 127.0.0.1 -P "$FAUCET_TEST_MYSQL_PORT" -u faucet -pfaucet --local-infile=1 faucet "$@"; }
mysqlv() { mysqlq -N -B "$@"; }
export -f mysqlq # for the copy scenario's pipe, which runs in its own bash
export FAUCET_TEST_MYSQL_PORT
psqlq "$DST_SERVER" -c "CREATE DATABASE bench_dst"
# No autovacuum on the destination server: it would vacuum a table that one run loaded while a
# later run (of the pipe, the replay or faucet, whichever came next) is timed: workers ran 56 s and
# 55 s in a 2-run 10,000,000-row copy round. Every run empties its table first, so nothing piles up.
psqlq "$DST_SERVER" -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null

RESULTS=$WORK/results.tsv # scenario, tool, run, rows, seconds, rss_kb, cpu_s
# record SCENARIO TOOL RUN ROWS SECONDS TIMEFILE [EXTRA_CPU_S]: the first tool recorded for a
# scenario is its limit; tools named faucet* are compared with every other tool of the scenario.
# EXTRA_CPU_S is added to the CPU the time file reports (drain: the server's share).
record() {
  local cpu
  cpu=$(awk -v a="$(cpu_s "$6")" -v b="${7:-0}" 'BEGIN { printf "%.2f", a + b }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$(rss_kb "$6")" "$cpu" >>"$RESULTS"
  log "$1 | $2 | run $3: $4 rows in $5 s, peak RSS $(rss_kb "$6") KiB, CPU $cpu s"
}
# server_cpu_s [POSTMASTER]: CPU seconds a Postgres server's processes (default: the source's)
# have used so far: the postmaster's own and its reaped children's (a walsender or a backend that
# has exited), plus each live child's. Read before and after a drain run, the difference is the
# walsender's work (and whatever else the server did then).
PG_CLK_TCK=$(getconf CLK_TCK)
PG_POSTMASTER=$(head -n 1 "$(sqlv "$SRC" -c "SHOW data_directory")/postmaster.pid")
DST_POSTMASTER=$(head -n 1 "$(sqlv "$DST_SERVER" -c "SHOW data_directory")/postmaster.pid")
server_cpu_s() { # (a child reaped between the two reads is missed: callers wait for reaping)
  awk -v own="$(proc_cpu_s "${1:-$PG_POSTMASTER}" reaped)" -v live="$(children_cpu_s '*' "${1:-$PG_POSTMASTER}")" \
    'BEGIN { printf "%.2f", own + live }'
}
# proc_cpu_s PID [reaped]: CPU seconds (user + system) process PID has used so far, with "reaped"
# also its reaped children's; 0 once it is gone.
proc_cpu_s() {
  # /proc/PID/stat after "(comm) ": state is field 1, utime 12, stime 13, cutime 14, cstime 15.
  sed 's/.*) //' "/proc/$1/stat" 2>/dev/null |
    awk -v hz="$PG_CLK_TCK" -v reaped="${2:-}" '{ t = $12 + $13 + (reaped == "" ? 0 : $14 + $15) } END { printf "%.2f\n", t / hz }'
}
# children_cpu_s [PATTERN [POSTMASTER]]: CPU seconds the postmaster's (default: the source's)
# live children whose command line matches the glob PATTERN (default: all) have used so far.
children_cpu_s() {
  for c in $(pgrep -P "${2:-$PG_POSTMASTER}"); do
    [[ $(tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null) == ${1:-*} ]] || continue
    proc_cpu_s "$c"
  done | awk '{ s += $1 } END { printf "%.2f", s }'
}
# walsenders_gone: waits (at most 10 s) until the walsenders of clients that have let go of the
# source are gone (one leaves pg_stat_replication as it exits), and a moment more for the
# postmaster to reap them, adding their CPU to its own.
walsenders_gone() {
  local w
  for ((w = 0; w < 200; w++)); do
    [[ $(sqlv "$SRC" -c "SELECT count(*) FROM pg_stat_replication") == 0 ]] && { sleep 0.05; return 0; }
    sleep 0.05
  done
  log "a walsender of the source did not exit"
  return 1
}
# server_cpu_since BEFORE: the server's CPU seconds since server_cpu_s said BEFORE, once the
# walsender of a client that has exited is gone.
server_cpu_since() {
  walsenders_gone || exit 1
  awk -v a="$1" -v b="$(server_cpu_s)" 'BEGIN { printf "%.2f", b - a }'
}
# anon_fifo VAR: opens a FIFO read-write (so no open blocks) into a new descriptor, whose number
# goes into VAR, and removes its name: a pipe only this shell and its children hold.
anon_fifo() {
  local fifo=$WORK/fifo.$BASHPID fd
  mkfifo "$fifo"
  exec {fd}<>"$fifo"
  rm -f "$fifo"
  printf -v "$1" %s "$fd"
}
# CPU seconds the live walsenders have used so far (a faucet run's, read before it exits).
walsender_cpu_s() { children_cpu_s '*walsender*'; }
# dest_cpu_s DEST: CPU seconds the apply's destination server has used so far: the destination
# Postgres server's (as server_cpu_s), MariaDB's (all its threads); 0 for SQLite, whose work is
# inside the process writing to it.
MYSQL_PID=$(cat "$FAUCET_SERVICES_RUN_DIR/mysql/mariadbd.pid")
dest_cpu_s() {
  case $1 in
  postgres) server_cpu_s "$DST_POSTMASTER" ;;
  mysql) proc_cpu_s "$MYSQL_PID" ;;
  *) echo 0 ;;
  esac
}
# dest_cpu_since DEST BEFORE: the destination's CPU seconds since dest_cpu_s said BEFORE, once the
# destination Postgres server's backends have exited and been reaped (their CPU is then the
# postmaster's, counted once; a backend still there after 10 s is counted as a live one).
dest_cpu_since() {
  local w
  if [[ $1 == postgres ]]; then
    for ((w = 0; w < 200; w++)); do
      ps --ppid "$DST_POSTMASTER" -o stat=,args= | grep -q '^Z\|bench_dst' || break
      sleep 0.05
    done
  fi
  awk -v a="$2" -v b="$(dest_cpu_s "$1")" 'BEGIN { printf "%.2f", b - a }'
}
# CPU seconds all cores have been busy so far (/proc/stat: user, nice, system, irq, softirq,
# steal; guest time is within user).
busy_s() { awk -v hz="$PG_CLK_TCK" '$1 == "cpu" { printf "%.2f", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat; }
SHARES=$WORK/shares.tsv # scenario, tool, run, walsender CPU s, busy cores, destination CPU s (- if not measured)
# share SCENARIO TOOL RUN WALSENDER_S [BUSY_S SECONDS [DEST_S]]: what the walsender, the machine
# and an apply's destination server did over a run (reported beside the scenario's table).
share() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" \
    "$(if (($# > 4)) && [[ $5 != - ]]; then awk -v b="$5" -v s="$6" 'BEGIN { printf "%.2f", b / s }'; else echo -; fi)" "${7:--}" >>"$SHARES"
}
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
# steal_ticks: CPU time the hypervisor has given other guests while this one wanted it, so far,
# in clock ticks (PG_CLK_TCK a second).
steal_ticks() { awk '$1 == "cpu" { print $9 }' /proc/stat; }
STEAL_START=$(steal_ticks)

ROW_SQL="'name-' || g, g * 0.01, g % 1000, timestamptz '2024-01-01' + g * interval '1 second', g % 2 = 0"
TABLE_COLS="name text, amount numeric(12,2), qty int, created_at timestamptz, flag boolean"
SQLITE_COLS="name TEXT, amount NUMERIC, qty INTEGER, created_at TEXT, flag BOOLEAN"
MYSQL_COLS="name TEXT, amount DECIMAL(12,2), qty INT, created_at DATETIME(6), flag BOOLEAN"
# The apply scenario's table adds a column stored out of line (TOAST) for one row in 100.
MIX_COLS="$TABLE_COLS, doc text"
DOC_SQL="CASE WHEN g % 100 = 50 THEN repeat(md5(g::text), 100) END"

# A streamed case's rows must end the WAL when it runs. A client that has them streams on (faucet
# until idle_timeout) while the walsender decodes whatever follows: a core taken from faucet's
# last writes on this 2-core machine, and server CPU counted in faucet's run but not in drain's,
# which stops at the last commit. So a load for such a case (`load_big stream`) loads again,
# under a new template slot, when more than 1 MiB of WAL has followed the last one (another
# case's load, the multi-table scenarios' tables), as mysql-cdc gives each case its binlog file.
# (Their tables are not autovacuumed, so nothing follows them of itself.)
# unload_if_followed NAME LOADED END [stream]: for a streamed case whose load is done (LOADED 1,
# up to END) and followed by more than 1 MiB of WAL, drops the table NAME, its publication
# pub_NAME and template slot tmpl_NAME, and succeeds (the caller then loads them again).
unload_if_followed() {
  (($2)) && [[ ${4:-} == stream ]] &&
    (($(sqlv "$SRC" -c "SELECT pg_current_wal_insert_lsn() - '$3'::pg_lsn") > 1048576)) || return 1
  log "$1 is not at the end of the WAL: loading it again"
  psqlq "$SRC" -c "SELECT pg_drop_replication_slot('tmpl_$1')" -c "DROP PUBLICATION pub_$1" -c "DROP TABLE $1" >/dev/null
}

# The big table: ROWS rows in one transaction, read by the cdc and snapshot scenarios.
BIG_LOADED=0
load_big() { # [stream]
  if unload_if_followed big "$BIG_LOADED" "${END_BIG:-}" "${1:-}"; then BIG_LOADED=0; fi
  ((BIG_LOADED)) && return 0
  psqlq "$SRC" <<SQL
CREATE TABLE big (id bigint PRIMARY KEY, $TABLE_COLS) WITH (autovacuum_enabled = off);
CREATE PUBLICATION pub_big FOR TABLE big;
SELECT pg_create_logical_replication_slot('tmpl_big', 'pgoutput') \gset
INSERT INTO big SELECT g, $ROW_SQL FROM generate_series(1, $ROWS) g;
SQL
  END_BIG=$(sqlv "$SRC" -c "SELECT pg_current_wal_insert_lsn()")
  BIG_LOADED=1
}

faucet_cdc_yaml() { # name slot publication pipeline-yaml [create_slot_if_missing: false]
  cat <<YAML
version: 1
name: $1
pipeline:
  source:
    type: postgres-cdc
    config:
      connection_url: $SRC
      slot_name: $2
      publication_name: $3
      create_slot_if_missing: ${5:-false}
      idle_timeout: 2
      status_update_interval: 1
$4
  state:
    type: file
    config: { path: $WORK/state-$1 }
YAML
}

# --- cdc ----------------------------------------------------------------------------------

# pg_recvlogical ends each message with a newline: the file must end with a Stream Commit ('c',
# 30 bytes) or a Commit ('C', 26 bytes).
ends_with_commit() {
  [[ $(tail -c 31 "$1" | head -c 1 | od -An -tx1) == " 63" ||
    $(tail -c 27 "$1" | head -c 1 | od -An -tx1) == " 43" ]]
}

# recv SCENARIO TOOL TEMPLATE_SLOT PUBLICATION ENDPOS ROWS RUN OUT: pg_recvlogical on a copy of
# the template slot, writing the raw pgoutput messages to OUT until ENDPOS. Time to the last
# byte: OUT's mtime; for /dev/null, the process's exit.
recv() {
  local scenario=$1 tool=$2 tmpl=$3 pub=$4 endpos=$5 rows=$6 run=$7 out=$8 s end
  sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('$tmpl', 'recv')" >/dev/null
  s=$(now)
  /usr/bin/time -v -o "$WORK/time" pg_recvlogical -d "$SRC" --start -S recv --plugin=pgoutput \
    -o proto_version=2 -o publication_names="$pub" -o streaming=on -o messages=true \
    --endpos="$endpos" -f "$out"
  end=$(now)
  if [[ $out != /dev/null ]]; then
    ends_with_commit "$out" || { log "pg_recvlogical output does not end with a commit"; exit 1; }
    end=$(mtime "$out")
    rm -f "$out"
  fi
  record "$scenario" "$tool" "$run" "$rows" "$(sub "$end" "$s")" "$WORK/time"
  sqlv "$SRC" -c "SELECT pg_drop_replication_slot('recv')" >/dev/null
}

# drain SCENARIO TEMPLATE_SLOT PUBLICATION CHANGES RUN [nap|poll]: bench/drain.cc (the walsender's
# own rate: receives the stream and drops it) on a copy of the template slot, until CHANGES row
# changes and a commit have arrived. Process start to exit. Its CPU adds the server's over the
# run (server_cpu_s, read once the walsender has exited): the walsender's work, which faucet's
# runs share the machine's cores with.
drain() {
  local scenario=$1 tmpl=$2 pub=$3 changes=$4 run=$5 mode=${6:-nap} s server busy
  sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('$tmpl', 'drain')" >/dev/null
  server=$(server_cpu_s)
  busy=$(busy_s)
  s=$(now)
  /usr/bin/time -v -o "$WORK/time" "$DRAIN" "$SRC" drain "$pub" "$changes" "$mode" >/dev/null
  local took
  took=$(sub "$(now)" "$s")
  busy=$(sub "$(busy_s)" "$busy")
  server=$(server_cpu_since "$server")
  record "$scenario" "drain$([[ $mode == poll ]] && echo ", poll")" "$run" "$changes" "$took" "$WORK/time" "$server"
  share "$scenario" "drain$([[ $mode == poll ]] && echo ", poll")" "$run" "$server" "$busy" "$took"
  sqlv "$SRC" -c "SELECT pg_drop_replication_slot('drain')" >/dev/null
}

# cdc_case NAME TEMPLATE_SLOT PUBLICATION ENDPOS ROWS
cdc_case() {
  local name=$1 tmpl=$2 pub=$3 endpos=$4 rows=$5 i s out server
  for ((i = 1; i <= RUNS; i++)); do
    # The limit: the walsender's own rate, a client receiving and dropping the stream.
    drain "cdc-$name" "$tmpl" "$pub" "$rows" "$i"
    # For reference, pg_recvlogical writing the raw pgoutput messages to a file; for the big
    # transaction also the drain client and pg_recvlogical waiting in poll() for each message
    # (a client that reads faster makes the walsender slower: see BENCHMARKS.md).
    ((REFERENCES)) && recv "cdc-$name" pg_recvlogical "$tmpl" "$pub" "$endpos" "$rows" "$i" "$WORK/recv.out"
    if ((REFERENCES)) && [[ $name == big ]]; then
      drain "cdc-$name" "$tmpl" "$pub" "$rows" "$i" poll
      recv "cdc-$name" "pg_recvlogical > /dev/null" "$tmpl" "$pub" "$endpos" "$rows" "$i" /dev/null
    fi

    for v in "${!BINS[@]}"; do
      bin=${BINS[$v]} label=${LABELS[$v]}
      sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('$tmpl', 'f_$name')" >/dev/null
      out=$WORK/faucet.jsonl
      rm -rf "$WORK/state-cdc_$name"
      faucet_cdc_yaml "cdc_$name" "f_$name" "$pub" "  sink: { type: jsonl, config: { path: $out } }" \
        >"$WORK/cdc.yaml"
      server=$(server_cpu_s)
      s=$(now)
      /usr/bin/time -v -o "$WORK/time" "$bin" run "$WORK/cdc.yaml" 2>"$WORK/faucet.log" ||
        { cat "$WORK/faucet.log" >&2; exit 1; }
      [[ $(wc -l <"$out") == "$rows" ]] || { log "faucet wrote $(wc -l <"$out") rows, not $rows"; exit 1; }
      record "cdc-$name" "$label" "$i" "$rows" "$(sub "$(mtime "$out")" "$s")" "$WORK/time"
      # The server's CPU over the whole run (its idle end costs none); the cores' busy time is
      # not comparable, the run ending idle_timeout after the last byte.
      share "cdc-$name" "$label" "$i" "$(server_cpu_since "$server")"
      if ((v == 0)) && [[ $name == big ]]; then
        # What the transaction's output costs to write once it is known: the file copied (from
        # the page cache) into a new one. Every line carries the commit LSN and time, which
        # arrive with Stream Commit after the walsender's last change, so no correct client
        # writes the output before drain's end: drain + this bounds faucet (BENCHMARKS.md).
        s=$(now)
        /usr/bin/time -v -o "$WORK/time" dd if="$out" of="$WORK/copy.jsonl" bs=1M 2>/dev/null
        record "cdc-$name" "writing the output alone" "$i" "$rows" "$(sub "$(now)" "$s")" "$WORK/time"
        rm -f "$WORK/copy.jsonl"
      fi
      rm -f "$out"
      sqlv "$SRC" -c "SELECT pg_drop_replication_slot('f_$name')" >/dev/null
    done
  done
}

SMALL_LOADED=0
load_small() { # [stream]
  if unload_if_followed small "$SMALL_LOADED" "${END_SMALL:-}" "${1:-}"; then SMALL_LOADED=0; fi
  ((SMALL_LOADED)) && return 0
  log "loading $TXNS single-row transactions"
  psqlq "$SRC" <<SQL
CREATE TABLE small (id bigint PRIMARY KEY, $TABLE_COLS) WITH (autovacuum_enabled = off);
CREATE PUBLICATION pub_small FOR TABLE small;
SELECT pg_create_logical_replication_slot('tmpl_small', 'pgoutput') \gset
DO \$\$ BEGIN
  FOR g IN 1..$TXNS LOOP
    INSERT INTO small SELECT g, $ROW_SQL;
    COMMIT;
  END LOOP;
END \$\$;
SQL
  END_SMALL=$(sqlv "$SRC" -c "SELECT pg_current_wal_insert_lsn()")
  SMALL_LOADED=1
}

bench_cdc() {
  log "cdc: loading $ROWS rows in one transaction"
  load_big stream
  cdc_case big tmpl_big pub_big "$END_BIG" "$ROWS"
  load_small stream
  cdc_case small tmpl_small pub_small "$END_SMALL" "$TXNS"
}

# --- kafka --------------------------------------------------------------------------------

# Creates TOPIC (auto-created by its first message, a marker) and waits until it is there: a
# producer's first message to a new topic waits about 1 s for the topic's metadata, which is
# not what is measured.
kafka_topic() {
  echo "marker" | kcat -P -b "$FAUCET_TEST_KAFKA_BROKERS" -t "$1" -X acks=all
  [[ $(kafka_count "$1") == 1 ]] || { log "kafka: topic $1 not created"; exit 1; }
}
# Messages in TOPIC (one partition, no transactions: its end offset).
kafka_count() {
  kcat -C -b "$FAUCET_TEST_KAFKA_BROKERS" -t "$1" -o -1 -e -q -f '%o\n' | awk '{ n = $1 + 1 } END { print n + 0 }'
}
# The broker's append time of TOPIC's last message, in seconds since the epoch.
kafka_last_time() {
  kcat -C -b "$FAUCET_TEST_KAFKA_BROKERS" -t "$1" -o -1 -e -q -f '%T\n' | awk '{ t = $1 } END { printf "%.3f", t / 1000 }'
}

# Messages of TOPIC a read_committed consumer sees (a transactional topic's offsets also
# count its commit markers).
kafka_committed() {
  kcat -C -b "$FAUCET_TEST_KAFKA_BROKERS" -t "$1" -X isolation.level=read_committed -o beginning -e -q -f '.\n' | wc -l
}
# The append time of TOPIC's last message when its last offsets may be commit markers.
kafka_last_committed_time() {
  kcat -C -b "$FAUCET_TEST_KAFKA_BROKERS" -t "$1" -X isolation.level=read_committed -o -4 -e -q -f '%T\n' | awk '{ t = $1 } END { printf "%.3f", t / 1000 }'
}

# kafka_faucet BIN NAME TEMPLATE_SLOT PUBLICATION TOPIC [exactly_once]: faucet postgres-cdc ->
# kafka on a copy of the template slot; prints its start time.
kafka_faucet() {
  local bin=$1 name=$2 tmpl=$3 pub=$4 topic=$5 eo=${6:-} s extra=""
  sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('$tmpl', 'k_$name')" >/dev/null
  rm -rf "$WORK/state-kafka_$name"
  [[ -z $eo ]] || extra=", exactly_once: { commit_token_topic: tokens-$topic }"
  { faucet_cdc_yaml "kafka_$name" "k_$name" "$pub" \
    "  sink: { type: kafka, config: { brokers: '$FAUCET_TEST_KAFKA_BROKERS', topic: { name: $topic }$extra } }"
    [[ -z $eo ]] || echo "delivery: exactly_once"
  } >"$WORK/kafka.yaml"
  s=$(now)
  /usr/bin/time -v -o "$WORK/time" "$bin" run "$WORK/kafka.yaml" 2>"$WORK/faucet.log" ||
    { cat "$WORK/faucet.log" >&2; exit 1; }
  sqlv "$SRC" -c "SELECT pg_drop_replication_slot('k_$name')" >/dev/null
  echo "$s"
}

# kafka_case NAME TEMPLATE_SLOT PUBLICATION ROWS
kafka_case() {
  local name=$1 tmpl=$2 pub=$3 rows=$4 i s topic msgs=$WORK/kafka-$1.msgs
  # The messages kcat produces: faucet's own, from a run that is not timed.
  kafka_faucet "$FAUCET" "$name" "$tmpl" "$pub" "prep-$name" >/dev/null
  kcat -C -b "$FAUCET_TEST_KAFKA_BROKERS" -t "prep-$name" -o beginning -e -q -f '%k\t%s\n' >"$msgs"
  [[ $(wc -l <"$msgs") == "$rows" ]] || { log "kafka: $(wc -l <"$msgs") messages, not $rows"; exit 1; }
  for ((i = 1; i <= RUNS; i++)); do
    # The other half of the limit: decoding alone (the walsender's own rate). faucet can go
    # no faster than the slower of the two.
    drain "kafka-$name" "$tmpl" "$pub" "$rows" "$i"
    topic=kcat-$name-$i
    kafka_topic "$topic"
    s=$(now)
    /usr/bin/time -v -o "$WORK/time" kcat -P -b "$FAUCET_TEST_KAFKA_BROKERS" -t "$topic" -K $'\t' \
      -X acks=all -X enable.idempotence=true -X linger.ms=5 -l "$msgs"
    [[ $(kafka_count "$topic") == $((rows + 1)) ]] || { log "kcat produced $(kafka_count "$topic") messages, not $rows"; exit 1; }
    record "kafka-$name" kcat "$i" "$rows" "$(sub "$(kafka_last_time "$topic")" "$s")" "$WORK/time"
    for v in "${!BINS[@]}"; do
      topic=${LABELS[$v]}-$name-$i
      kafka_topic "$topic"
      s=$(kafka_faucet "${BINS[$v]}" "$name" "$tmpl" "$pub" "$topic")
      [[ $(kafka_count "$topic") == $((rows + 1)) ]] || { log "faucet produced $(kafka_count "$topic") messages, not $rows"; exit 1; }
      record "kafka-$name" "${LABELS[$v]}" "$i" "$rows" "$(sub "$(kafka_last_time "$topic")" "$s")" "$WORK/time"
      # The same under delivery: exactly_once (one Kafka transaction per page).
      topic=${LABELS[$v]}-eo-$name-$i
      kafka_topic "$topic"
      s=$(kafka_faucet "${BINS[$v]}" "$name" "$tmpl" "$pub" "$topic" eo)
      [[ $(kafka_committed "$topic") == $((rows + 1)) ]] || { log "faucet (exactly_once) produced $(kafka_committed "$topic") committed messages, not $rows"; exit 1; }
      record "kafka-$name" "${LABELS[$v]}-eo" "$i" "$rows" "$(sub "$(kafka_last_committed_time "$topic")" "$s")" "$WORK/time"
    done
  done
  rm -f "$msgs"
}

bench_kafka() {
  load_big stream
  kafka_case big tmpl_big pub_big "$ROWS"
  load_small stream
  kafka_case small tmpl_small pub_small "$TXNS"
}

# --- mysql-cdc ----------------------------------------------------------------------------

# Each case's binlog range is in a binlog file of its own (FLUSH BINARY LOGS before and after
# its load), so it ends where its file ends: mariadb-binlog --raw ignores --stop-position and
# reads to the end of the file. A transaction never spans files, and max_binlog_size (1 GiB, the
# maximum) only matters if TXNS small transactions outgrow it, which mcdc_range refuses. Each
# case is loaded just before its rounds, so nothing follows its range in the binlog and faucet's
# run (which reads on until idle_timeout) reads no other case's events.
# mcdc_range CASE LOAD-SQL: FLUSH, capture the start (SHOW MASTER STATUS), run LOAD-SQL,
# capture the end, FLUSH; sets MCDC_FILE, MCDC_START, MCDC_END.
mysql_master_pos() { mysqlv -e "SHOW MASTER STATUS" | cut -f1,2; }
mcdc_range() {
  local name=$1 endfile
  mysqlq -e "FLUSH BINARY LOGS"
  read -r MCDC_FILE MCDC_START < <(mysql_master_pos)
  mysqlq -e "$2"
  read -r endfile MCDC_END < <(mysql_master_pos)
  [[ $endfile == "$MCDC_FILE" ]] || { log "mysql-cdc: the $name load spans $MCDC_FILE..$endfile (lower BENCH_TXNS)"; exit 1; }
  mysqlq -e "FLUSH BINARY LOGS"
  log "mysql-cdc: $name is $MCDC_FILE:$MCDC_START..$MCDC_END"
}
mcdc_setup() {
  # The binlog must stay: nothing expires it (both settings 0) and nothing here purges it.
  mysqlq -e "SET GLOBAL max_binlog_size = 1073741824; SET GLOBAL binlog_expire_logs_seconds = 0"
  # The Postgres cdc case's rows (load_big, load_small), in the sink scenarios' MariaDB shape.
  MCDC_ROW="concat('name-', g), g * 0.01, g % 1000, timestamp'2024-01-01 00:00:00' + interval g second, g % 2 = 0"
  mysqlq <<SQL
CREATE TABLE mcdc_big (id BIGINT PRIMARY KEY, $MYSQL_COLS);
CREATE TABLE mcdc_small (id BIGINT PRIMARY KEY, $MYSQL_COLS);
DELIMITER //
CREATE PROCEDURE mcdc_load_small(n INT)
BEGIN -- with autocommit on, each INSERT of a procedure commits on its own
  DECLARE g INT DEFAULT 1;
  WHILE g <= n DO
    INSERT INTO mcdc_small SELECT g, $MCDC_ROW;
    SET g = g + 1;
  END WHILE;
END //
DELIMITER ;
SQL
  log "mysql-cdc: $(mysqlv -e "SELECT concat_ws(', ', version(), concat('binlog_checksum ', @@binlog_checksum),
    concat('binlog_row_metadata ', @@binlog_row_metadata),
    concat('binlog_annotate_row_events ', @@binlog_annotate_row_events))")"
}

MCDC_BINLOG=(mariadb-binlog --read-from-remote-server -h 127.0.0.1 -P "$FAUCET_TEST_MYSQL_PORT" -u faucet -pfaucet)

# mysql_cdc_case NAME ROWS: per round, the two limits (mariadb-binlog fetching the range raw;
# fetching and decoding it to text), then each build's faucet run, each checked.
mysql_cdc_case() {
  local name=$1 rows=$2 i s v bin label out n file start end size secs
  file=$MCDC_FILE start=$MCDC_START end=$MCDC_END
  # Still there, whole (the FLUSH after the load added its ROTATE event).
  size=$(mysqlv -e "SHOW BINARY LOGS" | awk -v f="$file" '$1 == f { print $2 }')
  ((size > end)) || { log "mysql-cdc: $file is gone or short (size '$size', range end $end)"; exit 1; }
  for ((i = 1; i <= RUNS; i++)); do
    # Limit 1: the raw fetch. --raw writes the events as received into RESULT-FILE-PREFIX<file>.
    rm -rf "$WORK/mcdc-raw"
    mkdir "$WORK/mcdc-raw"
    s=$(now)
    /usr/bin/time -v -o "$WORK/time" "${MCDC_BINLOG[@]}" --raw --start-position="$start" \
      --result-file="$WORK/mcdc-raw/" "$file" 2>"$WORK/mcdc.log" || { cat "$WORK/mcdc.log" >&2; exit 1; }
    n=$(stat -c %s "$WORK/mcdc-raw/$file")
    ((n >= end - start)) || { log "mysql-cdc: the raw fetch wrote $n bytes, the range is $((end - start))"; exit 1; }
    record "mysql-cdc-$name" "mariadb-binlog --raw" "$i" "$rows" "$(sub "$(now)" "$s")" "$WORK/time"
    rm -rf "$WORK/mcdc-raw"

    # Limit 2: fetch and decode the rows to text (--verbose: one '### INSERT' and a line per
    # column for each row) into a file, as faucet writes its output.
    out=$WORK/mcdc-decoded.sql
    s=$(now)
    /usr/bin/time -v -o "$WORK/time" "${MCDC_BINLOG[@]}" --verbose --base64-output=DECODE-ROWS \
      --start-position="$start" --stop-position="$end" --result-file="$out" "$file" 2>"$WORK/mcdc.log" ||
      { cat "$WORK/mcdc.log" >&2; exit 1; }
    secs=$(sub "$(now)" "$s")
    n=$(grep -c "^### INSERT INTO \`faucet\`.\`mcdc_$name\`" "$out" || true)
    ((n == rows)) || { log "mysql-cdc: mariadb-binlog --verbose decoded $n rows, not $rows"; exit 1; }
    record "mysql-cdc-$name" "mariadb-binlog --verbose" "$i" "$rows" "$secs" "$WORK/time"
    rm -f "$out"
    if ((REFERENCES)) && [[ $name == big ]]; then # for reference: the same into /dev/null
      s=$(now)
      /usr/bin/time -v -o "$WORK/time" "${MCDC_BINLOG[@]}" --verbose --base64-output=DECODE-ROWS \
        --start-position="$start" --stop-position="$end" "$file" >/dev/null 2>"$WORK/mcdc.log" ||
        { cat "$WORK/mcdc.log" >&2; exit 1; }
      record "mysql-cdc-$name" "mariadb-binlog --verbose > /dev/null" "$i" "$rows" "$(sub "$(now)" "$s")" "$WORK/time"
    fi

    # faucet: mysql-cdc from the range's start -> jsonl, with a fresh file state store. Time to
    # the output's last byte (its mtime), as in the cdc scenario: the run itself ends idle_timeout
    # (1 s) without a change later.
    for v in "${!BINS[@]}"; do
      bin=${BINS[$v]} label=${LABELS[$v]}
      out=$WORK/faucet.jsonl
      rm -rf "$WORK/state-mcdc_$name" "$out"
      cat >"$WORK/mcdc.yaml" <<YAML
version: 1
name: mcdc_$name
pipeline:
  source:
    type: mysql-cdc
    config:
      connection_url: $MYSQL_URL
      server_id: $((4200 + 10 * i + v))
      include_tables: [faucet.mcdc_$name]
      start_position: { type: file_pos, file: $file, pos: $start }
      idle_timeout: 1
      batch_size: 1000
  sink: { type: jsonl, config: { path: $out } }
  state:
    type: file
    config: { path: $WORK/state-mcdc_$name }
YAML
      s=$(now)
      /usr/bin/time -v -o "$WORK/time" "$bin" run "$WORK/mcdc.yaml" 2>"$WORK/faucet.log" ||
        { cat "$WORK/faucet.log" >&2; exit 1; }
      [[ $(wc -l <"$out") == "$rows" ]] || { log "faucet wrote $(wc -l <"$out") rows, not $rows"; exit 1; }
      grep -q "last bookmark {\"file\":\"$file\",[^}]*\"pos\":$end}" "$WORK/faucet.log" ||
        { cat "$WORK/faucet.log" >&2; log "faucet did not end at $file:$end"; exit 1; }
      record "mysql-cdc-$name" "$label" "$i" "$rows" "$(sub "$(mtime "$out")" "$s")" "$WORK/time"
      rm -f "$out"
    done
  done
}

bench_mysql_cdc() {
  mcdc_setup
  log "mysql-cdc: loading $ROWS rows in one transaction"
  mcdc_range big "INSERT INTO mcdc_big SELECT g, $MCDC_ROW FROM (SELECT seq AS g FROM seq_1_to_$ROWS) s"
  mysql_cdc_case big "$ROWS"
  log "mysql-cdc: loading $TXNS single-row transactions"
  mcdc_range small "SET autocommit = 1; CALL mcdc_load_small($TXNS)"
  [[ $(mysqlv -e "SELECT count(*) FROM mcdc_small") == "$TXNS" ]] || { log "mysql-cdc: the small load is short"; exit 1; }
  mysql_cdc_case small "$TXNS"
}

# --- metrics ------------------------------------------------------------------------------

# metrics_case NAME TEMPLATE_SLOT PUBLICATION ROWS: the cdc scenario's faucet run without and
# with `observability:` (scraped every second meanwhile), interleaved.
metrics_case() {
  local name=$1 tmpl=$2 pub=$3 rows=$4 i s out observe label scraper pid
  for ((i = 1; i <= RUNS; i++)); do
    for observe in 0 1; do
      sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('$tmpl', 'm_$name')" >/dev/null
      out=$WORK/metrics.jsonl
      rm -rf "$WORK/state-metrics_$name" "$WORK/faucet.log"
      {
        faucet_cdc_yaml "metrics_$name" "m_$name" "$pub" "  sink: { type: jsonl, config: { path: $out } }"
        if ((observe)); then echo "observability: { prometheus: { listen: '127.0.0.1:0' } }"; fi
      } >"$WORK/metrics.yaml"
      s=$(now)
      /usr/bin/time -v -o "$WORK/time" "$FAUCET" run "$WORK/metrics.yaml" 2>"$WORK/faucet.log" &
      pid=$!
      scraper=
      if ((observe)); then
        ( # scrape once a second, as Prometheus would, while the run lasts
          port=
          while [[ -z $port ]] && kill -0 "$pid" 2>/dev/null; do
            port=$(grep -o 'http://127.0.0.1:[0-9]*' "$WORK/faucet.log" 2>/dev/null | cut -d: -f3 || true)
            sleep 0.05
          done
          while kill -0 "$pid" 2>/dev/null; do
            curl -s "http://127.0.0.1:$port/metrics" >/dev/null || true
            sleep 1
          done
        ) &
        scraper=$!
      fi
      wait "$pid" || { cat "$WORK/faucet.log" >&2; exit 1; }
      if [[ -n $scraper ]]; then wait "$scraper"; fi
      [[ $(wc -l <"$out") == "$rows" ]] || { log "faucet wrote $(wc -l <"$out") rows, not $rows"; exit 1; }
      label="without metrics"
      if ((observe)); then label="faucet with metrics"; fi
      record "metrics-$name" "$label" "$i" "$rows" "$(sub "$(mtime "$out")" "$s")" "$WORK/time"
      rm -f "$out"
      sqlv "$SRC" -c "SELECT pg_drop_replication_slot('m_$name')" >/dev/null
    done
  done
}

# The hot path alone: ROWS generated rows into a jsonl file (no server), without and with
# `observability:`; wall time of the process.
metrics_generator() {
  local i s observe label out=$WORK/gen.jsonl
  for ((i = 1; i <= RUNS; i++)); do
    for observe in 0 1; do
      rm -rf "$WORK/state-gen" "$out"
      {
        printf 'name: gen\npipeline:\n  source: {type: generator, config: {count: %s}}\n' "$ROWS"
        printf '  sink: {type: jsonl, config: {path: %s}}\n' "$out"
        printf '  state: {type: file, config: {path: %s/state-gen}}\n' "$WORK"
        if ((observe)); then echo "observability: { prometheus: { listen: '127.0.0.1:0' } }"; fi
      } >"$WORK/gen.yaml"
      s=$(now)
      /usr/bin/time -v -o "$WORK/time" "$FAUCET" run "$WORK/gen.yaml" 2>"$WORK/faucet.log" ||
        { cat "$WORK/faucet.log" >&2; exit 1; }
      [[ $(wc -l <"$out") == "$ROWS" ]] || { log "faucet wrote $(wc -l <"$out") rows, not $ROWS"; exit 1; }
      label="without metrics"
      if ((observe)); then label="faucet with metrics"; fi
      record "metrics-generator" "$label" "$i" "$ROWS" "$(sub "$(now)" "$s")" "$WORK/time"
    done
  done
}

bench_metrics() {
  load_big stream
  metrics_case big tmpl_big pub_big "$ROWS"
  load_small stream
  metrics_case small tmpl_small pub_small "$TXNS"
  metrics_generator
}

# --- apply --------------------------------------------------------------------------------

bench_apply() {
  local batches=$((ROWS / 1000)) i s seen
  log "apply: writing $ROWS changes in $((batches + 1)) transactions"
  # Batch b inserts 600 new rows; of batch b-1's it updates 290, moves 10 to a new key (-id - 1000)
  # and deletes 100; the last one also inserts the sentinel id -1. One row in 100 (id % 100 = 50)
  # has a 3200-byte `doc` stored out of line (TOAST, no compression) that no update changes, so
  # its updates carry it as unchanged-TOAST. 600*batches+1 inserts, 300*batches updates (10 of
  # each batch key changes), 100*batches-1 deletes: ROWS changes.
  psqlq "$SRC" <<SQL
CREATE TABLE mix (id bigint PRIMARY KEY, $MIX_COLS) WITH (autovacuum_enabled = off);
ALTER TABLE mix ALTER COLUMN doc SET STORAGE EXTERNAL;
CREATE PUBLICATION pub_mix FOR TABLE mix;
SELECT pg_create_logical_replication_slot('tmpl_mix', 'pgoutput') \gset
DO \$\$ BEGIN
  FOR b IN 0..$batches LOOP
    IF b < $batches THEN
      INSERT INTO mix SELECT g, $ROW_SQL, $DOC_SQL FROM generate_series(b * 600 + 1, b * 600 + 600) g;
    END IF;
    IF b > 0 THEN
      UPDATE mix SET name = name || '-u', amount = amount + 1, qty = qty + 1, flag = NOT flag
        WHERE id BETWEEN (b - 1) * 600 + 1 AND (b - 1) * 600 + 290;
      UPDATE mix SET id = -id - 1000, qty = qty + 1
        WHERE id BETWEEN (b - 1) * 600 + 291 AND (b - 1) * 600 + 300;
      DELETE FROM mix WHERE id BETWEEN (b - 1) * 600 + 301
        AND (b - 1) * 600 + CASE WHEN b = $batches THEN 399 ELSE 400 END;
    END IF;
    IF b = $batches THEN
      INSERT INTO mix SELECT -1, 'sentinel', 0, 0, now(), true, NULL;
    END IF;
    COMMIT;
  END LOOP;
END \$\$;
SQL
  local expect
  expect=$(sqlv "$SRC" -c "SELECT count(*), sum(hashtext(t::text)::bigint) FROM mix t")
  # SQLite and MariaDB are checked by count, sum of id and total length of doc.
  local sums="SELECT count(*) || '|' || sum(id) || '|' || coalesce(sum(length(doc)), 0) FROM mix"
  local expect_sums
  expect_sums=$(sqlv "$SRC" -c "$sums")
  psqlq "$DST" -c "CREATE TABLE mix (id bigint PRIMARY KEY, $MIX_COLS)"
  mysqlq -e "CREATE TABLE mix (id BIGINT PRIMARY KEY, $MYSQL_COLS, doc MEDIUMTEXT)"
  local db=$WORK/apply.db
  sqlite3 "$db" "PRAGMA journal_mode=WAL" "CREATE TABLE mix (id INTEGER PRIMARY KEY, $SQLITE_COLS, doc TEXT)" >/dev/null
  # mix_sink TYPE URL-KEY URL: the upsert sink of every destination.
  mix_sink() {
    printf '    type: %s\n    config:\n      %s: %s\n' "$1" "$2" "$3"
    printf '      %s\n' "table_name: mix" "column_mapping: auto_map" "write_mode: upsert" "key: [id]" \
      "delete_marker: { field: __op, values: [d] }"
  }
  local sink_postgres sink_sqlite sink_mysql
  sink_postgres=$(mix_sink postgres connection_url "$DST")
  sink_sqlite=$(mix_sink sqlite database_url "$db")
  sink_mysql=$(mix_sink mysql connection_url "$MYSQL_URL")
  # apply_yaml NAME SINK-YAML: the pipeline faucet runs, and the replay applies alone.
  apply_yaml() {
    rm -rf "$WORK/state-$1"
    faucet_cdc_yaml "$1" f_mix pub_mix "  transforms:
    - type: cdc_unwrap
      key: [id]
  sink:
$2" >"$WORK/apply.yaml"
  }
  # poll_until_one CLIENT...: one client session (a coprocess reading SQL on stdin) asked every
  # 10 ms whether the sentinel row has arrived, until it answers 1. A client started per poll
  # (about 3 ms of CPU each) took a third of a core from the run it watched on this 2-core
  # machine; this one takes about 2.5% of a core. The nap is a read with a timeout on a FIFO
  # nobody writes: no process per poll either.
  poll_until_one() {
    local nap got
    anon_fifo nap
    coproc CLIENT { "$@" 2>/dev/null; }
    while :; do
      echo "SELECT count(*) FROM mix WHERE id = -1;" >&"${CLIENT[1]}"
      read -r -t 10 got <&"${CLIENT[0]}" || got=
      [[ $got == 1 ]] && break
      read -r -t 0.01 -u "$nap" || true
    done
    exec {CLIENT[1]}>&- {nap}>&-
    wait "$CLIENT_PID" 2>/dev/null || true
  }
  # Per destination: empty it, check it against the source, and watch it (poll every 10 ms) until
  # the sentinel row has arrived.
  empty_postgres() { psqlq "$DST" -c "TRUNCATE mix"; }
  check_postgres() { [[ $(sqlv "$DST" -c "SELECT count(*), sum(hashtext(t::text)::bigint) FROM mix t") == "$expect" ]]; }
  watch_postgres() { # one DO block polling (each check sees a new snapshot)
    psql -X -q "$DST" -c "DO \$\$ BEGIN WHILE NOT EXISTS (SELECT 1 FROM mix WHERE id = -1) LOOP
      PERFORM pg_sleep(0.01); END LOOP; END \$\$"
  }
  empty_sqlite() { sqlite3 "$db" "DELETE FROM mix" "VACUUM" >/dev/null; }
  check_sqlite() { [[ $(sqlite3 "$db" "$sums") == "$expect_sums" ]]; }
  watch_sqlite() { poll_until_one sqlite3 -cmd ".timeout 2000" "$db"; }
  empty_mysql() { mysqlq -e "TRUNCATE mix"; }
  check_mysql() { [[ $(mysqlv -e "SELECT concat(count(*), '|', sum(id), '|', coalesce(sum(length(doc)), 0)) FROM mix") == "$expect_sums" ]]; }
  watch_mysql() { poll_until_one mysqlv --unbuffered --force; }

  # timed_apply SCENARIO DEST YAML: `$bin run YAML` timed from its start to the sentinel row's
  # arrival in DEST (watched meanwhile), DEST checked against the source, recorded as $label.
  timed_apply() {
    local watcher s busy dest_s seen
    # At the sentinel: the time, the walsender's CPU, the cores' busy seconds and the destination's CPU.
    ("watch_$2" && echo "$(now) $(walsender_cpu_s) $(busy_s) $(dest_cpu_s "$2")" >"$WORK/seen") &
    watcher=$!
    sleep 0.3
    busy=$(busy_s)
    dest_s=$(dest_cpu_s "$2")
    s=$(now)
    /usr/bin/time -v -o "$WORK/time" "$bin" run "$3" 2>"$WORK/faucet.log" ||
      { cat "$WORK/faucet.log" >&2; kill "$watcher" 2>/dev/null; exit 1; }
    wait "$watcher"
    "check_$2" || { log "$1: the $2 destination differs from the source ($label)"; exit 1; }
    read -ra seen <"$WORK/seen"
    record "$1" "$label" "$i" "$ROWS" "$(sub "${seen[0]}" "$s")" "$WORK/time"
    # (The kafka source has no walsender.)
    [[ $1 == kafka-apply ]] || share "$1" "$label" "$i" "${seen[1]}" "$(sub "${seen[2]}" "$busy")" "$(sub "${seen[0]}" "$s")" \
      "$(awk -v a="${seen[3]}" -v b="$dest_s" 'BEGIN { printf "%.2f", a - b }')"
  }

  # fresh_run DEST: the destination emptied, a copy of the template slot, the pipeline's config.
  fresh_run() {
    "empty_$1"
    sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('tmpl_mix', 'f_mix')" >/dev/null
    apply_yaml "apply_$1" "$sink"
  }

  # at_once DEST: both halves at once with nothing between them: the replay, its pages read
  # first (untimed), released as drain starts; the time until both have ended. A reference for
  # the live run, not a bound: each half runs flat out, so the two may crowd each other more
  # than a pipeline whose halves pace each other. Its RSS and CPU columns are drain's (client
  # and server); the walsender's, the cores' and the destination's CPU over it go to SHARES.
  at_once() {
    local dest=$1 go pid s busy server dest_cpu took
    fresh_run "$dest"
    anon_fifo go # the go line's way
    "$REPLAY" --wait "$WORK/apply.yaml" <&"$go" >"$WORK/replay.out" 2>"$WORK/faucet.log" &
    pid=$!
    until grep -qx ready "$WORK/replay.out"; do
      kill -0 "$pid" 2>/dev/null || { cat "$WORK/faucet.log" >&2; exit 1; }
      sleep 0.05
    done
    # The replay has let go of its connection; its walsender exits soon after.
    walsenders_gone || { kill "$pid"; exit 1; }
    sqlv "$SRC" -c "SELECT pg_drop_replication_slot('f_mix')" >/dev/null
    sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('tmpl_mix', 'drain')" >/dev/null
    server=$(server_cpu_s)
    dest_cpu=$(dest_cpu_s "$dest")
    busy=$(busy_s)
    s=$(now)
    echo go >&"$go"
    exec {go}>&-
    /usr/bin/time -v -o "$WORK/time" "$DRAIN" "$SRC" drain pub_mix "$ROWS" nap >/dev/null ||
      { kill "$pid"; exit 1; }
    wait "$pid" || { cat "$WORK/faucet.log" >&2; exit 1; }
    took=$(sub "$(now)" "$s")
    busy=$(sub "$(busy_s)" "$busy")
    "check_$dest" || { log "at once: the $dest destination differs from the source"; exit 1; }
    server=$(server_cpu_since "$server")
    record "$scenario" "drain and replay at once" "$i" "$ROWS" "$took" "$WORK/time" "$server"
    share "$scenario" "drain and replay at once" "$i" "$server" "$busy" "$took" "$(dest_cpu_since "$dest" "$dest_cpu")"
    sqlv "$SRC" -c "SELECT pg_drop_replication_slot('drain')" >/dev/null
  }

  # apply_case DEST: the replay (applying alone), both halves at once, then each build's faucet
  # run, checked.
  apply_case() {
    local dest=$1 sink scenario=apply-$1
    eval "sink=\$sink_$dest"
    fresh_run "$dest"
    local dest_cpu
    dest_cpu=$(dest_cpu_s "$dest")
    /usr/bin/time -v -o "$WORK/time" "$REPLAY" "$WORK/apply.yaml" >"$WORK/replay.out" 2>"$WORK/faucet.log" ||
      { cat "$WORK/faucet.log" >&2; exit 1; }
    # (Its pages are read into memory before the timed apply; the destination is idle meanwhile.)
    dest_cpu=$(dest_cpu_since "$dest" "$dest_cpu")
    "check_$dest" || { log "replay: the $dest destination differs from the source"; exit 1; }
    record "$scenario" "replay (applying alone)" "$i" "$ROWS" "$(awk '/^apply_seconds/ { print $2 }' "$WORK/replay.out")" "$WORK/time"
    share "$scenario" "replay (applying alone)" "$i" - - - "$dest_cpu"
    sqlv "$SRC" -c "SELECT pg_drop_replication_slot('f_mix')" >/dev/null
    at_once "$dest"

    for v in "${!BINS[@]}"; do
      bin=${BINS[$v]} label=${LABELS[$v]}
      fresh_run "$dest"
      timed_apply "$scenario" "$dest" "$WORK/apply.yaml"
      sqlv "$SRC" -c "SELECT pg_drop_replication_slot('f_mix')" >/dev/null
      if [[ $dest == postgres && -n $KAFKA_APPLY ]]; then
        # Its limit: this postgres -> postgres run, the same changes applied the same way.
        ((v)) || tail -n 1 "$RESULTS" | awk -F'\t' -v OFS='\t' '{ $1 = "kafka-apply"; $2 = "postgres-apply"; print }' >>"$RESULTS"
        kafka_apply_case
      fi
    done
  }

  # kafka_apply_case: the apply topic (made once from the same slot) into postgres by a kafka
  # source (a new group each run, so from the topic's start), timed like the other runs.
  kafka_apply_case() {
    if [[ -z ${KAFKA_APPLY_TOPIC:-} ]]; then
      KAFKA_APPLY_TOPIC=apply-mix-$$
      sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('tmpl_mix', 'k_mix')" >/dev/null
      rm -rf "$WORK/state-kafka_mix"
      faucet_cdc_yaml kafka_mix k_mix pub_mix \
        "  sink: { type: kafka, config: { brokers: '$FAUCET_TEST_KAFKA_BROKERS', topic: { name: $KAFKA_APPLY_TOPIC } } }" >"$WORK/kafka.yaml"
      "$FAUCET" run "$WORK/kafka.yaml" 2>"$WORK/faucet.log" || { cat "$WORK/faucet.log" >&2; exit 1; }
      sqlv "$SRC" -c "SELECT pg_drop_replication_slot('k_mix')" >/dev/null
      [[ $(kafka_count "$KAFKA_APPLY_TOPIC") == "$ROWS" ]] || { log "kafka-apply: $(kafka_count "$KAFKA_APPLY_TOPIC") messages, not $ROWS"; exit 1; }
    fi
    empty_postgres
    rm -rf "$WORK/state-kafka-apply"
    cat >"$WORK/kafka-apply.yaml" <<YAML
version: 1
name: kafka_apply
pipeline:
  source:
    type: kafka
    config: { brokers: '$FAUCET_TEST_KAFKA_BROKERS', topics: [$KAFKA_APPLY_TOPIC], group_id: apply-$i-$label, idle_timeout: 1 }
  sink:
    type: postgres
    config: { connection_url: '$DST', table_name: mix, write_mode: upsert, key: [id] }
  state:
    type: file
    config: { path: $WORK/state-kafka-apply }
YAML
    timed_apply kafka-apply postgres "$WORK/kafka-apply.yaml"
  }

  for ((i = 1; i <= RUNS; i++)); do
    # Decoding alone bounds any apply of this change stream: the drain client reading it. One
    # measurement serves every destination (recorded for each).
    drain "apply-${APPLY_DESTS[0]}" tmpl_mix pub_mix "$ROWS" "$i"
    local drained f
    for f in "$RESULTS" "$SHARES"; do
      drained=$(tail -n 1 "$f")
      for dest in "${APPLY_DESTS[@]:1}"; do echo "${drained/#apply-${APPLY_DESTS[0]}/apply-$dest}" >>"$f"; done
    done
    for dest in "${APPLY_DESTS[@]}"; do apply_case "$dest"; done
  done
}

# --- snapshot -----------------------------------------------------------------------------

mirror_yaml() { # name slot sink-yaml [snapshot batch_size]
  # The mirror creates its slot, with an exported snapshot.
  faucet_cdc_yaml "$1" "$2" pub_big "  transforms:
    - type: cdc_unwrap
      key: [id]
$3" true
  cat <<YAML
mirror:
  mode: snapshot_then_cdc
  continuous: false
  snapshot:
    source:
      type: postgres
      config:
        connection_url: $SRC
        query: "SELECT * FROM public.big"
        batch_size: ${4:-1000}
YAML
}

# Seconds between the mirror's "captured position" and "snapshot done" log lines.
snapshot_seconds() {
  awk '
    function secs(ts) { split(substr(ts, 12, 12), p, ":"); return p[1] * 3600 + p[2] * 60 + p[3] }
    / captured position / { a = secs($1) }
    / snapshot done, / { b = secs($1) }
    END { if (a == "" || b == "") exit 1; d = b - a; if (d < 0) d += 86400; printf "%.3f", d }' "$1"
}

# The raw limits of a copy of table big, recorded as run $i of SCENARIO: pg_pipe SCENARIO TABLE
# (psql COPY TO STDOUT | psql COPY FROM STDIN into $DST's TABLE), sqlite_pipe SCENARIO DB TABLE
# (COPY TO csv | sqlite3 .import into an emptied TABLE of DB).
pg_pipe() {
  psqlq "$DST" -c "TRUNCATE $2"
  local s
  s=$(now)
  /usr/bin/time -v -o "$WORK/time" bash -c "psql -X -q -v ON_ERROR_STOP=1 '$SRC' -c 'COPY big TO STDOUT' |
    psql -X -q -v ON_ERROR_STOP=1 '$DST' -c 'COPY $2 FROM STDIN'"
  record "$1" "COPY pipe" "$i" "$ROWS" "$(sub "$(now)" "$s")" "$WORK/time"
}
sqlite_pipe() {
  sqlite3 "$2" "DELETE FROM $3" "VACUUM" >/dev/null
  local s
  s=$(now)
  /usr/bin/time -v -o "$WORK/time" bash -c "psql -X -q -v ON_ERROR_STOP=1 '$SRC' -c 'COPY big TO STDOUT (FORMAT csv)' |
    sqlite3 '$2' 'PRAGMA synchronous=FULL' '.import --csv /dev/stdin $3'"
  record "$1" "COPY TO + .import" "$i" "$ROWS" "$(sub "$(now)" "$s")" "$WORK/time"
}
mysql_pipe() {
  mysqlq -e "TRUNCATE $2"
  local s
  s=$(now)
  # The rows as MariaDB's LOAD DATA reads them (timestamps in UTC without an offset, booleans as
  # 0/1): the conversion is the source server's work, inside its COPY.
  /usr/bin/time -v -o "$WORK/time" bash -c "psql -X -q -v ON_ERROR_STOP=1 '$SRC' -c \"COPY (SELECT id, name, amount, qty,
      to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.US'), flag::int FROM big) TO STDOUT\" |
    mysqlq -e \"LOAD DATA LOCAL INFILE '/dev/stdin' INTO TABLE $2 CHARACTER SET utf8mb4\""
  record "$1" "COPY TO + LOAD DATA" "$i" "$ROWS" "$(sub "$(now)" "$s")" "$WORK/time"
}

bench_snapshot() {
  log "snapshot: loading $ROWS rows"
  load_big
  psqlq "$DST" -c "CREATE TABLE snap (id bigint PRIMARY KEY, $TABLE_COLS)" \
    -c "CREATE TABLE snap_pipe (id bigint PRIMARY KEY, $TABLE_COLS)"
  local db=$WORK/snap.db i s secs
  sqlite3 "$db" "PRAGMA journal_mode=WAL" "CREATE TABLE snap (id INTEGER PRIMARY KEY, $SQLITE_COLS)" \
    "CREATE TABLE snap_pipe (id INTEGER PRIMARY KEY, $SQLITE_COLS)" >/dev/null
  for ((i = 1; i <= RUNS; i++)); do
    pg_pipe snapshot-postgres snap_pipe

    for batch in 1000 10000; do
      for v in "${!BINS[@]}"; do
        bin=${BINS[$v]} label=${LABELS[$v]}
        psqlq "$DST" -c "TRUNCATE snap"
        rm -rf "$WORK/state-snap_pg"
        mirror_yaml snap_pg mirror_pg "  sink:
    type: postgres
    config: { connection_url: $DST, table_name: snap, column_mapping: auto_map,
              write_mode: upsert, key: [id], delete_marker: { field: __op, values: [d] } }" "$batch" \
          >"$WORK/mirror.yaml"
        /usr/bin/time -v -o "$WORK/time" "$bin" mirror "$WORK/mirror.yaml" 2>"$WORK/faucet.log" ||
          { cat "$WORK/faucet.log" >&2; exit 1; }
        secs=$(snapshot_seconds "$WORK/faucet.log") || { cat "$WORK/faucet.log" >&2; exit 1; }
        [[ $(sqlv "$DST" -c "SELECT count(*) FROM snap") == "$ROWS" ]] || { log "mirror copied too few rows"; exit 1; }
        record snapshot-postgres "$label (batch_size $batch)" "$i" "$ROWS" "$secs" "$WORK/time"
        grep -o 'snapshot: [0-9]* rows, [0-9]* rows/s' "$WORK/faucet.log" | tail -1 >&2 || true
        sqlv "$SRC" -c "SELECT pg_drop_replication_slot('mirror_pg')" >/dev/null
      done
    done

    sqlite_pipe snapshot-sqlite "$db" snap_pipe
    sqlite3 "$db" "DELETE FROM snap_pipe" "VACUUM" >/dev/null
    for batch in 1000 10000; do
      for v in "${!BINS[@]}"; do
        bin=${BINS[$v]} label=${LABELS[$v]}
        sqlite3 "$db" "DELETE FROM snap" "VACUUM" >/dev/null
        rm -rf "$WORK/state-snap_sqlite"
        mirror_yaml snap_sqlite mirror_sqlite "  sink:
    type: sqlite
    config: { database_url: $db, table_name: snap, column_mapping: auto_map,
              write_mode: upsert, key: [id], delete_marker: { field: __op, values: [d] } }" "$batch" \
          >"$WORK/mirror.yaml"
        /usr/bin/time -v -o "$WORK/time" "$bin" mirror "$WORK/mirror.yaml" 2>"$WORK/faucet.log" ||
          { cat "$WORK/faucet.log" >&2; exit 1; }
        secs=$(snapshot_seconds "$WORK/faucet.log") || { cat "$WORK/faucet.log" >&2; exit 1; }
        [[ $(sqlite3 "$db" "SELECT count(*) FROM snap") == "$ROWS" ]] || { log "mirror copied too few rows"; exit 1; }
        record snapshot-sqlite "$label (batch_size $batch)" "$i" "$ROWS" "$secs" "$WORK/time"
        grep -o 'snapshot: [0-9]* rows, [0-9]* rows/s' "$WORK/faucet.log" | tail -1 >&2 || true
        sqlv "$SRC" -c "SELECT pg_drop_replication_slot('mirror_sqlite')" >/dev/null
      done
    done
  done
  sqlite3 "$db" "DELETE FROM snap" "VACUUM" >/dev/null
}

bench_copy() {
  log "copy: loading $ROWS rows"
  load_big
  psqlq "$DST" -c "CREATE TABLE copy_t (id bigint PRIMARY KEY, $TABLE_COLS)" \
    -c "CREATE TABLE copy_pipe (id bigint PRIMARY KEY, $TABLE_COLS)"
  local db=$WORK/copy.db i s v bin label mode key want
  sqlite3 "$db" "PRAGMA journal_mode=WAL" "CREATE TABLE copy_t (id INTEGER PRIMARY KEY, $SQLITE_COLS)" \
    "CREATE TABLE copy_pipe (id INTEGER PRIMARY KEY, $SQLITE_COLS)" >/dev/null
  mysqlq -e "CREATE TABLE copy_t (id BIGINT PRIMARY KEY, $MYSQL_COLS);
    CREATE TABLE copy_pipe (id BIGINT PRIMARY KEY, $MYSQL_COLS)"
  want=$(sqlv "$SRC" -c "SELECT count(*) || '/' || sum(id) FROM big")
  # copy_runs DEST SINK-CONFIG CHECK-COMMAND...: per mode (append, upsert) one `faucet run` of
  # each build into DEST's copy_t (emptied first), checked. SINK-CONFIG: the connection keys.
  copy_runs() {
    local dest=$1 config=$2 scenario=copy-$1
    shift 2
    for mode in append upsert; do
      key=""
      [[ $mode == upsert ]] && key=", key: [id]"
      for v in "${!BINS[@]}"; do
        bin=${BINS[$v]} label=${LABELS[$v]}
        case $dest in
        postgres) psqlq "$DST" -c "TRUNCATE copy_t" ;;
        sqlite) sqlite3 "$db" "DELETE FROM copy_t" "VACUUM" >/dev/null ;;
        mysql) mysqlq -e "TRUNCATE copy_t" ;;
        esac
        rm -rf "$WORK/state-copy"
        cat >"$WORK/copy.yaml" <<YAML
version: 1
name: copy
pipeline:
  source: {type: postgres, config: {connection_url: '$SRC', query: 'SELECT * FROM public.big', batch_size: 1000}}
  sink: {type: $dest, config: {$config, table_name: copy_t, column_mapping: auto_map, write_mode: $mode$key}}
  state: {type: file, config: {path: '$WORK/state-copy'}}
YAML
        s=$(now)
        /usr/bin/time -v -o "$WORK/time" "$bin" run "$WORK/copy.yaml" 2>"$WORK/faucet.log" ||
          { cat "$WORK/faucet.log" >&2; exit 1; }
        secs=$(sub "$(now)" "$s")
        [[ $("$@") == "$want" ]] || { log "copy: $scenario ($label, $mode) differs from the source"; exit 1; }
        record "$scenario" "$label run ($mode)" "$i" "$ROWS" "$secs" "$WORK/time"
      done
    done
  }
  for ((i = 1; i <= RUNS; i++)); do
    pg_pipe copy-postgres copy_pipe
    copy_runs postgres "connection_url: '$DST'" sqlv "$DST" -c "SELECT count(*) || '/' || sum(id) FROM copy_t"
    sqlite_pipe copy-sqlite "$db" copy_pipe
    copy_runs sqlite "database_url: '$db'" sqlite3 "$db" "SELECT count(*) || '/' || sum(id) FROM copy_t"
    mysql_pipe copy-mysql copy_pipe
    copy_runs mysql "connection_url: '$MYSQL_URL'" mysqlv -e "SELECT concat(count(*), '/', sum(id)) FROM copy_t"
  done
}

# --- tables (multi-table mirror) ---------------------------------------------------------

source bench/tables.sh

# --- report -------------------------------------------------------------------------------

# median(list): the median of a space-separated list of numbers (an awk function).
AWK_MEDIAN='
    function median(list,   n, a, i, j, t) {
      n = split(list, a, " ")
      for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }'
report() {
  echo "Date: $(date -u '+%Y-%m-%d %H:%M UTC'); nproc $(nproc); CPU $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo);" \
    "$(sqlv "$SRC" -c "SELECT split_part(version(), ' on ', 1)"); load average (1/5/15 min) at the start: $LOAD_START, at the end: $(cut -d' ' -f1-3 /proc/loadavg);" \
    "CPU time stolen by the hypervisor during the bench: $(awk -v a="$STEAL_START" -v b="$(steal_ticks)" -v hz="$PG_CLK_TCK" 'BEGIN { printf "%.2f", (b - a) / hz }') s"
  echo "Command: bash bench/run.sh $BUILD ${SCENARIOS[*]} (BENCH_RUNS=$RUNS BENCH_ROWS=$ROWS BENCH_TXNS=$TXNS)"
  echo
  # Per scenario and tool: the runs (seconds), medians of seconds, rows/s, peak RSS and CPU; then
  # each faucet tool against each other tool: the ratio of the median rates and the median of the
  # per-run ratios (runs are interleaved, so run i of both saw the same machine).
  awk -F'\t' "$AWK_MEDIAN"'
    {
      if (!($1 in ntools)) { order[++n] = $1; ntools[$1] = 0 }
      key = $1 SUBSEP $2
      if (!(key in secs)) tool[$1, ++ntools[$1]] = $2
      secs[key] = secs[key] (secs[key] == "" ? "" : " ") $5
      rss[key] = rss[key] (rss[key] == "" ? "" : " ") $6
      cpu[key] = cpu[key] (cpu[key] == "" ? "" : " ") $7
      rows[$1] = $4
      t[$1, $2, $3] = $5
      if ($3 > runs[$1]) runs[$1] = $3
    }
    END {
      for (k = 1; k <= n; k++) {
        s = order[k]
        printf "### %s (%d rows)\n\n", s, rows[s]
        printf "| tool | runs (s) | median s | median rows/s | peak RSS MiB | CPU s |\n|---|---|---|---|---|---|\n"
        for (x = 1; x <= ntools[s]; x++) {
          key = s SUBSEP tool[s, x]
          rate[x] = rows[s] / median(secs[key])
          printf "| %s | %s | %.3f | %.0f | %.1f | %.2f |\n", tool[s, x], secs[key], median(secs[key]), rate[x], median(rss[key]) / 1024, median(cpu[key])
        }
        printf "\n"
        for (x = 1; x <= ntools[s]; x++) {
          if (tool[s, x] !~ /^faucet/) continue
          for (y = 1; y <= ntools[s]; y++) {
            if (tool[s, y] ~ /^faucet/) continue
            if (tool[s, y] ~ /^writing/) continue  # a part of the work, not a rival
            # a baseline only against the faucet run of the same variant
            if (tool[s, y] ~ /^baseline/ && substr(tool[s, y], 9) != substr(tool[s, x], 7)) continue
            pr = ""
            for (r = 1; r <= runs[s]; r++) pr = pr (pr == "" ? "" : " ") sprintf("%.2f", t[s, tool[s, y], r] / t[s, tool[s, x], r])
            printf "- %s / %s: **%.2f** (ratio of medians); per run: %s (median %.2f)\n", tool[s, x], tool[s, y], rate[x] / rate[y], pr, median(pr)
          }
        }
        printf "\n"
      }
    }' "$RESULTS"
  # What the walsender, the machine and the applies' destinations did over each run (SHARES);
  # then, for the applies, the CPU a live run must fit in on this machine's cores, from the
  # same runs (their seconds and faucet's CPU from RESULTS, read first).
  [[ -s $SHARES ]] && awk -F'\t' -v cores="$(nproc)" "$AWK_MEDIAN"'
    function col(list) { return list ~ /-/ ? "-" : sprintf("%.2f", median(list)) }
    FNR == NR {
      if ($1 !~ /^apply-/) next
      key = $1 SUBSEP $2
      if (!(key in secs) && $2 ~ /^faucet/) faucets[$1] = faucets[$1] (faucets[$1] == "" ? "" : SUBSEP) $2
      secs[key] = secs[key] (secs[key] == "" ? "" : " ") $5
      cpu[key] = cpu[key] (cpu[key] == "" ? "" : " ") $7
      next
    }
    {
      if (!($1 in ntools)) { order[++n] = $1; ntools[$1] = 0 }
      key = $1 SUBSEP $2
      if (!(key in ws)) tool[$1, ++ntools[$1]] = $2
      ws[key] = ws[key] (ws[key] == "" ? "" : " ") $4
      busy[key] = busy[key] (busy[key] == "" ? "" : " ") $5
      dc[key] = dc[key] (dc[key] == "" ? "" : " ") $6
      if ($6 != "-") hasdest[$1] = 1
    }
    END {
      for (k = 1; k <= n; k++) {
        s = order[k]
        printf "### %s: the walsender%s and the machine over each run\n\n", s, s in hasdest ? ", the destination" : ""
        printf "| tool | walsender CPU s | median | cores busy (of %d) | median |%s\n|---|---|---|---|---|%s\n", cores,
          s in hasdest ? " destination CPU s | median |" : "", s in hasdest ? "---|---|" : ""
        for (x = 1; x <= ntools[s]; x++) {
          key = s SUBSEP tool[s, x]
          printf "| %s | %s | %s | %s | %s |", tool[s, x], ws[key], col(ws[key]), busy[key], col(busy[key])
          if (s in hasdest) printf " %s | %s |", dc[key], col(dc[key])
          printf "\n"
        }
        printf "\n"
      }
      for (k = 1; k <= n; k++) {
        s = order[k]
        if (!(s in faucets) || !((s, "drain") in ws) || !((s, "replay (applying alone)") in dc)) continue
        w = median(ws[s, "drain"]); d = median(dc[s, "replay (applying alone)"])
        limit = median(secs[s, "drain"]); r = median(secs[s, "replay (applying alone)"]); if (r > limit) limit = r
        printf "### %s: the CPU a live run must fit in (medians)\n\n", s
        printf "| tool | walsender, decoding alone (drain) s | destination, applying alone (replay) s | faucet s | at best on %d cores s | walsender, destination in the run s | at best from the run'"'"'s CPU s | both halves at once s | 0.95 of the limit needs s | took s |\n|---|---|---|---|---|---|---|---|---|---|\n", cores
        both = (s, "drain and replay at once") in secs ? sprintf("%.3f", median(secs[s, "drain and replay at once"])) : "-"
        m = split(faucets[s], f, SUBSEP)
        for (x = 1; x <= m; x++) {
          c = median(cpu[s, f[x]]); rw = median(ws[s, f[x]]); rd = median(dc[s, f[x]])
          rb = (rw + rd + c) / cores; if (rw > rb) rb = rw
          printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f, %.2f | %.2f | %s | %.2f | %.3f |\n", f[x], w, d, c, (w + d + c) / cores, rw, rd, rb, both, limit / 0.95, median(secs[s, f[x]])
        }
        printf "\n"
        told = 1
      }
      if (told) printf "\"At best\": the three CPU times over the cores, as if every core were busy throughout and nothing cost more for sharing them (SQLite works inside faucet: its CPU is in faucet'"'"'s). When it is above \"0.95 of the limit needs\", reaching 0.95 of the limit on this machine would need these processes to take less CPU than they took alone. \"From the run'"'"'s CPU\": the same with the walsender'"'"'s and the destination'"'"'s CPU over the faucet runs (sharing the cores, each took more than alone), or the walsender'"'"'s alone when larger (one process: it runs on one core at a time): above \"needs\", no scheduling of runs that took these medians could have reached 0.95. \"Both halves at once\": drain and the replay started together, nothing between them, each flat out (the time until both ended): how much the two halves crowd each other on this machine; a reference, not a bound (a pipeline whose halves pace each other can do better).\n\n"
    }' "$RESULTS" "$SHARES"
  if ((${#MT_RSS_NOTES[@]})); then
    echo "### tables-rss: notes"
    echo
    printf -- '- %s\n' "${MT_RSS_NOTES[@]}"
    echo
  fi
}

for scenario in "${SCENARIOS[@]}"; do
  case $scenario in
  cdc) bench_cdc ;;
  mysql-cdc) bench_mysql_cdc ;;
  kafka) bench_kafka ;;
  metrics) bench_metrics ;;
  apply)
    read -ra APPLY_DESTS <<<"${BENCH_APPLY_DESTS:-postgres sqlite mysql}"
    bench_apply
    ;;
  kafka-apply)
    # With apply, its rounds run among apply's.
    if [[ " ${SCENARIOS[*]} " != *" apply "* ]]; then
      APPLY_DESTS=(postgres)
      bench_apply
    fi
    ;;
  snapshot) bench_snapshot ;;
  copy) bench_copy ;;
  tables-load) bench_tables_load ;;
  tables-stream) bench_tables_stream ;;
  tables-rss) bench_tables_rss ;;
  *) echo "bench: unknown scenario '$scenario' (cdc, mysql-cdc, kafka, kafka-apply, metrics, apply, snapshot, copy, tables, tables-load, tables-stream, tables-rss)" >&2; exit 2 ;;
  esac
done
if [[ -n ${BENCH_OUT:-} ]]; then report | tee "$BENCH_OUT"; else report; fi
