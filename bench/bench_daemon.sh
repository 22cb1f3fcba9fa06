#!/usr/bin/env bash
# bench_daemon.sh - the daemon's throughput and footprint (issue 8). Not a
# test: nothing here passes or fails on a number.
#  1. Throughput: the same generated input (the real log samples, digits
#     varied, bench/e2e_input.mjs) through `parqd convert` and through the
#     daemon over loopback TCP from 16 clients (16 `cat`s, each a 16th of
#     the input on its own connection; SIGTERM after the last byte;
#     the clock stops when every file is published and parqd has exited).
#     MB/s, records/s, peak RSS and CPU seconds for both. The daemon runs
#     twice: plaintext TCP (16 cats) and TLS (16 `openssl s_client`s, an
#     ECDSA P-256 certificate made at run time, TLS 1.3).
#  2. Sidecar: 100 records/s for an hour, compressed 60x: 360,000 records
#     at 6,000/s over 60 s, with rotate.max_age 5 s and row_group.max_age
#     1 s (5 min and 60 s scaled by 60, so every file has the shape it
#     would have in production); RSS and CPU seconds every 5 s.
#
# usage: bench/bench_daemon.sh [BUILD_DIR] [INPUT_MB] [SIDECAR_SECONDS]
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
MB=${2:-100}
SIDECAR_S=${3:-60}
. "$ROOT/tests/daemon/lib.sh"
lib_init bench_daemon
command -v /usr/bin/time >/dev/null || { echo "bench_daemon: needs /usr/bin/time (apt-get install time)"; exit 1; }

INPUT="$BUILD/bench-e2e/mix-${MB}.ndjson"
mkdir -p "$BUILD/bench-e2e"
[ -s "$INPUT" ] || node "$ROOT/bench/e2e_input.mjs" "$ROOT/../shared/testdata/logs" "$INPUT" "$MB"
BYTES=$(stat -c %s "$INPUT")
LINES=$(grep -c . "$INPUT")

# ---- 1: convert -------------------------------------------------------------------
/usr/bin/time -f "%e %M %U %S" -o "$T/convert.time" "$PARQD" convert -o "$T/convert-out" "$INPUT" \
    >/dev/null 2>"$T/convert.err" || { cat "$T/convert.err"; exit 1; }
read -r C_S C_KB C_U C_SYS <"$T/convert.time"
C_CPU=$(awk -v u="$C_U" -v s="$C_SYS" 'BEGIN { printf "%.2f", u + s }')

# ---- 1: daemon, plaintext TCP and TLS ---------------------------------------------
. "$ROOT/tests/daemon/pki.sh"
pki_make "$T/pki" || { echo "bench_daemon: could not make the test PKI with openssl"; exit 1; }
split -n l/16 -d "$INPUT" "$T/part."

# received: parqd has read every line (a plain HTTP/1.0 GET, cheap to poll).
received() {
    local body
    body=$(exec 3<>"/dev/tcp/127.0.0.1/$PORT_M" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3)
    [ "$(metric "$body" parqd_records_received_total)" = "$LINES" ]
}

# daemon_run MODE: MODE tcp or tls; sets R_S (seconds from the first byte
# until parqd exited with every file published), R_KB (peak RSS), R_CPU,
# R_SEND (when the clients had written everything), R_ROWS (rows read
# back with DuckDB).
daemon_run() {
    local mode=$1 tls="" t0 t_sent t1 c part deadline clients=()
    PORT=$(free_port)
    PORT_M=$(free_port)
    DLOG="$T/daemon-$mode.log"
    [ "$mode" = tls ] && tls=", tls: {cert: $T/pki/server.crt, key: $T/pki/server.key}"
    cat >"$T/daemon-$mode.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"$tls}
metrics: {listen: "127.0.0.1:$PORT_M"}
output: {dir: $T/daemon-out-$mode}
spool: {dir: $T/spool-$mode, sync: batch}
errors: {dead_letter: $T/rejects-$mode.ndjson}
EOF
    daemon_start "$T/daemon-$mode.yaml" "$DLOG" || { tail "$DLOG"; exit 1; }
    spawn bash -c 'while kill -0 "$1" 2>/dev/null; do
        awk "/^VmHWM:/ { print \$2 }" "/proc/$1/status" >"$2.tmp" 2>/dev/null && mv "$2.tmp" "$2"
        sleep 0.2; done' _ "$DPID" "$T/hwm-$mode"
    # The cheapest clients there are: 16 cats (plaintext) or 16 `openssl
    # s_client`s (TLS), each writing a 16th of the input (whole lines) to
    # its own connection.
    t0=$(date +%s.%N)
    for part in "$T"/part.*; do
        if [ "$mode" = tls ]; then
            # shellcheck disable=SC2016
            # -nocommands: a stdin chunk that starts with Q or R is data, not a command
            spawn bash -c 'exec openssl s_client -quiet -no_ign_eof -nocommands -connect "127.0.0.1:$2" \
                -servername localhost -CAfile "$3" <"$1" >/dev/null 2>&1' _ "$part" "$PORT" "$T/pki/ca.crt"
        else
            # shellcheck disable=SC2016
            spawn bash -c 'exec cat "$1" >"/dev/tcp/127.0.0.1/$2"' _ "$part" "$PORT"
        fi
        clients+=("$SPAWNED")
    done
    for c in "${clients[@]}"; do wait_exit "$c" 600; done
    t_sent=$(date +%s.%N)
    # The clients are done when their bytes are in socket buffers; SIGTERM
    # only once parqd has read every line.
    deadline=$((SECONDS + 300))
    until received || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.02; done
    R_CPU=$(cpu_seconds "$DPID")
    kill -TERM "$DPID"
    while alive "$DPID"; do
        # empty once the process is gone (the pipe's status is awk's, 0):
        # keep the last reading then, not an empty one printed as 0.00
        c=$(cpu_seconds "$DPID")
        [ -n "$c" ] && R_CPU=$c
        sleep 0.05
    done
    t1=$(date +%s.%N)
    wait_exit "$DPID" 5
    R_KB=$(cat "$T/hwm-$mode")
    R_S=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
    R_SEND=$(awk -v a="$t0" -v b="$t_sent" 'BEGIN { printf "%.2f", b - a }')
    R_ROWS=$(duck "SELECT count(*) AS n FROM read_parquet('$T/daemon-out-$mode/**/*.parquet')" |
        node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].n))')
}
daemon_run tcp
D_S=$R_S D_KB=$R_KB D_CPU=$R_CPU SEND_S=$R_SEND D_ROWS=$R_ROWS
daemon_run tls
L_S=$R_S L_KB=$R_KB L_CPU=$R_CPU L_SEND=$R_SEND L_ROWS=$R_ROWS

