#!/usr/bin/env bash
# test_daemon_reload.sh - SIGHUP (issue 8; DESIGN.md "SIGHUP closes current
# files and reopens the configuration"):
#  1. the config is rewritten from the default schema to a typed schema
#     file, then SIGHUP: files published before hold the records sent
#     before, with the default schema; files after hold the rest, with the
#     typed schema (DuckDB DESCRIBE per file); every line lands.
#  2. SIGHUP with a broken config (a YAML syntax error; then an unknown
#     key): the log names file:line:col, parqd keeps running with the
#     configuration it had, and data sent afterwards still lands.
#
#   bash test_daemon_reload.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_reload.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_reload

PORT=$(free_port)
PORT_M=$(free_port)
DLOG="$T/parqd.log"
CFG="$T/parqd.yaml"

base_config() {
    cat <<EOF
inputs:
  - {type: tcp, listen: "127.0.0.1:$PORT"}
output:
  dir: $T/out
  rotate: {max_rows: 100000}
spool: {dir: $T/spool}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF
}
cat >"$T/typed.yaml" <<'EOF'
columns:
  - {name: id, type: int64, required: true}
  - {name: msg, type: string}
  - {name: n, type: int32}
  - {name: rest, type: variant, from: "*"}
EOF

# batch FIRST LAST: sends records FIRST..LAST and waits until parqd has
# received them all (the metrics counter).
received_total=0
batch() {
    local f="$T/batch-$1.ndjson" i
    for ((i = $1; i <= $2; i++)); do printf '{"id":%d,"msg":"m%d","n":%d,"x":"y%d"}\n' "$i" "$i" "$i" "$i"; done >"$f"
    node_tool send.mjs --targets "tcp:127.0.0.1:$PORT" --clients 3 --blank 0 "$f" >/dev/null || return 1
    received_total=$((received_total + $2 - $1 + 1))
    wait_for 20 received_is "$received_total"
}
received_is() { [ "$(metric "$(http_get 127.0.0.1 "$PORT_M" /metrics)" parqd_records_received_total)" = "$1" ]; }
count_at_least() { [ "$(grep -c -- "$2" "$DLOG")" -ge "$1" ]; } # count_at_least N PATTERN

base_config >"$CFG"
if ! daemon_start "$CFG" "$DLOG"; then
    bad "parqd starts with the default schema"
    finish
fi
ok "parqd starts with the default schema"
check "batch 1 (ids 1..300) received" batch 1 300

# ---- 1: a schema change ----------------------------------------------------------
{ base_config; echo "schema: typed.yaml"; } >"$CFG"
kill -HUP "$DPID"
if wait_for 20 count_at_least 1 'reload: done'; then ok "SIGHUP: reload done"
else bad "SIGHUP: reload done" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"; fi
check "parqd runs on after the reload" alive "$DPID"
NFILES=$(parquet_files "$T/out" | wc -l)
check "SIGHUP published the files of the old configuration ($NFILES)" test "$NFILES" -ge 1
check "batch 2 (ids 301..600) received under the typed schema" batch 301 600

# ---- 2: broken configurations ------------------------------------------------------
good_cfg=$(cat "$CFG")
broken_reload() { # broken_reload NAME PATTERN: SIGHUP with $CFG broken; checks the log
    local before errs
    before=$(grep -c 'reload: .*keeping the running configuration' "$DLOG")
    kill -HUP "$DPID"
    if wait_for 10 count_at_least $((before + 1)) 'reload: .*keeping the running configuration'; then
        ok "$1: reload refused, the running configuration kept"
    else
        bad "$1: reload refused, the running configuration kept" "$(tail -n 2 "$DLOG" | tr '\n' ' ')"
    fi
    errs=$(grep 'reload: .*keeping the running configuration' "$DLOG" | tail -n 1)
    echo "  log: $(cut -c1-300 <<<"$errs")"
    check "$1: the error names $2" grep -qE -- "$2" <<<"$errs"
    check "$1: parqd keeps running" alive "$DPID"
}

{ base_config; echo "schema: typed.yaml"; echo "limits: {max_line_bytes: [1MiB"; } >"$CFG"
LINES=$(wc -l <"$CFG")
broken_reload "YAML syntax error" "$CFG:[0-9]+:[0-9]+: YAML syntax error"
check "batch 3 (ids 601..700) still lands after the failed reload" batch 601 700

{ base_config; echo "schema: typed.yaml"; echo "limits: {max_line_bytes: 1MiB, bogus_limit: 3}"; } >"$CFG"
broken_reload "unknown key" "$CFG:$LINES:[0-9]+: .*bogus_limit"
check "batch 4 (ids 701..800) still lands after the failed reload" batch 701 800

# Valid YAML whose write path cannot start (an encryption key file that
# does not exist): the files are published, the old configuration resumes.
{ base_config | sed 's|^output:|output:\n  encryption: {footer_key: {id: k0, file: '"$T"'/missing.hex}}|'
  echo "schema: typed.yaml"; } >"$CFG"
broken_reload "missing key file" "missing.hex"
check "batch 5 (ids 801..900) still lands after the failed reload" batch 801 900
printf '%s\n' "$good_cfg" >"$CFG"

daemon_stop TERM 60
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
node_checks reload_check.mjs --out "$T/out" --before 300 --after-first 301 --after-last 900
check "no dead letters" test ! -s "$T/rejects.ndjson"
finish
