#!/usr/bin/env bash
# test_daemon_partition_crash.sh - routing records by {{FIELD}} to many open
# files keeps exactly once through kill -9 (issue 20, must-hold 1, with
# ingestion time: output.time_from is not built, so the time directories
# come from the ingestion time, not 30 event-hours). part_stream.mjs sends
# unique lines in runs of one svc value over 300 values (one "a/b= c",
# some runs without svc) with output.max_open_files: 40, so files close
# for max_open_files all the time and many are open at each kill; 5 times:
# wait 0.4-1.2 s into the burst, kill -9, snapshot the spool's lines
# (spool_dump --lines: the settled point: every line there was accepted),
# restart on the same spool and output. Then SIGTERM, and part_check.mjs:
# every spooled line in exactly one file, nothing twice, nothing not sent,
# every row under the path its own values render (DuckDB
# hive_partitioning), and a filter on the partition column reads only its
# files.
#
#   bash test_daemon_partition_crash.sh BUILD_DIR [TESTDATA_DIR]
#
# CRASHES=N (default 5), SEED=N repeats the kill timings. Last line:
# "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_partition_crash.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_partition_crash

SPOOL_DUMP="$BUILD/spool_dump"
if [ ! -x "$SPOOL_DUMP" ]; then
    bad "spool_dump tool" "$SPOOL_DUMP not built"
    finish
fi
PORT=$(free_port)
DLOG="$T/parqd.log"
CRASHES=${CRASHES:-5}
SEED=${SEED:-$((RANDOM))}
RANDOM=$SEED
echo "seed $SEED (SEED=$SEED repeats the kill timings)"

cat >"$T/parqd.yaml" <<YAML
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  path: "service={{svc}}/dt=%Y-%m-%d/hour=%H/{host}-{seq}.parquet"
  max_open_files: 40
  rotate: {max_rows: 400}
  row_group: {max_rows: 100}
spool: {dir: $T/spool, sync: always}
errors: {dead_letter: $T/rejects.ndjson}
YAML

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    finish
fi
spawn node "$LIB_DIR/part_stream.mjs" --target "tcp:127.0.0.1:$PORT" --state "$T/sender.json" \
    --rate 1000
SENDER=$SPAWNED

: >"$T/snap-lines"
restarts=0
for i in $(seq 1 "$CRASHES"); do
    sleep "$(awk -v r=$((RANDOM % 801)) 'BEGIN { printf "%.3f", 0.4 + r / 1000 }')"
    kill -9 "$DPID" 2>/dev/null
    wait_exit "$DPID" 10
    "$SPOOL_DUMP" --lines "$T/spool" >>"$T/snap-lines" 2>>"$T/spool_dump.err"
    note "kill $i: $(cat "$T/spool/checkpoint" 2>/dev/null | grep -c '^range ') published ranges above the watermark in the checkpoint"
    if daemon_start "$T/parqd.yaml" "$DLOG"; then
        restarts=$((restarts + 1))
    else
        bad "restart $i after kill -9" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
        break
    fi
done
check "parqd restarted after each of $CRASHES kill -9 ($restarts)" test "$restarts" = "$CRASHES"

sleep 0.5
kill -TERM "$SENDER"
wait_exit "$SENDER" 10
check "the sender stops (status $EXIT_STATUS)" test "$EXIT_STATUS" = 0
daemon_stop TERM 60
check "SIGTERM after the crashes: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0

sort -u -o "$T/snap-lines" "$T/snap-lines"
node_checks part_check.mjs --out "$T/out" --state "$T/sender.json" --snap-lines "$T/snap-lines"
check "no dead letters" test ! -s "$T/rejects.ndjson"
note "$(grep -c 'replay done' "$DLOG") replays; $(grep -c 'published ' "$DLOG") files published"
finish
