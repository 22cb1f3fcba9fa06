#!/usr/bin/env bash
# test_s3_errors.sh - errors retrying cannot fix, and an unreachable
# endpoint (issue 18, must-hold 4): a wrong secret key (from key files), a
# missing bucket and an endpoint nobody listens on. For each, `parqd check
# --connect` fails naming the S3 error, and the daemon (still accepting
# into the spool) says it on /health (503) and in the log once per failing
# operation, not once per retry. Key files readable by others are refused.
# The secret key's bytes appear in no output at all: logs, check's
# output, /metrics, /health.
#
#   bash test_s3_errors.sh BUILD_DIR TESTDATA_DIR
set -u
BUILD=${1:?usage: test_s3_errors.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/s3_common.sh"
s3_init test_s3_errors
SECRET="$AWS_SECRET_ACCESS_KEY"
WRONG="wrong${SECRET:5}"
: >"$T/all-output"

# case NAME CODE_REGEX ENDPOINT BUCKET: one configuration, checked both ways.
run_case() {
    local name=$1 code=$2 ep=$3 bucket=$4 port port_m cfg="$T/$1.yaml" log="$T/$1.log"
    port=$(free_port)
    port_m=$(free_port)
    cat >"$cfg" <<CONF
inputs:
  - {type: tcp, listen: "127.0.0.1:$port"}
output:
  s3:
    bucket: $bucket
    endpoint: "$ep"
    path_style: true
    credentials: {access_key_id_file: $T/id.key, secret_access_key_file: $T/secret.key}
  rotate: {max_age: 1s}
spool: {dir: $T/spool-$name}
errors: {dead_letter: $T/rejects-$name.ndjson}
metrics: {listen: "127.0.0.1:$port_m"}
CONF
    local out st=0
    out=$("$PARQD" check --config "$cfg" --connect 2>&1 >/dev/null) || st=$?
    printf '%s\n' "$out" >>"$T/all-output"
    check "$name: parqd check --connect fails ($st): $(tail -n 1 <<<"$out" | cut -c1-150)" \
        test "$st" != 0 -a "$(tail -n 1 <<<"$out" | grep -c -E "$code")" = 1
    daemon_start "$cfg" "$log" || { bad "$name: parqd starts (accepting into the spool)"; return; }
    printf '{"n":%d}\n' $(seq 1 50) >"$T/lines"
    bash -c 'cat "$1" >"/dev/tcp/127.0.0.1/$2"' _ "$T/lines" "$port"
    local h n1 n2
    unhealthy() { [ "$(http_get 127.0.0.1 "$port_m" /health | head -n 1)" = 503 ]; }
    wait_for 30 unhealthy
    h=$(http_get 127.0.0.1 "$port_m" /health)
    n1=$(grep -c -E "error: .*$code" "$log")
    sleep 10
    n2=$(grep -c -E "error: .*$code" "$log")
    { printf '%s\n' "$h"; http_get 127.0.0.1 "$port_m" /metrics; } >>"$T/all-output"
    check "$name: /health 503 naming it: $(tail -n +2 <<<"$h" | cut -c1-150)" \
        test "$(head -n 1 <<<"$h")" = 503 -a "$(grep -c -E "$code" <<<"$h")" = 1
    check "$name: logged once per failing operation, not per retry ($n1 lines, then $n2)" \
        test "$n1" -ge 1 -a "$n1" -le 3 -a "$n2" = "$n1"
    note "$name: $(grep -m1 -E "error: .*$code" "$log" | cut -c1-220)"
    if [ "$name" = wrong-secret ]; then
        # the right key into the file, SIGHUP: credentials are read again
        printf '%s\n' "$SECRET" >"$T/secret.key"
        kill -HUP "$DPID"
        healthy() { [ "$(http_get 127.0.0.1 "$port_m" /health | head -n 1)" = 200 ]; }
        wait_for 60 healthy
        check "$name: after the key file is fixed, SIGHUP reads it and the lines land" \
            test "$(rgw_ls logs | grep -c '\.parquet')" -ge 1
    fi
    daemon_stop TERM 30
    cat "$log" >>"$T/all-output"
}

printf '%s\n' "$AWS_ACCESS_KEY_ID" >"$T/id.key"
printf '%s\n' "$SECRET" >"$T/secret.key"
chmod 644 "$T/id.key" "$T/secret.key"
cat >"$T/mode.yaml" <<CONF
output:
  s3: {bucket: logs, endpoint: "$RGW_ENDPOINT", path_style: true,
       credentials: {access_key_id_file: $T/id.key, secret_access_key_file: $T/secret.key}}
CONF
OUT=$("$PARQD" check --config "$T/mode.yaml" --connect 2>&1 >/dev/null)
printf '%s\n' "$OUT" >>"$T/all-output"
check "a key file readable by others is refused: $(tail -n 1 <<<"$OUT" | cut -c1-120)" \
    grep -q "readable by group or others" <<<"$OUT"
chmod 600 "$T/id.key" "$T/secret.key"
OUT=$("$PARQD" check --config "$T/mode.yaml" --connect 2>&1)
check "the right key files connect" grep -q "credentials and bucket access verified" <<<"$OUT"

printf '%s\n' "$WRONG" >"$T/secret.key"
run_case wrong-secret 'SignatureDoesNotMatch|AccessDenied|InvalidAccessKeyId' "$RGW_ENDPOINT" logs
printf '%s\n' "$SECRET" >"$T/secret.key"
run_case no-bucket 'NoSuchBucket' "$RGW_ENDPOINT" missing-bucket
run_case unreachable 'cannot reach' "http://127.0.0.1:$(free_port)" logs

check "the secret key appears in no output ($(wc -l <"$T/all-output") lines searched)" \
    test "$(grep -c -F "$SECRET" "$T/all-output")" = 0
check "the wrong secret key appears in no output either" \
    test "$(grep -c -F "$WRONG" "$T/all-output")" = 0
finish
