#!/usr/bin/env bash
# test_daemon_http_syslogng.sh - syslog-ng's elasticsearch-http()
# destination (Debian's syslog-ng-mod-http and syslog-ng-scl) in front of an http input
# (issue 21): syslog-ng follows a file of 5,000 lines and posts them to
# /_bulk in batches of 500 as JSON documents with index("logs-sng").
# Then SIGTERM to both, and DuckDB over the files: every record landed
# exactly once, with logs-sng in the default schema's _index column.
#
#   bash test_daemon_http_syslogng.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u
BUILD=${1:?usage: test_daemon_http_syslogng.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_http_syslogng

SYSLOG_NG=$(command -v syslog-ng || echo /usr/sbin/syslog-ng)
if [ ! -x "$SYSLOG_NG" ] || ! { ls /usr/lib/syslog-ng/*/libhttp.so && ls /usr/share/syslog-ng/include/scl/elasticsearch/; } >/dev/null 2>&1; then
    bad "syslog-ng with its http module" "not installed (Debian packages syslog-ng-core, syslog-ng-mod-http and syslog-ng-scl; make deps installs them)"
    finish
fi

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
N=5000
cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: http, listen: "127.0.0.1:$PORT"}
output: {dir: $T/out}
spool: {dir: $T/spool, sync: batch}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF
seq 0 $((N - 1)) >"$T/lines.txt"
cat >"$T/syslog-ng.conf" <<EOF
@version: 3.38
@include "scl.conf"
options { keep-timestamp(no); time-reopen(1); };
source s_file { file("$T/lines.txt" flags(no-parse) follow-freq(0.2)); };
destination d_es {
    elasticsearch-http(url("http://127.0.0.1:$PORT/_bulk") index("logs-sng") type("")
                       batch-lines(500) batch-timeout(200)
                       template("\$(format-json src=sng i=int64(\$MSG))"));
};
log { source(s_file); destination(d_es); };
EOF

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
ok "parqd starts"
spawn "$SYSLOG_NG" -F --no-caps -f "$T/syslog-ng.conf" --persist-file "$T/syslog-ng.persist" \
    --pidfile "$T/syslog-ng.pid" --control "$T/syslog-ng.ctl" 2>"$T/syslog-ng.log"
SNG=$SPAWNED
received() {
    [ "$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_http_records_total)" = "$N" ]
}
received_or_gone() { received || ! alive "$SNG"; }
wait_for 90 received_or_gone
if received; then
    ok "syslog-ng elasticsearch-http() delivered $N records to /_bulk"
else
    bad "syslog-ng elasticsearch-http() delivered $N records to /_bulk" \
        "syslog-ng log: $(tail -n 5 "$T/syslog-ng.log" | tr '\n' ' ' | cut -c1-400)"
fi
M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
check "no _bulk request got 400 ($(metric "$M" 'parqd_http_requests_total{endpoint="bulk",status="200"}') got 200)" \
    test "$(metric "$M" 'parqd_http_requests_total{endpoint="bulk",status="400"}')" = 0
kill -TERM "$SNG"
wait_exit "$SNG" 20
daemon_stop TERM 60
check "parqd exits 0 on SIGTERM" test "$DSTATUS" = 0
R=$(duck "SELECT count(*) AS n, count(DISTINCT i) AS d, min(i) AS lo, max(i) AS hi,
                 count(*) FILTER (WHERE ix = 'logs-sng') AS ix FROM
          (SELECT CAST(variant_extract(event, 'i') AS INT) AS i, _index AS ix
           FROM read_parquet('$T/out/**/*.parquet', hive_partitioning = false)
           WHERE CAST(variant_extract(event, 'src') AS VARCHAR) = 'sng')")
echo "landed: $R"
check "$N records landed exactly once" grep -q "\"n\":\"$N\",\"d\":\"$N\",\"lo\":0,\"hi\":$((N - 1))" <<<"$R"
check "each has _index logs-sng, the action's index" grep -q "\"ix\":\"$N\"" <<<"$R"
finish
