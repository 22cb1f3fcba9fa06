#!/usr/bin/env bash
# test_logs_interop.sh - real log samples through `parqd convert`, read back
# by DuckDB, parquet-wasm and hyparquet and compared value by value with the
# source NDJSON (tests/interop/logs.mjs; issue acceptance for
# conf/schemas/*.yaml).
#
#   bash test_logs_interop.sh BUILD_DIR TESTDATA_DIR
#
# For every log file under TESTDATA_DIR/logs, three conversions:
#   typed        its hand-written schema (conf/schemas/), built-in config;
#   default      no schema (one Variant column `event` + `_ingest_ts`);
#   typed-small  its schema with a config of 150-row row groups, 4 KiB pages
#                and rotation every 700 rows (several files, many pages per
#                nested/shredded column: the paths one big row group skips);
# each as BUILD_DIR/parqd convert [--config C] [--schema S]
# -o BUILD_DIR/logs-out/<name>-<kind>.parquet (dead letters beside it as
# .rejects.ndjson, stderr as .convert.log), exit status and timing into
# BUILD_DIR/logs-out/manifest.tsv; then node logs.mjs checks every
# (case, reader), with a mutation check of the comparison (--mutate 25);
# readers: DuckDB (values and, through CAST(v AS JSON), variant_extract and
# variant_typeof, every Variant), parquet-wasm, hyparquet, and parqd's own
# test decoder (BUILD_DIR/variant_dump) for unshredded Variant columns.
# Output is kept in BUILD_DIR/logs-out for inspection. In a sanitizer
# build (build_kind.sh) logs.mjs runs only its convert checks and the C
# decoder: the node readers checked the same bytes in the main build.
#
# A log file with no schema in the table below is a FAIL (the issue asks
# for one per log set), as is a schema file that does not exist.
#
# Node and tests/interop/node_modules are required: this test FAILS (exit
# 1) without them rather than skip, because a skipped acceptance test looks
# green while nothing was checked. `make npm` (part of `make interop`)
# installs them; note that `make test` runs `unit` (ctest) before
# `interop`, so on a fresh clone run `make npm` first (or `make interop`).
#
# Last line: "N passed, M failed, K skipped" from logs.mjs (plus one FAIL
# per conversion that could not even be attempted); exit 1 on any FAIL.
set -u

if [ $# -ne 2 ]; then
    echo "usage: bash test_logs_interop.sh BUILD_DIR TESTDATA_DIR" >&2
    exit 2
fi
START=$(date +%s.%N)
BUILD=$(cd "$1" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/testdata.sh" "$2"
. "$HERE/build_kind.sh"
testdata_require logs
TESTDATA=$(cd "$TESTDATA" && pwd) || exit 2
ROOT=$(cd "$HERE/../.." && pwd)
INTEROP="$ROOT/tests/interop"
SCHEMAS="$ROOT/conf/schemas"
PARQD="$BUILD/parqd"
OUT="$BUILD/logs-out"
LOGS="$TESTDATA/logs"

die() { echo "FAIL  test_logs_interop: $1"; echo "0 passed, 1 failed, 0 skipped"; exit 1; }

[ -x "$PARQD" ] || die "$PARQD not built"
command -v node >/dev/null || die "node not found (Node.js 18+ is a test dependency: make deps)"
for m in @duckdb/node-api parquet-wasm hyparquet hyparquet-compressors apache-arrow js-yaml; do
    [ -d "$INTEROP/node_modules/$m" ] ||
        die "$INTEROP/node_modules/$m missing: run 'make npm' (npm ci in tests/interop) first"
done
[ -d "$LOGS" ] || die "$LOGS not found"

# log file (relative to TESTDATA/logs) -> schema (relative to conf/schemas)
schema_for() {
    case "$1" in
        zeek-wrccdc2018/*.json) echo "zeek-$(basename "$1" .json).yaml" ;;
        otrf-windows/*.json) echo "windows-events.yaml" ;;
        otrf-aws-cloudtrail/*.json) echo "cloudtrail.yaml" ;;
        *) echo "" ;;
    esac
}

rm -rf "$OUT"
mkdir -p "$OUT"
MANIFEST="$OUT/manifest.tsv"
: >"$MANIFEST"
SMALL="$OUT/small.yaml"
cat >"$SMALL" <<'EOF'
output:
  rotate: {max_rows: 700}
  row_group: {max_rows: 150}
  page: {max_bytes: 4KiB}
EOF
pre_failed=0
now_us() { date +%s%6N; }

while IFS= read -r src; do
    rel=${src#"$LOGS"/}
    base=$(basename "$rel" .json)
    schema=$(schema_for "$rel")
    if [ -z "$schema" ]; then
        echo "FAIL  $rel: no schema for this log set in test_logs_interop.sh (conf/schemas/ needs one)"
        pre_failed=$((pre_failed + 1))
        continue
    fi
    if [ ! -f "$SCHEMAS/$schema" ]; then
        echo "FAIL  $rel: schema conf/schemas/$schema does not exist"
        pre_failed=$((pre_failed + 1))
        continue
    fi
    # zeek-x509, windows-events-empire_shell_..., cloudtrail-ec2_proxy_...
    if [ "$schema" = "zeek-$base.yaml" ]; then short=zeek-$base; else short=${schema%.yaml}-$base; fi
    for kind in typed default typed-small; do
        name="$short-$kind"
        args=() sch=-
        [ "$kind" != default ] && args=(--schema "$SCHEMAS/$schema") sch="$SCHEMAS/$schema"
        [ "$kind" = typed-small ] && args+=(--config "$SMALL")
        t0=$(now_us)
        "$PARQD" convert "${args[@]}" -o "$OUT/$name.parquet" "$src" 2>"$OUT/$name.convert.log"
        rc=$?
        t1=$(now_us)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$src" "$sch" "$rc" \
            "$OUT/$name" "$OUT/$name.rejects.ndjson" "$t0" "$t1" >>"$MANIFEST"
    done
done < <(find "$LOGS" -type f -name '*.json' | LC_ALL=C sort)

[ -s "$MANIFEST" ] || die "no log files found under $LOGS"

cdec=()
[ -x "$BUILD/variant_dump" ] && cdec=(--c-decoder "$BUILD/variant_dump") ||
    echo "NOTE  $BUILD/variant_dump not built: no c-decoder check"
# A sanitizer build: the (instrumented) C decoder only, see build_kind.sh.
readers=()
if sanitizer_build "$BUILD"; then
    readers_skipped "DuckDB, parquet-wasm, hyparquet"
    readers=(--readers "${cdec:+c-decoder}")
fi
node "$INTEROP/logs.mjs" "$MANIFEST" --mutate 25 "${cdec[@]}" "${readers[@]}" | tee "$OUT/logs.log"
rc=${PIPESTATUS[0]}
summary=$(tail -n 1 "$OUT/logs.log")
END=$(date +%s.%N)
echo "logs interop: files and logs kept in $OUT ($(awk -v a="$START" -v b="$END" 'BEGIN{printf "%.1f", b-a}') s)"
if [[ "$summary" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped$ ]]; then
    p=${BASH_REMATCH[1]} f=$((BASH_REMATCH[2] + pre_failed)) s=${BASH_REMATCH[3]}
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
else
    echo "FAIL  logs.mjs exited $rc without a summary line"
    p=0 f=$((pre_failed + 1)) s=0
fi
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
