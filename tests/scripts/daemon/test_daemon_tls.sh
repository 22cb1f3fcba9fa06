#!/usr/bin/env bash
# test_daemon_tls.sh - TLS on TCP inputs (issue 11), over real sockets with
# real clients and a PKI made at test time (tests/daemon/pki.sh):
#   - `openssl s_client` sends over TLS (no client certificate asked) and
#     with mutual TLS (client_ca + allow_subjects ["CN=web-7"]);
#   - syslog-ng (Debian's syslog-ng-core) sends over TLS with a client
#     certificate (network(transport("tls") tls(...)));
#   - refused, and nothing they sent lands: no client certificate, a
#     certificate from another CA, a subject not on the allow-list, a
#     plaintext client on the TLS port, TLS 1.0 and TLS 1.1 handshakes,
#     a TLS 1.2 client offering only CBC / RSA-key-exchange suites;
#   - /metrics counts the refusals by reason, the log names them (at most
#     once a minute per reason);
#   - SIGHUP reloads the certificate (a new connection sees the new one);
#     a key file made group-readable is refused at SIGHUP (the running
#     certificate kept, data still lands) and at start;
#   - a plaintext input on 0.0.0.0 starts with a warning, TLS ones do not;
#   - every record sent by an accepted client lands, and only those
#     (verify.mjs compares the multiset of records with the lines sent);
#   - an encryption key file readable by group or others is refused the
#     same way, at start and at SIGHUP;
#   - no byte of the private key or the encryption key is in any log
#     line or /metrics body; the
#     keys' memory is locked and left out of core dumps.
#
#   bash test_daemon_tls.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u
BUILD=${1:?usage: test_daemon_tls.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
. "$(dirname "$0")/../../daemon/pki.sh"
lib_init test_daemon_tls

PKI="$T/pki"
if ! pki_make "$PKI"; then
    bad "test PKI made with openssl req/x509"
    finish
fi
ok "test PKI made with openssl req/x509"

P_TLS=$(free_port)
P_MTLS=$(free_port)
P_PLAIN=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
CFG="$T/parqd.yaml"
cat >"$CFG" <<EOF
inputs:
  - type: tcp
    listen: "0.0.0.0:$P_TLS"
    tls: {cert: $PKI/server.crt, key: $PKI/server.key, handshake_timeout: 5s}
  - type: tcp
    listen: "127.0.0.1:$P_MTLS"
    tls: {cert: $PKI/server.crt, key: $PKI/server.key, client_ca: $PKI/ca.crt,
          allow_subjects: ["CN=web-7"]}
  - {type: tcp, listen: "0.0.0.0:$P_PLAIN"}
output:
  dir: $T/out
  rotate: {max_rows: 1000}
  row_group: {max_rows: 500}
spool: {dir: $T/spool}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF

gen() { node "$LIB_DIR/gen.mjs" --lines "$2" --payload 100 --seed "$1" --tag "$1" --out "$T/$1.ndjson" >/dev/null; }
for f in s_client:400 mtls:300 nocert:50 otherca:50 intruder:50 tls10:20 tls11:20 plain:50 \
         syslog:500 rotated:100 after_bad_reload:100; do
    gen "${f%%:*}" "${f#*:}"
done

if ! daemon_start "$CFG" "$DLOG"; then
    bad "parqd starts with two TLS inputs"
    finish
fi
ok "parqd starts with two TLS inputs"
SINCE=$(now_us)
check "a warning for the plaintext input on 0.0.0.0, none for the TLS ones" \
    test "$(grep 'plaintext TCP on a non-loopback address' "$DLOG" | grep -c "inputs\[2\] tcp 0.0.0.0:$P_PLAIN")$(grep -c 'plaintext TCP' "$DLOG")" = 11

# Private keys live in OpenSSL's secure heap: a 256 KiB mapping left out
# of core dumps (VmFlags dd) and locked (VmLck) when RLIMIT_MEMLOCK allows.
# nodump_anon PID: how many anonymous mappings are marked "do not dump".
nodump_anon() {
    node -e '
const entries = require("fs").readFileSync(`/proc/${process.argv[1]}/smaps`, "utf8")
  .split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/);
console.log(entries.filter(e => {
  const head = e.split("\n")[0].trim().split(/\s+/);
  const flags = (/^VmFlags:(.*)$/m.exec(e) || ["", ""])[1].trim().split(/\s+/);
  return head.length === 5 && flags.includes("dd");     // no path: not [vvar] and the like
}).length);' "$1"
}
check "a mapping left out of core dumps for the keys (secure heap, MADV_DONTDUMP)" \
    test "$(nodump_anon "$DPID")" -ge 1
