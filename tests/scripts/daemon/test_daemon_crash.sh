#!/usr/bin/env bash
# test_daemon_crash.sh - kill -9 in a loop (issue 8, DESIGN.md "Bad input
# and lost data": after a crash, restart replays the spool, and records
# already in a completed file are not written twice). spool.sync: always.
# A sender streams unique lines over TCP and reconnects whenever the daemon
# is gone; 20 times: wait 0.3-1.5 s, kill -9 the daemon, snapshot what it
# had spooled (spool_dump --lines) and which files it had published,
# restart it on the same spool and output. Finally SIGTERM, and every line
# ever spooled or published must be in the output exactly once, nothing
# twice, nothing that was not sent, no temporary files. Every 97th line is
# not JSON: each one ever spooled is in the dead letters exactly once.
#
#   bash test_daemon_crash.sh BUILD_DIR TESTDATA_DIR
#
# CRASHES=N changes the number of kills (default 20); SEED=N repeats the
# kill timings. Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_crash.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_crash

SPOOL_DUMP="$BUILD/spool_dump"
if [ ! -x "$SPOOL_DUMP" ]; then
    bad "spool_dump tool" "$SPOOL_DUMP not built"
    finish
fi

PORT=$(free_port)
DLOG="$T/parqd.log"
CRASHES=${CRASHES:-20}
SEED=${SEED:-$((RANDOM))}
RANDOM=$SEED
echo "seed $SEED (SEED=$SEED repeats the kill timings)"

cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  rotate: {max_rows: 3000}
  row_group: {max_rows: 500}
spool: {dir: $T/spool, sync: always}
errors: {dead_letter: $T/rejects.ndjson}
EOF

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
# Every 97th line is not JSON: rejects written after the last publication
# must not be written again by the replay (dead letters' seq, dl_recover).
spawn node "$LIB_DIR/stream.mjs" --target "tcp:127.0.0.1:$PORT" --state "$T/sender.json" --rate 2000 \
    --bad-every 97
SENDER=$SPAWNED

: >"$T/snap-lines"
: >"$T/snap-files"
kill_moment() {
    sleep "$(awk -v r=$((RANDOM % 1201)) 'BEGIN { printf "%.3f", 0.3 + r / 1000 }')"
}
snapshot() {
    "$SPOOL_DUMP" --lines "$T/spool" >>"$T/snap-lines" 2>>"$T/spool_dump.err"
    find "$T/out" -name '*.parquet' ! -name '.*' -printf '%p %s %i\n' >>"$T/snap-files"
}
crash_loop "$CRASHES" "$T/parqd.yaml" "$DLOG" kill_moment snapshot

sleep 1
kill -TERM "$SENDER"
wait_exit "$SENDER" 10
check "the sender stops (status $EXIT_STATUS)" test "$EXIT_STATUS" = 0
daemon_stop TERM 60
check "SIGTERM after the crashes: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0

sort -u -o "$T/snap-lines" "$T/snap-lines"
echo "spool snapshots: $(wc -l <"$T/snap-lines") distinct lines; sender: $(cat "$T/sender.json")"
node_checks crash_check.mjs --out "$T/out" --state "$T/sender.json" --snap-lines "$T/snap-lines" \
    --snap-files "$T/snap-files" --tmp "$T" --bad-every 97 --rejects "$T/rejects.ndjson"
REPLAYS=$(grep -c 'replay done' "$DLOG")
note "$REPLAYS replays logged; $(grep -c 'removed .*unfinished file' "$DLOG") unfinished files removed at restarts"
finish
