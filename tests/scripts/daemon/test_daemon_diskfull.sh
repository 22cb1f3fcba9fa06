#!/usr/bin/env bash
# test_daemon_diskfull.sh - a full disk (issue 8; DESIGN.md "nothing is
# silently dropped"), with real ENOSPC from a small tmpfs:
#  1. output dir on an 8 MiB tmpfs, spool on the normal disk; more data
#     than fits is sent: /health answers 503 naming the output, parqd keeps
#     running and keeps accepting into the spool, every visible file is
#     complete; the tmpfs grows to 256 MiB: everything lands (exact
#     multiset) and /health is 200 again.
#  2. spool and output on the same full tmpfs: reading pauses
#     (backpressure: the sender blocks), /health is 503 naming the spool;
#     after the tmpfs grows, everything sent lands.
# Needs mount(2) (root); without it each part is skipped with the reason.
#
#   bash test_daemon_diskfull.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed[, K skipped]".
set -u
BUILD=${1:?usage: test_daemon_diskfull.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_diskfull

if ! mount_tmpfs "$T/probe" 1m; then
    skip "full disk on tmpfs" "mounting a tmpfs is not permitted here (needs root / CAP_SYS_ADMIN)"
    finish
fi

health() { http_get 127.0.0.1 "$PORT_M" /health; }
health_is() { # health_is STATUS [BODY-REGEX]
    local h
    h=$(health)
    [ "$(head -n 1 <<<"$h")" = "$1" ] && { [ -z "${2:-}" ] || tail -n +2 <<<"$h" | grep -qiE "$2"; }
}
rows_written() { metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_rows_written_total; }
# Rows in published files, from the log's "published PATH (N rows, ...)".
published_rows() { sed -n 's/.* published .* (\([0-9]*\) rows,.*/\1/p' "$DLOG" | awk '{ s += $1 } END { print s + 0 }'; }
all_written() { [ "$(published_rows)" = "$1" ]; }
# not_spinning SECONDS: parqd used under a quarter of a core meanwhile
# (a full disk is waited out, not retried in a busy loop).
not_spinning() {
    local c0 c1
    c0=$(cpu_seconds "$DPID")
    sleep "$1"
    c1=$(cpu_seconds "$DPID")
    SPIN=$(awk -v a="$c0" -v b="$c1" -v s="$1" 'BEGIN { printf "%.2f", (b - a) / s }')
    awk -v r="$SPIN" 'BEGIN { exit !(r < 0.25) }'
}
visible_complete() { # every published file has PAR1 at both ends
    local f
    while IFS= read -r f; do
        [ "$(head -c 4 "$f")" = PAR1 ] && [ "$(tail -c 4 "$f")" = PAR1 ] || return 1
    done < <(parquet_files "$1")
}

# write_config NAME OUTDIR SPOOLDIR
write_config() {
    cat >"$T/$1.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $2
  rotate: {max_rows: 4000}
  row_group: {max_rows: 1000}
  compression: zstd
spool: {dir: $3, sync: batch}
limits: {max_buffered_bytes: 16MiB}
errors: {dead_letter: $T/$1.rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF
}

N=24000
node_tool gen.mjs --lines "$N" --payload 700 --seed 1 --tag full --out "$T/input.ndjson"

# ---- 1: output disk full, spool fine ------------------------------------------
PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/part1.log"
mount_tmpfs "$T/out1" 8m
write_config part1 "$T/out1" "$T/spool1"
if daemon_start "$T/part1.yaml" "$DLOG"; then
    ok "part 1: parqd starts (output on an 8 MiB tmpfs)"
    SINCE=$(now_us)
    if node_tool send.mjs --targets "tcp:127.0.0.1:$PORT" --clients 4 --blank 0 --seed 1 "$T/input.ndjson" \
        >"$T/send1.out" 2>&1; then
        ok "part 1: all $N lines accepted while the output disk fills ($(du -sh "$T/input.ndjson" | cut -f1))"
    else
        bad "part 1: all $N lines accepted while the output disk fills" "$(tail -n 2 "$T/send1.out" | tr '\n' ' ')"
    fi
    if wait_for 60 health_is 503 'output'; then
        ok "part 1: /health is 503 naming the output: $(health | tail -n +2 | head -c 300)"
    else
        bad "part 1: /health is 503 naming the output" "$(health | tr '\n' ' ' | head -c 300)"
    fi
    grep -m1 -i 'output:.*space' "$DLOG" | cut -c1-300
    check "part 1: the log says the disk is full" grep -qi 'output:.*space' "$DLOG"
    check "part 1: parqd keeps running" alive "$DPID"
    check "part 1: every visible file is complete while the disk is full" visible_complete "$T/out1"
    check "part 1: not everything could be written yet ($(published_rows) of $N rows published)" \
        test "$(published_rows)" -lt "$N"
    if not_spinning 3; then ok "part 1: while the output disk is full parqd waits ($SPIN of a core)"
    else bad "part 1: while the output disk is full parqd waits" "it uses $SPIN of a core"; fi

    mount -o remount,size=256m "$T/out1"
    if wait_for 75 all_written "$N"; then
        ok "part 1: after the disk grows, all $N rows are published"
    else
        bad "part 1: after the disk grows, all $N rows are published" "$(published_rows) rows"
    fi
    check "part 1: metrics: rows written = rows published ($(rows_written) = $(published_rows))" \
        test "$(rows_written)" = "$(published_rows)"
    if wait_for 30 health_is 200; then ok "part 1: /health is 200 again"
    else bad "part 1: /health is 200 again" "$(health | tr '\n' ' ' | head -c 300)"; fi
    daemon_stop TERM 60
    check "part 1: SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
    node_checks verify.mjs --label "part 1" --out "$T/out1" --min-files 2 --since-us "$SINCE" \
        --tmp "$T" "$T/input.ndjson"
else
    bad "part 1: parqd starts"
fi

# ---- 2: spool and output on the same full disk ---------------------------------
PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/part2.log"
mount_tmpfs "$T/disk2" 8m
write_config part2 "$T/disk2/out" "$T/disk2/spool"
if daemon_start "$T/part2.yaml" "$DLOG"; then
    ok "part 2: parqd starts (spool and output on one 8 MiB tmpfs)"
    SINCE=$(now_us)
    spawn node "$LIB_DIR/send.mjs" --targets "tcp:127.0.0.1:$PORT" --clients 4 --blank 0 --seed 2 \
        "$T/input.ndjson" >"$T/send2.out" 2>&1
    SENDER=$SPAWNED
    if wait_for 60 health_is 503 'spool'; then
        ok "part 2: /health is 503 naming the spool: $(health | tail -n +2 | head -c 300)"
    else
        bad "part 2: /health is 503 naming the spool" "$(health | tr '\n' ' ' | head -c 300)"
    fi
    if not_spinning 3; then ok "part 2: while the spool disk is full parqd waits ($SPIN of a core)"
    else bad "part 2: while the spool disk is full parqd waits" "it uses $SPIN of a core"; fi
    check "part 2: parqd keeps running" alive "$DPID"
    check "part 2: reading is paused: the sender is blocked" alive "$SENDER"
    T_FIRST=$(now_us)
    M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
    check "part 2: metrics: backpressure active ($(metric "$M" parqd_backpressure_active))" \
        test "$(metric "$M" parqd_backpressure_active)" = 1
    check "part 2: metrics: spool write errors counted ($(metric "$M" parqd_spool_write_errors_total))" \
        test "$(metric "$M" parqd_spool_write_errors_total)" -gt 0
    sleep 1
    M2=$(http_get 127.0.0.1 "$PORT_M" /metrics)
    T_SECOND=$(now_us)
    # Per second of the time the two scrapes span (each is a node process:
    # on a loaded machine "sleep 1" between them is 2-3 s between reads).
    # A spinning retry loop makes thousands a second; the daemon's own
    # retry timer about 50.
    ERRS=$(($(metric "$M2" parqd_spool_write_errors_total) - $(metric "$M" parqd_spool_write_errors_total)))
    ERR_RATE=$((ERRS * 1000000 / (T_SECOND - T_FIRST)))
    check "part 2: failed spool writes are retried at a bounded rate ($ERRS in $(((T_SECOND - T_FIRST) / 1000)) ms: $ERR_RATE/s, at most 100/s)" \
        test "$ERR_RATE" -le 100

    mount -o remount,size=256m "$T/disk2"
    wait_exit "$SENDER" 90
    check "part 2: after the disk grows, the sender finishes (status $EXIT_STATUS)" test "$EXIT_STATUS" = 0
    if wait_for 75 all_written "$N"; then
        ok "part 2: all $N rows are published"
    else
        bad "part 2: all $N rows are published" "$(published_rows) rows"
    fi
    if wait_for 30 health_is 200; then ok "part 2: /health is 200 again"
    else bad "part 2: /health is 200 again" "$(health | tr '\n' ' ' | head -c 300)"; fi
    daemon_stop TERM 60
    check "part 2: SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
    node_checks verify.mjs --label "part 2" --out "$T/disk2/out" --min-files 2 --since-us "$SINCE" \
        --tmp "$T" "$T/input.ndjson"
else
    bad "part 2: parqd starts"
fi
finish
