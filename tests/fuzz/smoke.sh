#!/usr/bin/env bash
# smoke.sh BUILD_FUZZ SECONDS JOBS - the fuzz smoke test of `make test`:
# every fuzz target in BUILD_FUZZ for SECONDS each, JOBS at once (a
# libFuzzer run is one thread: run one at a time and half of a 2-core
# machine idles). Each starts from its committed corpus under
# tests/fuzz/corpus/<target> (if any); new inputs go to a scratch
# directory, never into the corpus; a crash's input is kept in
# BUILD_FUZZ/fuzz-smoke/. Each run's output is in
# BUILD_FUZZ/fuzz-smoke/<target>.log, and printed when the run fails.
# Exit 1 if any target failed.
set -u
BUILD_FUZZ=${1:?usage: smoke.sh BUILD_FUZZ SECONDS JOBS}
SECONDS_EACH=${2:?usage: smoke.sh BUILD_FUZZ SECONDS JOBS}
JOBS=${3:?usage: smoke.sh BUILD_FUZZ SECONDS JOBS}
CORPUS=$(cd "$(dirname "$0")" && pwd)/corpus
OUT=$BUILD_FUZZ/fuzz-smoke
rm -rf "$OUT"
mkdir -p "$OUT"

# run_target PATH: one libFuzzer run; its exit status is the target's.
run_target() {
    local name scratch rc
    name=$(basename "$1")
    scratch=$(mktemp -d)
    "$1" -max_total_time="$SECONDS_EACH" -rss_limit_mb=2048 -artifact_prefix="$OUT/$name-" \
        "$scratch" $([ -d "$CORPUS/$name" ] && echo "$CORPUS/$name") >"$OUT/$name.log" 2>&1
    rc=$?
    rm -rf "$scratch"
    return "$rc"
}

declare -A pid_of_target
failed=0
running=0
for f in "$BUILD_FUZZ"/fuzz_*; do
    [ -f "$f" ] && [ -x "$f" ] || continue
    if [ "$running" -ge "$JOBS" ]; then
        wait -n
        running=$((running - 1))
    fi
    run_target "$f" &
    pid_of_target[$(basename "$f")]=$!
    running=$((running + 1))
done
for name in $(printf '%s\n' "${!pid_of_target[@]}" | sort); do
    if wait "${pid_of_target[$name]}"; then
        echo "fuzz smoke: $name ok ($(grep -o 'Done [0-9]* runs' "$OUT/$name.log" | tail -n 1))"
    else
        echo "fuzz smoke: $name FAILED; the end of $OUT/$name.log:"
        tail -n 40 "$OUT/$name.log"
        failed=1
    fi
done
exit "$failed"
