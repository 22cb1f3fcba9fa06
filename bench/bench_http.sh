#!/usr/bin/env bash
# bench_http.sh - acknowledged HTTP ingest against raw TCP (issue 21). Not
# a test: nothing here passes or fails on a number. The same generated
# input (bench/e2e_input.mjs over the real log samples) goes to the
# daemon (sync: batch) twice in one run: over raw TCP from 16 `cat`s (as
# bench_daemon.sh does), and over HTTP from 16 keep-alive connections
# posting NDJSON bodies of about 1 MiB to /ingest, each the next only
# once the previous one was acknowledged (bench/http_post.mjs). The clock
# runs from the first byte until parqd has read every line (metrics),
# published every file on SIGTERM and exited. Reported: MB/s of both, the
# HTTP/TCP ratio, and the median and p99 acknowledgement latency (client
# side: request sent to reply read).
#
# usage: bench/bench_http.sh [BUILD_DIR] [INPUT_MB]   (default 400: runs of
# about 1 s, at 100, moved the ratio between 58% and 95% on a quiet machine)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-400}
. "$ROOT/tests/daemon/lib.sh"
lib_init bench_http

INPUT="$BUILD/bench-e2e/mix-${MB}.ndjson"
mkdir -p "$BUILD/bench-e2e"
[ -s "$INPUT" ] || node "$ROOT/bench/e2e_input.mjs" "$ROOT/../shared/testdata/logs" "$INPUT" "$MB"
BYTES=$(stat -c %s "$INPUT")
LINES=$(grep -c . "$INPUT")
split -n l/16 -d "$INPUT" "$T/part."

received() {
    local body
    body=$(exec 3<>"/dev/tcp/127.0.0.1/$PORT_M" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3)
    [ "$(metric "$body" parqd_records_received_total)" = "$LINES" ]
}

# run MODE: tcp or http; sets R_S (seconds) and R_ROWS.
run() {
    local mode=$1 t0 t1 c clients=() deadline part type=tcp
    PORT=$(free_port)
    PORT_M=$(free_port)
    DLOG="$T/daemon-$mode.log"
    [ "$mode" = http ] && type=http
    cat >"$T/$mode.yaml" <<EOF
inputs:
  - {type: $type, listen: "127.0.0.1:$PORT"}
metrics: {listen: "127.0.0.1:$PORT_M"}
output: {dir: $T/out-$mode}
spool: {dir: $T/spool-$mode, sync: batch}
errors: {dead_letter: $T/rejects-$mode.ndjson}
EOF
    daemon_start "$T/$mode.yaml" "$DLOG" || { tail "$DLOG"; exit 1; }
    t0=$(date +%s.%N)
    if [ "$mode" = http ]; then
        spawn node "$ROOT/bench/http_post.mjs" --url "http://127.0.0.1:$PORT/ingest" "$T"/part.* \
            >"$T/http.json"
        clients+=("$SPAWNED")
    else
        for part in "$T"/part.*; do
            # shellcheck disable=SC2016
            spawn bash -c 'exec cat "$1" >"/dev/tcp/127.0.0.1/$2"' _ "$part" "$PORT"
            clients+=("$SPAWNED")
        done
    fi
    for c in "${clients[@]}"; do wait_exit "$c" 600; done
    deadline=$((SECONDS + 300))
    until received || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.02; done
    kill -TERM "$DPID"
    while alive "$DPID"; do sleep 0.05; done
    t1=$(date +%s.%N)
    wait_exit "$DPID" 5
    R_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    R_ROWS=$(duck "SELECT count(*) AS n FROM read_parquet('$T/out-$mode/**/*.parquet')" |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].n))')
}
run tcp
T_S=$R_S T_ROWS=$R_ROWS
run http
H_S=$R_S H_ROWS=$R_ROWS
node -e '
const [bytes, lines, ts, hs, tr, hr, f] = process.argv.slice(1);
const h = JSON.parse(require("fs").readFileSync(f));
const q = p => h.lat_ms[Math.min(h.lat_ms.length - 1, Math.floor(p * h.lat_ms.length))].toFixed(1);
const mb = s => (bytes / s / 1e6).toFixed(1);
console.log(`input: ${(bytes / 1048576).toFixed(1)} MiB, ${lines} records; rows read back: ${tr} (TCP), ${hr} (HTTP)`);
console.log(`raw TCP, 16 cat clients:             ${ts} s, ${mb(ts)} MB/s`);
console.log(`HTTP /ingest, 16 keep-alive clients: ${hs} s, ${mb(hs)} MB/s (${(100 * ts / hs).toFixed(0)}% of TCP)`);
console.log(`HTTP: ${h.requests} requests of ~1 MiB; acknowledgement latency median ${q(0.5)} ms, p99 ${q(0.99)} ms`);
' "$BYTES" "$LINES" "$T_S" "$H_S" "$T_ROWS" "$H_ROWS" "$T/http.json"