if [ "$(ulimit -l)" = unlimited ] || [ "$(ulimit -l)" -ge 256 ]; then
    check "the key heap is locked in memory (VmLck $(proc_kb "$DPID" VmLck) KiB)" \
        test "$(proc_kb "$DPID" VmLck)" -ge 256
else
    skip "the key heap is locked in memory" "RLIMIT_MEMLOCK is $(ulimit -l) KiB"
fi

# sc PORT [ARGS...] < FILE: s_client sending FILE, exiting at its end
# (-nocommands: a stdin chunk starting with Q, R or k is data, not a
# command to quit, renegotiate or update keys).
# Output (handshake details, errors) in $SC_OUT, status in $SC_STATUS.
SC_OUT="$T/s_client.out"
sc() {
    local port=$1
    shift
    SC_STATUS=0
    timeout 20 openssl s_client -connect "127.0.0.1:$port" -servername localhost \
        -CAfile "$PKI/ca.crt" -verify_return_error -quiet -no_ign_eof -nocommands "$@" >"$SC_OUT" 2>&1 ||
        SC_STATUS=$?
}
metrics() { http_get 127.0.0.1 "$PORT_M" /metrics | tail -n +2; }
refused() { metric "$(metrics)" "parqd_connections_refused_total{reason=\"$1\"}"; }
received() { metric "$(metrics)" parqd_records_received_total; }
received_is() { [ "$(received)" = "$1" ]; }

# ---- accepted clients -----------------------------------------------------------
sc "$P_TLS" <"$T/s_client.ndjson"
check "s_client over TLS (no client certificate asked) exits 0 (got $SC_STATUS)" test "$SC_STATUS" = 0
check "s_client: the 400 records are received" wait_for 20 received_is 400
sc "$P_MTLS" -cert "$PKI/web7.crt" -key "$PKI/web7.key" <"$T/mtls.ndjson"
check "s_client with the CN=web-7 certificate (mutual TLS) exits 0 (got $SC_STATUS)" test "$SC_STATUS" = 0
check "mutual TLS: the 300 records are received" wait_for 20 received_is 700

# ---- refused clients: nothing they send lands ------------------------------------
sc "$P_MTLS" <"$T/nocert.ndjson"
check "mutual TLS: a client without a certificate is refused" wait_for 10 test "$(refused tls_handshake)" = 1
sc "$P_MTLS" -cert "$PKI/other.crt" -key "$PKI/other.key" <"$T/otherca.ndjson"
check "mutual TLS: a CN=web-7 certificate from another CA is refused" wait_for 10 test "$(refused tls_handshake)" = 2
sc "$P_MTLS" -cert "$PKI/intruder.crt" -key "$PKI/intruder.key" <"$T/intruder.ndjson"
check "mutual TLS: a certificate with a subject not on the allow-list is refused" \
    wait_for 10 test "$(refused tls_subject)" = 1
# The client side must offer the old versions for the server to refuse them
# (OpenSSL 3's default security level refuses them itself).
for v in 0:tls1 1:tls1_1; do
    sc "$P_TLS" "-${v#*:}" -cipher 'DEFAULT:@SECLEVEL=0' <"$T/tls1${v%%:*}.ndjson"
    check "TLS 1.${v%%:*} handshake fails (s_client status $SC_STATUS)" test "$SC_STATUS" != 0
    check "TLS 1.${v%%:*}: refused by the server with protocol_version" \
        grep -q 'alert protocol version' "$SC_OUT"
done
check "TLS 1.0 and 1.1: counted as refused handshakes" wait_for 10 test "$(refused tls_handshake)" = 4
# TLS 1.2 with only weak suites offered: CBC, RSA key exchange, SHA-1 MACs.
sc "$P_TLS" -tls1_2 -cipher 'AES128-SHA:AES256-SHA256:ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES256-SHA:DHE-RSA-AES128-SHA' \
    <"$T/tls10.ndjson"
