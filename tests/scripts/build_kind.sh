# build_kind.sh - the one rule for what a test script checks in a sanitizer
# build. Source it from a test script:
#     . "$(dirname "$0")/build_kind.sh"
#   sanitizer_build BUILD_DIR   true when BUILD_DIR was configured with
#                               PQ_SANITIZE or PQ_TSAN (its CMakeCache.txt)
#   readers_skipped WHAT        says, on one line, that WHAT is not run here
#
# In a sanitizer build the C side runs as in the main build: parqd's own
# work (convert, the generators, pq_walk, variant_dump, the C checkers),
# every exit status and every check of our own. The independent readers
# (DuckDB, parquet-wasm, hyparquet under node) are left out: they read
# bytes that do not depend on the build, and the main build's run of the
# same script already had them read those bytes. The sanitizer watches
# our C code, not theirs, and a node reader costs seconds of CPU per run.

sanitizer_build() { grep -qE '^PQ_(SANITIZE|TSAN):BOOL=ON' "$1/CMakeCache.txt" 2>/dev/null; }

readers_skipped() {
    echo "SKIP $1: a sanitizer build (the files' bytes do not depend on the build;" \
        "the main build's run had the readers check them)"
}
