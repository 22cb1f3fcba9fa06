#!/usr/bin/env bash
# test_daemon_systemd.sh - parqd under the service manager's protocols,
# without systemd running (issue 8; listenfds.h, sdnotify.h):
#  1. socket activation: systemd-socket-activate (package systemd) holds
#     127.0.0.1:PORT, a Unix socket and a second TCP port that no input
#     names, and starts parqd on the first connection with LISTEN_FDS;
#     parqd adopts the two sockets its config names and uses the third as
#     an extra input; data sent to all three lands.
#  2. sd_notify: NOTIFY_SOCKET names a datagram socket of the test's own;
#     READY=1 arrives once parqd listens, RELOADING=1 (with
#     MONOTONIC_USEC) then READY=1 on SIGHUP, STOPPING=1 on SIGTERM, and
#     WATCHDOG=1 every WATCHDOG_USEC/2.
#
#   bash test_daemon_systemd.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed[, K skipped]".
set -u
BUILD=${1:?usage: test_daemon_systemd.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_systemd

# ---- 1: socket activation ------------------------------------------------------
ACTIVATE=$(command -v systemd-socket-activate || true)
if [ -z "$ACTIVATE" ]; then
    skip "socket activation" "systemd-socket-activate not installed (Debian package systemd)"
else
    PORT=$(free_port)
    PORT_X=$(free_port)
    SOCK="$T/act.sock"
    DLOG="$T/activate.log"
    cat >"$T/activate.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
  - {type: unix, path: "$SOCK"}
output: {dir: $T/out-act}
spool: {dir: $T/spool-act}
errors: {dead_letter: $T/act.rejects.ndjson}
EOF
    # shellcheck disable=SC2016
    spawn bash -c 'cd "$1" && exec "$2" -l "127.0.0.1:$3" -l "$4" -l "127.0.0.1:$5" \
        "$6" --config "$7" 2>>"$8"' _ "$T" "$ACTIVATE" "$PORT" "$SOCK" "$PORT_X" "$PARQD" \
        "$T/activate.yaml" "$DLOG"
    DPID=$SPAWNED
    wait_for 10 test -S "$SOCK"
    check "systemd-socket-activate holds the sockets before parqd runs" \
        grep -q "Listening on $SOCK" "$DLOG"
    for i in 1 2 3 4 5; do printf '{"via":"tcp","i":%d}\n' "$i"; done >"$T/act-tcp.ndjson"
    for i in 1 2 3 4 5; do printf '{"via":"unix","i":%d}\n' "$i"; done >"$T/act-unix.ndjson"
    for i in 1 2 3 4 5; do printf '{"via":"extra","i":%d}\n' "$i"; done >"$T/act-extra.ndjson"
    # The first connection starts parqd; it waits in the backlog meanwhile.
    node_tool send.mjs --targets "tcp:127.0.0.1:$PORT" --clients 1 --blank 0 "$T/act-tcp.ndjson" >/dev/null
    if daemon_wait_ready "$DLOG" 0 20; then
        ok "parqd started by the first connection"
    else
        bad "parqd started by the first connection" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    fi
    check "the same process: LISTEN_PID names it (log: inherited sockets)" \
        grep -q 'socket activation: 3 inherited sockets' "$DLOG"
    node_tool send.mjs --targets "unix:$SOCK" --clients 1 --blank 0 "$T/act-unix.ndjson" >/dev/null
    check "data over the inherited Unix socket is accepted" test $? = 0
    node_tool send.mjs --targets "tcp:127.0.0.1:$PORT_X" --clients 1 --blank 0 "$T/act-extra.ndjson" >/dev/null
    check "data over the inherited socket no input names is accepted" test $? = 0
    daemon_stop TERM 30
    check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
    node_checks verify.mjs --label "activation" --out "$T/out-act" --tmp "$T" \
        "$T/act-tcp.ndjson" "$T/act-unix.ndjson" "$T/act-extra.ndjson"
    check "the inherited Unix socket file is left to its owner (not unlinked by parqd)" test -S "$SOCK"
fi

# ---- 2: sd_notify ----------------------------------------------------------------------
PY=$(command -v python3 || true)
if [ -z "$PY" ]; then
    skip "sd_notify" "python3 (the test's notify socket) not installed"
    finish
fi
PORT=$(free_port)
DLOG="$T/notify.log"
NSOCK="$T/notify.sock"
NOUT="$T/notify.out"
spawn "$PY" "$LIB_DIR/notify_recv.py" "$NSOCK" "$NOUT"
NRECV=$SPAWNED
wait_for 10 test -s "$NOUT"
cat >"$T/notify.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output: {dir: $T/out-notify}
spool: {dir: $T/spool-notify}
errors: {dead_letter: $T/notify.rejects.ndjson}
EOF
nmsg() { grep -c -- "$1" "$NOUT" 2>/dev/null; }
if daemon_start "$T/notify.yaml" "$DLOG" NOTIFY_SOCKET="$NSOCK" WATCHDOG_USEC=1000000; then
    ok "parqd starts with NOTIFY_SOCKET"
else
    bad "parqd starts with NOTIFY_SOCKET" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
fi
if wait_for 5 grep -q 'READY=1' "$NOUT"; then ok "READY=1 arrives"
else bad "READY=1 arrives" "$(tr '\n' ' ' <"$NOUT")"; fi
check "READY=1 comes once parqd listens" port_busy 127.0.0.1 "$PORT"
sleep 2
WD=$(nmsg 'WATCHDOG=1')
check "WATCHDOG=1 every WATCHDOG_USEC/2 ($WD in about 2 s)" test "$WD" -ge 2

kill -HUP "$DPID"
if wait_for 10 grep -q 'RELOADING=1' "$NOUT"; then ok "SIGHUP: RELOADING=1 arrives"
else bad "SIGHUP: RELOADING=1 arrives"; fi
check "RELOADING=1 carries MONOTONIC_USEC" grep -qE 'RELOADING=1.*MONOTONIC_USEC=[0-9]+' "$NOUT"
ready_after_reload() { awk '/RELOADING=1/ { r = 1 } r && /READY=1/ { f = 1 } END { exit !f }' "$NOUT"; }
if wait_for 10 ready_after_reload; then ok "SIGHUP: READY=1 after RELOADING=1"
else bad "SIGHUP: READY=1 after RELOADING=1" "$(grep -v WATCHDOG "$NOUT" | tr '\n' ' ')"; fi

daemon_stop TERM 30
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
check "SIGTERM: STOPPING=1 arrives" grep -q 'STOPPING=1' "$NOUT"
echo "notifications (watchdog pings left out):"
grep -v -e WATCHDOG -e listening "$NOUT" | sed 's/^/  /'
kill "$NRECV" 2>/dev/null
finish
