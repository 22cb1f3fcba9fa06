#!/usr/bin/env bash
# test_s3_partition_crash.sh - test_daemon_partition_crash.sh against
# radosgw (issue 20, must-hold 2): records routed by {{svc}} over 300
# values (one "a/b= c", runs without svc, a hot key holding the watermark
# back) and by their event time (output.time_from: ts, 30 hours, late
# records, some without a usable ts) to many open S3 uploads with
# max_open_files: 40; part_crash.sh: 5 times kill -9 during the burst
# (spool.sync: always), snapshot the spool's lines, restart. Then SIGTERM:
# every spooled line in exactly one object, nothing twice, every row under
# the key its own values render (DuckDB hive_partitioning over the
# downloaded objects), a filter on the partition column reads only its
# objects, and no incomplete multipart upload left. An open S3 file may
# hold 3 parts of part_size (5 MiB here): 40 of them need
# limits.max_buffered_bytes of at least 600 MiB (parqd check refuses less).
#
#   bash test_s3_partition_crash.sh BUILD_DIR TESTDATA_DIR
#
# CRASHES=N (default 5), SEED=N repeats the kill timings.
set -u
BUILD=${1:?usage: test_s3_partition_crash.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/s3_common.sh"
. "$LIB_DIR/part_crash.sh"
s3_init test_s3_partition_crash
SPOOL_DUMP="$BUILD/spool_dump"
[ -x "$SPOOL_DUMP" ] || { bad "spool_dump tool" "$SPOOL_DUMP not built"; finish; }

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
CRASHES=${CRASHES:-5}
SEED=${SEED:-$((RANDOM))}
RANDOM=$SEED
echo "seed $SEED (SEED=$SEED repeats the kill timings)"
s3_config "$T/parqd.yaml" "$PORT" "$PORT_M" "part/" \
"  path: \"service={{svc}}/dt=%Y-%m-%d/hour=%H/{host}-{seq}.parquet\"
  time_from: ts
  max_open_files: 40
  rotate: {max_rows: 400, max_age: 1s}
  row_group: {max_rows: 100}" always
echo "limits: {max_buffered_bytes: 640MiB}" >>"$T/parqd.yaml"

"$PARQD" check --config "$T/parqd.yaml" >/dev/null 2>"$T/check.err"
check "parqd check accepts 40 open S3 files within 640MiB" test $? = 0
sed 's/max_buffered_bytes: 640MiB/max_buffered_bytes: 512MiB/' "$T/parqd.yaml" >"$T/small.yaml"
"$PARQD" check --config "$T/small.yaml" >/dev/null 2>"$T/small.err"
check "parqd check refuses them within 512MiB ($(head -c 120 "$T/small.err"))" \
    grep -q 'max_open_files: 40 open S3 files may hold 3 parts' "$T/small.err"

daemon_start "$T/parqd.yaml" "$DLOG" || { bad "parqd starts" "$(tail -n 3 "$DLOG")"; finish; }
spawn node "$LIB_DIR/part_stream.mjs" --target "tcp:127.0.0.1:$PORT" --state "$T/sender.json" \
    --rate 1000
SENDER=$SPAWNED

part_crash_loop "$SENDER"
daemon_stop TERM 120
check "SIGTERM after the crashes: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
check "no incomplete multipart upload left" s3_no_uploads_left

s3_download part/ "$T/out"
part_crash_verdict "$T/out"
finish
