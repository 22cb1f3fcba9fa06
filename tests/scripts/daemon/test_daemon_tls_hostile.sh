#!/usr/bin/env bash
# test_daemon_tls_hostile.sh - hostile clients of a TLS input, all at once
# (issue 11), while 20 well-behaved TLS clients send 20,000 records:
#   - 1,000 half-open handshakes (half send nothing, half the start of a
#     ClientHello), held open by the client;
#   - a slow handshake (one byte every 100 ms through a relay);
#   - 100 connections of random bytes (some with TLS record headers);
#   - a TLS client that sends 200 records, then a forged record;
#   - a TLS 1.2 renegotiation attempt (`openssl s_client`, then `R`).
# Limits: handshake_timeout 2s, max_connections 2048, max_buffered_bytes
# 16MiB. Checks: every good record and the forging client's 200 records
# land, and nothing else (verify.mjs); the server closes all 1,000
# half-open connections itself (the handshake timeout); the refusals are
# counted; parqd survives and ends with 0 connections open; peak RSS
# (VmHWM) stays under a bound derived from the limits (printed with the
# measured value).
#
#   bash test_daemon_tls_hostile.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_tls_hostile.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
. "$(dirname "$0")/../../daemon/pki.sh"
lib_init test_daemon_tls_hostile

HALF=${HALF_OPEN:-1000}
GOOD=20000
MAX_BUF_MIB=16
MAX_LINE=$((1024 * 1024))
raise_fd_limit $((HALF * 2 + 512))
if [ "$FD_LIMIT" -lt $((HALF * 2 + 512)) ]; then
    HALF=$(((FD_LIMIT - 512) / 2))
    note "open files limited to $FD_LIMIT: $HALF half-open connections instead of 1000"
fi

PKI="$T/pki"
if ! pki_make "$PKI"; then
    bad "test PKI made with openssl req/x509"
    finish
fi
PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
cat >"$T/parqd.yaml" <<EOF
inputs:
  - type: tcp
    listen: "127.0.0.1:$PORT"
    tls: {cert: $PKI/server.crt, key: $PKI/server.key, handshake_timeout: 2s}
output:
  dir: $T/out
  rotate: {max_rows: 10000}
  row_group: {max_rows: 2000, max_bytes: 4MiB}
spool: {dir: $T/spool}
limits: {max_line_bytes: 1MiB, max_buffered_bytes: ${MAX_BUF_MIB}MiB, max_connections: 2048,
         idle_timeout: 60s}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF
node "$LIB_DIR/gen.mjs" --lines "$GOOD" --payload 200 --seed good --tag good --out "$T/good.ndjson" >/dev/null

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
ok "parqd starts"
SINCE=$(now_us)
HWM_START=$(proc_kb "$DPID" VmHWM)
spawn bash -c 'while kill -0 "$1" 2>/dev/null; do
    awk "/^VmHWM:/ { print \$2 }" "/proc/$1/status" >"$2.tmp" 2>/dev/null && mv "$2.tmp" "$2"
    sleep 0.2; done' _ "$DPID" "$T/hwm"

H="$LIB_DIR/tls_hostile.mjs"
# The slow client first: its connection must not wait behind 1,000 others
# in the listen backlog (a dropped SYN is retried after 1, 3, 7 ... s).
spawn node "$H" slow --port "$PORT" --ca "$PKI/ca.crt"
P_SLOW=$SPAWNED
spawn node "$H" halfopen --port "$PORT" --count "$HALF" --hold-s 60 --report "$T/halfopen.json"
P_HALF=$SPAWNED
sleep 1
spawn node "$H" garbage --port "$PORT" --count 100 --seed 7
P_GARBAGE=$SPAWNED
spawn node "$H" broken --port "$PORT" --ca "$PKI/ca.crt" --lines 200 --seed 8 --expect "$T/broken.ndjson"
P_BROKEN=$SPAWNED
spawn bash -c '{ sleep 1; echo R; sleep 2; } | timeout 20 openssl s_client -tls1_2 \
    -connect "127.0.0.1:$1" -servername localhost -CAfile "$2" >"$3" 2>&1; echo "s_client status $?" >>"$3"' \
    _ "$PORT" "$PKI/ca.crt" "$T/reneg.out"
