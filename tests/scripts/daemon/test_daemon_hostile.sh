#!/usr/bin/env bash
# test_daemon_hostile.sh - hostile clients, all at once (issue 8; listener.h
# limits): a client sending random binary lines, one sending a 100 MiB line
# with no newline, a slowloris (one byte every 1-2 s), 2,000 idle
# connections, and a well-behaved client sending 20,000 valid lines.
# Limits: max_line_bytes 1MiB, max_buffered_bytes 16MiB, max_connections
# 4096, idle_timeout 3s. Checks: every valid line lands (DuckDB); every
# garbage line is in the dead letters with a reason; the 100 MiB line is
# dead-lettered as too long (truncated raw); the idle connections are
# closed after idle_timeout; /metrics counts connections and rejects by
# reason; the daemon's peak RSS (VmHWM) stays under a bound derived from
# the limits (printed with the measured value).
#
#   bash test_daemon_hostile.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_hostile.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_hostile

IDLE=${IDLE_CONNECTIONS:-2000}
GOOD=20000
GARBAGE=2000
LONG=$((100 * 1024 * 1024))
MAX_LINE=$((1024 * 1024))
MAX_BUF_MIB=16
IDLE_S=3

# 2,000 idle sockets plus the others, on both ends: raise the fd limit.
raise_fd_limit $((IDLE * 2 + 512))
if [ "$FD_LIMIT" -lt $((IDLE * 2 + 512)) ]; then
    IDLE=$(((FD_LIMIT - 512) / 2))
    note "open files limited to $FD_LIMIT: $IDLE idle connections instead of 2000"
fi

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  rotate: {max_rows: 10000}
  row_group: {max_rows: 2000, max_bytes: 4MiB}
spool: {dir: $T/spool}
limits: {max_line_bytes: 1MiB, max_buffered_bytes: ${MAX_BUF_MIB}MiB, max_connections: 4096,
         idle_timeout: ${IDLE_S}s}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
ok "parqd starts"
HWM_START=$(proc_kb "$DPID" VmHWM)

# Peak memory, sampled while the clients run (VmHWM is the kernel's own
# high-water mark; sampling keeps the last value seen before the exit).
spawn bash -c 'while kill -0 "$1" 2>/dev/null; do
    awk "/^VmHWM:/ { print \$2 }" "/proc/$1/status" >"$2.tmp" 2>/dev/null && mv "$2.tmp" "$2"
    sleep 0.2; done' _ "$DPID" "$T/hwm"
SAMPLER=$SPAWNED

TGT="tcp:127.0.0.1:$PORT"
H="$LIB_DIR/hostile.mjs"
SEED=${SEED:-$((RANDOM))}
echo "seed $SEED"
spawn node "$H" idle --target "$TGT" --count "$IDLE" --wait-s $((IDLE_S + 20)) --report "$T/idle.json"
P_IDLE=$SPAWNED
sleep 1
spawn node "$H" garbage --target "$TGT" --lines "$GARBAGE" --seed "$SEED" --expect "$T/garbage.b64"
P_GARBAGE=$SPAWNED
spawn node "$H" longline --target "$TGT" --bytes "$LONG"
P_LONG=$SPAWNED
SLOW_LINE='{"slow":"loris"}'
printf '%s\n' "$SLOW_LINE" >"$T/slow.ndjson"
spawn node "$H" slowloris --target "$TGT" --line "$SLOW_LINE" --seed "$SEED"
P_SLOW=$SPAWNED
spawn node "$H" good --target "$TGT" --lines "$GOOD" --seed "$SEED" --expect "$T/good.ndjson"
P_GOOD=$SPAWNED

for p in GOOD GARBAGE LONG SLOW IDLE; do
    pid_var=P_$p
    wait_exit "${!pid_var}" 120
    check "client $p finished (status $EXIT_STATUS)" test "$EXIT_STATUS" = 0
done

