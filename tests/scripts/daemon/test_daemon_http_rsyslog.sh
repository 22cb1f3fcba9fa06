#!/usr/bin/env bash
# test_daemon_http_rsyslog.sh - rsyslog's omelasticsearch in front of an
# http input (issue 21): rsyslogd follows a file of 5,000 lines (imfile)
# and posts them to /_bulk (bulkmode on, searchIndex logs-rs) as JSON
# documents. Debian 12's rsyslog conflicts with syslog-ng-core (both are
# the system-log-daemon), so `make deps-rsyslog` unpacks rsyslog and
# rsyslog-elasticsearch (and any library they need that is not
# installed) under build-deps/rsyslog instead of installing them, and
# rsyslogd runs from there, unprivileged, with -M for its modules. Then
# SIGTERM to both, and DuckDB over the files: every record landed exactly
# once with its fields, and logs-rs in the schema's `from: _index` column.
#
#   bash test_daemon_http_rsyslog.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u
BUILD=${1:?usage: test_daemon_http_rsyslog.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_http_rsyslog

RS_ROOT="$ROOT/build-deps/rsyslog/root"
RSYSLOGD="$RS_ROOT/usr/sbin/rsyslogd"
RS_MODS=$(dirname "$(find "$RS_ROOT" -name omelasticsearch.so 2>/dev/null | head -n 1)")
if [ ! -x "$RSYSLOGD" ] || [ ! -f "$RS_MODS/omelasticsearch.so" ] || [ ! -f "$RS_MODS/imfile.so" ]; then
    bad "rsyslogd with omelasticsearch" "not unpacked under $RS_ROOT (make deps-rsyslog)"
    finish
fi
# Libraries unpacked beside it (those not installed on this machine).
RS_LIBS=$(find "$RS_ROOT" -name 'lib*.so*' -printf '%h\n' 2>/dev/null | grep -v /rsyslog$ | sort -u | tr '\n' ':')

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
N=5000
cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: http, listen: "127.0.0.1:$PORT"}
schema:
  columns:
    - {name: src, type: string, required: true}
    - {name: i, type: int64, required: true}
    - {name: line, type: string}
    - {name: ix, type: string, from: _index}
output: {dir: $T/out}
spool: {dir: $T/spool, sync: batch}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF
seq 0 $((N - 1)) | awk '{ printf "%d line \"%d\" of the rsyslog test\n", $1, $1 }' >"$T/lines.txt"
mkdir -p "$T/rs-work"
# %msg% is the whole line; the document's fields: i (the line's number,
# via a field extraction), line (the line, JSON-escaped), src.
cat >"$T/rsyslog.conf" <<EOF
global(workDirectory="$T/rs-work")
module(load="imfile")
module(load="omelasticsearch")
template(name="doc" type="string"
         string="{\"src\":\"rsyslog\",\"i\":%msg:F,32:1%,\"line\":\"%msg:::json%\"}")
input(type="imfile" file="$T/lines.txt" tag="rs:")
action(type="omelasticsearch" server="127.0.0.1" serverport="$PORT" searchIndex="logs-rs"
       bulkmode="on" maxbytes="256k" esVersion.major="8" template="doc"
       errorfile="$T/es-errors.json" action.resumeRetryCount="-1"
       queue.type="linkedList" queue.size="20000" queue.dequeueBatchSize="500")
EOF

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
ok "parqd starts"
LD_LIBRARY_PATH="$RS_LIBS${LD_LIBRARY_PATH:-}" spawn "$RSYSLOGD" -n -f "$T/rsyslog.conf" \
    -i "$T/rsyslog.pid" -M "$RS_MODS" 2>"$T/rsyslog.log" >&2
RS=$SPAWNED
received() {
    [ "$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_http_records_total)" = "$N" ]
}
received_or_gone() { received || ! alive "$RS"; }
wait_for 90 received_or_gone
if received; then
    ok "rsyslog omelasticsearch delivered $N records to /_bulk"
else
    bad "rsyslog omelasticsearch delivered $N records to /_bulk" \
        "rsyslogd log: $(tail -n 5 "$T/rsyslog.log" | tr '\n' ' ' | cut -c1-400)"
fi
M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
check "no _bulk request got 400 ($(metric "$M" 'parqd_http_requests_total{endpoint="bulk",status="200"}') got 200)" \
    test "$(metric "$M" 'parqd_http_requests_total{endpoint="bulk",status="400"}')" = 0
check "rsyslog wrote no error file (it writes one for a failed request or item)" test ! -s "$T/es-errors.json"
kill -TERM "$RS"
wait_exit "$RS" 20
daemon_stop TERM 60
check "parqd exits 0 on SIGTERM" test "$DSTATUS" = 0
R=$(duck "SELECT count(*) AS n, count(DISTINCT i) AS d, CAST(min(i) AS INT) AS lo,
                 CAST(max(i) AS INT) AS hi, count(*) FILTER (WHERE ix = 'logs-rs') AS ix,
                 count(*) FILTER (WHERE line = i || ' line \"' || i || '\" of the rsyslog test') AS line
          FROM read_parquet('$T/out/**/*.parquet', hive_partitioning = false) WHERE src = 'rsyslog'")
echo "landed: $R"
check "$N records landed exactly once" grep -q "\"n\":\"$N\",\"d\":\"$N\",\"lo\":0,\"hi\":$((N - 1))" <<<"$R"
check "each has logs-rs, the action's index, in the from: _index column" grep -q "\"ix\":\"$N\"" <<<"$R"
check "each line arrived as written (quotes and all)" grep -q "\"line\":\"$N\"" <<<"$R"
check "no record went to the dead letters" test ! -s "$T/rejects.ndjson"
finish
