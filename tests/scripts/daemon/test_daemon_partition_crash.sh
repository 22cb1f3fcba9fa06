#!/usr/bin/env bash
# test_daemon_partition_crash.sh - routing records by {{FIELD}} and event
# time to many open files keeps exactly once through kill -9 (issue 20,
# must-hold 1). part_stream.mjs sends unique lines in runs of one svc value
# over 300 values (one "a/b= c", some runs without svc) whose ts walks over
# 30 event hours with late records (some without ts or with an unparsable
# one), with output.time_from: ts and output.max_open_files: 40, so files
# close for max_open_files and for their period all the time and many are
# open at each kill; part_crash.sh: 5 times kill -9 during the burst,
# snapshot the spool's lines (the settled point), restart on the same
# spool and output. Then SIGTERM, and part_check.mjs: every spooled line
# in exactly one file, nothing twice, nothing not sent, every row under
# the path its own values render (its event hour; DuckDB
# hive_partitioning), late records in hours already written, and a filter
# on the partition column reads only its files.
#
#   bash test_daemon_partition_crash.sh BUILD_DIR [TESTDATA_DIR]
#
# CRASHES=N (default 5), SEED=N repeats the kill timings. Last line:
# "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_partition_crash.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
. "$(dirname "$0")/../../daemon/part_crash.sh"
lib_init test_daemon_partition_crash

SPOOL_DUMP="$BUILD/spool_dump"
if [ ! -x "$SPOOL_DUMP" ]; then
    bad "spool_dump tool" "$SPOOL_DUMP not built"
    finish
fi
PORT=$(free_port)
PORT_M=$(free_port)
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
  time_from: ts
  max_open_files: 40
  rotate: {max_rows: 400, max_age: 1s}
  row_group: {max_rows: 100}
spool: {dir: $T/spool, sync: always}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
YAML

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    finish
fi
spawn node "$LIB_DIR/part_stream.mjs" --target "tcp:127.0.0.1:$PORT" --state "$T/sender.json" \
    --rate 1000
SENDER=$SPAWNED

part_crash_loop "$SENDER"
daemon_stop TERM 60
check "SIGTERM after the crashes: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0

part_crash_verdict "$T/out"
finish