check "TLS 1.2 offering only CBC / RSA-key-exchange suites: no shared cipher (status $SC_STATUS)" \
    grep -q 'handshake failure' "$SC_OUT"
check "weak suites: counted as a refused handshake" wait_for 10 test "$(refused tls_handshake)" = 5
node -e '
const s = require("net").connect(Number(process.argv[1]), "127.0.0.1", () => {
  s.end(require("fs").readFileSync(process.argv[2]));
});
s.on("error", () => {}); s.on("close", () => process.exit(0));
setTimeout(() => process.exit(0), 10000);' "$P_TLS" "$T/plain.ndjson"
check "a plaintext client on the TLS port is refused" wait_for 10 test "$(refused tls_handshake)" = 6
check "no refused client's record was received (700)" received_is 700
M=$(metrics)
echo "$M" >"$T/metrics.1.txt"
check "metrics: the other refusal reasons stay 0" \
    test "$(refused max_connections)$(refused peer_cred)$(refused out_of_fds)" = 000
check "log: the refused handshakes are logged once (at most once a minute)" \
    test "$(grep -c 'TLS handshake failed' "$DLOG")" = 1
check "log: the subject refusal names the subject" grep -q 'subject.*CN *= *intruder.*not on allow_subjects' "$DLOG"

# ---- a real shipper: syslog-ng over TLS with a client certificate ------------------
SYSLOG_NG=$(command -v syslog-ng || echo /usr/sbin/syslog-ng)
if [ -x "$SYSLOG_NG" ]; then
    cat >"$T/syslog-ng.conf" <<EOF
@version: 3.38
options { log-msg-size(65536); keep-timestamp(no); time-reopen(1); };
source s_file { file("$T/syslog.ndjson" flags(no-parse) follow-freq(0.2) log-msg-size(65536)); };
destination d_tls { network("127.0.0.1" port($P_MTLS) transport("tls") template("\$MSG\n")
    tls(ca-file("$PKI/ca.crt") cert-file("$PKI/web7.crt") key-file("$PKI/web7.key")
        peer-verify(required-trusted))
    persist-name("d_tls")); };
log { source(s_file); destination(d_tls); };
EOF
    spawn "$SYSLOG_NG" -F --no-caps -f "$T/syslog-ng.conf" --persist-file "$T/syslog-ng.persist" \
        --pidfile "$T/syslog-ng.pid" --control "$T/syslog-ng.ctl" 2>"$T/syslog-ng.log"
    SNG=$SPAWNED
    if wait_for 60 received_is 1200; then
        ok "syslog-ng delivered 500 records over mutual TLS"
    else
        bad "syslog-ng delivered 500 records over mutual TLS" \
            "received $(received); syslog-ng: $(tail -n 3 "$T/syslog-ng.log" | tr '\n' ' ')"
    fi
    kill -TERM "$SNG" 2>/dev/null
    wait_exit "$SNG" 20
    SYSLOG_FILE="$T/syslog.ndjson"
else
    bad "syslog-ng" "not installed (Debian package syslog-ng-core; make deps installs it)"
    SYSLOG_FILE=
fi

# ---- SIGHUP: a new certificate; a loosened key file refused ------------------------
pki_leaf "$PKI" rotated ca "/CN=localhost/O=rotated" \
    "subjectAltName=DNS:localhost,IP:127.0.0.1" "extendedKeyUsage=serverAuth"
cp "$PKI/server.key" "$PKI/old-server.key"
cp "$PKI/rotated.crt" "$PKI/server.crt"
cp "$PKI/rotated.key" "$PKI/server.key"
kill -HUP "$DPID"
check "SIGHUP: reload done" wait_for 20 grep -q 'reload: done' "$DLOG"
sc "$P_TLS" <"$T/rotated.ndjson"
check "SIGHUP: a new connection gets the new certificate" grep -q 'O *= *rotated' "$SC_OUT"
check "after the reload: 100 more records received" wait_for 20 received_is $((1200 + 100))

chmod 640 "$PKI/server.key"
kill -HUP "$DPID"
check "SIGHUP with the key file mode 0640: reload refused" \
    wait_for 20 grep -q 'reload: .*server.key is readable by group or others (mode 0640); chmod 600 it; keeping the running configuration' "$DLOG"
