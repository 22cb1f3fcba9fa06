#!/usr/bin/env bash
# test_vshred_duckdb.sh BUILD_DIR [TESTDATA_DIR] - parqd's Variant shredding
# read back by DuckDB. tests/tools/vshred_cases writes one file per valid
# parquet-testing shredded_variant case (the case's shredding layout, its
# expected Variants, an id column) into BUILD_DIR/vshred-out with an
# expectation file each; pq_walk checks their structure; then
# tests/interop/vshred_duckdb.mjs reads them with @duckdb/node-api and
# compares every row with the expected Variant's canonical JSON.
# Last line: `N passed, M failed, K skipped` (reasons before it); exit 1 on
# any failure. Without node or tests/interop/node_modules (npm ci there)
# the DuckDB part is skipped, not failed; so it is in a sanitizer build
# (build_kind.sh: DuckDB read the same bytes in the main build).
set -u
BUILD=${1:?usage: test_vshred_duckdb.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/testdata.sh" "${2:-}"
testdata_require parquet-testing/shredded_variant
CASES=$TESTDATA/parquet-testing/shredded_variant
INTEROP=$(cd "$(dirname "$0")/../interop" && pwd)
OUT=$BUILD/vshred-out
. "$(dirname "$0")/build_kind.sh"

rm -rf "$OUT"
mkdir -p "$OUT"
if ! "$BUILD/vshred_cases" "$OUT" "$CASES" > "$OUT/write.log" 2>&1; then
    grep -v '^wrote' "$OUT/write.log"
    echo "0 passed, 1 failed, 0 skipped (vshred_cases could not write the files)"
    exit 1
fi
tail -n 1 "$OUT/write.log"

walk_failed=0
if [ -x "$BUILD/pq_walk" ]; then
    if ! "$BUILD/pq_walk" --quiet --strict "$OUT"/case-*.parquet > "$OUT/pq_walk.log" 2>&1; then
        walk_failed=1
        echo "pq_walk found problems:"
        head -n 20 "$OUT/pq_walk.log"
    fi
fi

if sanitizer_build "$BUILD"; then
    n=$(ls "$OUT"/case-*.parquet | wc -l)
    readers_skipped "vshred_duckdb.mjs (DuckDB)"
    echo "0 passed, $walk_failed failed, $n skipped"
    exit $walk_failed
fi
if ! command -v node > /dev/null 2>&1 || [ ! -d "$INTEROP/node_modules/@duckdb/node-api" ]; then
    n=$(ls "$OUT"/case-*.parquet | wc -l)
    echo "0 passed, $walk_failed failed, $n skipped (no node or @duckdb/node-api: npm ci in tests/interop)"
    exit $walk_failed
fi

node "$INTEROP/vshred_duckdb.mjs" "$OUT" | tee "$OUT/duckdb.log" | grep -v '^PASS'
rc=${PIPESTATUS[0]}
if [ "$walk_failed" -ne 0 ]; then
    echo "pq_walk failed on the written files (see $OUT/pq_walk.log)"
    last=$(tail -n 1 "$OUT/duckdb.log")
    echo "$last" | awk '{ $3 = $3 + 1; print }'
    exit 1
fi
exit "$rc"
