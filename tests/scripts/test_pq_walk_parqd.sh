#!/usr/bin/env bash
# test_pq_walk_parqd.sh - parqd's own files through the page walker
# (tests/tools/pq_walk/) with --strict: every PageLocation against the
# pages walked, every ColumnIndex / Statistics min, max, null and NaN count
# against the values decoded from each page (issue acceptance "Page index").
#
#   bash test_pq_walk_parqd.sh BUILD_DIR TESTDATA_DIR
#
#   1. the interop matrix (BUILD/interop_gen) into a temporary directory;
#   2. every real log under TESTDATA/logs converted by BUILD/parqd with its
#      conf/schemas schema, and once more without a schema (one Variant
#      column), both with 4 KiB pages and 200-row row groups, so that
#      chunks have many pages and the index many entries;
#   3. when node and tests/interop/node_modules are there, the same files'
#      page indexes decoded by hyparquet (tests/interop/indexes.mjs), one
#      line per file; SKIP (not counted) otherwise, and in sanitizer builds;
#   4. mutations: one byte of a stored bound (or the boundary_order) in a
#      copy of a matrix file, where no CRC covers it; pq_walk must fail and
#      name the column, page and entry. A bound moved past the values fails
#      in both modes; a merely loose bound only with --strict.
# One PASS/FAIL line per check; last line "N passed, M failed".
set -u

