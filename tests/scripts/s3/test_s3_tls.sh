#!/usr/bin/env bash
# test_s3_tls.sh - an https endpoint is verified (issue 18, "TLS"):
# radosgw serves https with a certificate from a test CA; parqd check
# --connect and convert -o s3:// succeed with output.s3.ca_file naming that
# CA, and fail with a certificate error without it (the system CAs do not
# know it), nothing landing then.
#
#   bash test_s3_tls.sh BUILD_DIR TESTDATA_DIR
set -u
BUILD=${1:?usage: test_s3_tls.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
. "$(dirname "$0")/../../daemon/pki.sh"
lib_init test_s3_tls
pki_make "$T/pki" >/dev/null 2>&1 || { bad "test PKI (openssl)"; finish; }
export RGW_TLS="$T/pki"
. "$(dirname "$0")/s3_common.sh"
trap 'rgw_stop; lib_cleanup' EXIT
if ! rgw_start "$T/rgw" >"$T/rgw.out" 2>&1 || ! rgw_mb logs; then
    bad "radosgw starts with https" "$(tail -n 3 "$T/rgw.out" | tr '\n' ' ')"
    finish
fi
ok "radosgw serves https on $RGW_TLS_ENDPOINT"

conf() { # conf FILE [CA_LINE]
    cat >"$1" <<CONF
output:
  s3:
    bucket: logs
    prefix: "tls/"
    endpoint: "$RGW_TLS_ENDPOINT"
    path_style: true
$2
CONF
}
conf "$T/ca.yaml" "    ca_file: $T/pki/ca.crt"
conf "$T/noca.yaml" ""
OUT=$("$PARQD" check --config "$T/ca.yaml" --connect 2>&1 >/dev/null) && ST=0 || ST=$?
check "check --connect over https with ca_file succeeds ($ST)" test "$ST" = 0
OUT=$("$PARQD" check --config "$T/noca.yaml" --connect 2>&1 >/dev/null) && ST=0 || ST=$?
check "without ca_file the certificate is refused ($ST): $(cut -c1-160 <<<"$OUT")" \
    test "$ST" != 0 -a "$(grep -c -i 'certificate' <<<"$OUT")" = 1
printf '{"a":%d}\n' $(seq 1 100) >"$T/in.ndjson"
"$PARQD" convert --config "$T/noca.yaml" -o s3://logs/tls/ "$T/in.ndjson" >/dev/null 2>"$T/noca.err" &&
    ST=0 || ST=$?
check "convert without ca_file fails ($ST) and lands nothing" \
    test "$ST" != 0 -a "$(rgw_ls logs || echo "(listing failed)")" = ""
"$PARQD" convert --config "$T/ca.yaml" -o s3://logs/tls/ "$T/in.ndjson" >/dev/null 2>"$T/ca.err" &&
    ST=0 || ST=$?
check "convert over https with ca_file lands the object ($ST): $(tail -n 1 "$T/ca.err" | cut -c1-120)" \
    test "$ST" = 0 -a "$(rgw_ls logs | grep -c '\.parquet')" = 1
finish
