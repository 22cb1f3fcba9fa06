#!/usr/bin/env bash
# test_s3_crash.sh - kill -9 during multipart uploads into radosgw (issue
# 18, must-hold 2). spool.sync: always; files of ~12 MiB uncompressed in
# 5 MiB parts, so most of the time a multipart upload is open. A sender
# streams unique lines and reconnects whenever the daemon is gone; 10
# times: wait 1-3 s (and, if no upload is open then, until one is, as in
# the slow TSan build), kill -9, snapshot what the spool held (spool_dump
# --lines), which objects existed and how many incomplete uploads were
# left, restart on the same spool. Finally SIGTERM; then every line ever
# spooled or published is in exactly one object, nothing twice, nothing
# not sent; objects published before a crash unchanged; and no incomplete
# multipart upload of parqd's remains (restarts aborted them).
#
#   bash test_s3_crash.sh BUILD_DIR TESTDATA_DIR
#
# CRASHES=N (default 10), SEED=N repeats the kill timings.
set -u
BUILD=${1:?usage: test_s3_crash.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/s3_common.sh"
s3_init test_s3_crash
SPOOL_DUMP="$BUILD/spool_dump"
[ -x "$SPOOL_DUMP" ] || { bad "spool_dump tool" "$SPOOL_DUMP not built"; finish; }

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
CRASHES=${CRASHES:-10}
SEED=${SEED:-$((RANDOM))}
RANDOM=$SEED
echo "seed $SEED (SEED=$SEED repeats the kill timings)"
s3_config "$T/parqd.yaml" "$PORT" "$PORT_M" "crash/" \
"  rotate: {max_bytes: 12MiB}
  row_group: {max_bytes: 1MiB}
  compression: none" always

daemon_start "$T/parqd.yaml" "$DLOG" || { bad "parqd starts"; finish; }
# 20,000 lines a second (~1 MiB/s of Parquet): a 12 MiB file fills in
# ~12 s, its upload open from the first 5 MiB part on; upload_moment still
# kills during uploads (9-10 of 10), and the final check reads ~2/3 of the
# lines it did at 40,000 (the cycles wait longer for an upload).
spawn node "$LIB_DIR/stream.mjs" --target "tcp:127.0.0.1:$PORT" --state "$T/sender.json" --rate 20000
SENDER=$SPAWNED

: >"$T/snap-lines"
: >"$T/snap-keys"
open_at_kill=0
# upload_open: the daemon's metrics show a multipart upload created and
# not completed (an object of this test is then half uploaded).
upload_open() {
    local m created done
    m=$(curl -s --max-time 2 "http://127.0.0.1:$PORT_M/metrics") || return 1
    created=$(metric "$m" 'parqd_s3_requests_total{op="CreateMultipartUpload",status="2xx"}')
    done=$(metric "$m" 'parqd_s3_requests_total{op="CompleteMultipartUpload",status="2xx"}')
    [ "$created" = missing ] && return 1
    [ "$done" = missing ] && done=0
    [ "$created" -gt "$done" ]
}
# A kill 1-3 s after the start; if no upload is open then (a slow build,
# TSan, is still replaying), at the first moment one is, within 30 s.
upload_moment() {
    sleep "$(awk -v r=$((RANDOM % 2001)) 'BEGIN { printf "%.3f", 1 + r / 1000 }')"
    local waited=0
    while ! upload_open && [ "$waited" -lt 150 ]; do
        sleep 0.2
        waited=$((waited + 1))
    done
}
# what the killed daemon left: its spool's lines, the objects, whether an
# upload was open
snapshot() {
    "$SPOOL_DUMP" --lines "$T/spool" >>"$T/snap-lines" 2>>"$T/spool_dump.err"
    rgw_list logs crash/ >>"$T/snap-keys" 2>/dev/null
    s3_no_uploads_left || open_at_kill=$((open_at_kill + 1))
}
crash_loop "$CRASHES" "$T/parqd.yaml" "$DLOG" upload_moment snapshot
check "kills landed during multipart uploads ($open_at_kill of $CRASHES left one open)" \
    test "$open_at_kill" -gt 0
sleep 1
kill -TERM "$SENDER"
wait_exit "$SENDER" 10
daemon_stop TERM 120
check "SIGTERM after the crashes: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
check "no incomplete multipart upload left" s3_no_uploads_left
ABORTED=$(grep -o 'aborted [0-9]* incomplete upload' "$DLOG" | awk '{ s += $2 } END { print s + 0 }')
note "restarts aborted $ABORTED incomplete uploads of parqd's"

s3_download crash/ "$T/out"
# objects seen at a kill: "PATH SIZE INODE" of their download now
: >"$T/snap-files"
sort -u "$T/snap-keys" | while IFS=$'\t' read -r key size; do
    f="$T/out/${key#crash/}"
    ino=$(stat -c %i "$f" 2>/dev/null || echo 0)
    echo "$f $size $ino" >>"$T/snap-files"
done
sort -u -o "$T/snap-lines" "$T/snap-lines"
echo "spool snapshots: $(wc -l <"$T/snap-lines") distinct lines; sender: $(cat "$T/sender.json")"
node_checks crash_check.mjs --out "$T/out" --state "$T/sender.json" --snap-lines "$T/snap-lines" \
    --snap-files "$T/snap-files" --tmp "$T"
finish