echo
echo "1. throughput: $(awk -v b="$BYTES" 'BEGIN { printf "%.1f MiB", b / 1048576 }'), $LINES records" \
     "(the real log samples, digits varied); daemon rows read back: $D_ROWS (TCP), $L_ROWS (TLS)"
awk -v b="$BYTES" -v n="$LINES" -v cs="$C_S" -v ck="$C_KB" -v cc="$C_CPU" \
    -v ds="$D_S" -v dk="$D_KB" -v dc="$D_CPU" -v ss="$SEND_S" \
    -v ls="$L_S" -v lk="$L_KB" -v lc="$L_CPU" -v lss="$L_SEND" 'BEGIN {
    printf "  %-28s %8s %9s %12s %10s %9s\n", "", "seconds", "MB/s", "records/s", "peak RSS", "CPU s"
    printf "  %-28s %8.2f %9.1f %12.0f %7.1f MiB %9.2f\n", "parqd convert (file)", cs, b / cs / 1e6, n / cs, ck / 1024, cc
    printf "  %-28s %8.2f %9.1f %12.0f %7.1f MiB %9.2f\n", "parqd daemon (16 TCP clients)", ds, b / ds / 1e6, n / ds, dk / 1024, dc
    printf "  %-28s %8.2f %9.1f %12.0f %7.1f MiB %9.2f\n", "parqd daemon (16 TLS clients)", ls, b / ls / 1e6, n / ls, lk / 1024, lc
    printf "  (the clients finished writing after %.2f s (TCP) and %.2f s (TLS, s_client); the clock ran\n", ss, lss
    printf "  until parqd had read every line, published every file on SIGTERM and exited)\n" }'

# ---- 2: sidecar -------------------------------------------------------------------------
RATE=6000
PORT=$(free_port)
DLOG="$T/sidecar.log"
cat >"$T/sidecar.yaml" <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/sidecar-out
  rotate: {max_age: 5s}
  row_group: {max_age: 1s}
spool: {dir: $T/sidecar-spool, sync: batch}
errors: {dead_letter: $T/sidecar-rejects.ndjson}
EOF
head -n 20000 "$INPUT" >"$T/sidecar-lines.ndjson"
daemon_start "$T/sidecar.yaml" "$DLOG" || { tail "$DLOG"; exit 1; }
RSS0=$(proc_kb "$DPID" VmRSS)
CPU0=$(cpu_seconds "$DPID")
spawn node "$ROOT/bench/daemon_rate.mjs" --port "$PORT" --rate "$RATE" --seconds "$SIDECAR_S" "$T/sidecar-lines.ndjson"
SENDER=$SPAWNED
echo
echo "2. sidecar: 100 records/s for 1 h compressed 60x: $((RATE * SIDECAR_S)) records at $RATE/s over ${SIDECAR_S} s;"
echo "   rotate.max_age 5 s, row_group.max_age 1 s (production 5 min / 60 s, scaled)"
printf '  %8s %10s %10s %8s %8s\n' "t (s)" "VmRSS MiB" "VmHWM MiB" "CPU s" "files"
printf '  %8s %10.1f %10.1f %8.2f %8d\n' 0 "$(awk -v k="$RSS0" 'BEGIN { print k / 1024 }')" \
    "$(awk -v k="$(proc_kb "$DPID" VmHWM)" 'BEGIN { print k / 1024 }')" "$CPU0" 0
start=$SECONDS
while alive "$SENDER" && [ $((SECONDS - start)) -lt $((SIDECAR_S + 30)) ]; do
    sleep 5
    printf '  %8d %10.1f %10.1f %8.2f %8d\n' $((SECONDS - start)) \
        "$(awk -v k="$(proc_kb "$DPID" VmRSS)" 'BEGIN { print k / 1024 }')" \
        "$(awk -v k="$(proc_kb "$DPID" VmHWM)" 'BEGIN { print k / 1024 }')" \
        "$(cpu_seconds "$DPID")" "$(parquet_files "$T/sidecar-out" | wc -l)"
done
wait_exit "$SENDER" 10
CPU1=$(cpu_seconds "$DPID")
daemon_stop TERM 60
NF=$(parquet_files "$T/sidecar-out" | wc -l)
awk -v c0="$CPU0" -v c1="$CPU1" -v s="$SIDECAR_S" -v nf="$NF" -v r="$RATE" 'BEGIN {
    printf "  CPU: %.2f s for %d records (%.1f%% of one core); %d files;\n", c1 - c0, r * s, (c1 - c0) / s * 100, nf
    printf "  for the real hour at 100 records/s that is about %.2f CPU seconds\n", c1 - c0 }'
echo "  exit status after SIGTERM: $DSTATUS"