# Idle connections: closed by the server, not before idle_timeout, and not
# much after it. The client's clock starts when node runs its connect
# callback, which on a loaded machine can be a few hundred ms after the
# kernel (and parqd's accept) completed it: 1 s of slack below.
IDLE_REPORT=$(cat "$T/idle.json" 2>/dev/null || echo '{}')
idle_ok=$(node -e '
const r = JSON.parse(process.argv[1]), n = Number(process.argv[2]), t = Number(process.argv[3]);
console.log(r.connected === n && r.closedByServer === n && r.minS >= t - 1 && r.maxS <= t + 6 ? 1 : 0);' \
    "$IDLE_REPORT" "$IDLE" "$IDLE_S")
check "all $IDLE idle connections closed by the server after ${IDLE_S}s (+ at most 6 s)" test "$idle_ok" = 1

M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
printf '%s\n' "$M" | grep -E '^parqd_(connections|records_rejected|records_received)' | sed 's/^/  /'
conns=$((IDLE + 4))
check "metrics: connections accepted >= $conns ($(metric "$M" parqd_connections_accepted_total))" \
    test "$(metric "$M" parqd_connections_accepted_total)" -ge "$conns"
check "metrics: idle-closed connections >= $IDLE ($(metric "$M" parqd_connections_idle_closed_total))" \
    test "$(metric "$M" parqd_connections_idle_closed_total)" -ge "$IDLE"
REFUSED='parqd_connections_refused_total{reason="max_connections"}'
check "metrics: no connection refused ($(metric "$M" "$REFUSED"))" \
    test "$(metric "$M" "$REFUSED")" = 0
check "metrics: 0 connections open at the end ($(metric "$M" parqd_connections_open))" \
    test "$(metric "$M" parqd_connections_open)" = 0
check "metrics: rejected invalid_json = $GARBAGE ($(metric "$M" 'parqd_records_rejected_total{reason="invalid_json"}'))" \
    test "$(metric "$M" 'parqd_records_rejected_total{reason="invalid_json"}')" = "$GARBAGE"
check "metrics: rejected too_long = 1 ($(metric "$M" 'parqd_records_rejected_total{reason="too_long"}'))" \
    test "$(metric "$M" 'parqd_records_rejected_total{reason="too_long"}')" = 1
NREC=$((GOOD + GARBAGE + 2))
check "metrics: records received = $NREC ($(metric "$M" parqd_records_received_total))" \
    test "$(metric "$M" parqd_records_received_total)" = "$NREC"

# Memory. The bound, from the limits: an idle daemon (16 MiB, see
# test_daemon_idle.sh) + the workers' scratch (16 MiB) + 3 x
# max_buffered_bytes (accepted input, its shredded rows, the encoded row
# group) + 4 x max_line_bytes (framer, batch copy, dead-letter record,
# read buffer) + 8 KiB per connection. A daemon that kept the 100 MiB line
# in memory would be over it.
HWM_END=$(proc_kb "$DPID" VmHWM)
HWM_SAMPLED=$(cat "$T/hwm" 2>/dev/null || echo 0)
[ "${HWM_SAMPLED:-0}" -gt "${HWM_END:-0}" ] 2>/dev/null && HWM_END=$HWM_SAMPLED
BOUND_KB=$((16 * 1024 + 16 * 1024 + 3 * MAX_BUF_MIB * 1024 + 4 * MAX_LINE / 1024 + conns * 8))
echo "peak RSS (VmHWM): ${HWM_END} KiB (at start ${HWM_START} KiB); bound ${BOUND_KB} KiB" \
     "= 32 MiB + 3 x ${MAX_BUF_MIB} MiB buffered + 4 x 1 MiB lines + $conns x 8 KiB connections"
if sanitized_build; then
    skip "peak RSS bound" "a sanitizer build (ASan shadow memory and quarantine)"
else
    check "peak RSS ${HWM_END} KiB < bound ${BOUND_KB} KiB" test "${HWM_END:-999999999}" -lt "$BOUND_KB"
fi

daemon_stop TERM 60
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
wait_exit "$SAMPLER" 5

node_checks verify.mjs --out "$T/out" --rejects "$GARBAGE" --tmp "$T" "$T/good.ndjson" "$T/slow.ndjson"
node_checks deadletters.mjs --file "$T/rejects.ndjson" --garbage "$T/garbage.b64" --long-bytes "$LONG" \
    --max-line "$MAX_LINE"
finish
