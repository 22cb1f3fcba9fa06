#!/usr/bin/env bash
# test_variant_numbers.sh - the number matrix (issue 7): every JSON number
# of tests/interop/numbers/numbers.ndjson (zeros and signed zeros, int8..int64
# edges, 2^53 + 1, 64-bit unsigned, 38- and 39-digit integers, shortest
# doubles, subnormals, DBL_MAX, Zeek's 17-digit roundings, decimals no
# double keeps, numbers beyond every exact type) in every place parqd builds
# a Variant: the default schema's `event`, a variant column, a Variant in a
# struct and in a list, DOUBLE / DECIMAL(38,10) / INT64 shredded columns and
# the `*` rest column (numbers.yaml). Each file is read back by DuckDB
# (values, and CAST(v AS JSON), variant_extract, variant_typeof),
# parquet-wasm, hyparquet (its own VARIANT decoding too: --native-strict)
# and parqd's test decoder (BUILD_DIR/variant_dump), and every number must
# have the type the rule of schema/variant/vnumber.c gives it and the text's value
# (tests/interop/logs.mjs, numrule.mjs). In a sanitizer build
# (build_kind.sh) only parqd's test decoder reads them: the node readers
# checked the same bytes in the main build.
#
#   bash test_variant_numbers.sh BUILD_DIR [TESTDATA_DIR]
#
# Needs node and tests/interop/node_modules (make npm): FAILS without them,
# as a skipped acceptance test would look green. Output in
# BUILD_DIR/numbers-out. Last line "N passed, M failed, K skipped".
set -u
if [ $# -lt 1 ]; then
    echo "usage: bash test_variant_numbers.sh BUILD_DIR [TESTDATA_DIR]" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
INTEROP=$(cd "$HERE/../interop" && pwd)
SRC=$INTEROP/numbers/numbers.ndjson
SCHEMA=$INTEROP/numbers/numbers.yaml
OUT=$BUILD/numbers-out
. "$HERE/build_kind.sh"

die() { echo "FAIL  test_variant_numbers: $1"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
[ -x "$BUILD/parqd" ] || die "$BUILD/parqd not built"
[ -x "$BUILD/variant_dump" ] || die "$BUILD/variant_dump not built (tests/tools/variant_dump.c)"
command -v node >/dev/null || die "node not found (Node.js 18+ is a test dependency: make deps)"
for m in @duckdb/node-api parquet-wasm hyparquet hyparquet-compressors apache-arrow js-yaml; do
    [ -d "$INTEROP/node_modules/$m" ] || die "$INTEROP/node_modules/$m missing: run 'make npm' first"
done

rm -rf "$OUT"
mkdir -p "$OUT"
MANIFEST=$OUT/manifest.tsv
: >"$MANIFEST"
for kind in default typed; do
    args=() sch=-
    [ "$kind" = typed ] && args=(--schema "$SCHEMA") sch=$SCHEMA
    t0=$(date +%s%6N)
    "$BUILD/parqd" convert "${args[@]}" -o "$OUT/numbers-$kind.parquet" "$SRC" 2>"$OUT/numbers-$kind.convert.log"
    rc=$?
    t1=$(date +%s%6N)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "numbers-$kind" "$SRC" "$sch" "$rc" \
        "$OUT/numbers-$kind" "$OUT/numbers-$kind.rejects.ndjson" "$t0" "$t1" >>"$MANIFEST"
done

readers=()
if sanitizer_build "$BUILD"; then
    readers_skipped "DuckDB, parquet-wasm, hyparquet"
    readers=(--readers c-decoder)
fi
node "$INTEROP/logs.mjs" "$MANIFEST" --mutate 25 --native-strict \
    --c-decoder "$BUILD/variant_dump" "${readers[@]}" | tee "$OUT/numbers.log"
rc=${PIPESTATUS[0]}
summary=$(tail -n 1 "$OUT/numbers.log")
if [[ ! "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    echo "FAIL  logs.mjs exited $rc without a summary line"
    echo "0 passed, 1 failed, 0 skipped"
    exit 1
fi
[ "$rc" -eq 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]
