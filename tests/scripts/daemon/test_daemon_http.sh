#!/usr/bin/env bash
# test_daemon_http.sh - HTTP ingest with real clients (issue 21): parqd
# with an http input (sync: batch), a second one with a bearer token and
# a third on a Unix socket (curl --unix-socket), a fourth with TLS;
# curl posts 5,000 records to /ingest with --data-binary, 5,000 more
# gzip-compressed, and probes GET / for the Elasticsearch banner; the
# official Elasticsearch Node.js client sends 5,000 documents with
# helpers.bulk (which checks the product header and every item's
# status); the OpenTelemetry JS logs SDK sends 5,000 records through the
# OTLP/HTTP JSON exporter and 5,000 through the protobuf one; hostile
# clients on the first input's port and on the metrics port at once
# (slowloris, 1,000 idle keep-alive connections on each, held while good
# clients post 1,000 records and scrape, a 100 MiB body, a gzip bomb,
# smuggling, garbage; wrong tokens on the second input) each get the
# answer README.md names, and peak RSS is reported. Then SIGTERM: every
# record lands exactly once (DuckDB over the files), /metrics counted the
# requests.
#
#   bash test_daemon_http.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u
BUILD=${1:?usage: test_daemon_http.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_http
raise_fd_limit 4096

if ! command -v curl >/dev/null; then
    skip "curl" "not installed"
    finish
fi
if [ ! -d "$INTEROP/node_modules/@elastic/elasticsearch" ]; then
    bad "prerequisites" "@elastic/elasticsearch missing from tests/interop/node_modules (make npm)"
    finish
fi

. "$LIB_DIR/pki.sh"
pki_make "$T/pki" >/dev/null 2>&1 || { bad "test PKI" "openssl could not make it"; finish; }
PORT=$(free_port)
PORT_S=$(free_port)
PORT_A=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
TOKEN="t0k-$RANDOM$RANDOM"
printf '%s\n' "$TOKEN" >"$T/token"
chmod 600 "$T/token"
cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: http, listen: "127.0.0.1:$PORT", header_timeout: 2s}
  - {type: http, listen: "127.0.0.1:$PORT_A", auth: {bearer_token_file: $T/token}}
  - {type: http, path: "$T/http.sock"}
  - {type: http, listen: "127.0.0.1:$PORT_S", tls: {cert: $T/pki/server.crt, key: $T/pki/server.key}}
output:
  dir: $T/out
  row_group: {max_rows: 5000}
spool: {dir: $T/spool, sync: batch}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
log: {level: info}
EOF

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts with two http inputs"
    finish
fi
ok "parqd starts with two http inputs"

# GET / : the banner Elasticsearch clients check before they send.
curl -s -D "$T/banner.h" -o "$T/banner.json" "http://127.0.0.1:$PORT/"
check "GET / says X-Elastic-Product: Elasticsearch" grep -qi '^X-Elastic-Product: Elasticsearch' "$T/banner.h"
check "GET / has version.number 8.x and a tagline" \
    grep -q '"version":{"number":"8\.[0-9.]*".*"tagline":' "$T/banner.json"
