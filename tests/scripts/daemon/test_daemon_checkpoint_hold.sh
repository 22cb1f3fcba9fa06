#!/usr/bin/env bash
# test_daemon_checkpoint_hold.sh - publishing a file never stalls the
# sockets (issue 17): the spool's checkpoint is written and fsynced by the
# publishing worker while the loop thread goes on appending lines.
#
# PARQD_TEST_HOLD_CHECKPOINT=FIFO makes the first checkpoint write's fsync
# wait until the test writes a byte into FIFO (cmd_run.c), as a very slow
# disk would. While it is held, a client sends 2,000 more lines: they must
# be received (/metrics answers, parqd_records_received_total grows) and
# spooled (the segment files grow by at least their bytes). Only then is the
# hook released; afterwards every line lands exactly once. Nothing is timed:
# a daemon whose loop waited for the checkpoint never gets there, and the
# bounded wait fails the test.
#
#   bash test_daemon_checkpoint_hold.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_checkpoint_hold.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_checkpoint_hold

PORT=$(free_port)
MPORT=$(free_port)
DLOG="$T/parqd.log"
mkfifo "$T/hold"
cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
schema:
  columns:
    - {name: id, type: int64, required: true}
    - {name: msg, type: string}
output:
  dir: $T/out
  rotate: {max_rows: 100}
  row_group: {max_rows: 100}
spool: {dir: $T/spool, sync: batch}
metrics: {listen: "127.0.0.1:$MPORT"}
errors: {dead_letter: $T/rejects.ndjson}
EOF

lines() { # lines FROM TO: records with ids FROM..TO
    seq "$1" "$2" | awk '{ printf "{\"id\":%d,\"msg\":\"line %d of the checkpoint hold test\"}\n", $1, $1 }'
}
spool_bytes() { find "$T/spool" -name '*.spool' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
received() { metric "$(http_get 127.0.0.1 "$MPORT" /metrics | tail -n +2)" parqd_records_received_total; }
grown() { # grown BYTES RECORDS: the spool holds BYTES more and RECORDS more were received
    [ "$(spool_bytes)" -ge "$1" ] && [ "$(received)" -ge "$2" ] 2>/dev/null
}

if ! daemon_start "$T/parqd.yaml" "$DLOG" PARQD_TEST_HOLD_CHECKPOINT="$T/hold"; then
    bad "parqd starts" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    finish
fi
# 100 lines fill a file: its publication's first checkpoint write is held.
lines 1 100 >"$T/first.ndjson"
cat "$T/first.ndjson" >"/dev/tcp/127.0.0.1/$PORT"
check "the first publication reaches the held checkpoint fsync" \
    wait_log "$DLOG" "test hook: holding the checkpoint" 30

S0=$(spool_bytes)
R0=$(received)
lines 101 2100 >"$T/second.ndjson"
SECOND=$(stat -c %s "$T/second.ndjson")
cat "$T/second.ndjson" >"/dev/tcp/127.0.0.1/$PORT"
check "while the checkpoint is held, 2,000 more lines are received and spooled" \
    wait_for 30 grown $((S0 + SECOND)) $((R0 + 2000))
echo "spool bytes $S0 -> $(spool_bytes) (sent $SECOND), received $R0 -> $(received)"
check "the checkpoint was still held meanwhile" test "$(grep -c 'checkpoint released' "$DLOG")" = 0

echo x >"$T/hold"
check "the hook is released" wait_log "$DLOG" "test hook: checkpoint released" 20
daemon_stop TERM 60
check "SIGTERM: exit 0 (got $DSTATUS)" test "$DSTATUS" = 0
ROWS=$(duck "SELECT count(*) AS n, count(DISTINCT id) AS d, min(id) AS lo, max(id) AS hi
             FROM read_parquet('$T/out/**/*.parquet')")
check "every line landed exactly once: $ROWS" test "$ROWS" = '[{"n":"2100","d":"2100","lo":"1","hi":"2100"}]'
check "no dead letters" test ! -s "$T/rejects.ndjson"
finish
