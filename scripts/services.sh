#!/usr/bin/env bash
# Throwaway database servers for faucet's integration tests, all on 127.0.0.1.
#
#   scripts/services.sh start [pg] [mysql] [redis] [kafka]   # default: all four
#   scripts/services.sh env                          # env lines of the current run
#   scripts/services.sh status
#   scripts/services.sh stop [--all]
#
# `start` makes a fresh run dir under ${FAUCET_SERVICES_DIR:-/tmp/faucet-services}, starts
# each server on a free port with its data, socket and log inside it, and prints
#   export FAUCET_TEST_..._URL=...
# lines (also saved as <rundir>/env), so `eval "$(scripts/services.sh start)"` works.
# Nothing but those lines goes to stdout; logs stay in the run dir.
#
# The "current run" is $FAUCET_SERVICES_RUN_DIR if set (i.e. the run this shell eval'ed),
# else the newest run started (<base>/current). Several runs may coexist: ports are
# claimed atomically so concurrent starts never collide. `stop --all` stops every run.
set -euo pipefail

# Absolute and symlink-free: pids are matched to a run by their cwd, which the kernel
# reports resolved.
BASE=$(realpath -m "${FAUCET_SERVICES_DIR:-/tmp/faucet-services}")
PG_BIN=${FAUCET_PG_BIN:-/usr/lib/postgresql/15/bin}
# Port claims are machine-wide, not per base dir: runs under different bases (scripts/test.sh
# uses one per test run) must not collide either.
PORTS=${FAUCET_SERVICES_PORTS_DIR:-/tmp/faucet-services-ports}
ALL_SERVICES=(pg mysql redis kafka)

