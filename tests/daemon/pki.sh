# pki.sh - a throwaway PKI for the TLS tests and the TLS benchmark, made
# with `openssl req/x509` at test time (nothing is checked in):
#
#   pki_make DIR
#     ca.crt          the CA parqd trusts for client certificates (CN=parqd-test-ca)
#     server.crt/.key CN=localhost, SAN DNS:localhost, IP:127.0.0.1, IP:::1 (signed by ca)
#     web7.crt/.key   client CN=web-7, signed by ca            (allowed)
#     intruder.crt/.key client CN=intruder, signed by ca       (subject not allowed)
#     other.crt/.key  client CN=web-7, signed by other-ca      (wrong CA)
#   Every private key is mode 0600 (parqd refuses anything looser).
#
# EC P-256 keys: quick to make, and what shippers commonly use.

pki_key() { # pki_key FILE
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null &&
        chmod 600 "$1"
}

pki_ca() { # pki_ca DIR NAME CN
    pki_key "$1/$2.key" &&
        openssl req -x509 -new -key "$1/$2.key" -out "$1/$2.crt" -days 3 -subj "/CN=$3" \
            -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
            2>/dev/null
}

pki_leaf() { # pki_leaf DIR NAME CA SUBJECT EXT...
    local d=$1 name=$2 ca=$3 subj=$4
    shift 4
    printf '%s\n' "$@" >"$d/$name.ext"
    pki_key "$d/$name.key" &&
        openssl req -new -key "$d/$name.key" -out "$d/$name.csr" -subj "$subj" 2>/dev/null &&
        openssl x509 -req -in "$d/$name.csr" -CA "$d/$ca.crt" -CAkey "$d/$ca.key" \
            -CAcreateserial -out "$d/$name.crt" -days 3 -extfile "$d/$name.ext" 2>/dev/null
}

pki_make() {
    local d=$1
    mkdir -p "$d" &&
        pki_ca "$d" ca parqd-test-ca &&
        pki_ca "$d" other-ca parqd-other-ca &&
        pki_leaf "$d" server ca "/CN=localhost" "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
            "extendedKeyUsage=serverAuth" &&
        pki_leaf "$d" web7 ca "/CN=web-7/O=parqd-test" "extendedKeyUsage=clientAuth" &&
        pki_leaf "$d" intruder ca "/CN=intruder/O=parqd-test" "extendedKeyUsage=clientAuth" &&
        pki_leaf "$d" other other-ca "/CN=web-7/O=parqd-test" "extendedKeyUsage=clientAuth"
}
