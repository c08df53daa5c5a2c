#!/usr/bin/env bash
# `make torture`: the long torture run, against a throwaway PostgreSQL, MariaDB and Kafka broker
# started here and stopped on exit. Runs faucet_torture for each destination in turn (the four
# single-table ones, then the multi-table mirror into Postgres and into SQLite, then the mirror
# from MariaDB into Postgres) and prints their result lines.
#
#   tests/torture/run.sh BUILD_DIR [KILLS]      # KILLS per destination, default 100
#   TORTURE_ARGS='--rate=3000 --seed=7' tests/torture/run.sh build/release 30
set -euo pipefail
build=${1:?usage: tests/torture/run.sh BUILD_DIR [KILLS]}
kills=${2:-100}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
driver=$build/tests/torture/faucet_torture
[[ -x $driver ]] || { echo "run.sh: $driver not built (make build)" >&2; exit 2; }

export FAUCET_SERVICES_DIR=${FAUCET_SERVICES_DIR:-/tmp/faucet-services-torture-$$}
trap 'bash "$root/scripts/services.sh" stop >/dev/null 2>&1 || true' EXIT
# An assignment, so that a failed start stops the script (a failing eval "$(...)" does not).
services_env=$(bash "$root/scripts/services.sh" start pg mysql kafka)
eval "$services_env"

logs=$(mktemp -d "${TMPDIR:-/tmp}/faucet-torture.XXXXXX")
status=0
results=()
start=$(date +%s)
# Each entry: a log name and the driver's destination flags. The multi-table mirror
# (mirror.tables) runs 8 tables into each SQL sink; mariadb-source is a mysql-cdc mirror.
runs=(
  "postgres --dest=postgres"
  "sqlite --dest=sqlite"
  "jsonl --dest=jsonl"
  "kafka --dest=kafka"
  "mirror-tables-postgres --dest=mirror-tables --sink=postgres --tables=8"
  "mirror-tables-sqlite --dest=mirror-tables --sink=sqlite --tables=8"
  "mariadb-source --source=mariadb --dest=postgres"
)
for run in "${runs[@]}"; do
  read -r name flags <<<"$run"
  t0=$(date +%s)
  # shellcheck disable=SC2086 # flags and TORTURE_ARGS are lists of flags
  "$driver" $flags --kills="$kills" ${TORTURE_ARGS:-} 2>&1 | tee "$logs/$name.log" ||
    status=1
  results+=("$(grep '^torture: dest=' "$logs/$name.log" | tail -n1 || echo "torture: $name FAILED (no result line)") ($(($(date +%s) - t0)) s)")
done
echo
echo "torture: $kills kills per destination, $(($(date +%s) - start)) s in all; logs in $logs"
printf '%s\n' "${results[@]}"
exit $status
