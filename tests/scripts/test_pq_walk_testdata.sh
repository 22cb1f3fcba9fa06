#!/usr/bin/env bash
# test_pq_walk_testdata.sh - runs the page walker (tests/tools/pq_walk.c)
# over apache/parquet-testing reference files: good files must pass, the
# corrupt-checksum files must fail on exactly the pages UPSTREAM_README.md
# ("Checksum Files") names, and damaged copies must fail cleanly.
#   bash test_pq_walk_testdata.sh BUILD_DIR TESTDATA_DIR
set -u

BUILD=${1:?usage: $0 BUILD_DIR TESTDATA_DIR}
DATA=${2:?usage: $0 BUILD_DIR TESTDATA_DIR}/parquet-testing/data
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

# Runs pq_walk; sets OUT (stdout+stderr) and RC.
run() { OUT=$("$WALK" "$@" 2>&1); RC=$?; }

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
         data_index_bloom_encoding_with_length.parquet int32_with_null_pages.parquet \
         fixed_length_byte_array.parquet nulls.snappy.parquet; do
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
src="$DATA/alltypes_tiny_pages.parquet"
crashes=0
for i in $(seq 0 59); do
    off=$(( (i * 7919 + 13) % 2200 ))
    [ $i -ge 30 ] && off=$((size - 2300 + off))      # footer and page indexes
    [ $i -ge 50 ] && off=$(( (i * 104729) % size ))
    flip "$src" "$off"
    run --all "$TMP/flip.parquet"
    if [ $RC -gt 1 ]; then
        crashes=$((crashes + 1))
        echo "byte $off damaged: exit $RC"
        echo "$OUT" | tail -5
    fi
done
[ $crashes -eq 0 ] && ok "60 damaged copies: no crash" || bad "$crashes damaged copies crashed"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
