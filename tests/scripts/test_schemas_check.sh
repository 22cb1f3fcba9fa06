#!/usr/bin/env bash
# test_schemas_check.sh - every example schema in conf/schemas/ must load:
# `parqd check --schema FILE` exits 0, prints a Parquet schema, and the
# schema keeps a `rest` variant column (nothing is dropped). Also checks
# that each Zeek log type in the test data has its zeek-<path>.yaml.
#   bash test_schemas_check.sh BUILD_DIR TESTDATA_DIR
set -u

BUILD=${1:?usage: $0 BUILD_DIR TESTDATA_DIR}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$ROOT/tests/scripts/testdata.sh" "${2:-}"
DATA=$TESTDATA
SCHEMAS="$ROOT/conf/schemas"
PARQD="$BUILD/parqd"
passed=0
failed=0

ok() { passed=$((passed + 1)); echo "PASS $*"; }
bad() { failed=$((failed + 1)); echo "FAIL $*"; }

if [ ! -x "$PARQD" ]; then
    echo "no parqd at $PARQD"
    echo "0 passed, 1 failed"
    exit 1
fi

shopt -s nullglob
files=("$SCHEMAS"/*.yaml)
if [ ${#files[@]} -eq 0 ]; then
    bad "no schemas in $SCHEMAS"
fi

for f in "${files[@]}"; do
    name=${f#"$ROOT/"}
    out=$("$PARQD" check --schema "$f" 2>&1)
    rc=$?
    if [ $rc -ne 0 ]; then
        bad "$name: parqd check exited $rc"
        sed 's/^/    /' <<<"$out" | head -20
    elif ! grep -q '^message schema {' <<<"$out"; then
        bad "$name: exit 0 but no Parquet schema printed"
    elif ! grep -Eq '^  (optional|required) group rest \(VARIANT\(1\)\)' <<<"$out"; then
        bad "$name: no top-level 'rest' variant column"
    else
        ok "$name"
    fi
done

# Every Zeek log type in the test data has a schema.
testdata_has logs || echo "SKIP zeek schemas for every Zeek log: $(testdata_missing logs)"
for j in "$DATA"/logs/zeek-*/*.json; do
    [ -f "$j" ] || continue
    path=$(basename "$j" .json)
    if [ -f "$SCHEMAS/zeek-$path.yaml" ]; then
        ok "zeek-$path.yaml exists for ${j#"$DATA/"}"
    else
        bad "no conf/schemas/zeek-$path.yaml for ${j#"$DATA/"}"
    fi
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
