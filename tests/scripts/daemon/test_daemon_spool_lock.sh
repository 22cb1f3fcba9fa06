#!/usr/bin/env bash
# test_daemon_spool_lock.sh - one daemon per spool (issue 17). Two parqd
# sharing a spool directory (a second instance by mistake, a rolling
# update on a shared volume) would append to the same segment files and
# overwrite each other's records. So:
#  1. a second parqd on a running daemon's spool (another port, another
#     output) exits 1 at once with "spool DIR is in use by parqd pid N";
#  2. the first goes on and loses nothing: 20,000 records sent to it with
#     sync: always, then kill -9;
#  3. the lock died with it: a new parqd starts on the spool, replays it,
#     and after SIGTERM every record is in the output exactly once;
#  4. the output directory's temporary files: a daemon starting removes
#     those a crash left, but not one whose writer holds its lock, even
#     when its pid looks dead (another PID namespace on a shared volume).
#
#   bash test_daemon_spool_lock.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_spool_lock.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_spool_lock

config() { # config NAME PORT OUTDIR METRICS_PORT: writes $T/NAME.yaml on the shared spool
    cat >"$T/$1.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$2"}
metrics: {listen: "127.0.0.1:$4"}
schema:
  columns:
    - {name: id, type: int64, required: true}
    - {name: msg, type: string}
output:
  dir: $3
  rotate: {max_rows: 5000}
  row_group: {max_rows: 1000}
spool: {dir: $T/spool, sync: always}
errors: {dead_letter: $T/rejects-$1.ndjson}
EOF
}

PORT_A=$(free_port)
PORT_B=$(free_port)
METRICS_A=$(free_port)
METRICS_B=$(free_port)
config first "$PORT_A" "$T/out" "$METRICS_A"
config second "$PORT_B" "$T/out-second" "$METRICS_B"
received() { metric "$(http_get 127.0.0.1 "$METRICS_A" /metrics | tail -n +2)" parqd_records_received_total; }
DLOG="$T/first.log"
if ! daemon_start "$T/first.yaml" "$DLOG"; then
    bad "the first parqd starts" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    finish
fi
FIRST=$DPID

# ---- 1: the second one is refused ------------------------------------------------------
spawn "$PARQD" --config "$T/second.yaml" 2>"$T/second.log"
SECOND=$SPAWNED
wait_exit "$SECOND" 10
check "a second parqd on the same spool exits 1 (got $EXIT_STATUS)" test "$EXIT_STATUS" = 1
check "it says: spool $T/spool is in use by parqd pid $FIRST" \
    grep -q "spool $T/spool is in use by parqd pid $FIRST\$" "$T/second.log"
check "it did not listen" test "$(grep -c 'ready (' "$T/second.log")" = 0
check "it wrote no output" test ! -e "$T/out-second"
check "the first one still runs" alive "$FIRST"

# ---- 2: the first loses nothing ------------------------------------------------------------
seq 1 20000 | awk '{ printf "{\"id\":%d,\"msg\":\"record %d\"}\n", $1, $1 }' >"$T/records.ndjson"
node_tool send.mjs --targets "tcp:127.0.0.1:$PORT_A" --clients 4 --blank 0 "$T/records.ndjson" >/dev/null
# sync: always: a read's lines are fsynced before the loop does anything
# else, a scrape of /metrics included, so once a scrape counts them all,
# kill -9 loses none.
check "the first one received all 20,000" wait_for 60 test "$(received)" = 20000
kill -9 "$FIRST"
wait_exit "$FIRST" 10

# ---- 3: the lock is gone with it --------------------------------------------------------
DLOG="$T/third.log"
if daemon_start "$T/first.yaml" "$DLOG"; then
    ok "after kill -9 of the first, a new parqd starts on the spool"
else
    bad "after kill -9 of the first, a new parqd starts on the spool" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    finish
fi
daemon_stop TERM 60
check "SIGTERM: exit 0 (got $DSTATUS)" test "$DSTATUS" = 0
ROWS=$(duck "SELECT count(*) AS n, count(DISTINCT id) AS d, min(id) AS lo, max(id) AS hi
             FROM read_parquet('$T/out/**/*.parquet')")
check "every record exactly once after the replay: $ROWS" \
    test "$ROWS" = '[{"n":"20000","d":"20000","lo":"1","hi":"20000"}]'
check "no dead letters" test ! -s "$T/rejects-first.ndjson"

# ---- 4: live temporary files survive another daemon's start ----------------------------
DEAD=$(sh -c 'echo $$')      # a pid that has exited
mkdir -p "$T/out/dt=live"
LIVE="$T/out/dt=live/.a.parquet.$DEAD-0.tmp"
LEFT="$T/out/dt=live/.b.parquet.$DEAD-0.tmp"
: >"$LIVE"
: >"$LEFT"
spawn flock --no-fork "$LIVE" sleep 60 # the lock holder is the sleep itself
HOLDER=$SPAWNED
wait_for 10 sh -c "! flock -n '$LIVE' true"
DLOG="$T/fourth.log"
if daemon_start "$T/first.yaml" "$DLOG"; then
    check "a temporary file a crash left is removed" test ! -e "$LEFT"
    check "a temporary file whose writer holds its lock stays" test -e "$LIVE"
    daemon_stop TERM 30
else
    bad "parqd starts on the output directory" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
fi
kill "$HOLDER" 2>/dev/null
wait_exit "$HOLDER" 10
finish