P_RENEG=$SPAWNED
spawn node "$LIB_DIR/send.mjs" --targets "tls:127.0.0.1:$PORT" --ca "$PKI/ca.crt" --clients 20 \
    --max-delay-ms 1 "$T/good.ndjson"
P_GOOD=$SPAWNED

for p in GOOD BROKEN GARBAGE SLOW RENEG HALF; do
    pid_var=P_$p
    wait_exit "${!pid_var}" 180
    check "client $p finished (status $EXIT_STATUS)" test "$EXIT_STATUS" = 0
done
echo "  renegotiation attempt: $(grep -A1 'RENEGOTIATING' "$T/reneg.out" | tr '\n' ' ' | cut -c1-200)"
check "the renegotiation is refused (no_renegotiation alert)" \
    bash -c "grep -q 'RENEGOTIATING' '$T/reneg.out' && grep -q 'no renegotiation' '$T/reneg.out'"

REPORT=$(cat "$T/halfopen.json" 2>/dev/null || echo '{}')
echo "  half-open: $REPORT"
half_ok=$(node -e 'const r = JSON.parse(process.argv[1]), n = Number(process.argv[2]);
console.log(r.connected === n && r.closedByServer === n ? 1 : 0);' "$REPORT" "$HALF")
check "all $HALF half-open handshakes connected and were closed by the server" test "$half_ok" = 1

M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
printf '%s\n' "$M" | grep -E '^parqd_(connections|records_received)' | sed 's/^/  /'
REF=$(metric "$M" 'parqd_connections_refused_total{reason="tls_handshake"}')
check "metrics: refused TLS handshakes >= $HALF ($REF)" test "$REF" -ge "$HALF"
check "metrics: none refused for max_connections" \
    test "$(metric "$M" 'parqd_connections_refused_total{reason="max_connections"}')" = 0
check "metrics: 0 connections open at the end ($(metric "$M" parqd_connections_open))" \
    test "$(metric "$M" parqd_connections_open)" = 0
check "parqd survived" alive "$DPID"

HWM_END=$(proc_kb "$DPID" VmHWM)
HWM_SAMPLED=$(cat "$T/hwm" 2>/dev/null || echo 0)
[ "${HWM_SAMPLED:-0}" -gt "${HWM_END:-0}" ] 2>/dev/null && HWM_END=$HWM_SAMPLED
daemon_stop TERM 60
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
UNTIL=$(now_us)
node_checks verify.mjs --out "$T/out" --since-us "$SINCE" --until-us "$UNTIL" --tmp "$T" \
    "$T/good.ndjson" "$T/broken.ndjson"

# Memory: as test_daemon_hostile.sh (an idle daemon 16 MiB + workers'
# scratch 16 MiB + 3 x max_buffered_bytes + 4 x max_line_bytes), with
# 64 KiB per connection in a TLS handshake (OpenSSL's state and its
# record buffers; measured ~20 KiB).
conns=$((HALF + 130))
BOUND_KB=$((16 * 1024 + 16 * 1024 + 3 * MAX_BUF_MIB * 1024 + 4 * MAX_LINE / 1024 + conns * 64))
echo "peak RSS (VmHWM): ${HWM_END} KiB (at start ${HWM_START} KiB); bound ${BOUND_KB} KiB" \
     "= 32 MiB + 3 x ${MAX_BUF_MIB} MiB buffered + 4 x 1 MiB lines + $conns x 64 KiB TLS connections"
if sanitized_build; then
    skip "peak RSS bound" "a sanitizer build (ASan shadow memory and quarantine)"
else
    check "peak RSS ${HWM_END} KiB < bound ${BOUND_KB} KiB" test "${HWM_END:-999999999}" -lt "$BOUND_KB"
fi
finish
