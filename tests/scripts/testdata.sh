# testdata.sh - where the external test vectors are, for the test scripts
# (README "Test data"; tests/support/testdata.h is the C tests' side).
# They are not in the repository. Source it with the script's TESTDATA_DIR
# argument (ctest passes the build's default, ../shared/testdata beside
# the source tree):
#     . "$(dirname "$0")/testdata.sh" "${2:-}"
# TESTDATA is then $PQ_TESTDATA when set and not empty, else that argument.
#   testdata_has REL      true when TESTDATA/REL exists
#   testdata_missing REL  the reason a part is skipped, on one line
#   testdata_require REL  when TESTDATA/REL is missing: says so and exits 77,
#                         which ctest reports as skipped (SKIP_RETURN_CODE)
TESTDATA=${PQ_TESTDATA:-${1:-}}

testdata_has() { [ -n "$TESTDATA" ] && [ -e "$TESTDATA/$1" ]; }

testdata_missing() {
    echo "test vectors not found: ${TESTDATA:-(no directory given)}/$1 (the external test data" \
        "is not in the repository: set PQ_TESTDATA to its directory; README \"Test data\")"
}

testdata_require() {
    testdata_has "$1" && return 0
    echo "SKIP $(basename "$0"): $(testdata_missing "$1")"
    exit 77
}
