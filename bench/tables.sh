# Multi-table mirror scenarios (`mirror.tables`) of bench/run.sh, which sources this file and
# provides its helpers (SRC, WORK, RUNS, ROWS, BINS/LABELS, record, now, sub, psqlq, sqlv, log,
# ROW_SQL, TABLE_COLS). Results and how to read them: BENCHMARKS.md.
#
#   tables-load    20 tables x ROWS/10 rows (source schema `s`, publication FOR TABLES IN
#                  SCHEMA s) copied by a one-shot `faucet mirror` (mirror.tables, snapshot
#                  concurrency 2) into Postgres (upsert, one destination table per source
#                  table, primary keys), beside the same 20 tables copied by 2 parallel lanes of
#                  `psql -c "COPY s.tNNN TO STDOUT" | psql -c "COPY tNNN FROM STDIN"` pipes (each
#                  lane takes 10 tables in sequence) into identical tables. faucet: from the log
#                  line "captured position" to the last "table '...' snapshotted" line (the
#                  driver notices a finished table within its 100 ms tick; the catch-up cycle and
#                  the idle wait that follow are not counted). Pipes: wall time of both lanes.
#   tables-stream  After that initial load (the slot and state of its last run, restored for
#                  each run), ROWS changes in ROWS/1000 transactions spread round-robin over the
#                  20 tables (transaction b goes to table b % 20; each table sees the apply
#                  scenario's shape: 600 inserts, 300 updates and 100 deletes of its previous
#                  transaction's rows), applied by the multi-table mirror (one-shot, resumed),
#                  beside the same workload into ONE table (schema `one`, same initial rows)
#                  applied by a single-table `faucet run` (postgres-cdc -> cdc_unwrap -> postgres
#                  upsert, the apply scenario's pipeline). Both slots exist before either
#                  workload is written, so both decode the same WAL. Time: from the process start
#                  to the moment the watcher sees the sentinel rows (id -1) in the destination;
#                  the multi-table workload's last transaction of EVERY table inserts one, and
#                  the watcher waits for all 20. Destinations are checked against the source.
#   tables-rss     Peak RSS of the multi-table mirror over BENCH_RSS_TABLES (default "20 200")
#                  tables of ROWS/1000 rows each: a one-shot initial load (with its catch-up
#                  cycle), then ROWS/10 changes in transactions of 100 rows spread round-robin
#                  over every table, applied by a resumed one-shot run, during which the
#                  destination's faucet sessions are polled every 50 ms (the peak is reported:
#                  one pool per destination, at most the sink's max_connections). A failed run
#                  is reported, not fatal.
#   tables         all three.

