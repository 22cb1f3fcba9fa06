#!/usr/bin/env bash
# test_s3_convert.sh - `parqd convert -o s3://logs/big/` of a 1 GiB input
# into one object (rotate.max_bytes 2GiB; a multipart upload of 16 MiB
# parts) against the same convert into a local file (issue 18, must-hold
# 5): peak RSS at most 64 MiB above the local run's (parts in memory are
# bounded, not the file), the object reads back whole (a schema without
# the ingestion time makes both runs write the same bytes: the object
# downloaded equals the local file, and DuckDB counts every record), no
# upload left, and the credentials from the environment only.
#
#   bash test_s3_convert.sh BUILD_DIR TESTDATA_DIR
# SIZE_MB=N changes the input size (default 1024; 256 in an ASan build,
# where the RSS bound is not checked).
set -u
BUILD=${1:?usage: test_s3_convert.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../testdata.sh" "${2:-}"
testdata_require logs
. "$(dirname "$0")/s3_common.sh"
s3_init test_s3_convert
if sanitized_build; then SIZE_MB=${SIZE_MB:-256}; else SIZE_MB=${SIZE_MB:-1024}; fi

node "$ROOT/bench/e2e_input.mjs" "$TESTDATA/logs" "$T/in.ndjson" "$SIZE_MB" >/dev/null
check "input: $(($(stat -c %s "$T/in.ndjson") >> 20)) MiB of log lines" test -s "$T/in.ndjson"
printf 'columns:\n  - {name: event, type: variant, from: "*"}\n' >"$T/schema.yaml"
cat >"$T/conv.yaml" <<CONF
output:
  rotate: {max_bytes: 2GiB}
  path: "big-{seq}.parquet"
CONF

rss_run() { # rss_run OUTFILE_PREFIX ARGS...: peak RSS (KiB) into $RSS, status into $ST
    local pre=$1
    shift
    ST=0
    /usr/bin/time -f '%M' -o "$pre.rss" "$PARQD" convert --config "$T/conv.yaml" --schema "$T/schema.yaml" "$@" \
        "$T/in.ndjson" 2>"$pre.err" >/dev/null || ST=$?
    RSS=$(tail -n 1 "$pre.rss")
}
T0=$(date +%s.%N)
rss_run "$T/local" -o "$T/local.parquet"
T1=$(date +%s.%N)
LRSS=$RSS
check "local convert exits 0 ($ST)" test "$ST" = 0
AWS_ENDPOINT_URL="$RGW_ENDPOINT" rss_run "$T/s3" -o s3://logs/big/
T2=$(date +%s.%N)
SRSS=$RSS
check "S3 convert exits 0 ($ST): $(tail -n 1 "$T/s3.err" | cut -c1-160)" test "$ST" = 0
note "peak RSS: local $((LRSS >> 10)) MiB in $(echo "$T1 - $T0" | bc | cut -c1-5) s," \
     "S3 $((SRSS >> 10)) MiB in $(echo "$T2 - $T1" | bc | cut -c1-5) s"
if sanitized_build; then
    skip "peak RSS at most 64 MiB above the local convert" "ASan build: memory bounds do not apply"
else
    check "peak RSS at most 64 MiB above the local convert ($(((SRSS - LRSS) >> 10)) MiB above)" \
        test $((SRSS - LRSS)) -le $((64 << 10))
fi
KEYS=$(rgw_ls logs)
check "one object: $KEYS" test "$(printf '%s\n' $KEYS | grep -c .)" = 1
check "no incomplete multipart upload left" s3_no_uploads_left
rgw_get logs "big/big-000001.parquet" "$T/s3.parquet"
check "the object equals the local file, byte for byte ($(stat -c %s "$T/s3.parquet") bytes)" \
    cmp -s "$T/s3.parquet" "$T/local.parquet"
N=$(grep -c . "$T/in.ndjson")
# Many files: each is uploaded when finished (none kept in memory until the
# end), all published together.
head -n 20000 "$T/in.ndjson" >"$T/small.ndjson"
printf 'output:\n  rotate: {max_rows: 2000}\n  path: "many-{seq}.parquet"\n' >"$T/many.yaml"
AWS_ENDPOINT_URL="$RGW_ENDPOINT" "$PARQD" convert --config "$T/many.yaml" -o s3://logs/many/ \
    "$T/small.ndjson" >/dev/null 2>"$T/many.err" && ST=0 || ST=$?
check "convert into 10 objects exits 0 ($ST): $(tail -n 1 "$T/many.err" | cut -c1-120)" test "$ST" = 0
check "10 objects under many/, no upload left" \
    test "$(rgw_ls logs | tr '\t' '\n' | grep -c '^many/')" = 10
s3_no_uploads_left || bad "no upload left after the 10-file convert"
# Event time into S3: each record under the hour of its own `t`.
printf '%s\n' '{"svc":"a","t":"2026-03-01T10:05:00Z"}' '{"svc":"a","t":1772362800}' \
    '{"svc":"b","t":"2026-03-01T10:59:59Z"}' >"$T/ev.ndjson"
printf 'output:\n  path: "svc={{svc}}/hour=%%H/{seq}.parquet"\n  time_from: t\n' >"$T/ev.yaml"
AWS_ENDPOINT_URL="$RGW_ENDPOINT" "$PARQD" convert --config "$T/ev.yaml" -o s3://logs/ev/ \
    "$T/ev.ndjson" >/dev/null 2>"$T/ev.err" && ST=0 || ST=$?
EVK=$(rgw_ls logs | tr '\t' '\n' | grep '^ev/' | sed 's|/[^/]*$||' | sort | tr '\n' ' ')
check "time_from: convert into S3 exits 0 ($ST), objects under their event hours ($EVK)" \
    test "$ST:$EVK" = "0:ev/svc=a/hour=10 ev/svc=a/hour=11 ev/svc=b/hour=10 "
R=$(duck "SELECT count(*) AS n FROM read_parquet('$T/s3.parquet')")
check "DuckDB reads every record of the object ($R, $N lines)" test "$R" = "[{\"n\":\"$N\"}]"
finish
