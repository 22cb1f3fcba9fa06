#!/usr/bin/env bash
# test_daemon_idle.sh - a fresh machine's first minutes (issue 8):
#  1. idle memory: parqd with the built-in defaults (only the TCP port
#     moved to a free one) in an empty working directory: VmRSS after it
#     settles is under 16 MiB.
#  2. no configuration at all (DESIGN.md): parqd in an empty directory
#     listens on 127.0.0.1:5170 and ./parqd.sock, writes ./out/ with the
#     Variant column `event`, spools to ./spool; SIGTERM exits 0.
#  3. `make run`: parqd --config conf/run.yaml from an empty directory
#     (everything under ./run-data); conf/sample.ndjson sent over TCP
#     lands, its bad line goes to the dead letters; Ctrl-C (SIGINT) exits 0.
#     The first file is published on its own within seconds (issue 23),
#     and `make query` (tests/interop/query.mjs) says, before that, that
#     parqd is not running, has received nothing, or when the file comes.
# 2 and 3 need the fixed ports 5170 (and 9170 for 3): when something else
# holds them (a CI neighbour), that part is skipped with the reason.
#
#   bash test_daemon_idle.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed[, K skipped]".
set -u
BUILD=${1:?usage: test_daemon_idle.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_idle
BOUND_KB=$((16 * 1024))

# ---- 1: idle RSS ---------------------------------------------------------------------
PORT=$(free_port)
mkdir -p "$T/idle"
printf 'inputs:\n  - {type: tcp, listen: "127.0.0.1:%s"}\n  - {type: unix, path: parqd.sock}\n' "$PORT" \
    >"$T/idle.yaml"
DLOG="$T/idle.log"
if DCWD="$T/idle" daemon_start "$T/idle.yaml" "$DLOG"; then
    ok "parqd starts with the defaults in an empty directory"
    sleep 2
    RSS=$(proc_kb "$DPID" VmRSS)
    HWM=$(proc_kb "$DPID" VmHWM)
    THREADS=$(awk '/^Threads:/ { print $2 }' "/proc/$DPID/status")
    echo "idle: VmRSS ${RSS} KiB, VmHWM ${HWM} KiB, $THREADS threads"
    if sanitized_build; then
        skip "idle VmRSS < 16 MiB" "a sanitizer build (ASan shadow memory)"
    else
        check "idle VmRSS ${RSS} KiB < 16 MiB" test "${RSS:-999999}" -lt "$BOUND_KB"
    fi
    daemon_stop TERM 20
    check "SIGTERM when idle: exit 0 (got $DSTATUS)" test "$DSTATUS" = 0
    check "nothing published when nothing was sent" test -z "$(parquet_files "$T/idle/out")"
else
    bad "parqd starts with the defaults in an empty directory" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
fi

# ---- 2: no configuration at all ------------------------------------------------------
if port_busy 127.0.0.1 5170; then
    skip "no configuration: 127.0.0.1:5170" "port 5170 is in use by another process on this machine"
else
    mkdir -p "$T/bare"
    DLOG="$T/bare.log"
    # shellcheck disable=SC2016
    spawn bash -c 'cd "$1" && exec "$2" 2>>"$3"' _ "$T/bare" "$PARQD" "$DLOG"
    DPID=$SPAWNED
    if daemon_wait_ready "$DLOG" 0 20; then
        ok "parqd with no configuration starts"
        check "listens on 127.0.0.1:5170" port_busy 127.0.0.1 5170
        check "listens on ./parqd.sock" test -S "$T/bare/parqd.sock"
        RSS=$(proc_kb "$DPID" VmRSS)
        echo "no configuration, idle: VmRSS ${RSS} KiB"
        sanitized_build ||
            check "idle VmRSS with no configuration ${RSS} KiB < 16 MiB" test "${RSS:-999999}" -lt "$BOUND_KB"
        printf '{"hello":"tcp","n":1}\n{"hello":"tcp","n":2}\n' >"$T/bare-tcp.ndjson"
        printf '{"hello":"unix","n":3}\n' >"$T/bare-unix.ndjson"
        node_tool send.mjs --targets tcp:127.0.0.1:5170 --clients 1 --blank 0 "$T/bare-tcp.ndjson" >/dev/null
        node_tool send.mjs --targets "unix:$T/bare/parqd.sock" --clients 1 --blank 0 "$T/bare-unix.ndjson" >/dev/null
        daemon_stop TERM 20
        check "SIGTERM: exit 0 (got $DSTATUS)" test "$DSTATUS" = 0
        check "spooled to ./spool" test -d "$T/bare/spool"
        check "files under ./out/dt=YYYY-MM-DD/" test -n "$(find "$T/bare/out" -path '*/dt=20[0-9][0-9]-[01][0-9]-[0-3][0-9]/*.parquet')"
        node_checks verify.mjs --label "no configuration" --out "$T/bare/out" --tmp "$T" \
            "$T/bare-tcp.ndjson" "$T/bare-unix.ndjson"
    else
        bad "parqd with no configuration starts" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    fi
fi

# ---- 3: make run -----------------------------------------------------------------------
RUNCFG="$ROOT/conf/run.yaml"
if [ ! -f "$RUNCFG" ]; then
    skip "make run" "conf/run.yaml not found"
elif port_busy 127.0.0.1 5170 || port_busy 127.0.0.1 9170; then
    skip "make run" "port 5170 or 9170 is in use by another process on this machine"
else
    mkdir -p "$T/run"
    DLOG="$T/run.log"
    # make_query SQL: what `make query` runs, from the daemon's directory;
    # stdout in $T/query.out, stderr in $T/query.err.
    make_query() {
        (cd "$T/run" && node "$INTEROP/query.mjs" --config "$RUNCFG" "$1") >"$T/query.out" 2>"$T/query.err"
    }
    COUNT_SQL="SELECT count(*)::INTEGER AS n FROM read_parquet('run-data/out/**/*.parquet')"
    make_query "$COUNT_SQL"
    check "make query, parqd not running: exit 1, says so and how to start it" \
        grep -q 'parqd is not running (nothing answers on 127.0.0.1:9170): start it with `make run`' \
        "$T/query.err"
    # shellcheck disable=SC2016
    spawn bash -c 'cd "$1" && mkdir -p run-data && exec "$2" --config "$3" 2>>"$4"' _ "$T/run" "$PARQD" \
        "$RUNCFG" "$DLOG"
    DPID=$SPAWNED
    if daemon_wait_ready "$DLOG" 0 20; then
        ok "make run: parqd --config conf/run.yaml starts in an empty directory"
        check "make run: listens on 127.0.0.1:5170" port_busy 127.0.0.1 5170
        check "make run: listens on run-data/parqd.sock" test -S "$T/run/run-data/parqd.sock"
        SAMPLE="$ROOT/conf/sample.ndjson"
        make_query "$COUNT_SQL"
        check "make query, nothing sent: says so and how to send" \
            grep -q 'parqd is running but has received nothing yet: cat conf/sample.ndjson > /dev/tcp/127.0.0.1/5170' \
            "$T/query.err"
        SENT_US=$(now_us)
        cat "$SAMPLE" >/dev/tcp/127.0.0.1/5170
        H=$(http_get 127.0.0.1 9170 /health)
        check "make run: /health on 127.0.0.1:9170 is 200" test "$(head -n 1 <<<"$H")" = 200
        got_all() {
            [ "$(metric "$(http_get 127.0.0.1 9170 /metrics)" parqd_records_received_total)" = "$(grep -c . "$SAMPLE")" ]
        }
        check "make run: every sample line received" wait_for 10 got_all
        if make_query "$COUNT_SQL"; then
            skip "make query, not yet published: says when" "a file was already published (a slow machine)"
        else
            check "make query, not yet published: says when (5s after the first record) and Ctrl-C" \
                grep -q 'a file is published 5s after its first record .*or at once when parqd stops (Ctrl-C)' \
                <(tr '\n' ' ' <"$T/query.err")
        fi
        published() { test -n "$(parquet_files "$T/run/run-data/out")"; }
        check "make run: a file is published on its own within 10 s" wait_for 10 published
        echo "make run: first file after $((($(now_us) - SENT_US) / 1000)) ms"
        make_query "$COUNT_SQL"
        NGOOD=$(($(grep -c . "$SAMPLE") - $(grep -c . "$T/run/run-data/rejects.ndjson" 2>/dev/null || echo 0)))
        check "make query after the first file: DuckDB counts the $NGOOD good sample lines" \
            test "$(cat "$T/query.out")" = "{\"n\":$NGOOD}"
        daemon_stop INT 20
        check "make run: Ctrl-C (SIGINT) exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
        NF=$(parquet_files "$T/run/run-data/out" | wc -l)
        check "make run: files in run-data/out ($NF)" test "$NF" -ge 1
        NREJ=$(grep -c . "$T/run/run-data/rejects.ndjson" 2>/dev/null)
        ROWS=$(duck "SELECT count(*) AS n FROM read_parquet('$T/run/run-data/out/**/*.parquet')" |
            node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].n))')
        check "make run: rows + dead letters = sample lines ($ROWS + ${NREJ:-0} = $(grep -c . "$SAMPLE"))" \
            test $((ROWS + ${NREJ:-0})) = "$(grep -c . "$SAMPLE")"
        check "make run: the sample's bad line is a dead letter" test "${NREJ:-0}" -ge 1
    else
        bad "make run: parqd --config conf/run.yaml starts" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
    fi
fi
finish
