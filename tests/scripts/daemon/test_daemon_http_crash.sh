#!/usr/bin/env bash
# test_daemon_http_crash.sh - acknowledged HTTP ingest survives kill -9
# (issue 21): a client posts 20,000 records to /ingest in batches of 100
# over one keep-alive connection, retrying every batch until it gets a
# 200; meanwhile parqd (sync: batch) is killed with SIGKILL four times
# and restarted. Then SIGTERM, and DuckDB over the files: every record of
# every acknowledged batch is there; a record appears twice only if its
# batch was retried.
#
#   bash test_daemon_http_crash.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u
BUILD=${1:?usage: test_daemon_http_crash.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_http_crash

PORT=$(free_port)
DLOG="$T/parqd.log"
N=20000
cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: http, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  rotate: {max_rows: 3000}
spool: {dir: $T/spool, sync: batch}
errors: {dead_letter: $T/rejects.ndjson}
log: {level: info}
EOF

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
spawn node "$LIB_DIR/http_clients.mjs" keepalive --url "http://127.0.0.1:$PORT/ingest" \
    --n "$N" --batch 100 --out "$T/client.json"
CLIENT=$SPAWNED
kills=0
# Each kill comes after the client got more acknowledgements: the log
# of parqd is not needed, the spool's growth says it (its bytes).
for k in 1 2 3 4; do
    before=$(du -sb "$T/spool" | cut -f1)
    wait_for 30 bash -c "[ \$(du -sb '$T/spool' | cut -f1) -gt $((before + 20000)) ]" || true
    kill -9 "$DPID" 2>/dev/null && kills=$((kills + 1))
    wait_exit "$DPID" 10
    if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
        bad "parqd restarts after kill -9 number $k"
        finish
    fi
done
check "parqd was killed with SIGKILL 4 times" test "$kills" = 4
wait_exit "$CLIENT" 300
check "the client got every batch acknowledged" test "$EXIT_STATUS" = 0
cat "$T/client.json" | cut -c1-200; echo
daemon_stop TERM 60
check "parqd exits 0 on SIGTERM" test "$DSTATUS" = 0

duck "SELECT CAST(variant_extract(event, 'i') AS INT) AS i, count(*) AS n
      FROM read_parquet('$T/out/**/*.parquet', hive_partitioning = false)
      GROUP BY 1" >"$T/landed.json"
node -e '
const fs = require("fs");
const c = JSON.parse(fs.readFileSync(process.argv[1]));
const landed = new Map(JSON.parse(fs.readFileSync(process.argv[2])).map(r => [r.i, Number(r.n)]));
const retried = new Set(c.retried);
let missing = 0, dupes = 0, dupOk = 0;
for (const first of c.acked)
  for (let i = first; i < Math.min(c.n, first + c.batch); i++) {
    const n = landed.get(i) || 0;
    if (n === 0) missing++;
    else if (n > 1) { if (retried.has(first)) dupOk++; else dupes++; }
  }
console.log(`acked ${c.acked.length} batches, retried ${c.retried.length}; missing ${missing}, ` +
            `duplicates of retried batches ${dupOk}, other duplicates ${dupes}`);
process.exit(missing === 0 && dupes === 0 && c.acked.length * c.batch >= c.n ? 0 : 1);
' "$T/client.json" "$T/landed.json" >"$T/verdict.txt" 2>&1
VST=$?
cat "$T/verdict.txt"
check "every acknowledged record landed; only retried ones twice" test "$VST" = 0
finish
