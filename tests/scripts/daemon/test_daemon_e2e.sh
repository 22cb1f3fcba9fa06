#!/usr/bin/env bash
# test_daemon_e2e.sh - the daemon as users run it (issue 8): parqd listens
# on 127.0.0.1 and [::1] (TCP) and a Unix socket; every real log file in
# TESTDATA/logs is sent by 50 concurrent clients that cut their streams at
# random byte boundaries (seeded: the seed is printed; SEED=N repeats a
# run), with blank lines mixed in and some streams ending without a
# newline; then SIGTERM. parqd must exit 0 having published everything:
# DuckDB reads every file and the records equal the lines sent, exactly;
# several files (small rotation), no temporaries, PAR1 at both ends, and
# parqd.spool seq ranges that are disjoint and cover 1..N. Then a second
# run: 16 clients write 24 MiB as fast as they can and close, SIGTERM
# follows at once, and everything they wrote must land.
#
#   bash test_daemon_e2e.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u
BUILD=${1:?usage: test_daemon_e2e.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../testdata.sh" "${2:-}"
testdata_require logs
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_e2e

LOGS=("$TESTDATA"/logs/*/*.json)
if [ ! -f "${LOGS[0]}" ]; then
    bad "test data" "no log files under $TESTDATA/logs"
    finish
fi

PORT=$(free_port)
PORT_M=$(free_port)
SOCK="$T/parqd.sock"
DLOG="$T/parqd.log"
TARGETS="tcp:127.0.0.1:$PORT,unix:$SOCK"
V6_INPUT=""
if have_ipv6; then
    PORT6=$(free_port)
    V6_INPUT="  - {type: tcp, listen: \"[::1]:$PORT6\"}"
    TARGETS="tcp:127.0.0.1:$PORT,tcp:[::1]:$PORT6,unix:$SOCK"
else
    skip "IPv6 loopback" "[::1] cannot be bound on this machine; TCP over IPv4 and Unix only"
fi

cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
$V6_INPUT
  - {type: unix, path: "$SOCK"}
output:
  dir: $T/out
  rotate: {max_rows: 1000}
  row_group: {max_rows: 250}
spool: {dir: $T/spool, sync: batch}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
log: {level: info}
EOF

SINCE=$(now_us)
if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts and logs ready"
    finish
fi
ok "parqd starts and logs ready"
check "listening on 127.0.0.1:$PORT" port_busy 127.0.0.1 "$PORT"
[ -n "$V6_INPUT" ] && check "listening on [::1]:$PORT6" port_busy ::1 "$PORT6"
check "listening on $SOCK" test -S "$SOCK"

# The probes above connected too: count the clients' connections from here.
ACC0=$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_connections_accepted_total)
SEED=${SEED:-$(( (RANDOM << 15) | RANDOM ))}
if node_tool send.mjs --targets "$TARGETS" --clients 50 --seed "$SEED" --blank 200 "${LOGS[@]}" \
    >"$T/send.out" 2>&1; then
    ok "50 clients sent every log file ($(tail -n 1 "$T/send.out" | cut -c7-))"
else
    bad "50 clients sent every log file" "$(tr '\n' ' ' <"$T/send.out" | cut -c1-400)"
fi
head -n 1 "$T/send.out"
NLINES=$(cat "${LOGS[@]}" | grep -c .)

# Every framed record counted once, blank lines not at all. The counter
# runs ahead of the pipeline; wait until it settles.
settled() {
    local m
    m=$(http_get 127.0.0.1 "$PORT_M" /metrics)
    [ "$(metric "$m" parqd_records_received_total)" = "$NLINES" ]
}
wait_for 20 settled
M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
check "metrics: records received = $NLINES non-blank lines (got $(metric "$M" parqd_records_received_total))" \
    test "$(metric "$M" parqd_records_received_total)" = "$NLINES"
ACC=$(($(metric "$M" parqd_connections_accepted_total) - ACC0))
check "metrics: the 50 clients' connections accepted (got $ACC)" test "$ACC" = 50
H=$(http_get 127.0.0.1 "$PORT_M" /health)
check "health: 200 while running" test "$(head -n 1 <<<"$H")" = 200

daemon_stop TERM 60
ST=$DSTATUS
check "SIGTERM: parqd exits 0 (got $ST)" test "$ST" = 0
UNTIL=$(now_us)
check "shutdown logged as every file published" grep -q "every file published" "$DLOG"
check "the Unix socket file is removed on exit" test ! -e "$SOCK"

node_checks verify.mjs --out "$T/out" --min-files 3 --rejects 0 --since-us "$SINCE" \
    --until-us "$UNTIL" --tmp "$T" "${LOGS[@]}"

check "no dead letters (every line was valid)" test ! -s "$T/rejects.ndjson"
ERRS=$(grep -c -E 'error:|warning:' "$DLOG")
check "no errors or warnings in the log ($ERRS)" test "$ERRS" = 0
echo "seed $SEED (SEED=$SEED repeats the client splits)"

# ---- SIGTERM right after the clients finish -------------------------------------
# 16 clients write 24 MiB of log lines as fast as they can (cat) and close;
# SIGTERM the moment the last one is done. Whatever they wrote was
# delivered to parqd's socket buffers before SIGTERM: it must all land.
PORT2=$(free_port)
DLOG="$T/parqd2.log"
cat >"$T/parqd2.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT2"}
output: {dir: $T/out2}
spool: {dir: $T/spool2}
errors: {dead_letter: $T/rejects2.ndjson}
EOF
node "$ROOT/bench/e2e_input.mjs" "$TESTDATA/logs" "$T/mix.ndjson" 24 >/dev/null
split -n l/16 -d "$T/mix.ndjson" "$T/part."
if daemon_start "$T/parqd2.yaml" "$DLOG"; then
    CATS=()
    for part in "$T"/part.*; do
        # shellcheck disable=SC2016
        spawn bash -c 'exec cat "$1" >"/dev/tcp/127.0.0.1/$2"' _ "$part" "$PORT2"
        CATS+=("$SPAWNED")
    done
    sent_ok=1
    for c in "${CATS[@]}"; do
        wait_exit "$c" 120
        [ "$EXIT_STATUS" = 0 ] || sent_ok=0
    done
    check "16 clients wrote $(grep -c . "$T/mix.ndjson") lines (24 MiB) and closed" test "$sent_ok" = 1
    daemon_stop TERM 60
    check "SIGTERM right after: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
    node_checks verify.mjs --label "SIGTERM right after the clients finish" --out "$T/out2" --tmp "$T" \
        "$T/mix.ndjson"
    NREJ=$(grep -c . "$T/rejects2.ndjson" 2>/dev/null)
    check "SIGTERM right after: no line cut short into the dead letters (${NREJ:-0})" test "${NREJ:-0}" = 0
else
    bad "parqd starts (second run)"
fi
finish
