#!/usr/bin/env bash
# test_daemon_time_dirs.sh - output.path's directories partition by time
# (issue 20): with "min=%M/sec=%S/..." a file holds only records whose
# ingestion time renders its directories, so records sent in bursts over
# a few seconds land one file per second, each row under the path its own
# _ingest_ts renders; DuckDB's hive_partitioning reads the layout, and a
# filter on the partition column reads only that partition's file.
#
#   bash test_daemon_time_dirs.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_time_dirs.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_time_dirs

PORT=$(free_port)
cat >"$T/c.yaml" <<YAML
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  path: "min=%M/sec=%S/{host}-{seq}.parquet"
  rotate: {max_age: 1h}
spool: {dir: $T/spool, sync: none}
errors: {dead_letter: $T/rejects.ndjson}
YAML
DLOG="$T/daemon.log"
if ! daemon_start "$T/c.yaml" "$DLOG"; then
    bad "parqd starts" "$(tail -3 "$DLOG")"
    finish
fi
send() { # send FIRST LAST
    for ((i = $1; i <= $2; i++)); do printf '{"n":%d}\n' "$i"; done >"/dev/tcp/127.0.0.1/$PORT"
}
# Four bursts, each in a second of its own (whole-second boundaries apart).
for b in 0 1 2 3; do
    send $((b * 50 + 1)) $((b * 50 + 50))
    sleep 1
done
daemon_stop TERM 30
check "SIGTERM exits 0 ($DSTATUS)" test "$DSTATUS" = 0
FILES=$(parquet_files "$T/out" | grep -c .)
note "$FILES files: $(parquet_files "$T/out" | sed "s|^$T/out/||" | tr '\n' ' ')"
# The bursts are read >= 1 s apart, so files of several seconds (how many
# depends on when the daemon read them; the layout checks below do not).
check "files of several seconds ($FILES)" test "$FILES" -ge 2

SRC="read_parquet('$T/out/**/*.parquet', hive_partitioning = true)"
ALL=$(duck "SELECT count(*) AS n, count(DISTINCT CAST(variant_extract(event, 'n') AS INT)) AS d FROM $SRC")
check "every record landed once ($ALL)" grep -q '"n":"\?200"\?,"d":"\?200"\?' <<<"$ALL"
# epoch() of the UTC timestamp: minute and second without the session's time zone.
WRONG=$(duck "SELECT count(*) AS w FROM $SRC WHERE CAST(sec AS INT) <> CAST(floor(epoch(_ingest_ts)) AS BIGINT) % 60 OR CAST(min AS INT) <> CAST(floor(epoch(_ingest_ts) / 60) AS BIGINT) % 60")
check "every row lies under the directories its own _ingest_ts renders ($WRONG)" grep -q '"w":"\?0"\?' <<<"$WRONG"
PER=$(duck "SELECT count(DISTINCT filename) AS f, count(DISTINCT (min, sec)) AS p FROM read_parquet('$T/out/**/*.parquet', hive_partitioning = true, filename = true)")
check "one file per (min, sec) directory ($PER)" grep -qE '"f":"?([0-9]+)"?,"p":"?\1"?}' <<<"$PER"

# A filter on the partition column: DuckDB prunes the other directories'
# files before reading them (EXPLAIN ANALYZE counts the files it read).
# The value as the directory spells it ("07"): DuckDB may type the column
# as a number or a string, and '07' compares equal either way.
SEC=$(parquet_files "$T/out" | head -n 1 | grep -oE '/sec=[0-9]+/' | grep -oE '[0-9]+')
PLAN=$(duck "EXPLAIN ANALYZE SELECT max(_ingest_ts) FROM $SRC WHERE sec = '$SEC'")
READ=$(grep -oE 'Total Files Read: *[0-9]+' <<<"$PLAN" | grep -oE '[0-9]+$' | head -n 1)
check "a filter on sec=$SEC reads 1 of $FILES files (Total Files Read: ${READ:-?})" test "${READ:-x}" = 1
ALLREAD=$(duck "EXPLAIN ANALYZE SELECT max(_ingest_ts) FROM $SRC" | grep -oE 'Total Files Read: *[0-9]+' |
    grep -oE '[0-9]+$' | head -n 1)
check "without the filter it reads all $FILES (Total Files Read: ${ALLREAD:-?})" test "${ALLREAD:-x}" = "$FILES"
finish