HEAD_ST=$(curl -s -I -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/")
check "HEAD / is 200" test "$HEAD_ST" = 200

# curl --data-binary, plain and gzip.
N=5000
for i in $(seq 0 $((N - 1))); do printf '{"src":"curl","i":%d}\n' "$i"; done >"$T/curl.ndjson"
for i in $(seq 0 $((N - 1))); do printf '{"src":"curlgz","i":%d}\n' "$i"; done | gzip >"$T/curlgz.ndjson.gz"
ST=$(curl -s -o "$T/curl.reply" -w '%{http_code}' -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$T/curl.ndjson" "http://127.0.0.1:$PORT/ingest")
check "curl --data-binary of $N records: 200" test "$ST" = 200
check "its reply counts $N accepted" grep -q "\"accepted\":$N,\"rejected\":0" "$T/curl.reply"
ST=$(curl -s -o "$T/curlgz.reply" -w '%{http_code}' -H 'Content-Encoding: gzip' \
    --data-binary @"$T/curlgz.ndjson.gz" "http://127.0.0.1:$PORT/ingest")
check "curl gzip of $N records: 200" test "$ST" = 200
check "its reply counts $N accepted" grep -q "\"accepted\":$N,\"rejected\":0" "$T/curlgz.reply"

# HTTP over the Unix socket input.
for i in $(seq 0 99); do printf '{"src":"unix","i":%d}\n' "$i"; done >"$T/unix.ndjson"
ST=$(curl -s -o /dev/null -w '%{http_code}' --unix-socket "$T/http.sock" \
    --data-binary @"$T/unix.ndjson" "http://parqd/ingest")
check "curl over the http Unix socket input: 200" test "$ST" = 200

# HTTPS: replies go back through TLS; two requests on one keep-alive connection.
for i in $(seq 0 99); do printf '{"src":"https","i":%d}\n' "$i"; done >"$T/https.ndjson"
head -n 50 "$T/https.ndjson" >"$T/https1.ndjson"
tail -n 50 "$T/https.ndjson" >"$T/https2.ndjson"
OUT=$(curl -s --cacert "$T/pki/ca.crt" -w '%{http_code} %{num_connects}\n' -o /dev/null \
    --data-binary @"$T/https1.ndjson" "https://localhost:$PORT_S/ingest" --next \
    --cacert "$T/pki/ca.crt" -w '%{http_code} %{num_connects}\n' -o /dev/null \
    --data-binary @"$T/https2.ndjson" "https://localhost:$PORT_S/ingest" \
    --resolve "localhost:$PORT_S:127.0.0.1")
check "curl over TLS, two requests on one connection: 200 200 ($(tr '\n' ' ' <<<"$OUT"))" \
    test "$(tr '\n' ' ' <<<"$OUT")" = "200 1 200 0 "

# The official Elasticsearch client.
if node_tool http_clients.mjs es-bulk --url "http://127.0.0.1:$PORT" --n "$N" >"$T/es.out" 2>&1; then
    ok "@elastic/elasticsearch helpers.bulk sent $N documents ($(tail -n 1 "$T/es.out" | cut -c1-120))"
else
    bad "@elastic/elasticsearch helpers.bulk sent $N documents" "$(tr '\n' ' ' <"$T/es.out" | cut -c1-400)"
fi

# The OpenTelemetry JS logs SDK, JSON and protobuf exporters.
for proto in 0 1; do
    name=$([ $proto = 1 ] && echo otlp-proto || echo otlp-json)
    if node_tool http_clients.mjs otlp --url "http://127.0.0.1:$PORT/v1/logs" --n "$N" \
        --proto "$proto" >"$T/$name.out" 2>&1; then
        ok "OpenTelemetry JS SDK, exporter $name: $N records exported"
    else
        bad "OpenTelemetry JS SDK, exporter $name: $N records exported" "$(tr '\n' ' ' <"$T/$name.out" | cut -c1-400)"
    fi
done

# Hostile clients, on the open port and on the one with a token.
node_tool http_clients.mjs hostile --host 127.0.0.1 --port "$PORT" --auth-port "$PORT_A" \
    --token "$TOKEN" --metrics-port "$PORT_M" >"$T/hostile.out" 2>&1
while read -r verdict rest; do
    case $verdict in
    PASS) ok "$rest" ;;
    FAIL) bad "${rest%%:*}" "${rest#*: }" ;;
    esac
done <"$T/hostile.out"
grep -q 'the right bearer token' "$T/hostile.out" || bad "hostile clients ran" "$(tail -n 3 "$T/hostile.out")"
check "parqd is alive after the hostile clients" alive "$DPID"
HWM=$(proc_kb "$DPID" VmHWM)
note "peak RSS after the hostile clients (1,000 idle keep-alive connections on each of two ports, a gzip bomb, 100 MiB announced): $((HWM / 1024)) MiB"
if ! sanitized_build; then
    check "peak RSS stays below 300 MiB" test "$HWM" -lt $((300 * 1024))
