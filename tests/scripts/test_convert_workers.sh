#!/usr/bin/env bash
# test_convert_workers.sh - `parqd convert` gives the same bytes whatever
# the number of pipeline workers (PARQD_WORKERS=1, 2, 4; with more than
# one, each row group's encoding split between them), on every real
# log with its schema and with the default schema, with small row groups
# and rotation so batches split across row groups and files, and
# partitioned with row groups closed early by the memory bound. The rows'
# input order within a file is checked by test_pipeline (unit test).
#
#   bash test_convert_workers.sh BUILD_DIR TESTDATA_DIR
set -u
BUILD=${1:?usage: test_convert_workers.sh BUILD_DIR TESTDATA_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/testdata.sh" "${2:-}"
testdata_require logs
DATA=$TESTDATA
SCHEMAS="$HERE/../../conf/schemas"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_convert_workers.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0
fail=0

cat >"$T/small.yaml" <<'YAML'
output:
  row_group: {max_rows: 300}
  rotate: {max_rows: 2000}
  path: "{seq}.parquet"
YAML

# convert NAME SCHEMA-ARGS INPUT: three runs, then compare every file.
convert() {
    local name=$1 input=$2
    shift 2
    for w in 1 2 4; do
        mkdir -p "$T/$name-$w"
        # with 2 and 4 workers every row group's encoding is shared
        # between them (split by leaves, joined in order): same bytes
        PARQD_WORKERS=$w PARQD_ENCODE_SPLIT_BYTES=1 "$BUILD/parqd" convert \
            --config "${CONFIG:-$T/small.yaml}" "$@" \
            -o "$T/$name-$w/" "$input" 2>"$T/$name-$w.err"
        local rc=$?
        if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
            fail=$((fail + 1)); echo "FAIL $name workers=$w: exit $rc: $(tail -1 "$T/$name-$w.err")"
            return
        fi
    done
    local files
    files=$(cd "$T/$name-1" && find . -name '*.parquet' | sort)
    if [ -z "$files" ] || [ "$files" != "$(cd "$T/$name-2" && find . -name '*.parquet' | sort)" ] ||
       [ "$files" != "$(cd "$T/$name-4" && find . -name '*.parquet' | sort)" ]; then
        fail=$((fail + 1)); echo "FAIL $name: different files per worker count"
        return
    fi
    for f in $files; do
        if ! cmp -s "$T/$name-1/$f" "$T/$name-2/$f" || ! cmp -s "$T/$name-1/$f" "$T/$name-4/$f"; then
            fail=$((fail + 1)); echo "FAIL $name: $f differs between worker counts"
            return
        fi
    done
    pass=$((pass + 1)); echo "PASS $name: $(echo "$files" | wc -l) identical files for 1, 2 and 4 workers"
    rm -rf "$T/$name-"*
}

# Every log three times over: ~18 MB, so convert's 1 MiB batches go to
# different workers and split across row groups and files. The default
# schema without its _ingest_ts column (the receive time differs between
# runs).
for i in 1 2 3; do cat "$DATA"/logs/*/*.json; done >"$T/mixed.ndjson"
printf 'columns:\n  - {name: event, type: variant, from: "*"}\n' >"$T/variant.yaml"
convert variant-mixed "$T/mixed.ndjson" --schema "$T/variant.yaml"
# Partitioned: 60 values of a field, each file open to the end, and a
# memory limit that closes row groups early; where the early closes fall
# must not depend on the workers either (counting the workers' streams
# in the bound made 58 of 60 files differ between 1 and 2 workers).
cat >"$T/part.yaml" <<'YAML'
output:
  path: "p={{p}}/{seq}.parquet"
  max_open_files: 60
limits: {max_buffered_bytes: 2MiB}
YAML
awk '{ printf "{\"p\":\"%d\",%s\n", NR % 60, substr($0, 2) }' "$T/mixed.ndjson" >"$T/parts.ndjson"
CONFIG=$T/part.yaml convert variant-partitioned "$T/parts.ndjson" --schema "$T/variant.yaml"
# The same with room for 512 open files: convert's batches grow with the
# open files (4 MiB here, 8 KiB a file), so fewer, larger batches reach
# the workers.
sed 's/max_open_files: 60/max_open_files: 512/' "$T/part.yaml" >"$T/part512.yaml"
CONFIG=$T/part512.yaml convert variant-partitioned-512 "$T/parts.ndjson" --schema "$T/variant.yaml"
for schema in "$SCHEMAS"/*.yaml; do
    name=$(basename "$schema" .yaml)
    # A schema names its sample in its header: "Sample: testdata/logs/...".
    pattern=$(sed -n 's/^# Sample: testdata\/\(logs\/[^ ]*\).*/\1/p' "$schema" | head -1)
    [ -n "$pattern" ] || continue
    log=$(ls "$DATA"/$pattern 2>/dev/null | head -1)
    [ -n "$log" ] || continue
    convert "typed-$name" "$log" --schema "$schema"
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
