#!/usr/bin/env bash
# bench_partition.sh - partitioned output (issue 20, must-hold 3): one
# stream of generated access logs with a `tenant` field of PARTS values
# (round robin, so every partition's file stays open to the end: the
# worst case for memory), converted by `parqd convert` once partitioned
# (`output.path: "tenant={{tenant}}/{seq}.parquet"`, max_open_files =
# PARTS) and once not, RUNS times interleaved. Prints each one's median
# wall time, MB/s and peak RSS, the partitioned/unpartitioned throughput
# ratio, the peak RSS against limits.max_buffered_bytes, and, from DuckDB's
# parquet_metadata, the files per partition and row groups per file.
# Not a test: no number here passes or fails.
#
# usage: bench/bench_partition.sh [BUILD_DIR] [MB] [PARTS] [RUNS]
#        (defaults: build, 200, 1000, 3)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-200}
PARTS=${3:-1000}
RUNS=${4:-3}
OUT=$BUILD/bench-partition
mkdir -p "$OUT"
GEN=$OUT/access-${MB}-seed1.ndjson
IN=$OUT/access-${MB}-tenants-${PARTS}.ndjson
[ -s "$GEN" ] || node "$ROOT/bench/gen_logs.mjs" --kind access --seed 1 --mb "$MB" "$GEN" || exit 1
[ -s "$IN" ] || awk -v p="$PARTS" '{ printf "{\"tenant\":\"t%04d\",%s\n", NR % p, substr($0, 2) }' \
    "$GEN" >"$IN" || exit 1
BUDGET=512MiB
cat >"$OUT/part.yaml" <<EOF
output:
  path: "tenant={{tenant}}/{seq}.parquet"
  max_open_files: $PARTS
limits: {max_buffered_bytes: $BUDGET}
EOF
cat >"$OUT/flat.yaml" <<EOF
output:
  path: "{seq}.parquet"
limits: {max_buffered_bytes: $BUDGET}
EOF

# Each run writes into a directory of its own, and outputs are removed
# only once they are 15 minutes old. On ext4 without a journal (this
# machine's), allocating an inode skips every inode of its group deleted
# in the last minutes (recently_deleted(), a lookup each): a run right
# after `rm -rf` of the previous run's 2,000 files and directories spent
# a tenth of its CPU there, which says nothing about parqd.
RUNDIR=$OUT/runs
mkdir -p "$RUNDIR"
find "$RUNDIR" -mindepth 1 -maxdepth 1 -mmin +15 -exec rm -rf {} +
STAMP=$(date +%s).$$
declare -A times rss
for r in $(seq "$RUNS"); do
    for k in flat part; do
        dst=$RUNDIR/$STAMP.$k.$r
        /usr/bin/time -o "$OUT/time" -f '%e %M' "$BUILD/parqd" convert --config "$OUT/$k.yaml" \
            -o "$dst/" "$IN" >"$OUT/$k.log" 2>&1 || { echo "$k: convert failed"; tail -n 3 "$OUT/$k.log"; exit 1; }
        read -r t m < <(tail -n 1 "$OUT/time")
        times[$k]="${times[$k]:-} $t"
        rss[$k]="${rss[$k]:-} $m"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
bytes=$(stat -c %s "$IN")
tf=$(echo "${times[flat]}" | median)
for k in flat part; do
    t=$(echo "${times[$k]}" | median) m=$(echo "${rss[$k]}" | median)
    awk -v k="$k" -v t="$t" -v m="$m" -v inb="$bytes" -v tf="$tf" 'BEGIN {
        printf "%-4s median %.2f s  %6.1f MB/s (%.0f%% of unpartitioned)  peak RSS %.0f MiB\n",
               k, t, inb / 1048576 / t, 100 * tf / t, m / 1024 }'
done
echo "limits.max_buffered_bytes: $BUDGET; $PARTS partitions, round robin"
(cd "$ROOT/tests/interop" && node --input-type=module -e '
import { DuckDBInstance } from "@duckdb/node-api";
const con = await (await DuckDBInstance.create(":memory:")).connect();
const dir = process.argv[1];
const r = await con.runAndReadAll(`
  WITH f AS (SELECT file_name, max(row_group_id) + 1 AS rgs
             FROM parquet_metadata('"'"'${dir}/**/*.parquet'"'"') GROUP BY file_name),
       p AS (SELECT regexp_extract(file_name, '"'"'tenant=([^/]*)/'"'"', 1) AS t, count(*) AS files,
                    sum(rgs) AS rgs FROM f GROUP BY t)
  SELECT count(*) AS partitions, min(files), max(files), avg(files),
         min(rgs / files), max(rgs / files), avg(rgs / files) FROM p`);
const [n, fmin, fmax, favg, rmin, rmax, ravg] = r.getRows()[0].map(Number);
console.log(`partitions ${n}; files per partition min ${fmin} max ${fmax} avg ${favg.toFixed(2)}; ` +
            `row groups per file min ${rmin} max ${rmax} avg ${ravg.toFixed(2)}`);
' "$RUNDIR/$STAMP.part.1")
