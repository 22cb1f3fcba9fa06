#!/usr/bin/env bash
# run.sh BUILD_DIR - the interop run (`make interop`):
#   1. BUILD_DIR/interop_gen writes the matrix + expectation files into
#      BUILD_DIR/interop-out (kept afterwards for inspection);
#   2. BUILD_DIR/pq_walk --quiet --strict checks every file, when built (page
#      CRCs and offsets, page index and statistics against the values; the
#      files are parqd's own, so writer quirks fail too);
#   2b. node indexes.mjs decodes every OffsetIndex / ColumnIndex with
#      hyparquet's readOffsetIndex / readColumnIndex and checks their shape;
#   3. node read.mjs reads every file with DuckDB, parquet-wasm and hyparquet.
# Exits non-zero if any step fails. The last line is the combined
# "N passed, M failed, K skipped" (generator and walker count one each,
# indexes.mjs one per file).
set -u

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: bash tests/interop/run.sh BUILD_DIR" >&2
    exit 2
fi
BUILD=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$BUILD/interop-out"
passed=0 failed=0 skipped=0

if [ ! -d "$HERE/node_modules" ]; then
    echo "run.sh: $HERE/node_modules missing: run 'npm ci' there (make npm)" >&2
    exit 2
fi

rm -rf "$OUT"
mkdir -p "$OUT"

# 1. generate
gen="$BUILD/interop_gen"
if [ ! -x "$gen" ]; then
    echo "FAIL  interop_gen: $gen not built (tests/tools/interop_gen/)"
    failed=$((failed + 1))
elif ! "$gen" "$OUT"; then
    echo "FAIL  interop_gen: exited non-zero (files written so far are still read)"
    failed=$((failed + 1))
else
    echo "PASS  interop_gen: $(ls "$OUT"/*.parquet 2>/dev/null | wc -l) files in $OUT"
    passed=$((passed + 1))
fi

shopt -s nullglob
files=("$OUT"/*.parquet)

# 2. page walk
walk="$BUILD/pq_walk"
if [ ! -x "$walk" ]; then
    echo "NOTE  pq_walk: $walk not built, page walk not done"
elif [ ${#files[@]} -eq 0 ]; then
    echo "NOTE  pq_walk: no files to walk"
elif "$walk" --quiet --strict "${files[@]}" >"$OUT/pq_walk.log" 2>&1; then
    echo "PASS  pq_walk: ${#files[@]} files"
    passed=$((passed + 1))
else
    echo "FAIL  pq_walk: problems found (full log: $OUT/pq_walk.log):"
    head -n 40 "$OUT/pq_walk.log" | sed 's/^/      /'
    failed=$((failed + 1))
fi

# 2b. page indexes through hyparquet
if [ ${#files[@]} -gt 0 ]; then
    ilog="$OUT/indexes.log"
    node "$HERE/indexes.mjs" "$OUT" >"$ilog" 2>&1
    irc=$?
    isum=$(tail -n 1 "$ilog")
    if [[ "$isum" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        passed=$((passed + BASH_REMATCH[1]))
        failed=$((failed + BASH_REMATCH[2]))
        [ "$irc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ] && failed=$((failed + 1))
        if [ "${BASH_REMATCH[2]}" -eq 0 ] && [ "$irc" -eq 0 ]; then
            echo "PASS  indexes.mjs: ${BASH_REMATCH[1]} files' page indexes decoded by hyparquet (log: $ilog)"
        else
            echo "FAIL  indexes.mjs (log: $ilog):"
            grep -a '^FAIL' "$ilog" | head -n 20 | sed 's/^/      /'
        fi
    else
        echo "FAIL  indexes.mjs: exited $irc without a summary line"
        tail -n 5 "$ilog" | sed 's/^/      /'
        failed=$((failed + 1))
    fi
fi

# 3. read back with the three readers
log="$OUT/read.log"
node "$HERE/read.mjs" "$OUT" --meta | tee "$log"
rc=${PIPESTATUS[0]}
summary=$(tail -n 1 "$log")
if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
    skipped=$((skipped + BASH_REMATCH[3]))
    if [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then failed=$((failed + 1)); fi
else
    echo "FAIL  read.mjs: exited $rc without a summary line"
    failed=$((failed + 1))
fi

echo "interop: files and logs kept in $OUT"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
