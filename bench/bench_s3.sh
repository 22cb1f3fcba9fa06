#!/usr/bin/env bash
# bench_s3.sh - the daemon into radosgw against the daemon into a local
# directory (issue 18, must-hold 6). Not a test: it prints numbers and the
# ratio, and exits 1 only when the S3 run lands fewer rows than it got.
# Same input (the real log samples, digits varied: bench/e2e_input.mjs),
# same run, same machine: 16 `cat` clients over loopback TCP, SIGTERM once
# parqd has read every line; the clock stops when every file is published
# and parqd has exited. radosgw: a throw-away single-node cluster on
# loopback (tests/scripts/s3/rgw.sh), memstore OSD, part_size 16 MiB.
#
# usage: bench/bench_s3.sh [BUILD_DIR] [INPUT_MB] [RUNS]   (default 200 MB, 2 runs each)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-200}
RUNS=${3:-2}
. "$ROOT/tests/daemon/lib.sh"
. "$ROOT/tests/scripts/s3/rgw.sh"
lib_init bench_s3
trap 'rgw_stop; lib_cleanup' EXIT
rgw_start "$T/rgw" >"$T/rgw.out" 2>&1 && rgw_mb logs || { cat "$T/rgw.out"; exit 1; }

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

# run MODE N: MODE dir or s3; sets R_S (seconds), R_KB (peak RSS), R_CPU.
run() {
    local mode=$1 n=$2 out t0 t1 c clients=()
    PORT=$(free_port)
    PORT_M=$(free_port)
    if [ "$mode" = s3 ]; then
        out="  s3: {bucket: logs, prefix: \"bench-$n/\", endpoint: \"$RGW_ENDPOINT\", path_style: true}"
    else
        out="  dir: $T/out-$n"
    fi
    cat >"$T/$mode-$n.yaml" <<CONF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
metrics: {listen: "127.0.0.1:$PORT_M"}
output:
$out
spool: {dir: $T/spool-$mode-$n, sync: batch}
errors: {dead_letter: $T/rejects-$mode-$n.ndjson}
CONF
    daemon_start "$T/$mode-$n.yaml" "$T/$mode-$n.log" || { tail "$T/$mode-$n.log"; exit 1; }
    t0=$(date +%s.%N)
    for part in "$T"/part.*; do
        # shellcheck disable=SC2016
        spawn bash -c 'exec cat "$1" >"/dev/tcp/127.0.0.1/$2"' _ "$part" "$PORT"
        clients+=("$SPAWNED")
    done
    for c in "${clients[@]}"; do wait_exit "$c" 600; done
    local deadline=$((SECONDS + 300))
    until received || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.02; done
    R_CPU=$(cpu_seconds "$DPID")
    kill -TERM "$DPID"
    while alive "$DPID"; do
        c=$(cpu_seconds "$DPID")
        [ -n "$c" ] && R_CPU=$c
        R_KB=$(proc_kb "$DPID" VmHWM)
        sleep 0.05
    done
    t1=$(date +%s.%N)
    wait_exit "$DPID" 5
    R_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
}

best_dir=999999 best_s3=999999
for n in $(seq 1 "$RUNS"); do
    run dir "$n"
    echo "run $n  local dir: $R_S s, $(awk -v b="$BYTES" -v s="$R_S" 'BEGIN { printf "%.1f", b / 1048576 / s }') MiB/s, peak RSS $((${R_KB:-0} >> 10)) MiB, CPU $R_CPU s"
    best_dir=$(awk -v a="$best_dir" -v b="$R_S" 'BEGIN { print (b < a ? b : a) }')
    run s3 "$n"
    echo "run $n  radosgw:   $R_S s, $(awk -v b="$BYTES" -v s="$R_S" 'BEGIN { printf "%.1f", b / 1048576 / s }') MiB/s, peak RSS $((${R_KB:-0} >> 10)) MiB, CPU $R_CPU s"
    best_s3=$(awk -v a="$best_s3" -v b="$R_S" 'BEGIN { print (b < a ? b : a) }')
done
mkdir -p "$T/dl"
rgw_get_all logs bench-1/ "$T/dl"
ROWS=$(duck "SELECT count(*) AS n FROM read_parquet('$T/dl/**/*.parquet')" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].n))')
echo
awk -v b="$BYTES" -v d="$best_dir" -v s="$best_s3" -v n="$LINES" -v r="$ROWS" 'BEGIN {
    printf "bench_s3: %.1f MiB, %d records; best of runs: local dir %.1f MiB/s, radosgw %.1f MiB/s: %.0f%% of local (rows read back from radosgw: %d)\n",
        b / 1048576, n, b / 1048576 / d, b / 1048576 / s, 100 * d / s, r }'
[ "$ROWS" = "$LINES" ]
