#!/usr/bin/env bash
# The demo: a throwaway Postgres with a filled table is mirrored into SQLite (the embedded
# default) and into a second Postgres database; the source changes while the mirrors stream,
# one mirror is killed with SIGKILL and restarted, and at the end all three agree. Then a whole
# schema is mirrored over one slot (mirror.tables), a table is added while it runs, and its
# per-table status is shown.
# Usage: scripts/demo.sh PATH_TO_FAUCET
set -euo pipefail
faucet=$(realpath "${1:?usage: scripts/demo.sh PATH_TO_FAUCET}")
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d /tmp/faucet-demo.XXXXXX)
chmod 755 "$dir"  # the postgres user runs the server below it
export FAUCET_SERVICES_DIR="$dir/services"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bash "$repo/scripts/services.sh" stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
cd "$dir"

say() { printf '\n== %s\n' "$*"; }

say "starting a throwaway PostgreSQL 15 (wal_level=logical) on 127.0.0.1"
# An assignment, so that a failed start stops the script (a failing eval "$(...)" does not).
services_env=$(bash "$repo/scripts/services.sh" start pg)
eval "$services_env"
src=$FAUCET_TEST_PG_URL
dest=${src%/*}/demo_dest
export SOURCE_PG_URL=$src DEST_PG_URL=$dest SQLITE_PATH=$dir/orders.db

say "source: public.orders with 200,000 rows, and a publication"
psql -q "$src" <<'SQL'
CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(12,2),
                     status text, note text);
INSERT INTO orders SELECT g, 'customer-' || (g % 5000), round((g % 1000) * 1.37, 2), 'new',
                          CASE WHEN g % 1000 = 0 THEN repeat(md5(g::text), 300) END
FROM generate_series(1, 200000) g;
ANALYZE orders;
CREATE PUBLICATION orders_pub FOR TABLE orders;
CREATE DATABASE demo_dest;
SQL
ddl='CREATE TABLE orders (id int PRIMARY KEY, customer text NOT NULL, amount numeric(12,2), status text, note text)'
psql -q "$dest" -c "$ddl"
sqlite3 "$SQLITE_PATH" "$ddl"

cp "$repo"/examples/mirror_postgres_to_*.yaml "$repo"/examples/mirror_schema_to_postgres.yaml .
"$faucet" validate mirror_postgres_to_sqlite.yaml
"$faucet" validate mirror_postgres_to_postgres.yaml

say "starting two mirrors: snapshot, then stream (continuous)"
"$faucet" mirror mirror_postgres_to_sqlite.yaml 2> sqlite.log & pids+=($!)
"$faucet" mirror mirror_postgres_to_postgres.yaml 2> postgres.log & pids+=($!)

wait_phase() {  # config phase
  for _ in $(seq 1 300); do
    "$faucet" mirror status --json "$1" 2>/dev/null | grep -q "\"phase\": \"$2\"" && return 0
    sleep 0.2
  done
  echo "timed out waiting for $1 to reach $2"; exit 1
}
wait_phase mirror_postgres_to_sqlite.yaml cdc
wait_phase mirror_postgres_to_postgres.yaml cdc
grep -h "snapshot:" sqlite.log postgres.log | sed 's/^/   /'

say "changing the source while the mirrors stream: updates, deletes, inserts, a key change"
psql -q "$src" <<'SQL'
UPDATE orders SET status = 'paid', amount = amount + 1 WHERE id % 7 = 0;
DELETE FROM orders WHERE id % 11 = 0;
INSERT INTO orders SELECT g, 'late-' || g, 9.99, 'new', NULL FROM generate_series(200001, 210000) g;
UPDATE orders SET id = 300000 WHERE id = 1000;   -- a primary-key change of a row with a TOASTed note
UPDATE orders SET status = 'shipped' WHERE id BETWEEN 5000 AND 6000;
SQL

say "SIGKILL the Postgres mirror mid-stream, more changes, then restart it"
kill -9 "${pids[1]}"; wait "${pids[1]}" 2>/dev/null || true
psql -q "$src" -c "UPDATE orders SET note = 'after the kill' WHERE id % 13 = 0"
"$faucet" mirror mirror_postgres_to_postgres.yaml 2>> postgres.log & pids[1]=$!

say "waiting for both destinations to match the source"
row="id || ':' || customer || ':' || coalesce(amount::text, '~') || ':' || coalesce(status, '~') || ':' || coalesce(md5(note), '~')"
src_sum() { psql -Atc "SELECT count(*) || ' rows, ' || md5(string_agg($row, ',' ORDER BY id)) FROM orders" "$1"; }
sqlite_sum() {
  local text; text=$(sqlite3 "$SQLITE_PATH" "SELECT group_concat(r, ',') FROM (SELECT id || ':' || customer || ':' || coalesce(printf('%.2f', amount), '~') || ':' || coalesce(status, '~') || ':' || coalesce(note, '~') AS r FROM orders ORDER BY id)")
  echo "$(sqlite3 "$SQLITE_PATH" 'SELECT count(*) FROM orders') rows, $(printf '%s' "$text" | md5sum | cut -c1-32)"
}
pg_text_sum() {  # the same rendering as sqlite_sum, computed by Postgres
  local text; text=$(psql -Atc "SELECT string_agg(id || ':' || customer || ':' || coalesce(to_char(amount, 'FM999999990.00'), '~') || ':' || coalesce(status, '~') || ':' || coalesce(note, '~'), ',' ORDER BY id) FROM orders" "$1")
  echo "$(psql -Atc 'SELECT count(*) FROM orders' "$1") rows, $(printf '%s' "$text" | md5sum | cut -c1-32)"
}
for _ in $(seq 1 120); do
  if [ "$(src_sum "$src")" = "$(src_sum "$dest")" ] && [ "$(pg_text_sum "$src")" = "$(sqlite_sum)" ]; then break; fi
  sleep 0.5
done
printf '   %-22s %s\n' "source (postgres)" "$(src_sum "$src")" "mirror (postgres)" "$(src_sum "$dest")"
printf '   %-22s %s\n' "source, as text" "$(pg_text_sum "$src")" "mirror (sqlite)" "$(sqlite_sum)"

say "mirror status"
"$faucet" mirror status mirror_postgres_to_postgres.yaml | sed 's/^/   /'

if [ "$(src_sum "$src")" != "$(src_sum "$dest")" ] || [ "$(pg_text_sum "$src")" != "$(sqlite_sum)" ]; then
  echo "MISMATCH: see $dir/*.log"; exit 1
fi
say "both destinations equal the source (logs in $dir); stopping the mirrors with SIGTERM"

say "a whole schema over one slot: shop.customers, shop.products, shop.order_lines (partitioned), shop.events (no key)"
psql -q "$src" <<'SQL'
CREATE SCHEMA shop;
CREATE TABLE shop.customers (id int PRIMARY KEY, name text NOT NULL, city text);
CREATE TABLE shop.products (sku text PRIMARY KEY, title text, price numeric(10,2));
CREATE TABLE shop.order_lines (order_id int, line int, sku text, qty int, PRIMARY KEY (order_id, line))
  PARTITION BY RANGE (order_id);
CREATE TABLE shop.order_lines_1 PARTITION OF shop.order_lines FOR VALUES FROM (MINVALUE) TO (50000);
CREATE TABLE shop.order_lines_2 PARTITION OF shop.order_lines FOR VALUES FROM (50000) TO (MAXVALUE);
CREATE TABLE shop.events (at timestamptz DEFAULT now(), what text);
INSERT INTO shop.customers SELECT g, 'customer-' || g, 'city-' || (g % 50) FROM generate_series(1, 20000) g;
INSERT INTO shop.products SELECT 'sku-' || g, 'product ' || g, (g % 500) + 0.99 FROM generate_series(1, 5000) g;
INSERT INTO shop.order_lines SELECT g / 3, g % 3, 'sku-' || (g % 5000 + 1), g % 7 + 1 FROM generate_series(1, 150000) g;
INSERT INTO shop.events (what) SELECT 'seeded' FROM generate_series(1, 100);
ANALYZE;
CREATE PUBLICATION shop_pub FOR TABLES IN SCHEMA shop;
SQL
psql -q "$dest" <<'SQL'
CREATE TABLE shop_customers (id int PRIMARY KEY, name text NOT NULL, city text);
CREATE TABLE shop_products (sku text PRIMARY KEY, title text, price numeric(10,2));
CREATE TABLE shop_order_lines (order_id int, line int, sku text, qty int, PRIMARY KEY (order_id, line));
CREATE TABLE shop_reviews (id int PRIMARY KEY, sku text, stars int);
SQL
"$faucet" validate mirror_schema_to_postgres.yaml
"$faucet" mirror mirror_schema_to_postgres.yaml 2> shop.log & pids+=($!)
wait_tables() {  # count phase: until `count` tables are in `phase`
  for _ in $(seq 1 300); do
    [ "$("$faucet" mirror status --json mirror_schema_to_postgres.yaml 2>/dev/null | grep -c "\"phase\": \"$2\"")" -ge "$1" ] && return 0
    sleep 0.2
  done
  echo "timed out waiting for $1 tables to be $2"; exit 1
}
wait_tables 3 active
grep -h "snapshotted" shop.log | sed 's/^/   /'

say "changes on every table, a table created while the mirror runs (shop.reviews), and a column added (shop.customers.email, schema: evolve)"
psql -q "$src" <<'SQL'
UPDATE shop.customers SET city = 'moved' WHERE id % 9 = 0;
ALTER TABLE shop.customers ADD COLUMN email text;
UPDATE shop.customers SET email = 'c' || id || '@example.com' WHERE id % 7 = 0;
DELETE FROM shop.products WHERE price < 2;
UPDATE shop.order_lines SET order_id = order_id + 60000 WHERE order_id % 1000 = 0;  -- moves rows across partitions
CREATE TABLE shop.reviews (id int PRIMARY KEY, sku text, stars int);
INSERT INTO shop.reviews SELECT g, 'sku-' || g, g % 5 + 1 FROM generate_series(1, 500) g;
SQL
wait_tables 4 active

tsum() {  # url table key: count and an md5 of its rows, computed by Postgres
  psql -Atc "SELECT count(*) || ' rows, ' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text COLLATE \"C\"), '')) FROM $2 t" "$1"
}
for _ in $(seq 1 120); do
  same=1
  for t in customers products order_lines reviews; do
    [ "$(tsum "$src" "shop.$t")" = "$(tsum "$dest" "shop_$t")" ] || same=0
  done
  [ $same = 1 ] && break
  sleep 0.5
done
for t in customers products order_lines reviews; do
  printf '   %-18s source %-40s mirror %s\n' "$t" "$(tsum "$src" "shop.$t")" "$(tsum "$dest" "shop_$t")"
done
grep -h "on_drift: evolve" shop.log | sed 's/^/   /'

say "faucet mirror status mirror_schema_to_postgres.yaml"
"$faucet" mirror status mirror_schema_to_postgres.yaml | sed 's/^/   /'
[ $same = 1 ] || { echo "MISMATCH: see $dir/shop.log"; exit 1; }
say "every table equals its source, through one slot:"
psql -Atc "SELECT slot_name || ' at ' || confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'shop_to_postgres'" "$src" | sed 's/^/   /'
