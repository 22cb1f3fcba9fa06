#!/usr/bin/env bash
# same_bytes.sh - whether two builds of parqd write the same bytes: a
# check for changes that must not change the output (a faster shredding
# or conversion path). Not a test: run by hand, before and after.
#
# Cases (each converted by both builds with the same config, every output
# file compared with cmp):
#   typed     every conf/schemas/*.yaml on the sample its header names;
#             access.yaml on generated access logs (bench/gen_logs.mjs),
#             also with bad lines mixed in and with small row groups and
#             pages, also rotated
#   variant   the default schema without _ingest_ts (it holds the receive
#             time): on access logs, on the real log samples
#             (bench/e2e_input.mjs), on records whose types drift
#             (tests/interop/drift/drift_gen.mjs), rotated (each file
#             decides again), with small row groups, and partitioned over
#             20 and 60 tenants; a `*` column beside typed columns
# Prints "N of M identical"; exit 1 when any differs. The real logs are
# the test data's (README "Test data": $PQ_TESTDATA, else TESTDATA_DIR).
#
# usage: bench/same_bytes.sh BUILD_A BUILD_B TESTDATA_DIR [ACCESS_MB]
set -u
A=$(cd "${1:?usage: same_bytes.sh BUILD_A BUILD_B [TESTDATA_DIR] [ACCESS_MB]}" && pwd)
B=$(cd "${2:?usage: same_bytes.sh BUILD_A BUILD_B [TESTDATA_DIR] [ACCESS_MB]}" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/scripts/testdata.sh" "${3:-}"
testdata_require logs
DATA=$TESTDATA
MB=${4:-8}
T=$(mktemp -d "${TMPDIR:-/tmp}/same_bytes.XXXXXX")
trap 'rm -rf "$T"' EXIT
same=0
total=0

# conf NAME YAML-BODY: a config file $T/NAME.yaml.
conf() { printf '%s\n' "$2" >"$T/$1.yaml"; }
conf plain 'output:
  path: "{seq}.parquet"'
conf small 'output:
  row_group: {max_rows: 300}
  page: {max_bytes: 4KiB}
  rotate: {max_rows: 2000}
  path: "{seq}.parquet"'
conf rg1500 'output:
  row_group: {max_rows: 1500}
  path: "{seq}.parquet"'
conf rotate 'output:
  row_group: {max_rows: 100}
  rotate: {max_rows: 300}
  path: "{seq}.parquet"'
conf part20 'output:
  path: "tenant={{tenant}}/{seq}.parquet"'
conf part60 'output:
  path: "p={{p}}/{seq}.parquet"
  max_open_files: 60
limits: {max_buffered_bytes: 2MiB}'
printf 'columns:\n  - {name: event, type: variant, from: "*"}\n' >"$T/variant.yaml"
printf 'columns:\n  - {name: level, type: string}\n  - {name: flag, type: bool}\n  - {name: rest, type: variant, from: "*"}\n' >"$T/rest.yaml"

# case NAME CONFIG INPUT [ARGS...]: both builds, every file compared.
case_() {
    local name=$1 cfg=$2 input=$3 b out
    shift 3
    total=$((total + 1))
    for b in A B; do
        out=$T/$name-$b
        local bin=$A/parqd
        [ $b = B ] && bin=$B/parqd
        "$bin" convert --config "$T/$cfg.yaml" "$@" -o "$out/" "$input" >"$out.log" 2>&1
        local rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
            echo "FAIL $name: build $b exit $rc: $(tail -n 1 "$out.log")"
            return
        fi
    done
    local files
    files=$(cd "$T/$name-A" && find . -type f | sort)
    if [ -z "$files" ] || [ "$files" != "$(cd "$T/$name-B" && find . -type f | sort)" ]; then
        echo "DIFF $name: different files"
        return
    fi
    for f in $files; do
        if ! cmp -s "$T/$name-A/$f" "$T/$name-B/$f"; then
            echo "DIFF $name: $f"
            return
        fi
    done
    same=$((same + 1))
    echo "same $name: $(echo "$files" | wc -l) files"
    rm -rf "$T/$name-A" "$T/$name-B"
}

node "$ROOT/bench/gen_logs.mjs" --kind access --seed 1 --mb "$MB" "$T/access.ndjson" >/dev/null || exit 1
# bad lines: not JSON, a wrong type for a typed column, a missing ts
awk 'NR % 97 == 0 { print "{\"ts\": nope" } NR % 89 == 0 { print "{\"ts\":\"2024-05-14T06:59:59Z\",\"request\":{\"headers\":{\"host\":7,\"accept\":null}},\"response\":{\"status\":\"x\"}}" }
     NR % 83 == 0 { print "{\"host\":\"h\"}" } { print }' "$T/access.ndjson" >"$T/access-bad.ndjson"
node "$ROOT/bench/e2e_input.mjs" "$DATA/logs" "$T/mix.ndjson" 8 >/dev/null 2>&1 || exit 1
node "$ROOT/tests/interop/drift/drift_gen.mjs" 200 1000 >"$T/drift.ndjson" || exit 1
awk '{ printf "{\"tenant\":\"t%d\",%s\n", NR % 20, substr($0, 2) }' "$T/access.ndjson" >"$T/tenants.ndjson"
awk '{ printf "{\"p\":\"%d\",%s\n", NR % 60, substr($0, 2) }' "$T/mix.ndjson" >"$T/parts.ndjson"

S=$ROOT/conf/schemas
case_ typed-access plain "$T/access.ndjson" --schema "$S/access.yaml"
case_ typed-access-bad plain "$T/access-bad.ndjson" --schema "$S/access.yaml"
case_ typed-access-small small "$T/access.ndjson" --schema "$S/access.yaml"
case_ typed-access-bad-small small "$T/access-bad.ndjson" --schema "$S/access.yaml"
for schema in "$S"/*.yaml; do
    name=$(basename "$schema" .yaml)
    pattern=$(sed -n 's/^# Sample: testdata\/\(logs\/[^ ]*\).*/\1/p' "$schema" | head -1)
    [ -n "$pattern" ] || continue
    log=$(ls "$DATA"/$pattern 2>/dev/null | head -1)
    [ -n "$log" ] || continue
    case_ "typed-$name" plain "$log" --schema "$schema"
    case_ "typed-$name-small" small "$log" --schema "$schema"
done
case_ variant-access plain "$T/access.ndjson" --schema "$T/variant.yaml"
case_ variant-access-rg1500 rg1500 "$T/access.ndjson" --schema "$T/variant.yaml"
case_ variant-access-bad small "$T/access-bad.ndjson" --schema "$T/variant.yaml"
case_ variant-mix plain "$T/mix.ndjson" --schema "$T/variant.yaml"
case_ variant-mix-small small "$T/mix.ndjson" --schema "$T/variant.yaml"
case_ variant-drift rg1500 "$T/drift.ndjson" --schema "$T/variant.yaml"
case_ variant-drift-rotate rotate "$T/drift.ndjson" --schema "$T/variant.yaml"
case_ rest-drift rotate "$T/drift.ndjson" --schema "$T/rest.yaml"
case_ variant-tenants part20 "$T/tenants.ndjson" --schema "$T/variant.yaml"
case_ variant-parts part60 "$T/parts.ndjson" --schema "$T/variant.yaml"
echo "$same of $total identical"
[ $same -eq $total ]