if [ $# -ne 2 ]; then
    echo "usage: bash test_pq_walk_parqd.sh BUILD_DIR TESTDATA_DIR" >&2
    exit 2
fi
START=$(date +%s.%N)
BUILD=$(cd "$1" && pwd) || exit 2
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/scripts/testdata.sh" "$2"
. "$ROOT/tests/scripts/build_kind.sh"
WALK="$BUILD/pq_walk"
passed=0
failed=0
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

ok() { passed=$((passed + 1)); echo "PASS $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }
finish() {
    echo "pq_walk parqd: $(awk -v a="$START" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') s"
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}

for tool in pq_walk interop_gen parqd; do
    if [ ! -x "$BUILD/$tool" ]; then
        bad "$BUILD/$tool not built"
        finish
    fi
done

# Runs pq_walk; sets OUT (stdout+stderr) and RC.
run() { OUT=$("$WALK" "$@" 2>&1); RC=$?; }

# strict_walks LABEL FILE LABEL FILE ...: each file must pass --strict with
# no notes. One pq_walk for all of them (it walks every file it is given and
# prints "OK FILE: ..." for each that passes): in a sanitizer build each
# process costs ~0.15 CPU-s to start and leak-check whatever it does, which
# a launch per file made most of this test's time.
strict_walks() {
    local files=() i line
    for ((i = 2; i <= $#; i += 2)); do files+=("${!i}"); done
    [ ${#files[@]} -gt 0 ] || return 0
    # stdout only: problems go to stderr, unbuffered, and would land inside
    # a buffered OK line (the --all run below shows them)
    OUT=$("$WALK" --strict "${files[@]}" 2>/dev/null)
    RC=$?
    while [ $# -ge 2 ]; do
        line=$(grep -F -m 1 "OK $2: " <<<"$OUT")
        if [[ "$line" == *" 0 notes" ]]; then
            ok "$1: ${line#"OK $2: "}"
        else
            bad "$1: pq_walk --strict exit $RC"
            # every problem (--all), grouped by what it says (file and place cut)
            "$WALK" --strict --all "$2" 2>&1 | grep -v "^OK " |
                sed "s|^[^:]*: ||; s|row group [0-9]*, ||; s|page [0-9]* ([A-Z_0-9]*), offset [0-9]*: ||" |
                sort | uniq -c | sort -rn | head -n 4 | sed 's/^ */      /'
        fi
        shift 2
    done
}

# 1. the interop matrix
mkdir -p "$TMP/matrix"
if ! "$BUILD/interop_gen" "$TMP/matrix" >"$TMP/gen.log" 2>&1; then
    bad "interop_gen exited non-zero (files written so far are still walked)"
    tail -n 5 "$TMP/gen.log"
fi
walks=()
for f in "$TMP"/matrix/*.parquet; do
    [ -f "$f" ] && walks+=("matrix/$(basename "$f")" "$f")
done
[ ${#walks[@]} -gt 0 ] || bad "interop_gen wrote no files"
strict_walks "${walks[@]}"

# 2. real logs, small pages and row groups (skipped without the test data)
LOGS="$TESTDATA/logs"
if ! testdata_has logs; then
    echo "SKIP 2. real logs: $(testdata_missing logs)"
    LOGS="$TMP/no-logs"
    mkdir -p "$LOGS"
fi
SCHEMAS="$ROOT/conf/schemas"
SMALL="$TMP/small.yaml"
cat >"$SMALL" <<'EOF'
output:
  page: {max_bytes: 4KiB}
  row_group: {max_rows: 200}
EOF
schema_for() {
    case "$1" in
        zeek-wrccdc2018/*.json) echo "zeek-$(basename "$1" .json).yaml" ;;
        otrf-windows/*.json) echo "windows-events.yaml" ;;
        otrf-aws-cloudtrail/*.json) echo "cloudtrail.yaml" ;;
        *) echo "" ;;
    esac
}
mkdir -p "$TMP/logs"
nlogs=0
walks=()
while IFS= read -r src; do
    rel=${src#"$LOGS"/}
    base=$(basename "$rel" .json)
    schema=$(schema_for "$rel")
    nlogs=$((nlogs + 1))
    if [ -z "$schema" ] || [ ! -f "$SCHEMAS/$schema" ]; then
        bad "$rel: no schema in conf/schemas for it (${schema:-none mapped})"
        continue
    fi
    for kind in typed variant; do
        args=(--config "$SMALL")
        [ $kind = typed ] && args+=(--schema "$SCHEMAS/$schema")
        out="$TMP/logs/$base-$kind.parquet"
        if ! "$BUILD/parqd" convert "${args[@]}" -o "$out" "$src" >"$out.log" 2>&1; then
            bad "logs/$rel ($kind): parqd convert failed"
            tail -n 3 "$out.log" | sed 's/^/      /'
            continue
        fi
        label="$schema"
        [ $kind = variant ] && label="no schema: one Variant column"
        walks+=("logs/$rel ($label)" "$out")
    done
done < <(find "$LOGS" -type f -name '*.json' | LC_ALL=C sort)
strict_walks "${walks[@]}"
[ $nlogs -gt 0 ] || ! testdata_has logs || bad "no log files under $LOGS"

# 3. the same page indexes through hyparquet (not in a sanitizer build:
# build_kind.sh)
if sanitizer_build "$BUILD"; then
    readers_skipped "indexes.mjs (hyparquet)"
elif command -v node >/dev/null && [ -d "$ROOT/tests/interop/node_modules/hyparquet" ]; then
    for d in matrix logs; do
        [ -n "$(ls "$TMP/$d")" ] || continue      # logs: skipped above without the test data
        while IFS= read -r line; do
            case "$line" in
                PASS*) ok "indexes.mjs $d/${line#PASS  }" ;;
                FAIL*) bad "indexes.mjs $d/${line#FAIL  }" ;;
            esac
        done < <(node "$ROOT/tests/interop/indexes.mjs" "$TMP/$d" 2>&1)
    done
else
    echo "SKIP indexes.mjs: node or tests/interop/node_modules missing (make npm)"
fi

# 4. mutations
# pages_of FILE: sets PAGES to pq_walk --pages FILE, listed once per file
# (the sources are not changed: the mutations go to copies).
declare -A PAGES_OF
pages_of() {
    [ -n "${PAGES_OF[$1]+set}" ] || PAGES_OF[$1]=$("$WALK" --pages "$1" 2>/dev/null)
    PAGES=${PAGES_OF[$1]}
}
# ci_entry FILE COLUMN K: sets PAGE MINOFF MINLEN MAXOFF MAXLEN from the
# ColumnIndex entries pq_walk --pages lists (bounds with file offsets).
ci_entry() {
    local line
    pages_of "$1"
    line=$(sed -n "s/^ *ColumnIndex\[$3\] of column [0-9]* '$2', page at \([0-9]*\): null_page 0, min at \([0-9]*\) +\([0-9]*\) = .*, max at \([0-9]*\) +\([0-9]*\) = .*/\1 \2 \3 \4 \5/p" <<<"$PAGES")
    read -r PAGE MINOFF MINLEN MAXOFF MAXLEN <<<"$line"
    [ -n "${MAXLEN:-}" ]
}
byte_at() { od -An -tu1 -j "$2" -N1 "$1" | tr -d ' '; }
# poke SRC OFFSET VALUE: $TMP/mut.parquet is SRC with one byte set.
poke() {
    cp "$1" "$TMP/mut.parquet"
    printf "\\$(printf %03o "$3")" | dd of="$TMP/mut.parquet" bs=1 seek="$2" conv=notrunc status=none
}
# expect_fail NAME ARGS... -- PATTERN...: pq_walk ARGS exits 1 and says all.
expect_fail() {
    local name=$1 args=() pat
    shift
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    run "${args[@]}"
    if [ $RC -ne 1 ]; then
        bad "$name: pq_walk ${args[*]}: exit $RC, expected 1"
        echo "$OUT" | head -n 5
        return
    fi
    for pat in "$@"; do
        if ! grep -q -- "$pat" <<<"$OUT"; then
            bad "$name: output lacks '$pat'"
            echo "$OUT" | head -n 5
            return
        fi
    done
    ok "$name: $(grep -v '^OK' <<<"$OUT" | head -n 1 | sed 's/^[^:]*: //')"
}

src="$TMP/matrix/enc_plain_all_types_v1.parquet"
if [ ! -f "$src" ]; then
    bad "mutations: $src not generated"
    finish
fi
run --strict "$src"
[ $RC -eq 0 ] || bad "mutations: $src does not pass --strict unchanged"

# The most significant byte of a page's min raised to that of its max:
# the stored min is then above the page's smallest value (INT32 little-
# endian: the last byte, compared signed; STRING: the first, unsigned).
raise_min() {   # raise_min COLUMN MSB_AT_END(1/0) SIGNED(1/0)
    local col=$1 k a b
    for k in 0 1 2 3 4 5 6 7; do
        ci_entry "$src" "$col" $k || continue
        if [ "$2" = 1 ]; then
            a=$(byte_at "$src" $((MINOFF + MINLEN - 1))) b=$(byte_at "$src" $((MAXOFF + MAXLEN - 1)))
            off=$((MINOFF + MINLEN - 1))
        else
            a=$(byte_at "$src" "$MINOFF") b=$(byte_at "$src" "$MAXOFF")
            off=$MINOFF
        fi
        local sa=$a sb=$b
        if [ "$3" = 1 ]; then
            [ "$sa" -ge 128 ] && sa=$((sa - 256))
            [ "$sb" -ge 128 ] && sb=$((sb - 256))
        fi
        if [ "$sa" -lt "$sb" ]; then
            poke "$src" "$off" "$b"
            K=$k
            return 0
        fi
    done
    return 1
}

for mode in "" --strict; do
    if raise_min i32 1 1; then
        expect_fail "mutated min_values[$K] of INT32 'i32' ${mode:-(default)}" \
            $mode "$TMP/mut.parquet" -- \
            "column 1 'i32', page $K (DATA_PAGE), offset $PAGE: ColumnIndex.min_values\[$K\] = .* is above the page's smallest value"
    else
        bad "mutations: no INT32 page with differing min/max top bytes"
    fi
    if raise_min s 0 0; then
        expect_fail "mutated min_values[$K] of STRING 's' ${mode:-(default)}" \
            $mode "$TMP/mut.parquet" -- \
            "column 6 's', page $K (DATA_PAGE), offset $PAGE: ColumnIndex.min_values\[$K\] = .* is above the page's smallest value"
    else
        bad "mutations: no STRING page with differing min/max first bytes"
    fi
done

# A max lowered in its least significant byte (DOUBLE, little-endian): one
# ulp below the page's largest value.
done_max=0
for k in 1 2 3 0; do
    ci_entry "$src" d $k || continue
    b=$(byte_at "$src" "$MAXOFF")
    [ "$b" -gt 0 ] && [ "$(byte_at "$src" $((MAXOFF + 7)))" -lt 128 ] || continue   # > 0
    poke "$src" "$MAXOFF" $((b - 1))
    expect_fail "mutated max_values[$k] of DOUBLE 'd'" "$TMP/mut.parquet" -- \
        "column 5 'd', page $k (DATA_PAGE), offset $PAGE: ColumnIndex.max_values\[$k\] = .* is below the page's largest value"
    done_max=1
    break
done
[ $done_max = 1 ] || bad "mutations: no DOUBLE max to lower"

# A min lowered by one (INT64): still a lower bound, so only --strict,
# which holds untruncated bounds to equality, fails.
done_loose=0
for k in 1 2 3 0; do
    ci_entry "$src" i64 $k || continue
    b=$(byte_at "$src" "$MINOFF")
    [ "$b" -gt 0 ] || continue
    poke "$src" "$MINOFF" $((b - 1))
    run "$TMP/mut.parquet"
    if [ $RC -eq 0 ] && grep -q "note: .*ColumnIndex.min_values\[$k\] = .*INT64 bounds are exact" <<<"$OUT"; then
        ok "loose min_values[$k] of INT64 'i64': noted without --strict"
    else
        bad "loose min_values[$k] of INT64 'i64' without --strict: exit $RC"
        echo "$OUT" | head -n 5
    fi
    expect_fail "loose min_values[$k] of INT64 'i64' --strict" --strict "$TMP/mut.parquet" -- \
        "column 2 'i64', page $k (DATA_PAGE), offset $PAGE: ColumnIndex.min_values\[$k\] = .*, the page's smallest value is .*INT64 bounds are exact"
    done_loose=1
    break
done
[ $done_loose = 1 ] || bad "mutations: no INT64 min to lower"

# boundary_order ASCENDING -> DESCENDING on rising data.
src2="$TMP/matrix/stats_rowgroups_rising_v1.parquet"
bo=$("$WALK" --pages "$src2" 2>/dev/null |
    sed -n "s/^ *ColumnIndex of column 0 'i32': boundary_order ASCENDING, byte at \([0-9]*\)$/\1/p" | head -n 1)
if [ -n "$bo" ] && [ "$(byte_at "$src2" "$bo")" = 2 ]; then
    poke "$src2" "$bo" 4
    expect_fail "boundary_order of 'i32' made DESCENDING" "$TMP/mut.parquet" -- \
        "column 0 'i32', page 1 (DATA_PAGE), offset [0-9]*: ColumnIndex.boundary_order is DESCENDING, but min_values\[0\] = .* < min_values\[1\] = "
else
    bad "mutations: no ASCENDING ColumnIndex byte found in $src2"
fi

finish