log() { echo "services: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}
now_ms() { date +%s%3N; }

# --- helpers ------------------------------------------------------------------------------

# Run a command as the postgres user when we are root (postgres refuses to run as root);
# as ourselves otherwise. cd / first so an unreadable cwd (e.g. /root) causes no warnings.
as_pg() {
  if ((EUID == 0)); then
    (cd / && runuser -u postgres -- "$@")
  else
    (cd / && "$@")
  fi
}

# Pick a free TCP port on 127.0.0.1 and claim it for run dir $1. The claim is a directory
# under $PORTS (mkdir is atomic), so two concurrent starts cannot pick the same port even
# before either server has bound it. Claims are released by `stop`, and claims of run dirs
# that no longer exist are swept on `start`.
claim_port() {
  local run=$1 port tries
  for ((tries = 0; tries < 200; tries++)); do
    # 20000-31999: below Linux's ephemeral range (32768+), so an outgoing connection
    # cannot grab the port between our check and the server's bind.
    port=$((20000 + RANDOM % 12000))
    if [[ -n $(ss -Htln "sport = :$port" 2>/dev/null) ]]; then continue; fi
    if mkdir "$PORTS/$port" 2>/dev/null; then
      echo "$run" >"$PORTS/$port/owner"
      echo "$port" >>"$run/ports"
      echo "$port"
      return 0
    fi
  done
  die "no free port found"
}

sweep_stale_claims() {
  local d owner
  for d in "$PORTS"/*/; do
    [[ -d $d ]] || continue
    owner=$(cat "$d/owner" 2>/dev/null || true)
    # A claim being written right now has no owner file yet: leave it alone.
    if [[ -n $owner && ! -d $owner ]]; then rm -rf "$d" 2>/dev/null || true; fi
  done
}

release_ports() {
  local run=$1 port
  [[ -f $run/ports ]] || return 0
  while read -r port; do
    if [[ -n $port ]]; then rm -rf "${PORTS:?}/$port" 2>/dev/null || true; fi
  done <"$run/ports"
}

# Wait until "$@" succeeds (every 50 ms) for at most $timeout seconds.
wait_for() {
  local timeout=$1
  shift
  local deadline=$(($(now_ms) + timeout * 1000))
  until "$@" >/dev/null 2>&1; do
    (($(now_ms) < deadline)) || return 1
    sleep 0.05
  done
}

# True if pid $1 is alive and is one of our servers of run dir $2 (its cwd is inside it).
# Guards against killing an unrelated process that reused a stale pid.
is_ours() {
  local pid=$1 run=$2 cwd
  [[ -n $pid && -d /proc/$pid ]] || return 1
  cwd=$(readlink "/proc/$pid/cwd" 2>/dev/null) || return 1
  [[ $cwd == "$run"/* ]]
}

current_run() {
  local run=${FAUCET_SERVICES_RUN_DIR:-}
  if [[ -z $run && -L $BASE/current ]]; then run=$(readlink "$BASE/current"); fi
  [[ -n $run && -d $run ]] || return 1
  echo "$run"
}

# pid of each service of a run (empty if unknown)
pid_of() {
  local run=$1 svc=$2
  case $svc in
  pg) head -n1 "$run/pg/data/postmaster.pid" 2>/dev/null || true ;;
  mysql) cat "$run/mysql/mariadbd.pid" 2>/dev/null || true ;;
  redis) cat "$run/redis/redis.pid" 2>/dev/null || true ;;
  kafka) cat "$run/kafka/broker.pid" 2>/dev/null || true ;;
  esac
}

# --- PostgreSQL ---------------------------------------------------------------------------

start_pg() {
  local run=$1 port=$2 dir=$1/pg
  local data=$dir/data
  [[ -x $PG_BIN/postgres ]] || die "PostgreSQL not found in $PG_BIN (run scripts/install-deps.sh)"
  mkdir -p "$dir"
  if ((EUID == 0)); then chown postgres: "$dir"; fi
  # --no-sync: a throwaway cluster needs no fsync of the initial files (saves ~1 s).
  as_pg "$PG_BIN/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 \
    --locale=C.UTF-8 --no-sync --no-instructions >"$dir/initdb.log" 2>&1 ||
    { tail -n 20 "$dir/initdb.log" >&2; die "initdb failed (log: $dir/initdb.log)"; }
  # Later settings win over initdb's defaults. Durability is off: data is thrown away.
  cat >>"$data/postgresql.conf" <<CONF

# --- scripts/services.sh ---
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
wal_sender_timeout = 60s
max_connections = 200
shared_buffers = 256MB
fsync = off
synchronous_commit = off
full_page_writes = off
CONF
  # Trust everything on loopback, replication connections included.
  cat >"$data/pg_hba.conf" <<CONF
local all         all              trust
local replication all              trust
host  all         all 127.0.0.1/32 trust
host  replication all 127.0.0.1/32 trust
CONF
  as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 start >"$dir/pg_ctl.log" 2>&1 ||
    { tail -n 20 "$dir/postgres.log" >&2; die "postgres failed to start (log: $dir/postgres.log)"; }
  as_pg "$PG_BIN/psql" -h "$dir" -p "$port" -U postgres -d postgres -qAt -v ON_ERROR_STOP=1 \
    >>"$dir/setup.log" 2>&1 <<'SQL' || die "postgres setup failed (log: $dir/setup.log)"
CREATE ROLE faucet WITH LOGIN SUPERUSER REPLICATION PASSWORD 'faucet';
CREATE DATABASE faucet OWNER faucet;
SQL
  cat >>"$run/env" <<ENV
export FAUCET_TEST_PG_URL=postgres://faucet:faucet@127.0.0.1:$port/faucet
export FAUCET_TEST_PG_PORT=$port
export FAUCET_TEST_PG_BIN=$PG_BIN
ENV
}

# --- MariaDB ------------------------------------------------------------------------------

start_mysql() {
  local run=$1 port=$2 dir=$1/mysql
  local server
  server=$(command -v mariadbd || command -v /usr/sbin/mariadbd || command -v mysqld ||
    command -v /usr/sbin/mysqld) || die "mariadbd not found (run scripts/install-deps.sh)"
  mkdir -p "$dir/data" "$dir/tmp"
  # Our own option file, read with --defaults-file so /etc/mysql/*.cnf cannot interfere.
  cat >"$dir/my.cnf" <<CONF
[mariadbd]
datadir = $dir/data
tmpdir = $dir/tmp
socket = $dir/mysqld.sock
pid-file = $dir/mariadbd.pid
log-error = $dir/mariadbd.log
port = $port
bind-address = 127.0.0.1
skip-name-resolve
# CDC source: row-based binlog with full images and column metadata.
server_id = 1
log_bin = $dir/data/binlog
binlog_format = ROW
binlog_row_image = FULL
binlog_row_metadata = FULL
# Throwaway server: trade durability for speed.
innodb_flush_log_at_trx_commit = 2
sync_binlog = 0
innodb_doublewrite = 0
innodb_buffer_pool_size = 128M
character-set-server = utf8mb4
collation-server = utf8mb4_general_ci
max_connections = 200

[client]
socket = $dir/mysqld.sock
CONF
  # Run the server as the mysql user when root (mariadbd refuses root without --user=root).
  local user=()
  if ((EUID == 0)); then
    chown -R mysql: "$dir"
    user=(--user=mysql)
  fi
  mariadb-install-db --defaults-file="$dir/my.cnf" "${user[@]}" \
    --auth-root-authentication-method=normal --skip-test-db >"$dir/install-db.log" 2>&1 ||
    { tail -n 20 "$dir/install-db.log" >&2; die "mariadb-install-db failed (log: $dir/install-db.log)"; }
  # Detach with setsid -f (fork, new session) and redirect every fd: no process of ours may
  # keep the caller's stdout open, or `eval "$(services.sh start)"` would wait forever.
  (cd "$dir/data" && exec setsid -f "$server" --defaults-file="$dir/my.cnf" "${user[@]}" \
    </dev/null >>"$dir/mariadbd.log" 2>&1)
  wait_for 60 mariadb-admin --defaults-file="$dir/my.cnf" -uroot ping ||
    { tail -n 20 "$dir/mariadbd.log" >&2; die "mariadbd failed to start (log: $dir/mariadbd.log)"; }
  # 'faucet'@'localhost' too, for socket connections (skip-name-resolve makes '%' TCP-only
  # in practice). ALL PRIVILEGES already includes the replication ones; named for clarity.
  local sql="
    CREATE USER 'faucet'@'%' IDENTIFIED BY 'faucet';
    CREATE USER 'faucet'@'127.0.0.1' IDENTIFIED BY 'faucet';
    CREATE USER 'faucet'@'localhost' IDENTIFIED BY 'faucet';
    GRANT ALL PRIVILEGES ON *.* TO 'faucet'@'%', 'faucet'@'127.0.0.1', 'faucet'@'localhost'
      WITH GRANT OPTION;
    GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.*
      TO 'faucet'@'%', 'faucet'@'127.0.0.1', 'faucet'@'localhost';
    CREATE DATABASE faucet;"
  mariadb --defaults-file="$dir/my.cnf" -uroot -e "$sql" >>"$dir/setup.log" 2>&1 ||
    die "mariadb setup failed (log: $dir/setup.log)"
  cat >>"$run/env" <<ENV
export FAUCET_TEST_MYSQL_URL=mysql://faucet:faucet@127.0.0.1:$port/faucet
export FAUCET_TEST_MYSQL_PORT=$port
ENV
}

# --- Redis --------------------------------------------------------------------------------

start_redis() {
  local run=$1 port=$2 dir=$1/redis
  command -v redis-server >/dev/null || die "redis-server not found (run scripts/install-deps.sh)"
  mkdir -p "$dir"
  # No persistence at all, daemonized, everything in the run dir.
  cat >"$dir/redis.conf" <<CONF
bind 127.0.0.1
port $port
dir $dir
daemonize yes
pidfile $dir/redis.pid
logfile $dir/redis.log
appendonly no
save ""
CONF
  (cd "$dir" && redis-server "$dir/redis.conf" </dev/null >>"$dir/redis.log" 2>&1)
  wait_for 30 redis-cli -h 127.0.0.1 -p "$port" ping ||
    { tail -n 20 "$dir/redis.log" >&2; die "redis failed to start (log: $dir/redis.log)"; }
  echo "export FAUCET_TEST_REDIS_URL=redis://127.0.0.1:$port" >>"$run/env"
}

# --- Kafka --------------------------------------------------------------------------------

# A single-node KRaft broker (scripts/kafka/broker.sh: jars from Maven Central, cached), its
# controller on a second claimed port and its SASL listener on a third.
start_kafka() {
  local run=$1 port=$2 controller_port sasl_port
  command -v java >/dev/null || die "java not found (run scripts/install-deps.sh)"
  controller_port=$(claim_port "$run")
  sasl_port=$(claim_port "$run")
  bash "$(dirname "${BASH_SOURCE[0]}")/kafka/broker.sh" start "$run/kafka" "$port" \
    "$controller_port" "$sasl_port" >/dev/null
  echo "export FAUCET_TEST_KAFKA_BROKERS=127.0.0.1:$port" >>"$run/env"
  # The same broker through SASL/PLAIN (user faucet, password faucet-test-secret).
  echo "export FAUCET_TEST_KAFKA_SASL_BROKERS=127.0.0.1:$sasl_port" >>"$run/env"
}

# --- commands -----------------------------------------------------------------------------

cmd_start() {
  local services=("$@") s
  ((${#services[@]})) || services=("${ALL_SERVICES[@]}")
  for s in "${services[@]}"; do
    [[ " ${ALL_SERVICES[*]} " == *" $s "* ]] || die "unknown service '$s' (known: ${ALL_SERVICES[*]})"
  done
  local t0
  t0=$(now_ms)
  mkdir -p "$BASE" "$PORTS"
  chmod 755 "$BASE" 2>/dev/null || true
  chmod 1777 "$PORTS" 2>/dev/null || true # shared by all users, like /tmp
  sweep_stale_claims
  local run tries=0
  # Retried: a concurrent `stop` may remove the (then empty) base dir under us.
  until run=$(mktemp -d "$BASE/run.XXXXXX" 2>/dev/null); do
    ((++tries < 5)) || die "cannot create a run dir under $BASE"
    mkdir -p "$BASE"
  done
  # The postgres and mysql users must be able to reach their dirs inside the run dir.
  chmod 755 "$run"
  if ((EUID == 0)) && [[ " ${services[*]} " == *" pg "* ]] &&
    ! runuser -u postgres -- test -x "$run"; then
    rm -rf "$run"
    die "user postgres cannot reach $run; set FAUCET_SERVICES_DIR to a world-searchable dir"
  fi
  : >"$run/env"
  printf '%s\n' "${services[@]}" >"$run/services"
  # On any failure or signal: let the parallel starters finish (so nothing is still being
  # created), then tear down what was started: a failed start leaves nothing behind.
  trap 'log "start failed; cleaning up $run"; wait; stop_run "$run" || true' EXIT

  # Claim all ports first (sequentially), then start the servers in parallel: initdb and
  # mariadb-install-db dominate the time and are independent.
  declare -A port
  for s in "${services[@]}"; do port[$s]=$(claim_port "$run"); done
  local pids=() failed=0 p
  for s in "${services[@]}"; do
    # (Not `start_x && log`: that would disable set -e inside start_x.)
    (
      "start_$s" "$run" "${port[$s]}"
      log "$s ready on 127.0.0.1:${port[$s]} after $(($(now_ms) - t0)) ms"
    ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  ((failed == 0)) || exit 1

  # Env file in a fixed order, whatever order the servers came up in.
  {
    grep '_PG_' "$run/env" || true
    grep '_MYSQL_' "$run/env" || true
    grep '_REDIS_' "$run/env" || true
    grep '_KAFKA_' "$run/env" || true
    echo "export FAUCET_SERVICES_RUN_DIR=$run"
  } >"$run/env.sorted"
  mv "$run/env.sorted" "$run/env"
  ln -sfn "$run" "$BASE/current"
  trap - EXIT
  log "started ${services[*]} in $(($(now_ms) - t0)) ms (run dir $run)"
  cat "$run/env"
}

# Stop every server of a run dir, release its ports and remove it.
stop_run() {
  local run=$1 svc pid
  local -a pids=()
  [[ -d $run ]] || return 0
  for svc in "${ALL_SERVICES[@]}"; do
    pid=$(pid_of "$run" "$svc")
    is_ours "$pid" "$run" || continue
    # postgres: SIGINT = fast shutdown (SIGTERM would wait for clients to disconnect).
    if [[ $svc == pg ]]; then kill -INT "$pid" 2>/dev/null || true; else kill -TERM "$pid" 2>/dev/null || true; fi
    pids+=("$pid")
  done
  # Wait up to 15 s for a clean exit, then kill what is left.
  local deadline=$(($(now_ms) + 15000)) alive
  while :; do
    alive=()
    for pid in "${pids[@]}"; do is_ours "$pid" "$run" && alive+=("$pid"); done
    ((${#alive[@]})) || break
    if (($(now_ms) >= deadline)); then
      log "killing unresponsive servers: ${alive[*]}"
      kill -KILL "${alive[@]}" 2>/dev/null || true
      sleep 0.2
      break
    fi
    sleep 0.05
  done
  release_ports "$run"
  rm -rf "$run"
  if [[ -L $BASE/current && $(readlink "$BASE/current") == "$run" ]]; then rm -f "$BASE/current"; fi
  # Leave no empty base dir behind (scripts/test.sh uses one base dir per test run).
  rmdir "$BASE" 2>/dev/null || true
}

cmd_stop() {
  if [[ ${1:-} == --all ]]; then
    local run
    for run in "$BASE"/run.*/; do
      [[ -d $run ]] && stop_run "${run%/}"
    done
    rm -f "$BASE/current"
    rmdir "$BASE" 2>/dev/null || true
    return 0
  fi
  local run
  run=$(current_run) || { log "nothing running"; return 0; }
  stop_run "$run"
  log "stopped $run"
}

cmd_env() {
  local run
  run=$(current_run) || die "no current run (start one with: $0 start)"
  cat "$run/env"
}

cmd_status() {
  local run svc pid state rc=0
  local others=()
  for svc in "$BASE"/run.*/; do [[ -d $svc ]] && others+=("${svc%/}"); done
  run=$(current_run) || {
    echo "no current run"
    ((${#others[@]} == 0)) || echo "other runs (stop with: $0 stop --all): ${others[*]}"
    return 1
  }
  echo "run dir: $run"
  while read -r svc; do
    pid=$(pid_of "$run" "$svc")
    if is_ours "$pid" "$run"; then state="running (pid $pid)"; else state="NOT running"; rc=1; fi
    printf '  %-6s %s\n' "$svc" "$state"
  done <"$run/services"
  sed -n 's/^export //p' "$run/env" | sed 's/^/  /'
  return $rc
}

case ${1:-} in
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
env) cmd_env ;;
status) cmd_status ;;
*)
  echo "usage: $0 start [pg] [mysql] [redis] [kafka] | stop [--all] | env | status" >&2
  exit 2
  ;;
esac
