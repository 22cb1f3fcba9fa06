#!/usr/bin/env bash
# bench_compare.sh - parqd against DuckDB and against plain zstd, in one
# invocation on the same inputs, so a regression (ours) or a change of
# baseline (theirs) shows next to the other numbers of the same machine
# and the same moment. Not a test: no number here passes or fails.
#
# Inputs (cached in BUILD/bench-e2e, regenerated only when missing):
#   access  generated HTTP access logs (bench/gen_logs.mjs, seed 1), ~700
#           bytes a line, with their typed schema conf/schemas/access.yaml
#   mix     the real log samples, digits varied (bench/e2e_input.mjs, the
#           input of bench_e2e.sh and bench_daemon.sh)
# Contenders, each run RUNS times (interleaved, so drift hits all alike;
# medians reported):
#   parqd convert, typed schema (access only; also with one 512 MiB row
#     group, which streaming keeps within a few MiB of the default's
#     memory) and default schema (Variant)
#   parqd daemon: 16 loopback TCP clients (16 `cat`s, a 16th of the input
#     each, as bench_daemon.sh); typed schema on access, default on mix;
#     the clock runs from the first byte until every line was received,
#     every file published on SIGTERM and parqd exited (the clients are
#     started and connected before it, and released together)
#   DuckDB COPY (SELECT * FROM read_json(...)) TO ... (FORMAT parquet,
#     COMPRESSION zstd) with SET threads=1 and =2 (bench/duck_copy.mjs;
#     wall time of the COPY measured inside node, peak RSS of node)
#   zstd -T2 -1 of the raw input: the floor -- compressing the bytes
#     without parsing them (skipped when zstd is not installed)
#   linear cost: the typed convert of the access input's first half, so
#     that full / half seconds (2.0 for a linear cost) and both peak RSS
#     are printed below the table
# Ratios are to DuckDB with 2 threads: speed = its seconds / ours (above 1
# is faster than DuckDB), RSS and bytes = ours / its.
#
# usage: bench/bench_compare.sh [BUILD_DIR] [ACCESS_MB] [RUNS] [MIX_MB]
#        (defaults: build, 200, 3, 200; the environment variables
#        BENCH_ACCESS_MB, BENCH_RUNS and BENCH_MIX_MB do the same)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-${BENCH_ACCESS_MB:-200}}
RUNS=${3:-${BENCH_RUNS:-3}}
MIX_MB=${4:-${BENCH_MIX_MB:-200}}
SCHEMA=$ROOT/conf/schemas/access.yaml
. "$ROOT/tests/daemon/lib.sh"
lib_init bench_compare
command -v /usr/bin/time >/dev/null || { echo "bench_compare: needs /usr/bin/time (apt-get install time)"; exit 1; }
HAVE_ZSTD=1
command -v zstd >/dev/null || { HAVE_ZSTD=0; echo "bench_compare: no zstd command (apt-get install zstd): the zstd floor is skipped"; }

CACHE=$BUILD/bench-e2e
mkdir -p "$CACHE"
ACCESS=$CACHE/access-${MB}-seed1.ndjson
MIX=$CACHE/mix-${MIX_MB}.ndjson
[ -s "$ACCESS" ] || node "$ROOT/bench/gen_logs.mjs" --kind access --seed 1 --mb "$MB" "$ACCESS" || exit 1
[ -s "$MIX" ] || node "$ROOT/bench/e2e_input.mjs" "$ROOT/../shared/testdata/logs" "$MIX" "$MIX_MB" || exit 1