MT_TABLES=20
MT_ROW_SQL_Q=${ROW_SQL//\'/\'\'} # ROW_SQL inside a quoted format() string
MT_ROW_SQL_Q=${MT_ROW_SQL_Q//%/%%}

mt_name() { printf 't%03d' "$1"; }

# mt_setup SCHEMA COUNT ROWS_PER_TABLE DST_DB: COUNT source tables SCHEMA.t001.. with the big
# table's shape, a publication pub_SCHEMA FOR TABLES IN SCHEMA SCHEMA, and a destination
# database DST_DB with empty tables of the same names (and, with a 5th argument, a schema
# `pipe` with the same tables, for the COPY pipes).
mt_setup() {
  local schema=$1 count=$2 per=$3 db=$4 pipe=${5:-}
  psqlq "$SRC" <<SQL
CREATE SCHEMA $schema;
DO \$\$ BEGIN
  FOR i IN 1..$count LOOP
    EXECUTE format('CREATE TABLE $schema.%s (id bigint PRIMARY KEY, $TABLE_COLS)', 't' || lpad(i::text, 3, '0'));
    EXECUTE format('INSERT INTO $schema.%s SELECT g, $MT_ROW_SQL_Q FROM generate_series(1, $per) g', 't' || lpad(i::text, 3, '0'));
  END LOOP;
END \$\$;
CREATE PUBLICATION pub_$schema FOR TABLES IN SCHEMA $schema;
SQL
  psqlq "$SRC" -c "CREATE DATABASE $db"
  local dst=${SRC%/*}/$db
  psqlq "$dst" <<SQL
DO \$\$ BEGIN
  FOR i IN 1..$count LOOP
    EXECUTE format('CREATE TABLE %s (id bigint PRIMARY KEY, $TABLE_COLS)', 't' || lpad(i::text, 3, '0'));
  END LOOP;
END \$\$;
SQL
  if [[ -n $pipe ]]; then
    psqlq "$dst" <<SQL
CREATE SCHEMA pipe;
DO \$\$ BEGIN
  FOR i IN 1..$count LOOP
    EXECUTE format('CREATE TABLE pipe.%s (id bigint PRIMARY KEY, $TABLE_COLS)', 't' || lpad(i::text, 3, '0'));
  END LOOP;
END \$\$;
SQL
  fi
}

# SQL that truncates tables t001..tCOUNT (of schema PREFIX, e.g. "pipe.").
mt_truncate_sql() {
  local count=$1 prefix=${2:-} i list=
  for ((i = 1; i <= count; i++)); do list+="${list:+, }$prefix$(mt_name "$i")"; done
  echo "TRUNCATE $list"
}

# A query giving count and hash of every row of tables t001..tCOUNT (of schema PREFIX).
mt_hash_sql() {
  local count=$1 prefix=${2:-} i q=
  for ((i = 1; i <= count; i++)); do
    q+="${q:+ UNION ALL }SELECT '$(mt_name "$i")' AS t, hashtext(x::text)::bigint AS h FROM $prefix$(mt_name "$i") x"
  done
  echo "SELECT count(*), sum(h) FROM ($q) u"
}

# mt_yaml NAME SCHEMA DST_DB [continuous [idle_timeout]]: the multi-table mirror's config (the shape of
# tests/integration/mirror_tables_test.cc): slot mt_NAME, file state in $WORK/state-NAME.
mt_yaml() {
  local name=$1 schema=$2 db=$3
  cat <<YAML
version: 1
name: $name
pipeline:
  source:
    type: postgres-cdc
    config: { connection_url: $SRC, slot_name: mt_$name, publication_name: pub_$schema,
              idle_timeout: ${5:-2}, status_update_interval: 1 }
  transforms: [ { type: cdc_unwrap } ]
  sink:
    type: postgres
    config: { connection_url: ${SRC%/*}/$db, column_mapping: auto_map,
              delete_marker: { field: __op, values: [d] } }
  state:
    type: file
    config: { path: $WORK/state-$name }
mirror:
  mode: snapshot_then_cdc
  continuous: ${4:-false}
  snapshot:
    concurrency: 2
    source: { type: postgres, config: { connection_url: $SRC, query: 'SELECT 1' } }
  tables: { include: ['$schema.*'] }
YAML
}

# Drops slot $1 if it exists.
mt_drop_slot() {
  sqlv "$SRC" -c "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$1'" >/dev/null
}

# The log's timestamps as seconds of the day.
MT_AWK_SECS='function secs(ts) { split(substr(ts, 12, 12), p, ":"); return p[1] * 3600 + p[2] * 60 + p[3] }'

# Seconds between "captured position" and the last "table '...' snapshotted" line.
mt_load_seconds() {
  awk "$MT_AWK_SECS"'
    / captured position / { a = secs($1) }
    / snapshotted, [0-9]+ rows/ { b = secs($1); n++ }
    END { if (a == "" || b == "") exit 1; d = b - a; if (d < 0) d += 86400; printf "%.3f", d }' "$1"
}

# Where the initial load's time went (to stderr): per-table read times (from "snapshotting
# table" to its "snapshotted" line, which includes up to one 100 ms driver tick), and the gaps.
mt_load_breakdown() {
  awk "$MT_AWK_SECS"'
    / captured position / { a = secs($1) }
    / snapshotting table / { t = $0; sub(/.*snapshotting table .\047?/, "", t); sub(/\047.*/, "", t); st[t] = secs($1); if (first == "") first = secs($1) }
    / table .* snapshotted, / { t = $0; sub(/.*: table \047/, "", t); sub(/\047.*/, "", t); d = secs($1) - st[t]; sum += d; n++; if (d > mx) mx = d; if (mn == "" || d < mn) mn = d; last = secs($1) }
    / cycle ended, / { c = secs($1) }
    END {
      if (n == 0) exit 0
      printf "bench:   load breakdown: captured -> first table started %.3f s; %d tables, per table %.3f s mean (min %.3f, max %.3f), sum %.3f s (/2 lanes = %.3f s); captured -> last snapshotted %.3f s; -> catch-up cycle ended %.3f s\n", first - a, n, sum / n, mn, mx, sum, sum / 2, last - a, (c == "" ? 0 : c - a)
    }' "$1" >&2
}

# Keeps a run's log under $BENCH_LOGS (if set).
mt_keep_log() { [[ -z ${BENCH_LOGS:-} ]] || { mkdir -p "$BENCH_LOGS" && cp "$2" "$BENCH_LOGS/$1.log"; }; }

# mt_mirror_run BIN CONFIG LOG: a one-shot mirror; fails the bench on error.
mt_mirror_run() {
  /usr/bin/time -v -o "$WORK/time" "$1" mirror "$2" 2>"$3" || { tail -n 30 "$3" >&2; log "the mirror failed"; exit 1; }
}

MT_LOADED=0 # 1 once schema s is set up
MT_LOADED_BY= # the binary whose state/slot mt_s holds after its last tables-load run

mt_setup_s() {
  ((MT_LOADED)) && return 0
  local per=$((ROWS / 10))
  log "tables: $MT_TABLES tables x $per rows (and one table of $per rows for tables-stream)"
  mt_setup s "$MT_TABLES" "$per" bench_s pipe
  # The single-table comparison of tables-stream: filled now, before any slot, so its initial
  # rows are in no slot's WAL.
  # In its own source database: the slots of both decode the same WAL, but each skips the
  # other database's records cheaply (before any decoding). Its destination database is in the
  # source's server too, as the multi-table mirror's are, so that both sides compare alike.
  psqlq "$SRC" -c "CREATE DATABASE bench_one" -c "CREATE DATABASE bench_one_dst"
  psqlq "${SRC%/*}/bench_one" <<SQL
CREATE SCHEMA one;
CREATE TABLE one.t (id bigint PRIMARY KEY, $TABLE_COLS);
INSERT INTO one.t SELECT g, $ROW_SQL FROM generate_series(1, $per) g;
CREATE PUBLICATION pub_one FOR TABLE one.t;
SQL
  MT_LOADED=1
}

# One initial load of schema s by BIN (slot mt_s, state $WORK/state-s); leaves both.
mt_load_once() {
  local bin=$1 log=$2
  psqlq "${SRC%/*}/bench_s" -c "$(mt_truncate_sql "$MT_TABLES")"
  mt_drop_slot mt_s
  rm -rf "$WORK/state-s"
  mt_yaml s s bench_s >"$WORK/mt-s.yaml"
  mt_mirror_run "$bin" "$WORK/mt-s.yaml" "$log"
  MT_LOADED_BY=$bin
}

bench_tables_load() {
  mt_setup_s
  local per=$((ROWS / 10)) total=$((ROWS / 10 * MT_TABLES)) i s secs lanes expect
  local dst=${SRC%/*}/bench_s
  expect=$(sqlv "$SRC" -c "$(mt_hash_sql "$MT_TABLES" s.)")
  # The pipes: lane 1 copies t001..t010, lane 2 t011..t020, each table in sequence.
  lanes="lane() { for t in \"\$@\"; do psql -X -q -v ON_ERROR_STOP=1 '$SRC' -c \"COPY s.\$t TO STDOUT\" |
    psql -X -q -v ON_ERROR_STOP=1 '$dst' -c \"COPY pipe.\$t FROM STDIN\" || exit 1; done; }
    lane"
  local half=$((MT_TABLES / 2)) l1= l2=
  for ((i = 1; i <= MT_TABLES; i++)); do
    if ((i <= half)); then l1+=" $(mt_name "$i")"; else l2+=" $(mt_name "$i")"; fi
  done
  for ((i = 1; i <= RUNS; i++)); do
    psqlq "$dst" -c "$(mt_truncate_sql "$MT_TABLES" pipe.)"
    s=$(now)
    /usr/bin/time -v -o "$WORK/time" bash -c "$lanes$l1 & p1=\$!; $lanes$l2 & p2=\$!; wait \$p1 && wait \$p2"
    record tables-load "COPY pipes x2" "$i" "$total" "$(sub "$(now)" "$s")" "$WORK/time"
    [[ $(sqlv "$dst" -c "$(mt_hash_sql "$MT_TABLES" pipe.)") == "$expect" ]] || { log "the pipes copied wrong rows"; exit 1; }

    for v in "${!BINS[@]}"; do
      bin=${BINS[$v]} label=${LABELS[$v]}
      mt_load_once "$bin" "$WORK/mt.log"
      secs=$(mt_load_seconds "$WORK/mt.log") || { cat "$WORK/mt.log" >&2; exit 1; }
      [[ $(grep -c ' snapshotted, ' "$WORK/mt.log") == "$MT_TABLES" ]] || { log "not every table was snapshotted"; exit 1; }
      [[ $(sqlv "$dst" -c "$(mt_hash_sql "$MT_TABLES")") == "$expect" ]] || { log "the mirror copied wrong rows"; exit 1; }
      record tables-load "$label mirror ($MT_TABLES tables, concurrency 2)" "$i" "$total" "$secs" "$WORK/time"
      log "  process wall $(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$WORK/time") (includes the 2 s idle wait)"
      mt_load_breakdown "$WORK/mt.log"
      mt_keep_log "tables-load-$label-$i" "$WORK/mt.log"
    done
  done
}

# mt_workload SCHEMA COUNT TABLE_BATCHES ROWS_PER_TABLE: the apply scenario's workload spread
# round-robin over COUNT tables: transaction b (0 <= b < COUNT * TABLE_BATCHES) goes to table
# b % COUNT as its batch j = b / COUNT: 600 inserts of new ids (above the initial rows), 300
# updates and 100 deletes of its batch j-1; then one last transaction per table updates and
# deletes its last batch's rows and inserts the sentinel id -1. With COUNT=1 and schema `one`
# (table one.t) it is the single-table workload. Batch size: CHUNK (1000) changes; URL: the
# source database (default $SRC).
mt_workload() {
  local schema=$1 count=$2 batches=$3 base=$4 chunk=${5:-1000} url=${6:-$SRC}
  local ins=$((chunk * 6 / 10)) upd=$((chunk * 3 / 10)) del=$((chunk / 10))
  local tbl="format('$schema.%s', 't' || lpad((b % $count + 1)::text, 3, '0'))"
  [[ $schema == one ]] && tbl="'one.t'"
  psqlq "$url" <<SQL
DO \$\$ DECLARE t text; j int; o bigint; BEGIN
  FOR b IN 0..$((count * (batches + 1) - 1)) LOOP
    t := $tbl;
    j := b / $count;
    o := $base + (j - 1) * $ins;  -- batch j-1's first id - 1
    IF j < $batches THEN
      EXECUTE format('INSERT INTO %s SELECT g, $MT_ROW_SQL_Q FROM generate_series(\$1, \$2) g', t)
        USING $base + j * $ins + 1, $base + j * $ins + $ins;
    END IF;
    IF j > 0 THEN
      EXECUTE format('UPDATE %s SET name = name || ''-u'', amount = amount + 1, qty = qty + 1, flag = NOT flag WHERE id BETWEEN \$1 AND \$2', t)
        USING o + 1, o + $upd;
      EXECUTE format('DELETE FROM %s WHERE id BETWEEN \$1 AND \$2', t)
        USING o + $upd + 1, o + $upd + CASE WHEN j = $batches THEN $del - 1 ELSE $del END;
    END IF;
    IF j = $batches THEN
      EXECUTE format('INSERT INTO %s SELECT -1, ''sentinel'', 0, 0, now(), true', t);
    END IF;
    COMMIT;
  END LOOP;
END \$\$;
SQL
}

# A DO block that returns once every table t001..tCOUNT (of DB) has the sentinel row.
mt_watch_sql() {
  local count=$1 i q=
  for ((i = 1; i <= count; i++)); do q+="${q:+ + }(SELECT count(*) FROM $(mt_name "$i") WHERE id = -1)"; done
  echo "DO \$\$ BEGIN WHILE ($q) < $count LOOP PERFORM pg_sleep(0.01); END LOOP; END \$\$"
}

# mt_wait_watcher PID: the watcher's end, after the process under test exited; fails the
# bench when the sentinel does not arrive within 10 s of that.
# mt_watched_run DB SQL LOG CMD...: runs CMD (stderr to LOG) under /usr/bin/time (report in
# $WORK/time) while SQL, run on DB, waits for its last change to arrive; sets START (before CMD)
# and SEEN (when SQL returned). A failing CMD ends the bench with the tail of LOG.
mt_watched_run() {
  local db=$1 sql=$2 logf=$3 watcher
  shift 3
  (psql -X -q "$db" -c "$sql" && now >"$WORK/seen") &
  watcher=$!
  sleep 0.3
  START=$(now)
  /usr/bin/time -v -o "$WORK/time" "$@" 2>"$logf" ||
    { tail -n 30 "$logf" >&2; kill "$watcher" 2>/dev/null; exit 1; }
  mt_wait_watcher "$watcher"
  SEEN=$(cat "$WORK/seen")
}

mt_wait_watcher() {
  local i
  for ((i = 0; i < 100; i++)); do
    kill -0 "$1" 2>/dev/null || { wait "$1"; return; }
    sleep 0.1
  done
  kill "$1" 2>/dev/null
  log "the sentinel never arrived (the run ended without it)"
  exit 1
}

bench_tables_stream() {
  local per=$((ROWS / 10)) i s seen bin label watcher
  local dst=${SRC%/*}/bench_s batches=$((ROWS / 1000 / MT_TABLES))
  if ((batches == 0)); then # a batch is 1000 changes per table
    log "tables-stream: skipped: BENCH_ROWS=$ROWS is under $((1000 * MT_TABLES)), one batch over $MT_TABLES tables"
    return 0
  fi
  mt_setup_s
  local src1=${SRC%/*}/bench_one dst1=${SRC%/*}/bench_one_dst
  # The initial load, by the faucet under test (the last run of tables-load, if it ran).
  if [[ $MT_LOADED_BY != "$FAUCET" ]]; then
    log "tables-stream: initial load of $MT_TABLES tables"
    mt_load_once "$FAUCET" "$WORK/mt.log"
  fi
  # Restored before each run: the mirror's state, its slot (from a copy) and the destination.
  rm -rf "$WORK/state-s.saved"
  cp -a "$WORK/state-s" "$WORK/state-s.saved"
  sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('mt_s', 'tmpl_mt_s')" >/dev/null
  mt_drop_slot mt_s
  # idle_timeout 5 s: a one-shot run ends after that long without data, and each slot reads
  # the other workload's WAL too (see BENCHMARKS.md). Not counted: time stops at the sentinel.
  mt_yaml s s bench_s false 5 >"$WORK/mt-s-stream.yaml"
  local copy_base= restore=
  for ((i = 1; i <= MT_TABLES; i++)); do
    copy_base+="CREATE TABLE base.$(mt_name "$i") AS SELECT * FROM $(mt_name "$i"); "
    restore+="INSERT INTO $(mt_name "$i") SELECT * FROM base.$(mt_name "$i"); "
  done
  psqlq "$dst" -c "CREATE SCHEMA base" -c "$copy_base"
  psqlq "$dst1" -c "CREATE TABLE one_t (id bigint PRIMARY KEY, $TABLE_COLS)" -c "CREATE TABLE one_t_base (id bigint PRIMARY KEY, $TABLE_COLS)"
  psql -X -q -v ON_ERROR_STOP=1 "$src1" -c "COPY one.t TO STDOUT" | psqlq "$dst1" -c "COPY one_t_base FROM STDIN"
  sqlv "$src1" -c "SELECT pg_create_logical_replication_slot('tmpl_one', 'pgoutput')" >/dev/null

  log "tables-stream: writing $((batches * 1000 * MT_TABLES)) changes over $MT_TABLES tables, then the same into one table"
  mt_workload s "$MT_TABLES" "$batches" "$per"
  mt_workload one 1 "$((batches * MT_TABLES))" "$per" 1000 "$src1"
  local changes=$((batches * MT_TABLES * 1000)) expect expect1
  expect=$(sqlv "$SRC" -c "$(mt_hash_sql "$MT_TABLES" s.)")
  expect1=$(sqlv "$src1" -c "SELECT count(*), sum(hashtext(t::text)::bigint) FROM one.t t")
  cat >"$WORK/one.yaml" <<YAML
version: 1
name: one
pipeline:
  source:
    type: postgres-cdc
    config: { connection_url: $src1, slot_name: f_one, publication_name: pub_one,
              create_slot_if_missing: false, idle_timeout: 5, status_update_interval: 1 }
  transforms: [ { type: cdc_unwrap, key: [id] } ]
  sink:
    type: postgres
    config: { connection_url: $dst1, table_name: one_t, column_mapping: auto_map,
              write_mode: upsert, key: [id], delete_marker: { field: __op, values: [d] } }
  state:
    type: file
    config: { path: $WORK/state-one }
YAML

  for ((i = 1; i <= RUNS; i++)); do
    for v in "${!BINS[@]}"; do
      bin=${BINS[$v]} label=${LABELS[$v]}
      # One table: the apply scenario's single-table pipeline.
      psqlq "$dst1" -c "TRUNCATE one_t" -c "INSERT INTO one_t SELECT * FROM one_t_base"
      sqlv "$src1" -c "SELECT pg_copy_logical_replication_slot('tmpl_one', 'f_one')" >/dev/null
      rm -rf "$WORK/state-one"
      mt_watched_run "$dst1" "DO \$\$ BEGIN WHILE NOT EXISTS (SELECT 1 FROM one_t WHERE id = -1) LOOP
          PERFORM pg_sleep(0.01); END LOOP; END \$\$" "$WORK/one.log" "$bin" run "$WORK/one.yaml"
      [[ $(sqlv "$dst1" -c "SELECT count(*), sum(hashtext(t::text)::bigint) FROM one_t t") == "$expect1" ]] ||
        { log "one_t differs from the source"; exit 1; }
      record tables-stream "1 table ($label run)" "$i" "$changes" "$(sub "$SEEN" "$START")" "$WORK/time"
      grep -o 'finished: .*' "$WORK/one.log" >&2 || true
      mt_keep_log "tables-stream-one-$label-$i" "$WORK/one.log"
      sqlv "$src1" -c "SELECT pg_drop_replication_slot('f_one')" >/dev/null

      # 20 tables: the multi-table mirror resumed after its initial load.
      psqlq "$dst" -c "$(mt_truncate_sql "$MT_TABLES")" -c "$restore"
      rm -rf "$WORK/state-s"
      cp -a "$WORK/state-s.saved" "$WORK/state-s"
      mt_drop_slot mt_s
      sqlv "$SRC" -c "SELECT pg_copy_logical_replication_slot('tmpl_mt_s', 'mt_s')" >/dev/null
      mt_watched_run "$dst" "$(mt_watch_sql "$MT_TABLES")" "$WORK/mt.log" \
        "$bin" mirror "$WORK/mt-s-stream.yaml"
      [[ $(sqlv "$dst" -c "$(mt_hash_sql "$MT_TABLES")") == "$expect" ]] ||
        { log "the mirror's destination differs from the source"; exit 1; }
      record tables-stream "$label mirror ($MT_TABLES tables)" "$i" "$changes" "$(sub "$SEEN" "$START")" "$WORK/time"
      grep -o 'cycle ended, .*' "$WORK/mt.log" >&2 || true
      mt_keep_log "tables-stream-$label-$i" "$WORK/mt.log"
    done
  done
}

MT_RSS_NOTES=()

# Writes the most faucet sessions seen on database $1 to $WORK/sessions-peak, polling every
# 50 ms until killed.
mt_poll_sessions() {
  local peak=0 seen
  echo 0 >"$WORK/sessions-peak"
  while :; do
    seen=$(psql -X -qAt "${SRC%/*}/$1" -c "SELECT count(*) FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'faucet'" 2>/dev/null) || seen=0
    if ((seen > peak)); then
      peak=$seen
      echo "$peak" >"$WORK/sessions-peak"
    fi
    sleep 0.05
  done
}

bench_tables_rss() {
  local per=$((ROWS / 1000)) n i bin label ok
  local changes=$((ROWS / 10))
  for n in ${BENCH_RSS_TABLES:-20 200}; do
    log "tables-rss: $n tables x $per rows"
    mt_setup r$n "$n" "$per" bench_r$n
    mt_yaml r$n r$n bench_r$n >"$WORK/mt-r$n.yaml"
    local dst=${SRC%/*}/bench_r$n batches=$((changes / 100 / n))
    ((batches >= 1)) || batches=1
    for v in "${!BINS[@]}"; do
      bin=${BINS[$v]} label=${LABELS[$v]}
      mt_drop_slot mt_r$n
      rm -rf "$WORK/state-r$n"
      psqlq "$dst" -c "$(mt_truncate_sql "$n")"
      s=$(now)
      if ! /usr/bin/time -v -o "$WORK/time" "$bin" mirror "$WORK/mt-r$n.yaml" 2>"$WORK/mt.log"; then
        mt_keep_log "tables-rss-$n-$label-load" "$WORK/mt.log"
        MT_RSS_NOTES+=("$n tables ($label): the one-shot load FAILED: $(grep -m3 -E ' (error|warning) ' "$WORK/mt.log" | cut -c1-400 | tr '\n' ' ')")
        log "${MT_RSS_NOTES[-1]}"
        continue 2
      fi
      record "tables-rss-$n-load" "$label mirror, initial load + catch-up" 1 "$((per * n))" "$(sub "$(now)" "$s")" "$WORK/time"
      mt_load_breakdown "$WORK/mt.log"
      mt_keep_log "tables-rss-$n-$label-load" "$WORK/mt.log"
      if [[ $v == 0 ]]; then
        mt_workload r$n "$n" "$batches" "$per" 100
      fi
      # Applies the workload (a later binary re-applies it: upserts, same result).
      mt_poll_sessions bench_r$n &
      local poller=$!
      s=$(now)
      ok=1
      /usr/bin/time -v -o "$WORK/time" "$bin" mirror "$WORK/mt-r$n.yaml" 2>"$WORK/mt.log" || ok=0
      kill "$poller" 2>/dev/null
      wait "$poller" 2>/dev/null || true
      if ((ok == 0)); then
        mt_keep_log "tables-rss-$n-$label-stream" "$WORK/mt.log"
        MT_RSS_NOTES+=("$n tables ($label): the streaming run FAILED: $(grep -m3 -E ' (error|warning) ' "$WORK/mt.log" | cut -c1-400 | tr '\n' ' ')")
        log "${MT_RSS_NOTES[-1]}"
        continue 2
      fi
      [[ $(sqlv "$dst" -c "$(mt_hash_sql "$n")") == "$(sqlv "$SRC" -c "$(mt_hash_sql "$n" r$n.)")" ]] ||
        { log "the $n-table destination differs from the source"; exit 1; }
      record "tables-rss-$n-stream" "$label mirror, $((batches * 100 * n)) changes over $n tables (process time)" 1 "$((batches * 100 * n))" "$(sub "$(now)" "$s")" "$WORK/time"
      MT_RSS_NOTES+=("$n tables ($label): at most $(cat "$WORK/sessions-peak") destination sessions while streaming (polled every 50 ms)")
      log "${MT_RSS_NOTES[-1]}"
      grep -o 'cycle ended, .*' "$WORK/mt.log" >&2 || true
      mt_keep_log "tables-rss-$n-$label-stream" "$WORK/mt.log"
    done
  done
}
