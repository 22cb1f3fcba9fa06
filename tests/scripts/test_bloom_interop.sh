#!/usr/bin/env bash
# test_bloom_interop.sh BUILD_DIR [TESTDATA_DIR] - parqd's bloom filters
# over 1,000,000 distinct strings and 1,000,000 distinct int64s (fpp 0.01,
# fpp 0.05, and an explicit ndv; several row groups each).
# tests/tools/bloom_gen writes them into BUILD_DIR/bloom-out and checks them
# with its own C reader: every value decodes, filter sizes follow (ndv, fpp),
# no false negatives, FPR over 1,000,000 absent values <= 1.5 x fpp. Then
# tests/interop/bloom_probe.mjs: hyparquet probes ALL present and absent
# values (counts must equal the C checker's, chunk by chunk), and DuckDB's
# parquet_bloom_probe a seeded sample (its per-call cost makes 1M probes
# take most of an hour; the measured ms/call is printed), each answer equal
# to hyparquet's. Last line: `N passed, M failed`; exit 1 on any failure.
# About 1 minute. Without node or tests/interop/node_modules (make npm)
# only the C checks run; in a sanitizer build too, where the C writer and
# checker are what is under test: the files' bytes do not depend on the
# build, and the readers already checked them against the main build.
set -u
BUILD=${1:?usage: test_bloom_interop.sh BUILD_DIR [TESTDATA_DIR]}
INTEROP=$(cd "$(dirname "$0")/../interop" && pwd)
. "$(dirname "$0")/build_kind.sh"
OUT=$BUILD/bloom-out

rm -rf "$OUT"
mkdir -p "$OUT"
"$BUILD/bloom_gen" "$OUT" > "$OUT/gen.log" 2>&1
grc=$?
cat "$OUT/gen.log"
cpass=$(grep -c '^PASS' "$OUT/gen.log")
cfail=$(grep -c '^FAIL' "$OUT/gen.log")
if [ "$grc" -ne 0 ] && [ "$cfail" -eq 0 ]; then
    cfail=1
fi
if [ "$grc" -ne 0 ] && [ ! -s "$OUT/manifest.json" ]; then
    echo "$cpass passed, $cfail failed"
    exit 1
fi

if sanitizer_build "$BUILD"; then
    readers_skipped "bloom_probe.mjs (hyparquet, DuckDB)"
    echo "$cpass passed, $cfail failed"
    [ "$cfail" -eq 0 ] && [ "$grc" -eq 0 ]
    exit
fi
if ! command -v node > /dev/null 2>&1 || [ ! -d "$INTEROP/node_modules/@duckdb/node-api" ]; then
    echo "(no node or @duckdb/node-api: make npm; hyparquet and DuckDB not run)"
    echo "$cpass passed, $cfail failed"
    [ "$cfail" -eq 0 ]
    exit
fi

node "$INTEROP/bloom_probe.mjs" "$OUT" --budget-ms 15000 > "$OUT/probe.log" 2>&1
rc=$?
grep -v '^[0-9]* passed' "$OUT/probe.log"
last=$(grep '^[0-9]* passed' "$OUT/probe.log" | tail -n 1)
if [ -z "$last" ]; then
    echo "bloom_probe.mjs did not finish (exit $rc)"
    echo "$cpass passed, $((cfail + 1)) failed"
    exit 1
fi
read -r npass _ nfail _ <<< "$last"
echo "$((npass + cpass)) passed, $((nfail + cfail)) failed"
[ "$((nfail + cfail))" -eq 0 ] && [ "$rc" -eq 0 ]