mkdir -p "$T/res"
out_bytes() { find "$1" -name '*.parquet' ! -name '.*' -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
die() { echo "bench_compare: $*"; [ -s "$T/err" ] && tail -n 5 "$T/err"; exit 1; }

# timed KEY OUT CMD...: runs CMD under /usr/bin/time, appends
# "seconds peak_kb output_bytes" to $T/res/KEY. OUT is a file or a
# directory of Parquet files; when CMD prints a number (duck_copy.mjs),
# that is the seconds.
timed() {
    local key=$1 out=$2 s kb said
    shift 2
    rm -rf "$out"
    /usr/bin/time -f "%e %M" -o "$T/time" "$@" >"$T/said" 2>"$T/err" || die "$key failed: $*"
    read -r s kb <"$T/time"
    said=$(tail -n 1 "$T/said")
    [[ "$said" =~ ^[0-9.]+$ ]] && s=$said
    if [ -d "$out" ]; then echo "$s $kb $(out_bytes "$out")"; else echo "$s $kb $(stat -c %s "$out")"; fi >>"$T/res/$key"
    rm -rf "$out"
}

# daemon KEY INPUT [SCHEMA]: one daemon run fed by 16 TCP clients.
daemon_run() {
    local key=$1 input=$2 schema=${3:-} lines port port_m t0 t1
    lines=$(wc -l <"$input")
    port=$(free_port)
    port_m=$(free_port)
    rm -rf "$T/d-out" "$T/d-spool" "$T/hwm"
    {
        [ -n "$schema" ] && echo "schema: $schema"
        echo "inputs:"
        echo "  - {type: tcp, listen: \"127.0.0.1:$port\"}"
        echo "metrics: {listen: \"127.0.0.1:$port_m\"}"
        echo "output: {dir: $T/d-out}"
        echo "spool: {dir: $T/d-spool, sync: batch}"
        echo "errors: {dead_letter: $T/d-rejects.ndjson}"
    } >"$T/daemon.yaml"
    DLOG=$T/daemon.log
    : >"$DLOG"
    daemon_start "$T/daemon.yaml" "$DLOG" || { tail "$DLOG"; die "$key: the daemon did not start"; }
    # The peak RSS poller uses builtins only (read -t on a FIFO nobody
    # writes is its sleep): a fork every 0.1 s would take CPU from the
    # daemon it measures on a 2-core machine.
    rm -f "$T/never" && mkfifo "$T/never"
    # shellcheck disable=SC2016
    spawn bash -c 'exec 3<>"$3"; while kill -0 "$1" 2>/dev/null; do
        while read -r k v _; do [ "$k" = VmHWM: ] && echo "$v" >"$2"; done <"/proc/$1/status"
        read -r -t 0.1 -u 3; done' _ "$DPID" "$T/hwm" "$T/never"
    local poller=$SPAWNED cats=() part c dog
    # The clients connect and stop themselves before the clock starts, and
    # go on together at t0: the clock is the daemon's, from the first byte
    # sent. Spawning 16 bash processes (about 20 ms of CPU) and the
    # watchdog's fork after the SIGTERM ran on it before, on the 2 cores
    # the daemon needs.
    for part in "$input".part.*; do
        # shellcheck disable=SC2016
        spawn bash -c 'exec 3>"/dev/tcp/127.0.0.1/$2" || exit 1; kill -STOP $$; exec cat "$1" >&3' \
            _ "$part" "$port"
        cats+=("$SPAWNED")
    done
    for c in "${cats[@]}"; do
        until [ "$(cut -d ' ' -f 3 "/proc/$c/stat" 2>/dev/null)" = T ]; do
            alive "$c" || die "$key: a client could not connect"
            sleep 0.01
        done
    done
    # The watchdog (kill -9 after 120 s) too, not after the SIGTERM.
    # shellcheck disable=SC2016
    spawn bash -c 'sleep 120; kill -9 "$1"' _ "$DPID" </dev/null >/dev/null 2>&1
    dog=$SPAWNED
    t0=$EPOCHREALTIME
    kill -CONT "${cats[@]}"
    # Every client has hung up once its cat exits (a 16th of the input is
    # far more than the socket buffers hold, so each connection was
    # accepted), and SIGTERM reads each connection to its end before
    # publishing (README "Signals"): it goes at once. Polling /metrics
    # for the count instead took CPU from the daemon for the whole
    # catch-up (a subshell and an awk 50 times a second); the count is
    # checked after the clock stops.
    for c in "${cats[@]}"; do
        wait "$c" 2>/dev/null || die "$key: a client failed"
        forget_pid "$c"
    done
    kill -TERM "$DPID"
    DSTATUS=0
    wait "$DPID" 2>/dev/null || DSTATUS=$?
    t1=$EPOCHREALTIME
    forget_pid "$DPID"
    alive "$dog" || DSTATUS=timeout
    pkill -9 -P "$dog" 2>/dev/null   # its sleep
    kill -9 "$dog" 2>/dev/null
    wait "$dog" 2>/dev/null
    forget_pid "$dog"
    wait_exit "$poller" 5
    [ "$DSTATUS" = 0 ] || { tail "$DLOG"; die "$key: the daemon exited with $DSTATUS"; }
    local dead=0 rows
    [ -s "$T/d-rejects.ndjson" ] && dead=$(wc -l <"$T/d-rejects.ndjson") && note "$key: $dead dead letters"
    rows=$(find "$T/d-out" -name '*.parquet' ! -name '.*' -type f -exec "$BUILD/pq_walk" --dump {} + 2>/dev/null |
        awk '$1 == "version" { for (i = 2; i < NF; i++) if ($i == "num_rows") s += $(i + 1) } END { print s + 0 }')
    [ $((rows + dead)) = "$lines" ] || die "$key: $rows rows and $dead dead letters for $lines lines sent"
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $(cat "$T/hwm") $(out_bytes "$T/d-out")" >>"$T/res/$key"
}

# One round over every contender for one input.
round() { # LABEL INPUT [SCHEMA]
    local l=$1 in=$2 schema=${3:-}
    if [ -n "$schema" ]; then
        timed "$l.parqd_typed" "$T/p-out" "$PARQD" convert --schema "$schema" -o "$T/p-out/" "$in"
        timed "$l.parqd_half" "$T/p-out" "$PARQD" convert --schema "$schema" -o "$T/p-out/" "$in.half"
        printf 'output:\n  row_group: {max_bytes: 512MiB}\n' >"$T/rg512.yaml"
        timed "$l.parqd_typed512" "$T/p-out" "$PARQD" convert --schema "$schema" --config "$T/rg512.yaml" \
            -o "$T/p-out/" "$in"
    fi
    timed "$l.parqd_default" "$T/p-out" "$PARQD" convert -o "$T/p-out/" "$in"
    daemon_run "$l.parqd_daemon" "$in" "$schema"
    timed "$l.duckdb_1t" "$T/d.parquet" node "$ROOT/bench/duck_copy.mjs" "$in" "$T/d.parquet" 1
    timed "$l.duckdb_2t" "$T/d.parquet" node "$ROOT/bench/duck_copy.mjs" "$in" "$T/d.parquet" 2
    [ "$HAVE_ZSTD" = 1 ] && timed "$l.zstd" "$T/z.zst" zstd -T2 -1 -q -f "$in" -o "$T/z.zst"
}

# median of column N of a result file (the mean of the middle two for an
# even count)
median() {
    awk -v c="$2" '{ print $c }' "$1" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

report() { # LABEL INPUT DESCRIPTION
    local l=$1 in=$2 bytes lines k f ds dk db
    bytes=$(stat -L -c %s "$in")
    lines=$(wc -l <"$in")
    ds=$(median "$T/res/$l.duckdb_2t" 1)
    dk=$(median "$T/res/$l.duckdb_2t" 2)
    db=$(median "$T/res/$l.duckdb_2t" 3)
    echo
    awk -v d="$3" -v b="$bytes" -v n="$lines" -v r="$RUNS" 'BEGIN {
        printf "%s: %.1f MiB, %d records; medians of %d runs\n", d, b / 1048576, n, r }'
    printf '  %-34s %8s %8s %11s %13s %9s   %-7s %-6s %-6s\n' "" seconds "MB/s" "records/s" "output bytes" "peak RSS" \
        "speed" "RSS" "bytes"
    for k in parqd_typed:"parqd convert, typed schema" \
             parqd_typed512:"  the same, 512 MiB row groups" parqd_default:"parqd convert, default schema" \
             parqd_daemon:"parqd daemon, 16 TCP clients" duckdb_1t:"DuckDB COPY, 1 thread" \
             duckdb_2t:"DuckDB COPY, 2 threads" zstd:"zstd -T2 -1 (floor, not Parquet)"; do
        f=$T/res/$l.${k%%:*}
        [ -s "$f" ] || continue
        awk -v name="${k#*:}" -v b="$bytes" -v n="$lines" -v s="$(median "$f" 1)" -v kb="$(median "$f" 2)" \
            -v ob="$(median "$f" 3)" -v ds="$ds" -v dk="$dk" -v db="$db" 'BEGIN {
            printf "  %-34s %8.2f %8.1f %11.0f %13.0f %5.0f MiB   %5.2fx %5.2fx %5.2fx\n",
                   name, s, b / s / 1e6, n / s, ob, kb / 1024, ds / s, kb / dk, ob / db }'
    done
}

