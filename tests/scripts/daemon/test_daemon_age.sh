#!/usr/bin/env bash
# test_daemon_age.sh - ages on an idle stream (issue 8 "Output"): with
# row_group.max_age 1s and rotate.max_age 2s, lines sent once and then
# nothing more are published by the timers alone, without another record
# or a signal; a second burst after that goes to a new file whose name
# renders the strftime fields of its first record's ingestion time, with
# {uuid} making names unique. /metrics counts both closes as
# parqd_files_closed_total{reason="age"}, and a third burst published by
# SIGHUP as reason="shutdown".
#
#   bash test_daemon_age.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_age.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_age

PORT=$(free_port)
MPORT=$(free_port)
cat >"$T/age.yaml" <<YAML
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  path: "y=%Y/m=%m/{uuid}.parquet"
  rotate: {max_age: 2s}
  row_group: {max_age: 1s}
spool: {dir: $T/spool, sync: none}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$MPORT"}
YAML
DLOG="$T/age.log"
if ! daemon_start "$T/age.yaml" "$DLOG"; then
    bad "parqd starts" "$(tail -3 "$DLOG")"
    finish
fi
files_at_least() { [ "$(parquet_files "$T/out" | grep -c .)" -ge "$1" ]; }
send() { # send FIRST LAST: lines {"n":FIRST}..{"n":LAST} over TCP
    for ((i = $1; i <= $2; i++)); do printf '{"n":%d}\n' "$i"; done >"/dev/tcp/127.0.0.1/$PORT"
}

send 1 50
START=$SECONDS
wait_for 10 files_at_least 1
FIRST=$(parquet_files "$T/out")
WAITED=$((SECONDS - START))
check "the idle stream's file is published by max_age alone (after $WAITED s, rotate.max_age 2s)" \
    test "$(echo "$FIRST" | grep -c .)" -eq 1
check "no temporary file remains once it is published" test -z "$(temp_files "$T/out")"
check "its directory renders the ingestion time (y=$(date -u +%Y)/m=$(date -u +%m))" \
    grep -q "/y=$(date -u +%Y)/m=$(date -u +%m)/[0-9a-f-]\{36\}\.parquet$" <<<"$FIRST"
ROWS=$(duck "SELECT count(*) AS n FROM read_parquet('$FIRST', hive_partitioning = false)")
check "it holds the 50 lines ($ROWS)" grep -q '"n":"\?50"\?' <<<"$ROWS"

send 51 80
START=$SECONDS
wait_for 10 files_at_least 2
check "a second burst lands in a second file, also by age (after $((SECONDS - START)) s)" test "$(parquet_files "$T/out" | grep -c .)" -eq 2
check "the two {uuid} names differ" test "$(parquet_files "$T/out" | xargs -n1 basename | sort -u | grep -c .)" -eq 2
closed() { metric "$(http_get 127.0.0.1 "$MPORT" /metrics)" "parqd_files_closed_total{reason=\"$1\"}"; }
check "metrics: 2 files closed by age ($(closed age))" test "$(closed age)" = 2
check "metrics: none by size, rows or shutdown yet ($(closed size) $(closed rows) $(closed shutdown))" \
    test "$(closed size)$(closed rows)$(closed shutdown)" = 000
received() { [ "$(metric "$(http_get 127.0.0.1 "$MPORT" /metrics)" parqd_records_received_total)" = 85 ]; }
send 81 85
wait_for 10 received
kill -HUP "$DPID"
wait_for 10 files_at_least 3
check "SIGHUP publishes the third burst's file, counted as shutdown ($(closed shutdown)), not age ($(closed age))" \
    test "$(closed shutdown)/$(closed age)" = 1/2
daemon_stop TERM 30
check "SIGTERM exits 0 ($DSTATUS)" test "$DSTATUS" = 0
ALL=$(duck "SELECT count(*) AS n, count(DISTINCT CAST(variant_extract(event, 'n') AS INT)) AS d FROM read_parquet('$T/out/**/*.parquet', hive_partitioning = false)")
check "every line landed once ($ALL)" grep -q '"n":"\?85"\?,"d":"\?85"\?' <<<"$ALL"
finish
