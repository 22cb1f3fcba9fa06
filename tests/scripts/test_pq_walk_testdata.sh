#!/usr/bin/env bash
# test_pq_walk_testdata.sh - runs the page walker (tests/tools/pq_walk/)
# over apache/parquet-testing reference files: good files must pass (their
# min/max compared with the decoded values, writers' known quirks noted),
# the corrupt-checksum files must fail on exactly the pages
# UPSTREAM_README.md ("Checksum Files") names, a ColumnIndex bound patched
# past the page's values must fail naming the page, and damaged copies
# must fail cleanly.
#   bash test_pq_walk_testdata.sh BUILD_DIR TESTDATA_DIR
set -u

BUILD=${1:?usage: $0 BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/testdata.sh" "${2:-}"
testdata_require parquet-testing/data
DATA=$TESTDATA/parquet-testing/data
WALK="$BUILD/pq_walk"
passed=0
failed=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok() { passed=$((passed + 1)); echo "PASS $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

if [ ! -x "$WALK" ]; then
    echo "no pq_walk at $WALK"
    echo "0 passed, 1 failed"
    exit 1
fi

# Runs pq_walk; sets OUT (stdout+stderr) and RC. The reference files do
# not change, so a walk of one with the same options runs once and later
# checks read its saved verdict (alltypes_tiny_pages, 5805 pages, is looked
# at by four checks: a second or more each under a sanitizer). Copies in
# $TMP are rewritten between walks and always run.
declare -A SAVED_OUT SAVED_RC
run() {
    local key="$*"
    if [ -n "${SAVED_RC[$key]+set}" ]; then
        OUT=${SAVED_OUT[$key]} RC=${SAVED_RC[$key]}
        return
    fi
    OUT=$("$WALK" "$@" 2>&1)
    RC=$?
    case "${*: -1}" in
        "$DATA"/*) SAVED_OUT[$key]=$OUT SAVED_RC[$key]=$RC ;;
    esac
}

# Files whose every CRC, offset, size and index entry is correct.
GOOD="datapage_v1-uncompressed-checksum.parquet
datapage_v1-snappy-compressed-checksum.parquet
plain-dict-uncompressed-checksum.parquet
rle-dict-snappy-checksum.parquet
alltypes_tiny_pages.parquet
alltypes_plain.parquet
data_index_bloom_encoding_stats.parquet
data_index_bloom_encoding_with_length.parquet
int32_with_null_pages.parquet
fixed_length_byte_array.parquet
nulls.snappy.parquet
list_columns.parquet
nested_structs.rust.parquet"

for f in $GOOD; do
    if [ ! -f "$DATA/$f" ]; then
        echo "SKIP $f (not in testdata)"
        continue
    fi
    run "$DATA/$f"
    if [ $RC -eq 0 ] && grep -q "^OK " <<<"$OUT"; then
        ok "$f"
    else
        bad "$f: exit $RC"
        echo "$OUT"
    fi
done

# Files without legacy quirks also pass --strict (what parqd's tests use).
for f in plain-dict-uncompressed-checksum.parquet rle-dict-snappy-checksum.parquet \
         alltypes_plain.parquet data_index_bloom_encoding_stats.parquet \
         int32_with_null_pages.parquet fixed_length_byte_array.parquet \
         nulls.snappy.parquet; do
    [ -f "$DATA/$f" ] || continue
    run --strict "$DATA/$f"
    if [ $RC -eq 0 ] && grep -q "0 notes" <<<"$OUT"; then
        ok "$f --strict"
    else
        bad "$f --strict: exit $RC"
        echo "$OUT"
    fi
done

# expect_fail NAME PATTERN... : exit 1 (not a crash) and every pattern found.
expect_fail() {
    local name=$1
    shift
    if [ $RC -ne 1 ]; then
        bad "$name: exit $RC, expected 1"
        echo "$OUT"
        return
    fi
    for pat in "$@"; do
        if ! grep -q -- "$pat" <<<"$OUT"; then
            bad "$name: output lacks '$pat'"
            echo "$OUT"
            return
        fi
    done
    ok "$name"
}

# Upstream: column a page 0 and column b page 1 have bad CRCs.
f=datapage_v1-corrupt-checksum.parquet
run "$DATA/$f"
expect_fail "$f stops at column a page 0" \
    "column 0 'a', page 0 (DATA_PAGE), offset 4: crc mismatch"
run --all "$DATA/$f"
expect_fail "$f --all names both pages" \
    "column 0 'a', page 0 (DATA_PAGE), offset 4: crc mismatch" \
    "column 1 'b', page 1 (DATA_PAGE), offset [0-9]*: crc mismatch"
n=$(grep -c "crc mismatch" <<<"$OUT")
[ "$n" -eq 2 ] && ok "$f: exactly 2 crc mismatches" || bad "$f: $n crc mismatches, expected 2"

# Upstream: the dictionary page CRC is bad (both columns' dictionaries are).
f=rle-dict-uncompressed-corrupt-checksum.parquet
run "$DATA/$f"
expect_fail "$f dictionary page" \
    "column 0 'long_field', page 0 (DICTIONARY_PAGE), offset 4: crc mismatch"
run --all "$DATA/$f"
n=$(grep -c "crc mismatch" <<<"$OUT")
m=$(grep -c "page 0 (DICTIONARY_PAGE).*crc mismatch" <<<"$OUT")
[ "$n" -ge 1 ] && [ "$n" -eq "$m" ] && ok "$f: only dictionary pages mismatch" \
    || bad "$f: $n mismatches, $m on dictionary pages"

# Encrypted footers are out of scope and must say so.
f=uniform_encryption.parquet.encrypted
if [ -f "$DATA/$f" ]; then
    run "$DATA/$f"
    expect_fail "$f" "encrypted footer"
fi

# Legacy quirks are noted, and --strict turns them into failures.
f=alltypes_tiny_pages.parquet
run "$DATA/$f"
grep -q "note: .*data_page_offset points at the dictionary page" <<<"$OUT" \
    && ok "$f: legacy dictionary offset noted" || bad "$f: no note"
run --strict "$DATA/$f"
expect_fail "$f --strict" "data_page_offset points at the dictionary page"

# Value checks ran: files with page indexes or min/max statistics compare
# them with the decoded values (dictionary, PLAIN, FLBA, nested, 5805 pages).
for f in alltypes_tiny_pages.parquet int32_with_null_pages.parquet \
         fixed_length_byte_array.parquet data_index_bloom_encoding_stats.parquet \
         rle-dict-snappy-checksum.parquet list_columns.parquet; do
    [ -f "$DATA/$f" ] || continue
    run "$DATA/$f"
    n=$(sed -n 's/^OK .* \([0-9]*\) min\/max checked.*/\1/p' <<<"$OUT")
    if [ $RC -eq 0 ] && [ "${n:-0}" -gt 0 ]; then
        ok "$f: $n min/max compared with the values"
    else
        bad "$f: exit $RC, ${n:-no} min/max checked"
        echo "$OUT" | tail -n 3
    fi
done

# Quirks of other writers, noted: parquet-mr 1.12 writes a zero float min
# as +0.0 and no nan_count; parquet-rs 49 writes min/max without
# column_orders (their order is then undefined). --strict fails on them.
f=alltypes_tiny_pages.parquet
run "$DATA/$f"
grep -q "note: .*'float_col'.*a zero min should be written as -0.0" <<<"$OUT" &&
    grep -q "note: .*'double_col'.*has no nan_count" <<<"$OUT" \
    && ok "$f: float zero and nan_count quirks noted" || { bad "$f: quirks not noted"; echo "$OUT" | head; }
run --strict --all "$DATA/$f"
expect_fail "$f --strict --all" "a zero min should be written as -0.0" "has no nan_count"
f=data_index_bloom_encoding_with_length.parquet
if [ -f "$DATA/$f" ]; then
    run --strict "$DATA/$f"
    expect_fail "$f --strict" "FileMetaData has no column_orders"
fi

# ci_entry FILE K: sets PAGE MINOFF MINLEN MAXOFF MAXLEN of ColumnIndex
# entry K (pq_walk --pages lists each bound with its file offset).
ci_entry() {
    read -r PAGE MINOFF MINLEN MAXOFF MAXLEN < <("$WALK" --pages "$1" 2>/dev/null |
        sed -n "s/^ *ColumnIndex\[$2\] of column [0-9]* '[^']*', page at \([0-9]*\): null_page 0, min at \([0-9]*\) +\([0-9]*\) = .*, max at \([0-9]*\) +\([0-9]*\) = .*/\1 \2 \3 \4 \5/p")
    [ -n "${MAXLEN:-}" ]
}

# A ColumnIndex is not covered by any CRC: a patched bound is caught only
# by comparing it with the values. int32_with_null_pages page 1 (after the
# first page; page 2 is a null page): the min's top byte set to the max's
# makes it larger than the page's smallest value; the max's top byte set
# to the min's makes it smaller than the largest.
src="$DATA/int32_with_null_pages.parquet"
if [ -f "$src" ] && ci_entry "$src" 1; then
    top() { od -An -tu1 -j "$1" -N1 "$src" | tr -d ' '; }
    cp "$src" "$TMP/ci.parquet"
    printf "\\$(printf %03o "$(top $((MAXOFF + 3)))")" |
        dd of="$TMP/ci.parquet" bs=1 seek=$((MINOFF + 3)) conv=notrunc status=none
    run "$TMP/ci.parquet"
    expect_fail "int32_with_null_pages: min_values[1] patched" \
        "column 0 'int32_field', page 1 (DATA_PAGE), offset $PAGE: ColumnIndex.min_values\[1\] = .* is above the page's smallest value"
    cp "$src" "$TMP/ci.parquet"
    printf "\\$(printf %03o "$(top $((MINOFF + 3)))")" |
        dd of="$TMP/ci.parquet" bs=1 seek=$((MAXOFF + 3)) conv=notrunc status=none
    run "$TMP/ci.parquet"
    expect_fail "int32_with_null_pages: max_values[1] patched" \
        "column 0 'int32_field', page 1 (DATA_PAGE), offset $PAGE: ColumnIndex.max_values\[1\] = .* is below the page's largest value"
else
    bad "int32_with_null_pages: no ColumnIndex entry 1 listed by --pages"
fi

run --dump --pages "$DATA/alltypes_plain.parquet"
[ $RC -eq 0 ] && grep -q "schema (" <<<"$OUT" && grep -q "DICTIONARY_PAGE at" <<<"$OUT" \
    && ok "--dump --pages" || { bad "--dump --pages: exit $RC"; echo "$OUT"; }

# Damaged copies: a clean failure (exit 1 with a message), never a crash.
src="$DATA/alltypes_tiny_pages.parquet"
size=$(stat -c %s "$src")
head -c $((size - 1)) "$src" >"$TMP/truncated.parquet"
run "$TMP/truncated.parquet"
expect_fail "truncated file" "bad magic"
head -c 4 "$src" >"$TMP/tiny.parquet"
run "$TMP/tiny.parquet"
expect_fail "4-byte file" "smaller than"

# flip FILE OFFSET: writes a copy with one byte changed to $TMP/flip.parquet.
flip() {
    cp "$1" "$TMP/flip.parquet"
    local b
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf %03o $(((b ^ 0x5a) & 0xff)))" |
        dd of="$TMP/flip.parquet" bs=1 seek="$2" conv=notrunc status=none
}

# A changed byte in the middle of any page body must break that page's CRC.
src="$DATA/datapage_v1-snappy-compressed-checksum.parquet"
run --pages "$src"
pages=$(sed -n 's/.*page \([0-9]*\) [A-Z_0-9]* at \([0-9]*\): header \([0-9]*\), compressed \([0-9]*\).*/\1 \2 \3 \4/p' <<<"$OUT")
[ -n "$pages" ] || bad "no pages listed for $src"
while read -r ord off hdr comp; do
    [ -n "$ord" ] || continue
    flip "$src" $((off + hdr + comp / 2))
    run "$TMP/flip.parquet"
    expect_fail "page at $off: body byte changed" "page $ord (DATA_PAGE), offset $off: crc mismatch"
done <<<"$pages"

# Anywhere else (footer, headers, indexes): any verdict, but no crash.
# All 60 copies go to one pq_walk (it walks each file given and exits 1 when
# any fails): a launch per copy cost ~0.15 CPU-s each under ASan. A crash
# (exit above 1, or a sanitizer's report, which exits 1) stops that walk:
# the copies are then walked one by one to name the ones that crash.
src="$DATA/alltypes_tiny_pages.parquet"
crashes=0
copies=() offs=()
for i in $(seq 0 59); do
    off=$(( (i * 7919 + 13) % 2200 ))
    [ $i -ge 30 ] && off=$((size - 2300 + off))      # footer and page indexes
    [ $i -ge 50 ] && off=$(( (i * 104729) % size ))
    flip "$src" "$off"
    mv "$TMP/flip.parquet" "$TMP/flip-$i.parquet"
    copies+=("$TMP/flip-$i.parquet") offs+=("$off")
done
crashed() { [ $RC -gt 1 ] || grep -qE 'Sanitizer|runtime error' <<<"$OUT"; }
run --all "${copies[@]}"
if crashed; then
    for i in "${!copies[@]}"; do
        run --all "${copies[$i]}"
        if crashed; then
            crashes=$((crashes + 1))
            echo "byte ${offs[$i]} damaged: exit $RC"
            echo "$OUT" | tail -5
        fi
    done
    [ $crashes -gt 0 ] || { crashes=1; echo "the walk of all 60 copies crashed, none alone: exit $RC"; }
fi
[ $crashes -eq 0 ] && ok "60 damaged copies: no crash" || bad "$crashes damaged copies crashed"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
