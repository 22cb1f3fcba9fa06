#!/usr/bin/env bash
# test_encryption_interop.sh BUILD_DIR [TESTDATA_DIR] - parqd's encrypted
# files read by DuckDB 1.5.6 (and the plaintext columns of a plaintext-footer
# file by hyparquet and parquet-wasm). tests/tools/crypt_gen writes the files
# into BUILD_DIR/crypt-out (each first read back by the test-only decrypting
# reader, every value compared) with manifest.json; then
# tests/interop/crypt_duckdb.mjs checks them (see its header): uniformly
# encrypted AES_GCM_V1 encrypted-footer files read with the right key, value
# by value, fail with a wrong key; plaintext columns of a signed
# plaintext-footer file read without keys; the shapes DuckDB cannot read
# (multi-page, v2, nested, CTR, AAD prefix, column keys) are named SKIPs
# with DuckDB's error. A --mutate run must FAIL (the comparison is live).
# Last line: `N passed, M failed, K skipped`; exit 1 on any failure. Without
# node or tests/interop/node_modules (make npm) the readers are skipped, and
# in a sanitizer build (build_kind.sh: they read the same bytes in the main
# build; crypt_gen's own read-back still runs).
set -u
BUILD=${1:?usage: test_encryption_interop.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/testdata.sh" "${2:-}"
INTEROP=$(cd "$(dirname "$0")/../interop" && pwd)
OUT=$BUILD/crypt-out
. "$(dirname "$0")/build_kind.sh"

rm -rf "$OUT"
mkdir -p "$OUT"
if ! "$BUILD/crypt_gen" "$OUT" > "$OUT/write.log" 2>&1; then
    cat "$OUT/write.log"
    echo "0 passed, 1 failed, 0 skipped (crypt_gen could not write or read back the files)"
    exit 1
fi
tail -n 1 "$OUT/write.log"

if sanitizer_build "$BUILD"; then
    n=$(ls "$OUT"/*.parquet | wc -l)
    readers_skipped "crypt_duckdb.mjs (DuckDB, hyparquet, parquet-wasm)"
    echo "1 passed, 0 failed, $n skipped"
    exit 0
fi
if ! command -v node > /dev/null 2>&1 || [ ! -d "$INTEROP/node_modules/@duckdb/node-api" ]; then
    n=$(ls "$OUT"/*.parquet | wc -l)
    echo "1 passed, 0 failed, $n skipped (no node or @duckdb/node-api: make npm)"
    exit 0
fi

# Without the test vectors, the reference files' part is left out.
REFDATA=$TESTDATA
if ! testdata_has parquet-testing/data; then
    echo "SKIP reference encrypted files read by DuckDB: $(testdata_missing parquet-testing/data)"
    REFDATA=""
fi
node "$INTEROP/crypt_duckdb.mjs" "$OUT" $REFDATA > "$OUT/duckdb.log" 2>&1
rc=$?
grep -v '^[0-9]* passed' "$OUT/duckdb.log"
last=$(grep '^[0-9]* passed' "$OUT/duckdb.log" | tail -n 1)
if [ -z "$last" ]; then
    echo "crypt_duckdb.mjs did not finish (exit $rc)"
    echo "1 passed, 1 failed, 0 skipped"
    exit 1
fi
read -r npass _ nfail _ nskip _ <<< "$last"

# the comparison must catch a changed expected value
node "$INTEROP/crypt_duckdb.mjs" "$OUT" --mutate > "$OUT/mutate.log" 2>&1
mrc=$?
if [ "$mrc" -ne 0 ] && [ "$(grep -c '^FAIL .*row [0-9]* column' "$OUT/mutate.log")" -ge 3 ]; then
    echo "PASS mutation check: changed expected values are reported (duckdb, hyparquet)"
    npass=$((npass + 1))
else
    echo "FAIL mutation check: a changed expected value went unnoticed (see $OUT/mutate.log)"
    nfail=$((nfail + 1))
fi
npass=$((npass + 1)) # crypt_gen: every file read back by pqcrypt
echo "$npass passed, $nfail failed, $nskip skipped"
[ "$nfail" -eq 0 ] && [ "$rc" -eq 0 ]
