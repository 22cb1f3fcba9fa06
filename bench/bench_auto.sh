#!/usr/bin/env bash
# bench_auto.sh - automatic Variant shredding on generated access logs
# (issue 10): `parqd convert` with the default schema (event: shred auto),
# the same with `shred: none` (the layout before automatic shredding) and
# the hand-written typed schema (conf/schemas/access.yaml), RUNS
# times interleaved; prints each one's median wall time, MB/s and file
# bytes, the ratios to the typed schema, then bench/auto_filter.mjs on the
# auto and none files (same rows, query times). Not a test.
#
# usage: bench/bench_auto.sh [BUILD_DIR] [MB] [RUNS]   (defaults: build, 200, 5)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-200}
RUNS=${3:-5}
OUT=$BUILD/bench-auto
mkdir -p "$OUT"
IN=$OUT/access-${MB}-seed1.ndjson
[ -s "$IN" ] || node "$ROOT/bench/gen_logs.mjs" --kind access --seed 1 --mb "$MB" "$IN" || exit 1
cat >"$OUT/none.yaml" <<'EOF'
columns:
  - {name: event, type: variant, from: "*", shred: none}
  - {name: _ingest_ts, type: timestamp, unit: us, utc: true, required: true, ingest_time: true}
EOF
declare -A times
for r in $(seq "$RUNS"); do
    for k in auto none typed; do
        case $k in
            auto) args=() ;;
            none) args=(--schema "$OUT/none.yaml") ;;
            typed) args=(--schema "$ROOT/conf/schemas/access.yaml") ;;
        esac
        rm -f "$OUT/$k.parquet"
        /usr/bin/time -o "$OUT/time" -f %e "$BUILD/parqd" convert "${args[@]}" \
            -o "$OUT/$k.parquet" "$IN" >/dev/null 2>&1
        t=$(tail -n 1 "$OUT/time")
        times[$k]="${times[$k]:-} $t"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
bytes=$(stat -c %s "$IN")
tm=$(echo "${times[typed]}" | median) tb=$(stat -c %s "$OUT/typed.parquet")
for k in auto none typed; do
    m=$(echo "${times[$k]}" | median) b=$(stat -c %s "$OUT/$k.parquet")
    awk -v k="$k" -v m="$m" -v b="$b" -v inb="$bytes" -v tm="$tm" -v tb="$tb" 'BEGIN {
        printf "%-5s median %.2f s  %6.1f MB/s (%.2fx typed)  %10d bytes (%.2fx typed)\n",
               k, m, inb / 1048576 / m, tm / m, b, b / tb }'
done
node "$ROOT/bench/auto_filter.mjs" "$OUT/auto.parquet" "$OUT/none.parquet" 3
