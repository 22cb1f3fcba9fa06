#!/usr/bin/env bash
# test_daemon_shipper.sh - a real log shipper in front of parqd: syslog-ng
# (Debian's syslog-ng-core), run in the foreground as an unprivileged-style
# instance with its own config, persist, pid and control files in a temp
# dir, forwards
#   - the Zeek logs, read as NDJSON lines (file() with flags(no-parse)),
#     over TCP (network(transport("tcp")), template "$MSG\n"),
#   - the Windows and CloudTrail logs the same way over the Unix socket
#     (unix-stream()),
#   - plain text lines turned into JSON by syslog-ng itself (format-json)
#     over TCP,
# and every record must land in Parquet, by content (DuckDB), after
# SIGTERM.
#
#   bash test_daemon_shipper.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u
BUILD=${1:?usage: test_daemon_shipper.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../testdata.sh" "${2:-}"
testdata_require logs
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_shipper

SYSLOG_NG=$(command -v syslog-ng || echo /usr/sbin/syslog-ng)
if [ ! -x "$SYSLOG_NG" ]; then
    bad "syslog-ng" "not installed (Debian package syslog-ng-core; make deps installs it)"
    finish
fi

PORT=$(free_port)
PORT_M=$(free_port)
SOCK="$T/parqd.sock"
DLOG="$T/parqd.log"
cat "$TESTDATA"/logs/zeek-*/*.json >"$T/zeek.ndjson"
cat "$TESTDATA"/logs/otrf-*/*.json >"$T/otrf.ndjson"

# Plain text lines with what JSON must escape: quotes, backslashes, tabs,
# non-ASCII; and what syslog-ng's format-json should make of them.
node -e '
const fs = require("fs");
const txt = [], exp = [];
for (let i = 1; i <= 500; i++) {
  const m = `plain ${i}: user "u${i % 7}" path C:\\tmp\\f${i}\tcaf\u00e9 \u2713 ${"x".repeat(i % 50)}`;
  txt.push(m);
  exp.push(JSON.stringify({ src: "plain", msg: m }));
}
fs.writeFileSync(process.argv[1], txt.join("\n") + "\n");
fs.writeFileSync(process.argv[2], exp.join("\n") + "\n");' "$T/plain.txt" "$T/plain.expect.ndjson"

cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
  - {type: unix, path: "$SOCK"}
output:
  dir: $T/out
  rotate: {max_rows: 2000}
  row_group: {max_rows: 500}
spool: {dir: $T/spool}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF

cat >"$T/syslog-ng.conf" <<EOF
@version: 3.38
# One instance of our own: no system sources, nothing outside $T.
options { log-msg-size(1048576); keep-timestamp(no); time-reopen(1); };
source s_zeek  { file("$T/zeek.ndjson" flags(no-parse) follow-freq(0.2) log-msg-size(1048576)); };
source s_otrf  { file("$T/otrf.ndjson" flags(no-parse) follow-freq(0.2) log-msg-size(1048576)); };
source s_plain { file("$T/plain.txt" flags(no-parse) follow-freq(0.2)); };
destination d_tcp  { network("127.0.0.1" port($PORT) transport("tcp") template("\$MSG\n")
                     persist-name("d_tcp")); };
destination d_unix { unix-stream("$SOCK" template("\$MSG\n")); };
destination d_json { network("127.0.0.1" port($PORT) transport("tcp")
                     template("\$(format-json src=plain msg=\$MSG)\n") persist-name("d_json")); };
log { source(s_zeek); destination(d_tcp); };
log { source(s_otrf); destination(d_unix); };
log { source(s_plain); destination(d_json); };
EOF

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
ok "parqd starts"

SINCE=$(now_us)
spawn "$SYSLOG_NG" -F --no-caps -f "$T/syslog-ng.conf" --persist-file "$T/syslog-ng.persist" \
    --pidfile "$T/syslog-ng.pid" --control "$T/syslog-ng.ctl" 2>"$T/syslog-ng.log"
SNG=$SPAWNED

NEXPECT=$(cat "$T/zeek.ndjson" "$T/otrf.ndjson" "$T/plain.expect.ndjson" | grep -c .)
received() {
    local m
    m=$(http_get 127.0.0.1 "$PORT_M" /metrics)
    [ "$(metric "$m" parqd_records_received_total)" = "$NEXPECT" ]
}
received_or_gone() { received || ! alive "$SNG"; }
wait_for 90 received_or_gone
if received; then
    ok "syslog-ng delivered $NEXPECT records over TCP and the Unix socket"
else
    M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
    bad "syslog-ng delivered $NEXPECT records over TCP and the Unix socket" \
        "parqd received $(metric "$M" parqd_records_received_total); syslog-ng log: $(tail -n 3 "$T/syslog-ng.log" | tr '\n' ' ')"
fi
M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
check "syslog-ng used 3 connections (accepted: $(metric "$M" parqd_connections_accepted_total))" \
    test "$(metric "$M" parqd_connections_accepted_total)" -ge 3

kill -TERM "$SNG" 2>/dev/null
wait_exit "$SNG" 20
check "syslog-ng stops on SIGTERM (status $EXIT_STATUS)" test "$EXIT_STATUS" = 0

daemon_stop TERM 60
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
UNTIL=$(now_us)

node_checks verify.mjs --out "$T/out" --min-files 2 --since-us "$SINCE" --until-us "$UNTIL" \
    --tmp "$T" "$T/zeek.ndjson" "$T/otrf.ndjson" "$T/plain.expect.ndjson"
check "no dead letters" test ! -s "$T/rejects.ndjson"
finish