check "parqd runs on" alive "$DPID"
sc "$P_TLS" <"$T/after_bad_reload.ndjson"
check "after the refused reload: TLS still served (status $SC_STATUS)" test "$SC_STATUS" = 0
check "after the refused reload: 100 more records received" wait_for 20 received_is $((1300 + 100))
metrics >"$T/metrics.2.txt"

daemon_stop TERM 60
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
UNTIL=$(now_us)

node_checks verify.mjs --out "$T/out" --since-us "$SINCE" --until-us "$UNTIL" --tmp "$T" \
    "$T/s_client.ndjson" "$T/mtls.ndjson" ${SYSLOG_FILE:+"$SYSLOG_FILE"} "$T/rotated.ndjson" \
    "$T/after_bad_reload.ndjson"
check "no dead letters" test ! -s "$T/rejects.ndjson"

# ---- start with a group- or world-readable key: refused ----------------------------
for mode in 0640 0604 0644; do
    chmod "$mode" "$PKI/server.key"
    st=0
    (cd "$T" && timeout 20 "$PARQD" --config "$CFG" 2>"$T/start-$mode.log") || st=$?
    check "start with the key file mode $mode: refused (exit $st)" test "$st" != 0 -a "$st" != 124
    check "start with mode $mode: the error names the file and its mode" \
        grep -q "server.key is readable by group or others (mode $mode); chmod 600 it" "$T/start-$mode.log"
done
chmod 600 "$PKI/server.key"
not_busy() { ! port_busy "$@"; }
check "nothing listens after a refused start" not_busy 127.0.0.1 "$P_TLS"

# ---- the encryption key file: the same rule, at start and at SIGHUP ---------------
node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("hex") + "\n")' >"$T/footer.hex"
chmod 644 "$T/footer.hex"
ECFG="$T/parqd-enc.yaml"
ELOG="$T/parqd-enc.log"
sed "s|^output:|output:\n  encryption: {footer_key: {id: k0, file: $T/footer.hex}}|; s|dir: $T/out|dir: $T/out-enc|; s|dir: $T/spool|dir: $T/spool-enc|" \
    "$CFG" >"$ECFG"
st=0
(cd "$T" && timeout 20 "$PARQD" --config "$ECFG" 2>"$T/start-enc.log") || st=$?
check "start with the encryption key file mode 0644: refused (exit $st)" test "$st" != 0 -a "$st" != 124
check "the error names the encryption key file and its mode" \
    grep -q "encryption key file $T/footer.hex is readable by group or others (mode 0644); chmod 600 it" "$T/start-enc.log"
chmod 600 "$T/footer.hex"
DLOG=$ELOG
if daemon_start "$ECFG" "$ELOG"; then
    ok "parqd starts with TLS and an encryption key of mode 0600"
    sc "$P_TLS" <"$T/rotated.ndjson"
    check "encrypted run: records received" wait_for 20 received_is 100
    chmod 640 "$T/footer.hex"
    kill -HUP "$DPID"
    check "SIGHUP with the encryption key file mode 0640: reload refused, the running one kept" \
        wait_for 20 grep -q "reload: encryption key file $T/footer.hex is readable by group or others (mode 0640); chmod 600 it; keeping the running configuration" "$ELOG"
    sc "$P_TLS" <"$T/after_bad_reload.ndjson"
    check "encrypted run: records still received after the refused reload" wait_for 20 received_is 200
    metrics >"$T/metrics.3.txt"
    daemon_stop TERM 60
    check "encrypted run: SIGTERM, exit 0 (got $DSTATUS)" test "$DSTATUS" = 0
    check "encrypted run: files published" test "$(parquet_files "$T/out-enc" | wc -l)" -ge 1
else
    bad "parqd starts with TLS and an encryption key of mode 0600"
fi

# ---- no key bytes anywhere -----------------------------------------------------
node_checks keyleak.mjs --pem "$PKI/server.key" --pem "$PKI/old-server.key" --hex "$T/footer.hex" \
    "$T/parqd.log" "$ELOG" "$T"/start-*.log "$T"/metrics.*.txt
finish
