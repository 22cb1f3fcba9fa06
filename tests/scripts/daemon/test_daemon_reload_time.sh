#!/usr/bin/env bash
# test_daemon_reload_time.sh - SIGHUP that changes output.time_from (issue
# 20): each reload publishes the files of the running configuration, and
# the records after it are routed by the new one.
#  1. time_from: ts   - ids 1..200 land under ts's hour (05);
#  2. time_from: t2   - ids 201..400 under t2's hour (17);
#  3. time_from: nope - a field no record has: ids 401..450 land under
#     their ingestion hour and parqd_records_time_fallback_total counts 50;
#  4. a typed schema whose time_from names a string column: the reload is
#     refused at the file:line:col of time_from, and ids 451..500 are
#     still routed as in 3 (100 fallbacks in all).
# DuckDB reads the layout with hive_partitioning; every id is in exactly
# one file, under the hour its phase's rule gives.
#
#   bash test_daemon_reload_time.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_reload_time.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_reload_time

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
CFG="$T/parqd.yaml"

config() { # config TIME_FROM [SCHEMA]
    cat <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  path: "dt=%Y-%m-%d/hour=%H/{seq}.parquet"
  time_from: $1
  rotate: {max_rows: 100000}
spool: {dir: $T/spool}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
${2:+schema: $2}
EOF
}
cat >"$T/typed.yaml" <<'EOF'
columns:
  - {name: id, type: int64, required: true}
  - {name: ts, type: string}
  - {name: rest, type: variant, from: "*"}
EOF

# batch FIRST LAST: sends records FIRST..LAST (ts at 05:xx, t2 at 17:xx of
# 2026-03-01; every other ts as epoch seconds) and waits until parqd has
# received them all.
received_total=0
batch() {
    local f="$T/batch-$1.ndjson" i
    for ((i = $1; i <= $2; i++)); do
        if ((i % 2)); then
            printf '{"id":%d,"ts":"2026-03-01T05:%02d:00Z","t2":"2026-03-01T17:%02d:30Z"}\n' \
                "$i" $((i % 60)) $((i % 60))
        else
            printf '{"id":%d,"ts":%d,"t2":"2026-03-01T17:00:00+00:00"}\n' "$i" $((1772341200 + i))
        fi
    done >"$f"
    node_tool send.mjs --targets "tcp:127.0.0.1:$PORT" --clients 2 --blank 0 "$f" >/dev/null || return 1
    received_total=$((received_total + $2 - $1 + 1))
    wait_for 20 received_is "$received_total"
}
received_is() { [ "$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_records_received_total)" = "$1" ]; }
fallbacks() { metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_records_time_fallback_total; }
count_at_least() { [ "$(grep -c -- "$2" "$DLOG")" -ge "$1" ]; } # count_at_least N PATTERN

# reload_to TIME_FROM [SCHEMA]: rewrites the config and waits for the reload.
reload_to() {
    local before
    before=$(grep -c 'reload: done' "$DLOG")
    config "$@" >"$CFG"
    kill -HUP "$DPID"
    wait_for 20 count_at_least $((before + 1)) 'reload: done'
}

config ts >"$CFG"
if ! daemon_start "$CFG" "$DLOG"; then
    bad "parqd starts with time_from: ts" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    finish
fi
ok "parqd starts with time_from: ts"
check "phase 1 (ids 1..200) received" batch 1 200

check "SIGHUP to time_from: t2: reload done" reload_to t2
check "phase 2 (ids 201..400) received" batch 201 400

check "SIGHUP to time_from: nope: reload done" reload_to nope
HOUR_FROM=$(date -u +%Y-%m-%d/%H)
check "phase 3 (ids 401..450) received" batch 401 450
check "phase 3: 50 records counted as time fallbacks" test "$(fallbacks)" = 50

# 4: a string column is no event time: the reload is refused at time_from.
before=$(grep -c 'reload: .*keeping the running configuration' "$DLOG")
config ts typed.yaml >"$CFG"
TF_LINE=$(grep -n 'time_from:' "$CFG" | cut -d: -f1)
kill -HUP "$DPID"
if wait_for 10 count_at_least $((before + 1)) 'reload: .*keeping the running configuration'; then
    ok "time_from naming a string column: reload refused"
else
    bad "time_from naming a string column: reload refused" "$(tail -n 2 "$DLOG" | tr '\n' ' ')"
fi
errs=$(grep 'reload: .*keeping the running configuration' "$DLOG" | tail -n 1)
echo "  log: $(cut -c1-300 <<<"$errs")"
check "the error names $CFG:$TF_LINE:COL" grep -qE -- "$CFG:$TF_LINE:[0-9]+: " <<<"$errs"
check "phase 4 (ids 451..500) received under the kept configuration" batch 451 500
check "phase 4: 100 time fallbacks in all" test "$(fallbacks)" = 100
HOUR_TO=$(date -u +%Y-%m-%d/%H)

daemon_stop TERM 60
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
check "no temporary files left" test -z "$(temp_files "$T/out")"
check "no dead letters" test ! -s "$T/rejects.ndjson"

# Each id's phase and the directory it must lie in.
rows=$(duck "SELECT (CAST(event AS JSON)->>'id')::INTEGER AS id, dt || '/' || hour AS dir
             FROM read_parquet('$T/out/**/*.parquet', hive_partitioning = true,
                               hive_types_autocast = false) ORDER BY id")
verdict=$(node --input-type=module -e '
const rows = JSON.parse(process.argv[1]);
const [from, to] = [process.argv[2], process.argv[3]];
const want = id => id <= 200 ? ["2026-03-01/05"] : id <= 400 ? ["2026-03-01/17"]
                 : from === to ? [from] : [from, to];
const seen = new Map();
for (const r of rows) seen.set(r.id, (seen.get(r.id) || 0) + 1);
const missing = [], twice = [], misplaced = [];
for (let i = 1; i <= 500; i++) if (!seen.has(i)) missing.push(i); else if (seen.get(i) > 1) twice.push(i);
for (const r of rows) if (!want(r.id).includes(r.dir)) misplaced.push(`${r.id}@${r.dir}`);
console.log(`${rows.length} ${missing.length} ${twice.length} ${misplaced.length} ${misplaced.slice(0, 3).join(",")}`);
' "$rows" "$HOUR_FROM" "$HOUR_TO")
read -r nrows nmissing ntwice nmisplaced examples <<<"$verdict"
echo "  rows $nrows, missing $nmissing, twice $ntwice, misplaced $nmisplaced ${examples:-}"
check "DuckDB hive_partitioning reads 500 rows" test "$nrows" = 500
check "every id 1..500 in a file, none twice" test "$nmissing/$ntwice" = 0/0
check "every row under its phase's hour (ts 05, t2 17, then ingestion)" test "$nmisplaced" = 0
finish
