#!/usr/bin/env bash
# test_auto_shred_drift.sh - automatic Variant shredding under type drift
# (issue 10): tests/interop/drift/drift_gen.mjs writes a stream whose first
# row group has one type per field and whose later lines drift (int ->
# string, widening past the chosen int width, int <-> double, object ->
# scalar / null / empty, vanished and new fields, mixed array elements, a
# field named "value"). `parqd convert` turns it into files with
#   default    the default schema (event: shred auto), 200-row row groups;
#   rotate     the default schema, 100-row row groups, a file every 300 rows
#              (each file decides again: the later ones see the drift);
#   limits     shred: {auto: {max_columns: 3, max_depth: 1, min_presence: 0.9}};
#   none       shred: none (the unshredded layout);
#   rest       typed columns plus a `*` column, which shreds automatically;
#   column     a Variant column from the path `obj` (null where obj is
#              missing) beside a `*` column, both automatic;
#   access     1 MiB of generated HTTP access logs (bench/gen_logs.mjs, the
#              benchmark's workload; ~1440 lines) with the default schema,
#              500-row row groups (the second and third are converted to
#              the layout the first chose; the layout is the one 3 MiB in
#              1500-row groups gets, seeds 7, 8, 9: each node reader reads
#              every value, so a third of the lines is a third of the cost);
# and tests/interop/logs.mjs reads every file with DuckDB (values, CAST AS
# JSON, variant_extract, variant_typeof), parquet-wasm, hyparquet and,
# where unshredded, parqd's test decoder, comparing every value with the
# source line (numbers by exact value). Then checks that the layouts are the
# ones the cases are about (DuckDB's parquet_kv_metadata / parquet_schema):
# the default file shreds the drifting fields, the rotated files chose
# differently, the limits hold, `none` has no typed_value; and DuckDB
# filters on shredded fields (typed, drifted, nested) return the same rows
# from the shredded file as from the `none` file. In a sanitizer build
# (build_kind.sh) the files are written and checked by parqd's test decoder
# only; the node readers and the DuckDB layout checks read the same bytes
# in the main build.
#
#   bash test_auto_shred_drift.sh BUILD_DIR [TESTDATA_DIR]
# Last line "N passed, M failed, K skipped"; exit 1 on any failure.
set -u
BUILD=$(cd "${1:?usage: test_auto_shred_drift.sh BUILD_DIR}" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
INTEROP=$(cd "$HERE/../interop" && pwd)
OUT=$BUILD/drift-out
. "$HERE/build_kind.sh"
PARQD=$BUILD/parqd

die() { echo "FAIL  test_auto_shred_drift: $1"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }
[ -x "$PARQD" ] || die "$PARQD not built"
command -v node >/dev/null || die "node not found (make deps)"
for m in @duckdb/node-api parquet-wasm hyparquet hyparquet-compressors apache-arrow js-yaml; do
    [ -d "$INTEROP/node_modules/$m" ] || die "$INTEROP/node_modules/$m missing: run 'make npm' first"
done

rm -rf "$OUT"
mkdir -p "$OUT"
SRC=$OUT/drift.ndjson
node "$INTEROP/drift/drift_gen.mjs" 200 1000 >"$SRC" || die "drift_gen.mjs failed"

cat >"$OUT/rg200.yaml" <<'EOF'
output:
  row_group: {max_rows: 200}
EOF
cat >"$OUT/rotate.yaml" <<'EOF'
output:
  row_group: {max_rows: 100}
  rotate: {max_rows: 300}
EOF
cat >"$OUT/limits.schema.yaml" <<'EOF'
columns:
  - {name: event, type: variant, from: "*", shred: {auto: {max_columns: 3, max_depth: 1, min_presence: 0.9}}}
EOF
cat >"$OUT/none.schema.yaml" <<'EOF'
columns:
  - {name: event, type: variant, from: "*", shred: none}
EOF
cat >"$OUT/rest.schema.yaml" <<'EOF'
columns:
  - {name: level, type: string}
  - {name: flag, type: bool}
  - {name: rest, type: variant, from: "*"}
EOF
cat >"$OUT/column.schema.yaml" <<'EOF'
columns:
  - {name: obj, type: variant, from: obj}
  - {name: rest, type: variant, from: "*"}
EOF

now_us() { date +%s%6N; }
MANIFEST=$OUT/manifest.tsv
: >"$MANIFEST"
pre_failed=0
run_case() {  # name config schema|-
    local name=$1 cfg=$2 sch=$3 args=(--config "$2")
    [ "$sch" != - ] && args+=(--schema "$sch")
    local t0 t1 rc
    t0=$(now_us)
    "$PARQD" convert "${args[@]}" -o "$OUT/$name.parquet" "$SRC" 2>"$OUT/$name.convert.log"
    rc=$?
    t1=$(now_us)
    if [ $rc -ne 0 ]; then
        echo "FAIL  $name: convert exited $rc: $(tail -n 1 "$OUT/$name.convert.log")"
        pre_failed=$((pre_failed + 1))
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "drift-$name" "$SRC" "$sch" "$rc" \
        "$OUT/$name" "$OUT/$name.rejects.ndjson" "$t0" "$t1" >>"$MANIFEST"
}
run_case default "$OUT/rg200.yaml" -
run_case rotate "$OUT/rotate.yaml" -
run_case limits "$OUT/rg200.yaml" "$OUT/limits.schema.yaml"
run_case none "$OUT/rg200.yaml" "$OUT/none.schema.yaml"
run_case rest "$OUT/rg200.yaml" "$OUT/rest.schema.yaml"
run_case column "$OUT/rg200.yaml" "$OUT/column.schema.yaml"
ROOT=$(cd "$HERE/../.." && pwd)
ACCESS=$OUT/access.ndjson
node "$ROOT/bench/gen_logs.mjs" --kind access --seed 7 --mb 1 "$ACCESS" >/dev/null 2>&1 ||
    die "bench/gen_logs.mjs failed"
cat >"$OUT/rg500.yaml" <<'EOF'
output:
  row_group: {max_rows: 500}
EOF
SRC_SAVED=$SRC
SRC=$ACCESS
run_case access "$OUT/rg500.yaml" -
SRC=$SRC_SAVED

cdec=()
[ -x "$BUILD/variant_dump" ] && cdec=(--c-decoder "$BUILD/variant_dump")
readers=duckdb,parquet-wasm,hyparquet,duckdb-json,c-decoder
sanitizer_build "$BUILD" && readers=c-decoder
node "$INTEROP/logs.mjs" "$MANIFEST" --mutate 25 --readers "$readers" \
    "${cdec[@]}" >"$OUT/logs.log" 2>&1
rc=$?
grep -E '^(PASS|FAIL|SKIP)' "$OUT/logs.log"
summary=$(tail -n 1 "$OUT/logs.log")
if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    p=${BASH_REMATCH[1]} f=$((BASH_REMATCH[2] + pre_failed)) s=${BASH_REMATCH[3]}
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
else
    echo "FAIL  logs.mjs exited $rc without a summary line: $(tail -n 3 "$OUT/logs.log")"
    p=0 f=$((pre_failed + 1)) s=0
fi

# The layouts the cases are about.
if sanitizer_build "$BUILD"; then
    readers_skipped "DuckDB, parquet-wasm, hyparquet; drift_layout.mjs (DuckDB)"
else
    node "$INTEROP/drift/drift_layout.mjs" "$OUT" >"$OUT/layout.log" 2>&1
    lrc=$?
    cat "$OUT/layout.log"
    lp=$(grep -c '^PASS' "$OUT/layout.log") lf=$(grep -c '^FAIL' "$OUT/layout.log")
    [ "$lrc" -ne 0 ] && [ "$lf" -eq 0 ] && lf=1
    p=$((p + lp)) f=$((f + lf))
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
