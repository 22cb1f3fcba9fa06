#!/usr/bin/env bash
# test_partition_layouts.sh - automatic shredding with many partitions
# (daemon/output/autoshred.c): each routed file decides its layout from
# its own records, files that decide alike share one layout (pl_layout),
# and small column chunks are written UNCOMPRESSED (PL_SMALL_CHUNK_BYTES).
# Five tenants interleaved, of three record shapes: a, c and e carry
# {x: int, s: string}, b {y: string, z: bool}, d {x: string}. `parqd
# convert` writes one file per tenant; DuckDB then checks
#   - each file's `parqd.shred.event` names its own tenant's fields and
#     types (a, c, e alike; b and d their own), so a shared layout never
#     reaches a file of another shape, the one decided between them;
#   - every record reads back: per tenant the count, the sum of x (a, c,
#     e), the strings (b, d), from the shredded fields;
#   - the small chunks are UNCOMPRESSED and some chunk is not (zstd).
# Then 2 MiB of generated access logs (bench/gen_logs.mjs) round robin
# over 20 tenants, default schema, as bench_partition.sh does: every
# tenant's file reads back in DuckDB, parquet-wasm and hyparquet with
# every value equal to its source line (tests/interop/logs.mjs, one case
# per tenant: its lines, its file). In a sanitizer build (build_kind.sh)
# parqd converts and the record counts and files are checked; the readers
# read the same bytes in the main build.
#
#   bash test_partition_layouts.sh BUILD_DIR
set -u
BUILD=$(cd "${1:?usage: test_partition_layouts.sh BUILD_DIR}" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
INTEROP=$(cd "$HERE/../interop" && pwd)
. "$HERE/build_kind.sh"
command -v node >/dev/null || { echo "SKIP: node not installed"; exit 77; }
[ -d "$INTEROP/node_modules/@duckdb/node-api" ] || { echo "SKIP: run 'make npm' first"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/test_partition_layouts.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

ROWS=300   # per tenant: the sample observes every 4th row of each file
awk -v n=$ROWS 'BEGIN {
    for (i = 0; i < n; i++) {
        printf "{\"tenant\":\"a\",\"x\":%d,\"s\":\"a%d\"}\n", i, i
        printf "{\"tenant\":\"b\",\"y\":\"b%d\",\"z\":%s}\n", i, i % 2 ? "true" : "false"
        printf "{\"tenant\":\"c\",\"x\":%d,\"s\":\"c%d\"}\n", i * 2, i
        printf "{\"tenant\":\"d\",\"x\":\"d%d\"}\n", i
        printf "{\"tenant\":\"e\",\"x\":%d,\"s\":\"e%d\"}\n", i * 3, i
    } }' >"$T/in.ndjson"
cat >"$T/part.yaml" <<'EOF'
output:
  path: "tenant={{tenant}}/{seq}.parquet"
EOF
"$BUILD/parqd" convert --config "$T/part.yaml" -o "$T/out/" "$T/in.ndjson" >"$T/log" 2>&1 ||
    fail "convert: $(tail -n 2 "$T/log")"
grep -q "$((ROWS * 5)) records in, $((ROWS * 5)) written, 0 rejected" "$T/log" ||
    fail "not every record written: $(cat "$T/log")"

if sanitizer_build "$BUILD"; then
    readers_skipped "the DuckDB checks (layouts, counts and sums, codecs)"
else
    cd "$INTEROP" && node --input-type=module -e '
    import { DuckDBInstance } from "@duckdb/node-api";
    const con = await (await DuckDBInstance.create(":memory:")).connect();
    const [dir, rows] = [process.argv[1], Number(process.argv[2])];
    const one = async q => (await con.runAndReadAll(q)).getRows();
    let bad = 0;
    const want = (what, got, exp) => {
      const ok = JSON.stringify(got) === JSON.stringify(exp);
      console.log(`${ok ? "ok  " : "FAIL"} ${what}: ${JSON.stringify(got)}` + (ok ? "" : ` want ${JSON.stringify(exp)}`));
      bad += ok ? 0 : 1;
    };
    const files = `${dir}/**/*.parquet`;
    const tenant = `regexp_extract(file_name, $$tenant=([^/]*)/$$, 1)`;
    const layouts = Object.fromEntries(await one(`SELECT ${tenant}, decode(value) FROM parquet_kv_metadata($$${files}$$)
                                                  WHERE decode(key) = $$parqd.shred.event$$ ORDER BY 1`));
    const xs = `{"s":"string","tenant":"string","x":"int16"}`;
    want("layouts", layouts, { a: xs, b: `{"tenant":"string","y":"string","z":"bool"}`, c: xs,
                               d: `{"tenant":"string","x":"string"}`, e: xs });
    const read = `read_parquet($$${files}$$, hive_partitioning = false, filename = true)`;
    const t = `regexp_extract(filename, $$tenant=([^/]*)/$$, 1)`;
    const sums = await one(`SELECT ${t}, count(*)::INT, sum(variant_extract(event, $$x$$)::BIGINT)::BIGINT::VARCHAR
                            FROM ${read} WHERE ${t} IN ($$a$$, $$c$$, $$e$$) GROUP BY 1 ORDER BY 1`);
    const tri = rows * (rows - 1) / 2;
    want("counts and sums of x", sums, [["a", rows, String(tri)], ["c", rows, String(2 * tri)],
                                        ["e", rows, String(3 * tri)]]);
    const strs = await one(`SELECT ${t}, count(DISTINCT variant_extract(event, $$y$$)::VARCHAR)::INT,
                                   count(*) FILTER (WHERE variant_extract(event, $$z$$)::BOOLEAN)::INT,
                                   count(DISTINCT variant_extract(event, $$x$$)::VARCHAR)::INT
                            FROM ${read} WHERE ${t} IN ($$b$$, $$d$$) GROUP BY 1 ORDER BY 1`);
    want("strings and booleans", strs, [["b", rows, rows / 2, 0], ["d", 0, 0, rows]]);
    const codecs = (await one(`SELECT DISTINCT compression FROM parquet_metadata($$${files}$$) ORDER BY 1`)).map(r => r[0]);
    want("codecs", codecs, ["UNCOMPRESSED", "ZSTD"]);
    process.exit(bad ? 1 : 0);
    ' "$T/out" "$ROWS" || fail "DuckDB checks"
fi

ROOT=$(cd "$HERE/../.." && pwd)
node "$ROOT/bench/gen_logs.mjs" --kind access --seed 3 --mb 2 "$T/gen.ndjson" >/dev/null 2>&1 ||
    fail "bench/gen_logs.mjs failed"
awk '{ printf "{\"tenant\":\"t%02d\",%s\n", NR % 20, substr($0, 2) }' "$T/gen.ndjson" >"$T/acc.ndjson"
t0=$(date +%s%6N)
"$BUILD/parqd" convert --config "$T/part.yaml" -o "$T/acc/" "$T/acc.ndjson" >"$T/acc.log" 2>&1 ||
    fail "convert: $(tail -n 2 "$T/acc.log")"
t1=$(date +%s%6N)
: >"$T/manifest.tsv"
for d in "$T"/acc/tenant=*; do
    tn=${d##*=}
    f=$(ls "$d")
    [ "$(echo "$f" | wc -l)" -eq 1 ] || fail "$d: not one file: $f"
    grep "^{\"tenant\":\"$tn\"," "$T/acc.ndjson" >"$T/src-$tn.ndjson"
    # outside tenant=... directories: DuckDB would add the hive column
    mkdir -p "$T/flat"
    ln -s "$d/$f" "$T/flat/$tn.parquet"
    printf 'part-%s\t%s\t-\t0\t%s\t%s\t%s\t%s\n' "$tn" "$T/src-$tn.ndjson" "$T/flat/$tn" \
        "$T/none.rejects.ndjson" "$t0" "$t1" >>"$T/manifest.tsv"
done
[ "$(wc -l <"$T/manifest.tsv")" -eq 20 ] || fail "$(wc -l <"$T/manifest.tsv") tenants, want 20"
if sanitizer_build "$BUILD"; then
    readers_skipped "logs.mjs (DuckDB, parquet-wasm, hyparquet)"
else
    node "$INTEROP/logs.mjs" "$T/manifest.tsv" --readers duckdb,parquet-wasm,hyparquet >"$T/logs.out" 2>&1 ||
        fail "logs.mjs: $(grep -m 3 FAIL "$T/logs.out"; tail -n 1 "$T/logs.out")"
    tail -n 1 "$T/logs.out"
fi
echo "PASS"