fi

# SIGHUP re-reads the token file: the old token is refused from then on,
# on a keep-alive connection opened before the reload too, and the new
# one accepted.
auth_req() { # auth_req TOKEN BODY: one POST /ingest on fd 7
    printf 'POST /ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s' \
        "$1" "${#2}" "$2" >&7
}
auth_status() { # the status of the next response on fd 7 (a body has no
    local l     # line break: the next status line follows it on one line)
    while IFS= read -t 10 -r l <&7; do
        case $l in *HTTP/1.1\ *) l=${l##*HTTP/1.1 }; echo "${l:0:3}"; return ;; esac
    done
    echo none
}
exec 7<>"/dev/tcp/127.0.0.1/$PORT_A"
auth_req "$TOKEN" '{"src":"reload","i":0}'$'\n'
check "before SIGHUP, the old token gets 200 on a keep-alive connection" test "$(auth_status)" = 200
NEW_TOKEN="n3w-$RANDOM$RANDOM"
printf '%s\n' "$NEW_TOKEN" >"$T/token.new"
chmod 600 "$T/token.new"
mv "$T/token.new" "$T/token"
kill -HUP "$DPID"
if wait_log "$DLOG" 'reload: done'; then ok "SIGHUP: reload done"; else bad "SIGHUP: reload done" "$(tail -n 3 "$DLOG")"; fi
auth_req "$TOKEN" '{"src":"reload","i":99}'$'\n'
check "after SIGHUP, the old token gets 401 on the connection opened before" test "$(auth_status)" = 401
exec 7<&-
ST=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
    --data-binary '{"src":"reload","i":98}' "http://127.0.0.1:$PORT_A/ingest")
check "after SIGHUP, the old token gets 401 ($ST)" test "$ST" = 401
ST=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $NEW_TOKEN" \
    --data-binary '{"src":"reload","i":1}' "http://127.0.0.1:$PORT_A/ingest")
check "after SIGHUP, the new token gets 200 ($ST)" test "$ST" = 200

M=$(http_get 127.0.0.1 "$PORT_M" /metrics)
check "metrics count 200s on /ingest" test "$(metric "$M" 'parqd_http_requests_total{endpoint="ingest",status="200"}')" -ge 3
check "metrics count 413s" test "$(metric "$M" 'parqd_http_requests_total{endpoint="ingest",status="413"}')" -ge 2
check "metrics have acknowledgement latencies" test "$(metric "$M" parqd_http_ack_seconds_count)" -ge 3

daemon_stop TERM 60
check "parqd exits 0 on SIGTERM" test "$DSTATUS" = 0

