# lib.sh - shared helpers of the daemon end-to-end tests
# (tests/scripts/daemon/test_daemon_*.sh) and bench/bench_daemon.sh: result
# counting, a temporary directory and the processes started in it (all
# killed on exit), free ports, waiting for sockets and log lines, starting
# and stopping parqd, /proc memory and CPU readings, HTTP GETs on the
# metrics port and DuckDB queries.
#
# Source it after setting BUILD (the build directory); then call
# lib_init NAME. Every wait is bounded in time; every process started
# through spawn/daemon_start is killed (by its pid) when the script exits.

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$LIB_DIR/../.." && pwd)
INTEROP="$ROOT/tests/interop"
BUILD=$(cd "${BUILD:?set BUILD before sourcing lib.sh}" 2>/dev/null && pwd || echo "$BUILD")
PARQD="$BUILD/parqd"

pass=0
fail=0
skipped=0
LIB_PIDS=()
LIB_MOUNTS=()

ok() { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
skip() { skipped=$((skipped + 1)); echo "SKIP $1${2:+: $2}"; }
note() { echo "note: $*"; }
check() { # check NAME COMMAND...: PASS when COMMAND succeeds
    local name=$1
    shift
    if "$@"; then ok "$name"; else bad "$name"; fi
}

# finish: the closing line, and the exit status. On failure the tail of
# the daemon's log ($DLOG) is shown first.
finish() {
    # Sanitizer builds: a report in any daemon log is a failure even when
    # the exit status did not change (UBSan goes on by default).
    local f first
    for f in "${T:-/nonexistent}"/*.log; do
        [ -f "$f" ] || continue
        first=$(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|WARNING: ThreadSanitizer' "$f")
        [ -n "$first" ] && bad "no sanitizer report in $(basename "$f")" "$(cut -c1-300 <<<"$first")"
    done
    if [ "$fail" -gt 0 ] && [ -n "${DLOG:-}" ] && [ -s "$DLOG" ]; then
        echo "---- last lines of the daemon log $DLOG"
        tail -n 25 "$DLOG" | cut -c1-400
        echo "----"
    fi
    if [ "$skipped" -gt 0 ]; then
        echo "$pass passed, $fail failed, $skipped skipped"
    else
        echo "$pass passed, $fail failed"
    fi
    [ "$fail" -eq 0 ]
    exit $?
}

lib_cleanup() {
    local p
    for p in "${LIB_PIDS[@]}"; do
        kill -9 "$p" 2>/dev/null
    done
    for p in "${LIB_PIDS[@]}"; do
        wait "$p" 2>/dev/null
    done
    for p in "${LIB_MOUNTS[@]}"; do
        umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null
    done
    if [ -n "${T:-}" ] && [ -z "${KEEP:-}" ]; then
        rm -rf "$T"
    elif [ -n "${T:-}" ]; then
        echo "kept $T"
    fi
}

# lib_init NAME: temp dir $T, cleanup trap, prerequisites (parqd, node,
# the DuckDB package). Exits with a FAIL line when one is missing.
lib_init() {
    T=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap lib_cleanup EXIT
    # bash reports every background job killed by a signal ("line 12:
    # 345 Killed ..."): the tests kill on purpose, so leave those out.
    exec 2> >(grep --line-buffered -v -E '^.*lib\.sh: line [0-9]+: +[0-9]+ (Killed|Terminated)' >&2)
    trap 'exit 130' INT TERM
    if [ ! -x "$PARQD" ]; then
        bad "parqd binary" "$PARQD not found"
        finish
    fi
    if ! command -v node >/dev/null || [ ! -d "$INTEROP/node_modules/@duckdb/node-api" ]; then
        bad "prerequisites" "node and tests/interop/node_modules (make npm) are needed"
        finish
    fi
}

# sanitized_build: true when BUILD is a sanitizer build (ASan and UBSan,
# or TSan; the rule is tests/scripts/build_kind.sh's): memory bounds do not
# apply there (shadow memory, quarantine).
. "$LIB_DIR/../scripts/build_kind.sh"
sanitized_build() { sanitizer_build "$BUILD"; }

# spawn CMD...: runs CMD in the background, remembers its pid in $SPAWNED
# (killed on exit).
spawn() {
    "$@" &
    SPAWNED=$!
    LIB_PIDS+=("$SPAWNED")
}

forget_pid() { # the process is gone (waited for): stop tracking it
    local p keep=()
    for p in "${LIB_PIDS[@]}"; do
        [ "$p" = "$1" ] || keep+=("$p")
    done
    LIB_PIDS=("${keep[@]}")
}

# free_port: prints a TCP port free on 127.0.0.1 and [::1] right now, and
# never the same one twice in a script (written to $T/.ports).
free_port() {
    local p i
    for i in 1 2 3 4 5 6 7 8 9 10; do
        # A random port below the kernel's ephemeral range: a port the kernel
        # handed out (listen on 0) can be taken, before parqd binds it, by any
        # client socket on the machine, e.g. the 1,000 connections of a test
        # running in parallel.
        p=$(node -e '
const net = require("net"), fs = require("fs");
let lo = 10000, hi = 32768;
try {
  const r = fs.readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
  if (Number(r[0]) > lo + 1000) hi = Number(r[0]);
} catch (e) {}
const p = lo + Math.floor(Math.random() * (hi - lo));
const s = net.createServer();
s.on("error", () => console.log(0));
s.listen({ port: p, host: "127.0.0.1" }, () => {
  s.close(() => {
    const s6 = net.createServer();
    s6.on("error", e => console.log(e.code === "EADDRINUSE" ? 0 : p));
    s6.listen({ port: p, host: "::1", ipv6Only: true }, () => s6.close(() => console.log(p)));
  });
});')
        if [ "$p" != 0 ] && ! grep -qx "$p" "$T/.ports" 2>/dev/null; then
            echo "$p" >>"$T/.ports"
            echo "$p"
            return
        fi
    done
    echo "free_port: no free port found" >&2
    echo 1
}

# have_ipv6: true when [::1] can be bound.
have_ipv6() {
    node -e '
const s = require("net").createServer();
s.on("error", () => process.exit(1));
s.listen({ port: 0, host: "::1", ipv6Only: true }, () => s.close(() => process.exit(0)));'
}

# port_busy HOST PORT: true when something accepts connections there.
port_busy() {
    timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null
}

# Timeouts count polls (10 a second), not clock time: this VM's clocks,
# wall and boot time alike, can jump when the VM is paused, and a 180 s
# wait then "timed out" after 2 s. A pause stops the count instead.
# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s; false on timeout.
wait_for() {
    local polls=$(($1 * 10))
    shift
    while [ "$polls" -gt 0 ]; do
        "$@" && return 0
        sleep 0.1
        polls=$((polls - 1))
    done
    "$@"
}

wait_port() { wait_for "${3:-20}" port_busy "$1" "$2"; }
wait_log() { wait_for "${3:-20}" grep -q -- "$2" "$1"; } # wait_log FILE PATTERN [SECONDS]

# raise_fd_limit N: raises this shell's open-file limit to N (or to the
# hard limit, if lower); FD_LIMIT is the limit afterwards.
raise_fd_limit() {
    if [ "$(ulimit -n)" -lt "$1" ]; then
        ulimit -n "$1" 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
    fi
    FD_LIMIT=$(ulimit -n)
}

# alive PID: the process exists and is not a zombie. A status file that
# cannot be read counts as gone: the process can be reaped between a check
# that the file exists and its read, and a failed read taken for "not a
# zombie" once made wait_exit report a client that had exited as timed out.
alive() {
    local state
    state=$(grep -m 1 '^State:' "/proc/$1/status" 2>/dev/null) || return 1
    [[ $state != *Z* ]]
}

# daemon_start CONFIG LOG [ENV=VALUE...]: starts parqd --config CONFIG in
# ${DCWD:-$T} (its working directory) with stderr appended to LOG; $DPID is its pid.
# Waits until it logs "ready" (20 s). Returns 1 when it did not get ready
# (exited, or no "ready" in time).
daemon_start() {
    local cfg=$1 log=$2
    shift 2
    local before
    before=$(grep -c 'ready (' "$log" 2>/dev/null)
    # shellcheck disable=SC2016
    spawn env "$@" bash -c 'cd "$1" && exec "$2" --config "$3" 2>>"$4"' _ "${DCWD:-$T}" "$PARQD" "$cfg" "$log"
    DPID=$SPAWNED
    daemon_wait_ready "$log" "${before:-0}" 20
}

# crash_loop N CONFIG LOG BEFORE SNAPSHOT: the kill -9 loop of the crash
# tests. N times: call BEFORE (it waits for the moment to kill), kill -9
# $DPID, wait for it, call SNAPSHOT I (what the dead daemon left: its
# spool's lines, the files or objects it had published), restart it with
# daemon_start CONFIG LOG on the same spool. Then checks every restart
# worked; $CRASH_RESTARTS holds how many did.
crash_loop() {
    local n=$1 cfg=$2 log=$3 before=$4 snapshot=$5 i
    CRASH_RESTARTS=0
    for i in $(seq 1 "$n"); do
        "$before"
        kill -9 "$DPID" 2>/dev/null
        wait_exit "$DPID" 10
        "$snapshot" "$i"
        if daemon_start "$cfg" "$log"; then
            CRASH_RESTARTS=$((CRASH_RESTARTS + 1))
        else
            bad "restart $i after kill -9" "$(tail -n 3 "$log" | tr '\n' ' ')"
            break
        fi
    done
    check "parqd restarted after each of $n kill -9 ($CRASH_RESTARTS)" test "$CRASH_RESTARTS" = "$n"
}

# daemon_wait_ready LOG N SECONDS: waits for more than N "ready (" lines
# in LOG while $DPID lives.
daemon_wait_ready() {
    local polls=$(($3 * 10)) c
    while [ "$polls" -gt 0 ]; do
        c=$(grep -c 'ready (' "$1" 2>/dev/null)
        [ "${c:-0}" -gt "$2" ] && return 0
        alive "$DPID" || return 1
        sleep 0.1
        polls=$((polls - 1))
    done
    return 1
}

# wait_exit PID SECONDS: waits for a child of this shell to exit; sets
# EXIT_STATUS to its status, or "timeout" (then it is still running).
# Not in $(...): a subshell cannot wait for this shell's children.
wait_exit() {
    local polls=$(($2 * 10))
    while alive "$1" && [ "$polls" -gt 0 ]; do
        sleep 0.1
        polls=$((polls - 1))
    done
    if alive "$1"; then
        EXIT_STATUS=timeout
        return
    fi
    EXIT_STATUS=0
    wait "$1" 2>/dev/null || EXIT_STATUS=$?
    forget_pid "$1"
}

# daemon_stop [SIGNAL] [SECONDS]: signals $DPID and waits; sets DSTATUS to
# the exit status ("timeout": killed with SIGKILL after SECONDS).
daemon_stop() {
    local sig=${1:-TERM} secs=${2:-60}
    kill -"$sig" "$DPID" 2>/dev/null
    wait_exit "$DPID" "$secs"
    DSTATUS=$EXIT_STATUS
    if [ "$DSTATUS" = timeout ]; then
        kill -9 "$DPID" 2>/dev/null
        wait_exit "$DPID" 5
    fi
}

# daemon_stop_timed [SIGNAL] [SECONDS]: as daemon_stop, but returns the
# moment $DPID exits (a blocking wait, not wait_exit's 0.1 s polls), for
# benches that time the daemon to its exit; sets DSTATUS and STOPPED_AT
# (date +%s.%N). A watchdog kills the daemon after SECONDS. The watchdog
# is ended with SIGKILL: until its fork has exec'd it carries this
# script's traps, and a TERM there would run lib_cleanup in the fork. Its
# sleep goes too, and holds none of our descriptors meanwhile: a caller
# piping our output would otherwise wait for it.
daemon_stop_timed() {
    local sig=${1:-TERM} secs=${2:-60} dog
    kill -"$sig" "$DPID" 2>/dev/null
    spawn bash -c 'sleep "$2"; kill -9 "$1"' _ "$DPID" "$secs" </dev/null >/dev/null 2>&1
    dog=$SPAWNED
    DSTATUS=0
    wait "$DPID" 2>/dev/null || DSTATUS=$?
    STOPPED_AT=$(date +%s.%N)
    forget_pid "$DPID"
    if alive "$dog"; then
        pkill -9 -P "$dog" 2>/dev/null   # its sleep
        kill -9 "$dog" 2>/dev/null
    else
        DSTATUS=timeout
    fi
    wait "$dog" 2>/dev/null
    forget_pid "$dog"
}

# proc_kb PID FIELD: VmRSS / VmHWM ... in KiB from /proc/PID/status.
proc_kb() {
    awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null
}

# cpu_seconds PID: user + system CPU time of the process so far.
cpu_seconds() {
    local hz
    hz=$(getconf CLK_TCK)
    # Fields after the parenthesised command: utime is 14, stime 15.
    sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null |
        awk -v hz="$hz" '{ printf "%.2f\n", ($12 + $13) / hz }'
}

# http_get HOST PORT PATH: prints "STATUS" on the first line, then the body
# ("000" and curl's reason when nothing answered within 5 s). curl, not
# node: the polling loops call it up to 10 times a second, and a node
# start-up costs ~60 ms of CPU on a machine the tests share.
http_get() {
    local out code err
    err=$(mktemp)
    out=$(curl -sS --max-time 5 -w '\n%{http_code}' "http://$1:$2$3" 2>"$err")
    code=${out##*$'\n'}
    if [ -z "$code" ] || [ "$code" = 000 ]; then
        printf '000\n%s' "$(cat "$err")"
    else
        printf '%s\n%s' "$code" "${out%$'\n'*}"
    fi
    rm -f "$err"
}

# metric TEXT NAME: the value of one sample line in Prometheus text
# ("parqd_records_rejected_total{reason=\"too_long\"}" works too).
metric() {
    printf '%s\n' "$1" | awk -v n="$2" '$1 == n { print $2; found = 1 } END { if (!found) print "missing" }'
}

# duck SQL: prints the result rows as one JSON array (BigInts as strings).
duck() {
    (cd "$INTEROP" && node --input-type=module -e '
import { DuckDBInstance } from "@duckdb/node-api";
const con = await (await DuckDBInstance.create(":memory:")).connect();
const r = await con.runAndReadAll(process.argv[1]);
console.log(JSON.stringify(r.getRowObjectsJson()));
' "$1")
}

# parquet_files DIR: published files (no hidden temporaries), sorted.
parquet_files() { find "$1" -name '*.parquet' ! -name '.*' -type f 2>/dev/null | sort; }
# temp_files DIR: temporaries left behind.
temp_files() { find "$1" -name '.*.tmp' 2>/dev/null; }

# node_tool SCRIPT ARGS...: runs one of tests/daemon/*.mjs.
node_tool() {
    local script=$1
    shift
    node "$LIB_DIR/$script" "$@"
}

# node_checks SCRIPT ARGS...: runs a checker printing PASS/FAIL/SKIP lines
# and adds them to this script's counts (a checker that dies without a
# FAIL line counts as one).
node_checks() {
    local out st=0 p f s
    out=$(node "$LIB_DIR/$1" "${@:2}" 2>&1) || st=$?
    printf '%s\n' "$out"
    p=$(printf '%s\n' "$out" | grep -c '^PASS ')
    f=$(printf '%s\n' "$out" | grep -c '^FAIL ')
    s=$(printf '%s\n' "$out" | grep -c '^SKIP ')
    pass=$((pass + p))
    fail=$((fail + f))
    skipped=$((skipped + s))
    if [ "$st" -ne 0 ] && [ "$f" -eq 0 ]; then
        bad "$1" "exited with status $st"
    fi
}

# now_us: wall-clock microseconds.
now_us() { echo $(($(date +%s%N) / 1000)); }

# mount_tmpfs DIR SIZE: mounts a tmpfs (unmounted on exit). False when
# mounting is not permitted here.
mount_tmpfs() {
    mkdir -p "$1"
    mount -t tmpfs -o "size=$2" tmpfs "$1" 2>/dev/null || return 1
    LIB_MOUNTS+=("$1")
}

# yaml_str S: S as a double-quoted YAML scalar.
yaml_str() { printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"; }