# The daemon's clients: 16 slices of whole lines, cut once per input; the
# linear-cost check's half input.
split -n l/16 -d "$ACCESS" "$ACCESS.part."
split -n l/16 -d "$MIX" "$MIX.part."
head -n "$(($(wc -l <"$ACCESS") / 2))" "$ACCESS" >"$ACCESS.half"
trap 'rm -f "$ACCESS".part.* "$MIX".part.* "$ACCESS.half"; lib_cleanup' EXIT

echo "bench_compare: $RUNS runs, $(nproc) cores; $("$PARQD" version 2>/dev/null | head -n 1)"
for r in $(seq "$RUNS"); do
    echo "  run $r/$RUNS"
    round access "$ACCESS" "$SCHEMA"
    round mix "$MIX"
done
report access "$ACCESS" "generated access logs (bench/gen_logs.mjs, seed 1); typed schema conf/schemas/access.yaml"
# The issue-22 targets, from the medians above (for humans: no exit code).
targets() { # LABEL
    local d=$(median "$T/res/$1.duckdb_2t" 1) t=$(median "$T/res/$1.parqd_default" 1)
    local ty=$( [ -s "$T/res/$1.parqd_typed" ] && median "$T/res/$1.parqd_typed" 1)
    local dm=$(median "$T/res/$1.parqd_daemon" 1)
    awk -v d="$d" -v t="$t" -v ty="${ty:-0}" -v dm="$dm" 'BEGIN {
        if (ty > 0) printf "  targets: typed %.2fx DuckDB (3x wanted), default %.2fx (2x), daemon %.0f%% of typed convert (85%%)\n", d / ty, d / t, 100 * ty / dm
        else printf "  targets: default %.2fx DuckDB (2x wanted), daemon %.0f%% of default convert\n", d / t, 100 * t / dm }'
}
targets access
if [ -s "$T/res/access.parqd_half" ]; then
    awk -v f="$(median "$T/res/access.parqd_typed" 1)" -v h="$(median "$T/res/access.parqd_half" 1)" \
        -v fk="$(median "$T/res/access.parqd_typed" 2)" -v hk="$(median "$T/res/access.parqd_half" 2)" 'BEGIN {
        printf "  linear cost: typed convert of the first half %.2f s, of all %.2f s: x%.2f for twice the input\n", h, f, f / h
        printf "               (2.00 is linear); peak RSS %.0f MiB for the half, %.0f MiB for all\n", hk / 1024, fk / 1024 }'
fi
report mix "$MIX" "real log mix (bench/e2e_input.mjs); default schema only (no typed schema covers the mix)"
targets mix
echo
echo "  speed = DuckDB 2-thread seconds / these seconds (above 1: faster than DuckDB);"
echo "  RSS, bytes = these / DuckDB 2 threads'. The daemon writes its spool (a second copy of the"
echo "  input) too; the zstd row is a floor for speed, not a Parquet file. Numbers are for humans."
