# part_crash.sh - the kill -9 loop and verdict shared by the partitioned
# crash tests (test_daemon_partition_crash.sh into a directory,
# test_s3_partition_crash.sh into radosgw); sourced after lib.sh, with the
# daemon running on $T/parqd.yaml (log $DLOG, spool $T/spool, metrics on
# $PORT_M) and part_stream.mjs sending to it.
#
# part_crash_loop SENDER: CRASHES times (default 5): wait 0.4-1.2 s into
# the burst, kill -9, snapshot the spool's lines (spool_dump --lines: the
# settled point: every line there was accepted), restart on the same spool
# and output. Then SIGTERM to the sender; once idle, the open files of
# past event hours close for their period (idle for rotate.max_age, 1 s):
# /metrics counts them, and the records routed by ingestion time.
#
# part_crash_verdict OUT: part_check.mjs on OUT (the files, or the
# objects downloaded), and no dead letters.

period_closed() {
    local n
    n=$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics | tail -n +2)" \
        'parqd_files_closed_total{reason="period"}')
    [ "${n:-0}" -gt 0 ] 2>/dev/null
}

part_kill_moment() {
    sleep "$(awk -v r=$((RANDOM % 801)) 'BEGIN { printf "%.3f", 0.4 + r / 1000 }')"
}

part_snapshot() {
    "$SPOOL_DUMP" --lines "$T/spool" >>"$T/snap-lines" 2>>"$T/spool_dump.err"
    note "kill $1: $(cat "$T/spool/checkpoint" 2>/dev/null | grep -c '^range ') published ranges above the watermark in the checkpoint"
}

part_crash_loop() {
    local sender=$1
    : >"$T/snap-lines"
    crash_loop "${CRASHES:-5}" "$T/parqd.yaml" "$DLOG" part_kill_moment part_snapshot
    kill -TERM "$sender"
    wait_exit "$sender" 10
    check "the sender stops (status $EXIT_STATUS)" test "$EXIT_STATUS" = 0
    # Idle now: the open files of past event hours close for their period
    # (rotate.max_age 1 s idle, checked at each 1 s tick).
    local m period fallback
    wait_for 10 period_closed
    m=$(http_get 127.0.0.1 "$PORT_M" /metrics | tail -n +2)
    period=$(metric "$m" 'parqd_files_closed_total{reason="period"}')
    fallback=$(metric "$m" parqd_records_time_fallback_total)
    check "files of past event hours closed for their period once idle ($period)" \
        test "${period:-0}" -gt 0 2>/dev/null
    check "records without a usable ts counted ($fallback)" test "${fallback:-0}" -gt 0 2>/dev/null
}

part_crash_verdict() {
    sort -u -o "$T/snap-lines" "$T/snap-lines"
    node_checks part_check.mjs --out "$1" --state "$T/sender.json" --snap-lines "$T/snap-lines"
    check "no dead letters" test ! -s "$T/rejects.ndjson"
    note "$(grep -c 'replay done' "$DLOG") replays; $(grep -c 'published ' "$DLOG") files published"
}