GLOB="$T/out/**/*.parquet"
R=$(duck "SELECT src, count(*) AS n, count(DISTINCT i) AS d, min(i) AS lo, max(i) AS hi
          FROM (SELECT CAST(variant_extract(event, 'src') AS VARCHAR) AS src,
                       CAST(variant_extract(event, 'i') AS INT) AS i
                FROM read_parquet('$GLOB', hive_partitioning = false)) GROUP BY 1 ORDER BY 1")
echo "landed: $R"
for src in curl curlgz es; do
    check "$src: $N records landed exactly once" \
        grep -q "{\"src\":\"$src\",\"n\":\"$N\",\"d\":\"$N\",\"lo\":0,\"hi\":$((N - 1))}" <<<"$R"
done
# _index: the bulk action's index in the default schema's _index column
# (the ES client sent index logs-es), null for records of other endpoints.
X=$(duck "SELECT _index AS ix, count(*) AS n FROM read_parquet('$GLOB', hive_partitioning = false)
          GROUP BY 1 ORDER BY 1 NULLS FIRST")
echo "by _index: $X"
check "_index: the $N documents of the Elasticsearch client carry logs-es" grep -q "{\"ix\":\"logs-es\",\"n\":\"$N\"}" <<<"$X"
check "_index: null for every other record" grep -q "{\"ix\":null,\"n\":\"$((N * 4 + 1203))\"}" <<<"$X"
check "hostile: only the request with the right token landed" grep -q '{"src":"hostile","n":"1"' <<<"$R"
check "hostile-good: the 1,000 records posted among the hostile clients landed exactly once" \
    grep -q '{"src":"hostile-good","n":"1000","d":"1000","lo":0,"hi":999}' <<<"$R"
check "reload: the two records sent with the token of their time landed, the refused ones not" \
    grep -q '{"src":"reload","n":"2","d":"2","lo":0,"hi":1}' <<<"$R"
check "https: 100 records landed exactly once" grep -q '{"src":"https","n":"100","d":"100","lo":0,"hi":99}' <<<"$R"
check "unix: 100 records landed exactly once" grep -q '{"src":"unix","n":"100","d":"100","lo":0,"hi":99}' <<<"$R"
R=$(duck "SELECT src, count(*) AS n, count(DISTINCT uid) AS d, min(uid) AS lo, max(uid) AS hi
          FROM (SELECT CAST(variant_extract(variant_extract(event, 'attributes'), 'src') AS VARCHAR) AS src,
                       CAST(variant_extract(variant_extract(event, 'attributes'), 'user.id') AS INT) AS uid
                FROM read_parquet('$GLOB', hive_partitioning = false)) WHERE src IS NOT NULL
          GROUP BY 1 ORDER BY 1")
echo "OTLP landed: $R"
for src in otlp-json otlp-proto; do
    check "$src: $N records landed exactly once" \
        grep -q "{\"src\":\"$src\",\"n\":\"$N\",\"d\":\"$N\",\"lo\":0,\"hi\":$((N - 1))}" <<<"$R"
done
for src in otlp-json otlp-proto; do
    F=$(duck "SELECT CAST(variant_extract(event, 'trace_id') AS VARCHAR) AS t,
              CAST(variant_extract(event, 'span_id') AS VARCHAR) AS s,
              CAST(variant_extract(event, 'flags') AS INT) AS f,
              CAST(variant_extract(event, 'severity_number') AS INT) AS sn,
              CAST(variant_extract(event, 'severity_text') AS VARCHAR) AS st,
              CAST(variant_extract(event, 'body') AS VARCHAR) AS b,
              CAST(variant_extract(variant_extract(event, 'resource'), 'service.name') AS VARCHAR) AS svc,
              CAST(variant_extract(variant_extract(event, 'scope'), 'name') AS VARCHAR) AS sc,
              CAST(variant_extract(variant_extract(event, 'scope'), 'version') AS VARCHAR) AS sv,
              CAST(variant_extract(variant_extract(event, 'attributes'), 'http.ok') AS BOOLEAN) AS ok,
              CAST(variant_extract(event, 'time') AS VARCHAR) LIKE '20__-__-__T__:__:__._________Z' AS tm
              FROM read_parquet('$GLOB', hive_partitioning = false)
              WHERE CAST(variant_extract(variant_extract(event, 'attributes'), 'src') AS VARCHAR) = '$src'
                AND CAST(variant_extract(variant_extract(event, 'attributes'), 'user.id') AS INT) = 7")
    check "$src: trace and span ids, flags, severity, body, resource, scope, attribute keys as sent, time" \
        grep -qF '[{"t":"5b8efff798038103d269b633813fc60c","s":"eee19b7ec3c1b174","f":1,"sn":9,"st":"INFO","b":"record 7","svc":"parqd-otel-test","sc":"parqd-test-scope","sv":"1.2.3","ok":true,"tm":true}]' <<<"$F"
done
finish
