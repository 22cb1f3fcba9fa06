#!/usr/bin/env bash
# bench_order.sh - how much of the daemon's gap to `parqd convert` on an
# input comes from the order the daemon receives it in, not from the
# daemon (issue 22). bench_compare.sh feeds the daemon 16 slices of the
# input at once, so the spool (and so the pipeline) sees the slices
# interleaved: with the default schema, automatic shredding then picks
# its layout from a first segment that mixes every kind of record of the
# mix (zeek, Windows, CloudTrail), where convert of the file sees only the
# first kind; the layout, the row order and so the work differ.
#
# This script takes the daemon's own arrival order (16 cats into a daemon,
# kill -9 once every line is in the spool, spool_dump --lines) and runs
# `parqd convert` on the input as it is and as the daemon received it:
# CPU seconds, wall seconds, the layout chosen and the output bytes of
# each. The arrival order differs from run to run (the kernel's
# scheduling of 16 connections), so the layout can too. Not a test.
#
# usage: bench/bench_order.sh [BUILD_DIR] [MIX_MB] [RUNS]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-200}
RUNS=${3:-2}
. "$ROOT/tests/daemon/lib.sh"
lib_init bench_order
command -v /usr/bin/time >/dev/null || { echo "bench_order: needs /usr/bin/time"; exit 1; }
[ -x "$BUILD/spool_dump" ] || { echo "bench_order: needs $BUILD/spool_dump (cmake --build $BUILD --target spool_dump)"; exit 1; }

CACHE=$BUILD/bench-e2e
mkdir -p "$CACHE"
MIX=$CACHE/mix-${MB}.ndjson
[ -s "$MIX" ] || node "$ROOT/bench/e2e_input.mjs" "$ROOT/../shared/testdata/logs" "$MIX" "$MB" || exit 1
LINES=$(wc -l <"$MIX")
split -n l/16 -d "$MIX" "$T/part."

# arrival ORDER_FILE: the lines of $MIX in the order a daemon fed by 16
# clients spooled them.
arrival() {
    local port port_m c cats=() deadline
    port=$(free_port)
    port_m=$(free_port)
    rm -rf "$T/spool"
    cat >"$T/d.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$port"}
metrics: {listen: "127.0.0.1:$port_m"}
output: {dir: $T/d-out}
spool: {dir: $T/spool, sync: batch}
errors: {dead_letter: $T/d-rejects.ndjson}
EOF
    DLOG=$T/daemon.log
    : >"$DLOG"
    daemon_start "$T/d.yaml" "$DLOG" || { tail "$DLOG"; exit 1; }
    for part in "$T"/part.*; do
        # shellcheck disable=SC2016
        spawn bash -c 'exec cat "$1" >"/dev/tcp/127.0.0.1/$2"' _ "$part" "$port"
        cats+=("$SPAWNED")
    done
    for c in "${cats[@]}"; do wait_exit "$c" 600; done
    deadline=$((SECONDS + 300))
    until [ "$(metric "$(http_get 127.0.0.1 "$port_m" /metrics | tail -n +2)" \
        parqd_records_received_total)" = "$LINES" ] || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.05; done
    # kill -9: nothing published, every line still in the spool, in order
    daemon_stop KILL 10
    "$BUILD/spool_dump" --lines "$T/spool" >"$1" || exit 1
    [ "$(wc -l <"$1")" = "$LINES" ] || { echo "bench_order: the spool holds $(wc -l <"$1") of $LINES lines"; exit 1; }
}

# convert_run LABEL INPUT: one convert, one line of results.
convert_run() {
    rm -rf "$T/c-out"
    /usr/bin/time -f "%e %U %S" -o "$T/time" "$PARQD" convert -v -o "$T/c-out/" "$2" >/dev/null 2>"$T/c.err" ||
        { tail -n 3 "$T/c.err"; exit 1; }
    local s u sys layout
    read -r s u sys <"$T/time"
    layout=$(grep -o 'shredded as {.*}' "$T/c.err" | head -n 1 | grep -o '"[^"]*":' | wc -l)
    printf '  %-28s %6.2f s wall %6.2f CPU-s %4d shredded fields %11d output bytes\n' "$1" "$s" \
        "$(awk -v u="$u" -v s="$sys" 'BEGIN { print u + s }')" "$layout" \
        "$(find "$T/c-out" -name '*.parquet' -printf '%s\n' | awk '{ t += $1 } END { print t + 0 }')"
}

echo "bench_order: $MIX ($LINES lines), $RUNS runs, $(nproc) cores"
for r in $(seq "$RUNS"); do
    arrival "$T/arrival.ndjson"
    echo " run $r/$RUNS"
    convert_run "convert, file order" "$MIX"
    convert_run "convert, daemon's order" "$T/arrival.ndjson"
done
