#!/usr/bin/env bash
# test_s3_daemon.sh - the daemon with output.s3 into a real radosgw (issue
# 18, must-hold 1): every real log file in TESTDATA/logs sent by 20
# concurrent TCP clients; SIGTERM; the objects, downloaded, read by DuckDB
# (verify.mjs: the records equal the lines sent, exactly; parqd.spool
# ranges disjoint and complete), parquet-wasm and hyparquet
# (s3_readers.mjs); several objects (rotation), only complete .parquet
# keys, no multipart upload left, the S3 metrics.
#
#   bash test_s3_daemon.sh BUILD_DIR TESTDATA_DIR
set -u
BUILD=${1:?usage: test_s3_daemon.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../testdata.sh" "${2:-}"
testdata_require logs
. "$(dirname "$0")/s3_common.sh"
s3_init test_s3_daemon

LOGS=("$TESTDATA"/logs/*/*.json)
PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
s3_config "$T/parqd.yaml" "$PORT" "$PORT_M" "run/"

SINCE=$(now_us)
if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts with output.s3" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    finish
fi
ok "parqd starts with output.s3"
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
if node_tool send.mjs --targets "tcp:127.0.0.1:$PORT" --clients 20 --seed "$SEED" --blank 50 \
    "${LOGS[@]}" >"$T/send.out" 2>&1; then
    ok "20 clients sent every log file ($(tail -n 1 "$T/send.out" | cut -c7-))"
else
    bad "20 clients sent every log file" "$(tr '\n' ' ' <"$T/send.out" | cut -c1-300)"
fi
NLINES=$(cat "${LOGS[@]}" | grep -c .)
settled() {
    [ "$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_records_received_total)" = "$NLINES" ]
}
wait_for 30 settled
M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
daemon_stop TERM 120
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
UNTIL=$(now_us)
check "shutdown logged as every file published" grep -q "every file published" "$DLOG"

KEYS=$(rgw_ls logs)
NKEYS=$(printf '%s\n' $KEYS | grep -c .)
NOTPQ=$(printf '%s\n' $KEYS | grep -v -c '\.parquet$')
check "only .parquet objects under the prefix ($NKEYS objects, $NOTPQ others)" test "$NOTPQ" = 0
check "no incomplete multipart upload left" s3_no_uploads_left
s3_download run/ "$T/dl"
node_checks verify.mjs --out "$T/dl" --min-files 3 --rejects 0 --since-us "$SINCE" \
    --until-us "$UNTIL" --tmp "$T" "${LOGS[@]}"
node_checks ../interop/s3_readers.mjs --dir "$T/dl" "${LOGS[@]}"

M2=$(printf '%s\n' "$M" | grep -c '^parqd_s3_')
PUB=$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics 2>/dev/null)" parqd_s3_objects_published_total)
check "the S3 metrics are on /metrics ($M2 samples)" test "$M2" -gt 10
check "no errors or warnings in the log" test "$(grep -c -E 'error:|warning:' "$DLOG")" = 0
grep -q -E 'AWS_SECRET|'"$AWS_SECRET_ACCESS_KEY" "$DLOG" && bad "the secret key never appears in the log" ||
    ok "the secret key never appears in the log"
: "$PUB"
echo "seed $SEED"
finish
