#!/usr/bin/env bash
# bench_e2e.sh - end to end: NDJSON to Parquet with parqd convert and with
# DuckDB (COPY ... FROM read_json) on the same input, in the same run.
# Prints wall time, records/s, MB/s, peak RSS and bytes on disk, and the
# ratios. Numbers are for humans: no test asserts on them.
#
# usage: bench/bench_e2e.sh [BUILD_DIR] [TARGET_MB]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-200}
LOGS=$ROOT/../shared/testdata/logs
WORK=$BUILD/bench-e2e
mkdir -p "$WORK"
command -v /usr/bin/time >/dev/null || { echo "bench_e2e: needs /usr/bin/time (apt-get install time)"; exit 1; }

INPUT=$WORK/mix-${MB}.ndjson
WIN=$WORK/windows-${MB}.ndjson
[ -s "$INPUT" ] || node "$ROOT/bench/e2e_input.mjs" "$LOGS" "$INPUT" "$MB"
if [ ! -s "$WIN" ]; then
    mkdir -p "$WORK/winlogs/w" && cp "$LOGS"/otrf-windows/*.json "$WORK/winlogs/w/"
    node "$ROOT/bench/e2e_input.mjs" "$WORK/winlogs" "$WIN" "$MB"
fi

cat > "$WORK/duck.mjs" <<'JS'
import { DuckDBInstance } from '@duckdb/node-api';
const [input, output] = process.argv.slice(2);
const con = await (await DuckDBInstance.create(':memory:')).connect();
await con.run(`COPY (SELECT * FROM read_json('${input}', format='newline_delimited'))
               TO '${output}' (FORMAT parquet, COMPRESSION zstd)`);
JS
cp "$WORK/duck.mjs" "$ROOT/tests/interop/.bench_duck.mjs"
trap 'rm -f "$ROOT/tests/interop/.bench_duck.mjs"' EXIT

# run NAME INPUT OUTPUT CMD... -> "seconds kb bytes"
run() {
    local out=$3
    rm -f "$out"
    /usr/bin/time -f "%e %M" -o "$WORK/time" "${@:4}" >/dev/null 2>"$WORK/err" ||
        { cat "$WORK/err"; exit 1; }
    echo "$(cat "$WORK/time") $(stat -c %s "$out")"
}

report() { # label input parqd-result duckdb-result
    local bytes lines
    bytes=$(stat -c %s "$2")
    lines=$(wc -l < "$2")
    read -r ps pk pb <<<"$3"
    read -r ds dk db <<<"$4"
    awk -v l="$1" -v b="$bytes" -v n="$lines" -v ps="$ps" -v pk="$pk" -v pb="$pb" \
        -v ds="$ds" -v dk="$dk" -v db="$db" 'BEGIN {
        printf "%s: %.1f MiB, %d records\n", l, b / 1048576, n
        printf "  %-7s %7.2f s %10.0f rec/s %7.1f MB/s %8.1f MiB RSS %10d bytes on disk\n",
               "parqd", ps, n / ps, b / ps / 1e6, pk / 1024, pb
        printf "  %-7s %7.2f s %10.0f rec/s %7.1f MB/s %8.1f MiB RSS %10d bytes on disk\n",
               "duckdb", ds, n / ds, b / ds / 1e6, dk / 1024, db
        printf "  ratio   parqd is %.2fx DuckDB throughput, %.2fx its memory, %.2fx its bytes\n",
               ds / ps, pk / dk, pb / db }'
}

P=$(run parqd "$INPUT" "$WORK/p-default.parquet" "$BUILD/parqd" convert -o "$WORK/p-default.parquet" "$INPUT")
D=$(cd "$ROOT/tests/interop" && run duckdb "$INPUT" "$WORK/d-mix.parquet" node .bench_duck.mjs "$INPUT" "$WORK/d-mix.parquet")
report "mixed logs, parqd default schema (Variant) vs DuckDB inferred columns" "$INPUT" "$P" "$D"

P=$(run parqd "$WIN" "$WORK/p-win.parquet" "$BUILD/parqd" convert \
        --schema "$ROOT/conf/schemas/windows-events.yaml" -o "$WORK/p-win.parquet" "$WIN")
D=$(cd "$ROOT/tests/interop" && run duckdb "$WIN" "$WORK/d-win.parquet" node .bench_duck.mjs "$WIN" "$WORK/d-win.parquet")
report "Windows events, parqd typed schema vs DuckDB inferred columns" "$WIN" "$P" "$D"
