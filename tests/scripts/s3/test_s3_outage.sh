#!/usr/bin/env bash
# test_s3_outage.sh - radosgw stopped for 20 s under load (issue 18,
# must-hold 3): a sender streams unique lines; files close every second
# (rotate.max_age), so publications fail during the outage. parqd must
# keep accepting (records received keep rising), /health must answer 503
# naming the S3 error, the retries must not spin (parqd's CPU seconds
# during the outage are reported and bounded), and once radosgw is back
# everything lands exactly once: every line handed to a socket is in one
# object, none twice, and no multipart upload is left.
#
#   bash test_s3_outage.sh BUILD_DIR TESTDATA_DIR
set -u
BUILD=${1:?usage: test_s3_outage.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/s3_common.sh"
s3_init test_s3_outage

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
s3_config "$T/parqd.yaml" "$PORT" "$PORT_M" "outage/" "  rotate: {max_age: 1s}"
daemon_start "$T/parqd.yaml" "$DLOG" || { bad "parqd starts"; finish; }
spawn node "$LIB_DIR/stream.mjs" --target "tcp:127.0.0.1:$PORT" --state "$T/sender.json" --rate 2000
SENDER=$SPAWNED
sleep 3
received() { metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_records_received_total; }

rgw_stop_gw
CPU0=$(cpu_seconds "$DPID")
R0=$(received)
sleep 10
H=$(http_get 127.0.0.1 "$PORT_M" /health)
R1=$(received)
sleep 10
CPU1=$(cpu_seconds "$DPID")
R2=$(received)
CPU=$(awk -v a="$CPU0" -v b="$CPU1" 'BEGIN { printf "%.2f", b - a }')
check "health: 503 during the outage ($(head -n 1 <<<"$H"))" test "$(head -n 1 <<<"$H")" = 503
check "health names the S3 error: $(tail -n +2 <<<"$H" | cut -c1-160)" \
    grep -q -E 'S3 .*(cannot reach|Connection refused|Could not connect)' <<<"$H"
check "parqd keeps accepting during the outage (records received $R0 -> $R1 -> $R2)" \
    test "$R2" -gt "$R1" -a "$R1" -gt "$R0"
check "no busy loop: $CPU CPU seconds in the 20 s outage (at most 6, 2000 lines/s arriving)" \
    awk -v c="$CPU" 'BEGIN { exit !(c <= 6) }'
note "parqd used $CPU CPU seconds during the 20 s outage"

rgw_start_gw || bad "radosgw starts again"
healthy() { [ "$(http_get 127.0.0.1 "$PORT_M" /health | head -n 1)" = 200 ]; }
if wait_for 60 healthy; then ok "health: 200 again after the outage"; else bad "health: 200 again after the outage"; fi
kill -TERM "$SENDER"
wait_exit "$SENDER" 10
daemon_stop TERM 120
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
check "no incomplete multipart upload left" s3_no_uploads_left
LOGGED=$(grep -c 'output: S3' "$DLOG")
check "the outage's error is logged, not once per retry ($LOGGED lines)" test "$LOGGED" -ge 1 -a "$LOGGED" -le 3
s3_download outage/ "$T/out"
: >"$T/none"
node_checks crash_check.mjs --out "$T/out" --state "$T/sender.json" --snap-lines "$T/none" \
    --snap-files "$T/none" --tmp "$T" >"$T/check.out"
cat "$T/check.out"
NEVER=$(grep -o '[0-9]* never accepted' "$T/check.out" | awk '{ print $1 }')
check "every line handed to a socket landed (${NEVER:-?} missing)" test "${NEVER:-1}" = 0
finish
