#!/usr/bin/env bash
# test_partition_memory.sh - partitioned output stays within its memory
# bound (README, "What one open file costs"): `parqd convert` of 16 MiB
# of generated access logs spread round robin over 100 partitions (every
# file open to the end), with limits.max_buffered_bytes 8MiB, far less
# than the partitions' rows (~160 KiB each), so row groups must close
# early. Checks:
#   - peak RSS (GNU time's maximum resident set) <= the limit + 64 MiB
#     (convert's own: input batches, a file's sample, pools, libraries)
#     + 192 KiB per open file;
#   - row groups did close early: some file holds more than one row
#     group (without the bound each partition's file holds one);
#   - every file is valid (pq_walk) and every record was written.
# Measured: 58 MiB against a bound of 90 MiB; before the streams' buffers
# were freed between row groups, 117 MiB.
# Sanitizer builds are skipped: their shadow memory is no one's RSS.
#
#   bash test_partition_memory.sh BUILD_DIR
set -u
BUILD=${1:?usage: test_partition_memory.sh BUILD_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v node >/dev/null || { echo "SKIP: node (bench/gen_logs.mjs) not installed"; exit 77; }
[ -x /usr/bin/time ] || { echo "SKIP: GNU time not installed"; exit 77; }
. "$ROOT/tests/scripts/build_kind.sh"
if sanitizer_build "$BUILD"; then
    echo "SKIP: a sanitizer build's RSS is not parqd's"; exit 77
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/test_partition_memory.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

PARTS=100
LIMIT_MIB=8
BASE_MIB=64
PER_FILE_KIB=192

node "$ROOT/bench/gen_logs.mjs" --kind access --seed 5 --mb 16 "$T/gen.ndjson" >/dev/null 2>&1 ||
    fail "bench/gen_logs.mjs failed"
awk -v p=$PARTS '{ printf "{\"tenant\":\"t%03d\",%s\n", NR % p, substr($0, 2) }' \
    "$T/gen.ndjson" >"$T/in.ndjson"
lines=$(wc -l <"$T/in.ndjson")
cat >"$T/part.yaml" <<EOF
output:
  path: "tenant={{tenant}}/{seq}.parquet"
  max_open_files: $PARTS
limits: {max_buffered_bytes: ${LIMIT_MIB}MiB}
EOF
/usr/bin/time -o "$T/time" -f '%M' "$BUILD/parqd" convert --config "$T/part.yaml" \
    -o "$T/out/" "$T/in.ndjson" >"$T/log" 2>&1 || fail "convert: $(tail -n 2 "$T/log")"
peak_kib=$(tail -n 1 "$T/time")
bound_kib=$(( (LIMIT_MIB + BASE_MIB) * 1024 + PARTS * PER_FILE_KIB ))
echo "peak RSS $((peak_kib / 1024)) MiB, bound $((bound_kib / 1024)) MiB" \
     "(${LIMIT_MIB} MiB limit + ${BASE_MIB} MiB + $PARTS files x ${PER_FILE_KIB} KiB)"
[ "$peak_kib" -le "$bound_kib" ] || fail "peak RSS ${peak_kib} KiB above the bound ${bound_kib} KiB"

grep -q "$lines records in, $lines written, 0 rejected" "$T/log" || fail "not every record written: $(cat "$T/log")"
find "$T/out" -name '*.parquet' | sort >"$T/files"
[ "$(wc -l <"$T/files")" -eq $PARTS ] || fail "$(wc -l <"$T/files") files for $PARTS partitions"
xargs "$BUILD/pq_walk" <"$T/files" >"$T/walk" 2>&1 || fail "pq_walk: $(grep -v '^OK' "$T/walk" | head -n 3)"
max_rgs=$(sed -n 's/.*: \([0-9]*\) row groups,.*/\1/p' "$T/walk" | sort -n | tail -n 1)
echo "row groups per file: max ${max_rgs:-?}"
[ "${max_rgs:-0}" -gt 1 ] || fail "no row group closed early (every file holds one)"
echo "PASS: $PARTS partitions within ${LIMIT_MIB} MiB + the stated constant"
