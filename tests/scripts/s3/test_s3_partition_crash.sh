#!/usr/bin/env bash
# test_s3_partition_crash.sh - test_daemon_partition_crash.sh against
# radosgw (issue 20, must-hold 2, with ingestion time): records routed by
# {{svc}} over 300 values (one "a/b= c", runs without svc, a hot key
# holding the watermark back) to many open S3 uploads with
# max_open_files: 40; 5 times kill -9 during the burst (spool.sync:
# always), snapshot the spool's lines, restart. Then SIGTERM: every spooled
# line in exactly one object, nothing twice, every row under the key its
# own values render (DuckDB hive_partitioning over the downloaded objects),
# a filter on the partition column reads only its objects, and no
# incomplete multipart upload left. An open S3 file may hold 3 parts of
# part_size (5 MiB here): 40 of them need limits.max_buffered_bytes of at
# least 600 MiB (parqd check refuses less).
#
#   bash test_s3_partition_crash.sh BUILD_DIR TESTDATA_DIR
#
# CRASHES=N (default 5), SEED=N repeats the kill timings.
set -u
BUILD=${1:?usage: test_s3_partition_crash.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/s3_common.sh"
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
  max_open_files: 40
  rotate: {max_rows: 400}
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
daemon_stop TERM 120
check "SIGTERM after the crashes: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
check "no incomplete multipart upload left" s3_no_uploads_left

s3_download part/ "$T/out"
sort -u -o "$T/snap-lines" "$T/snap-lines"
node_checks part_check.mjs --out "$T/out" --state "$T/sender.json" --snap-lines "$T/snap-lines"
check "no dead letters" test ! -s "$T/rejects.ndjson"
note "$(grep -c 'replay done' "$DLOG") replays; $(grep -c 'published ' "$DLOG") objects published"
finish
