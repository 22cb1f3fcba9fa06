#!/usr/bin/env bash
# test_convert_cli.sh - `parqd convert` end to end (DESIGN.md "Command
# line", "Bad input and lost data"): exit codes, dead-letter records, final
# names without temp files, rotation naming, all-or-nothing on I/O failure.
# Parquet output is read back with DuckDB (@duckdb/node-api from
# tests/interop/node_modules) and compared by value, not only by count; not
# in a sanitizer build (tests/scripts/build_kind.sh), where the dead-letter
# JSON is still checked.
#
#   bash test_convert_cli.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed"; exit status 1 if anything failed.
set -u

BUILD=${1:?usage: test_convert_cli.sh BUILD_DIR [TESTDATA_DIR]}
PARQD="$BUILD/parqd"
HERE=$(cd "$(dirname "$0")" && pwd)
INTEROP="$HERE/../interop"
T=$(mktemp -d "${TMPDIR:-/tmp}/test_convert_cli.XXXXXX")
trap 'rm -rf "$T"' EXIT

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1${2:+: $2}"; }
check() { # check NAME CONDITION-COMMAND...
    local name=$1
    shift
    if "$@"; then ok "$name"; else bad "$name"; fi
}

HAVE_NODE=0
if command -v node >/dev/null && [ -d "$INTEROP/node_modules/@duckdb/node-api" ]; then
    HAVE_NODE=1
else
    echo "note: node or @duckdb/node-api missing; Parquet read-back and JSON checks skipped"
fi
# READERS: DuckDB and hyparquet read the Parquet files back
READERS=$HAVE_NODE
. "$HERE/build_kind.sh"
if [ "$READERS" = 1 ] && sanitizer_build "$BUILD"; then
    READERS=0
    readers_skipped "the Parquet read-backs (DuckDB, hyparquet)"
fi

# duck SQL: prints the result rows as one JSON array.
duck() {
    (cd "$INTEROP" && node --input-type=module -e '
import { DuckDBInstance } from "@duckdb/node-api";
const con = await (await DuckDBInstance.create(":memory:")).connect();
const r = await con.runAndReadAll(process.argv[1]);
console.log(JSON.stringify(r.getRowObjectsJson()));
' "$1")
}

# jsonl FILE JS-EXPR: parses every line of FILE as JSON (fails on any bad
# line) and prints the expression evaluated with `recs` bound to the array.
jsonl() {
    node -e '
const fs = require("fs");
const text = fs.readFileSync(process.argv[1]);
const lines = text.toString("utf8").split("\n");
if (lines.pop() !== "") throw new Error("last line has no newline");
const recs = lines.map((l, i) => { try { return JSON.parse(l); }
                                   catch (e) { throw new Error("line " + (i + 1) + ": " + e.message); } });
const raw = r => r.raw !== undefined ? Buffer.from(r.raw, "utf8") : Buffer.from(r.raw_b64, "base64");
console.log(String(eval(process.argv[2])));
' "$@"
}

# no_temp DIR: true when DIR holds no temporary files.
no_temp() { [ -z "$(find "$1" -name '.*.tmp' 2>/dev/null)" ]; }

if [ ! -x "$PARQD" ]; then
    bad "parqd binary" "$PARQD not found"
    echo "$pass passed, $fail failed"
    exit 1
fi

cat >"$T/schema.yaml" <<'EOF'
columns:
  - {name: id, type: int64, required: true}
  - {name: msg, type: string}
  - {name: n, type: int32}
EOF

# ---- good and bad lines ------------------------------------------------------
{
    printf '{"id":1,"msg":"hello","n":5}\n'
    printf '{"id":2,"msg":"caf\xc3\xa9 \\u00e9"}\r\n'       # CRLF, UTF-8, escape
    printf '{"id":3,"msg":oops}\n'                          # malformed JSON
    printf '\n'                                             # blank: skipped
    printf '{"id":4,"msg":"\xff\xfe"}\n'                    # invalid UTF-8
    printf '{"id":5,"msg":"'
    head -c $((10 * 1024 * 1024)) /dev/zero | tr '\0' 'x'  # 10 MiB line
    printf '"}\n'
    printf '{"id":6,"msg":"a\0b"}\n'                        # NUL byte
    printf '{"id":"seven","msg":"wrong type"}\n'            # wrong type, required
    printf '{"msg":"no id"}\n'                              # required missing
    printf '{"id":10,"n":-3}\n'
    printf '{"id":12,"deep":'                               # 10,000-deep nesting
    head -c 10000 /dev/zero | tr '\0' '['
    head -c 10000 /dev/zero | tr '\0' ']'
    printf '}\n'
    printf '{"id":13,"n":1e400}\n'                           # number out of double range
    printf '{"id":99999999999999999999}\n'                  # out of int64 range, required
    printf '{"id":11}'                                      # no final newline
} >"$T/in.ndjson"
BAD_LINES="3 5 6 7 8 9 11 12 13"   # line 4 is blank: counted, not a record

mkdir -p "$T/o1"
"$PARQD" convert --schema "$T/schema.yaml" -o "$T/o1/out.parquet" "$T/in.ndjson" \
    >"$T/o1.out" 2>"$T/o1.err"
rc=$?
check "mixed input exits 2" [ "$rc" -eq 2 ]
check "output under its final name" [ -f "$T/o1/out.parquet" ]
check "no temp files left" no_temp "$T/o1"
check "dead letters beside the output" [ -f "$T/o1/out.rejects.ndjson" ]
check "summary line" grep -q '^parqd convert: 13 records in, 4 written, 9 rejected' "$T/o1.err"
check "nothing on stdout" [ ! -s "$T/o1.out" ]

if [ "$HAVE_NODE" = 1 ]; then
    DL="$T/o1/out.rejects.ndjson"
    check "dead letter: one valid JSON line per bad record" \
        [ "$(jsonl "$DL" 'recs.length')" = 9 ]
    check "dead letter: sources name file and line" \
        [ "$(jsonl "$DL" 'recs.map(r => r.source.replace(/.*:/, "")).join(" ")')" = "$BAD_LINES" ]
    check "dead letter: sources carry the absolute input path" \
        [ "$(jsonl "$DL" 'recs.every(r => r.source.startsWith("file:'"$T"'/in.ndjson:"))')" = true ]
    check "dead letter: every record has ts, reason and raw bytes" \
        [ "$(jsonl "$DL" 'recs.every(r => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(r.ts) &&
                                     r.reason.length > 0 && (r.raw !== undefined) !== (r.raw_b64 !== undefined) &&
                                     typeof r.truncated === "boolean" && Number.isInteger(r.bytes))')" = true ]
    check "dead letter: malformed JSON kept verbatim" \
        [ "$(jsonl "$DL" 'recs[0].raw === "{\"id\":3,\"msg\":oops}" && !recs[0].truncated && recs[0].bytes === 19')" = true ]
    check "dead letter: invalid UTF-8 round-trips through raw_b64" \
        [ "$(jsonl "$DL" 'recs[1].raw === undefined && raw(recs[1]).equals(Buffer.from([0x7b,0x22,0x69,0x64,0x22,0x3a,0x34,0x2c,0x22,0x6d,0x73,0x67,0x22,0x3a,0x22,0xff,0xfe,0x22,0x7d]))')" = true ]
    check "dead letter: 10 MiB line truncated to max_line_bytes with its full size" \
        [ "$(jsonl "$DL" 'recs[2].truncated === true && recs[2].bytes === 10485777 && raw(recs[2]).length === 1048576 && /max_line_bytes/.test(recs[2].reason)')" = true ]
    check "dead letter: NUL byte survives" \
        [ "$(jsonl "$DL" 'raw(recs[3]).equals(Buffer.from("{\"id\":6,\"msg\":\"a\u0000b\"}", "latin1"))')" = true ]
    check "dead letter: wrong type and missing required column explained" \
        [ "$(jsonl "$DL" '/id/.test(recs[4].reason) && /required/.test(recs[5].reason) && recs[5].raw === "{\"msg\":\"no id\"}"')" = true ]

    check "dead letter: 10,000-deep nesting refused by the depth limit" \
        [ "$(jsonl "$DL" '/deep|depth|nest/i.test(recs[6].reason) && recs[6].bytes === 20017')" = true ]
    check "dead letter: number beyond double range refused" \
        [ "$(jsonl "$DL" '/range/.test(recs[7].reason) && recs[7].raw === "{\"id\":13,\"n\":1e400}"')" = true ]
    check "dead letter: integer beyond int64 for a required column" \
        [ "$(jsonl "$DL" '/id/.test(recs[8].reason) && recs[8].raw === "{\"id\":99999999999999999999}"')" = true ]

fi
if [ "$READERS" = 1 ]; then
    got=$(duck "select id, msg, n from read_parquet('$T/o1/out.parquet') order by id")
    want='[{"id":"1","msg":"hello","n":5},{"id":"2","msg":"café é","n":null},{"id":"10","msg":null,"n":-3},{"id":"11","msg":null,"n":null}]'
    if [ "$got" = "$want" ]; then ok "parquet rows = good lines, by value"; else bad "parquet rows = good lines, by value" "$got"; fi
fi

# ---- all good: exit 0, no dead-letter file --------------------------------------
printf '{"id":1}\n{"id":2}\n' | "$PARQD" convert --schema "$T/schema.yaml" -o "$T/good.parquet" \
    2>"$T/good.err"
rc=$?
check "clean stdin input exits 0" [ "$rc" -eq 0 ]
check "no dead-letter file without rejects" [ ! -e "$T/good.rejects.ndjson" ]
[ "$READERS" = 1 ] && check "stdin rows landed" \
    [ "$(duck "select sum(id)::INTEGER as s from read_parquet('$T/good.parquet')")" = '[{"s":3}]' ]

# ---- stdin source names, '-' ------------------------------------------------------------
printf '{"id":1}\nnope\n' | "$PARQD" convert --schema "$T/schema.yaml" -o "$T/s.parquet" - \
    2>/dev/null
rc=$?
check "stdin with a reject exits 2" [ "$rc" -eq 2 ]
[ "$HAVE_NODE" = 1 ] && check "stdin rejects say stdin:LINE" \
    [ "$(jsonl "$T/s.rejects.ndjson" 'recs[0].source')" = "stdin:2" ]

# ---- never overwrite; usage errors --------------------------------------------------------
echo precious >"$T/exists.parquet"
"$PARQD" convert --schema "$T/schema.yaml" -o "$T/exists.parquet" "$T/in.ndjson" 2>"$T/ex.err"
rc=$?
check "existing -o FILE is refused with exit 1" [ "$rc" -eq 1 ]
check "existing -o FILE left untouched" [ "$(cat "$T/exists.parquet")" = precious ]
check "refusal says why" grep -q 'already exists' "$T/ex.err"
"$PARQD" convert --schema "$T/schema.yaml" -o "$T/x.parquet" "$T/missing.ndjson" 2>/dev/null
check "missing input exits 1" [ "$?" -eq 1 ]
check "missing input writes nothing" [ ! -e "$T/x.parquet" ]
"$PARQD" convert --frobnicate 2>/dev/null
check "unknown option exits 1" [ "$?" -eq 1 ]
"$PARQD" convert --schema "$T/nonexistent.yaml" -o "$T/y.parquet" "$T/in.ndjson" 2>/dev/null
check "unreadable schema exits 1" [ "$?" -eq 1 ]

# ---- empty input still gives one (empty) file ---------------------------------------------
: | "$PARQD" convert --schema "$T/schema.yaml" -o "$T/empty.parquet" 2>/dev/null
rc=$?
check "empty input exits 0" [ "$rc" -eq 0 ]
[ "$READERS" = 1 ] && check "empty input gives a valid file with 0 rows" \
    [ "$(duck "select count(*)::INTEGER as c from read_parquet('$T/empty.parquet')")" = '[{"c":0}]' ]

# ---- rotation: -o FILE rolls to FILE-000001..., -o DIR/ uses output.path --------------------
cat >"$T/rot.yaml" <<EOF
schema: schema.yaml
output:
  path: "part/{seq}.parquet"
  rotate: {max_rows: 3, max_bytes: 0, max_age: 0}
EOF
seq 1 8 | sed 's/.*/{"id":&}/' >"$T/eight.ndjson"
mkdir -p "$T/rf"
"$PARQD" convert --config "$T/rot.yaml" -o "$T/rf/data.parquet" "$T/eight.ndjson" 2>/dev/null
rc=$?
check "rotation with -o FILE exits 0" [ "$rc" -eq 0 ]
check "rotation with -o FILE names FILE-000001.." \
    [ "$(cd "$T/rf" && ls -A | tr '\n' ' ')" = "data-000001.parquet data-000002.parquet data-000003.parquet " ]
"$PARQD" convert --config "$T/rot.yaml" -o "$T/rd/" "$T/eight.ndjson" 2>/dev/null
rc=$?
check "rotation with -o DIR/ exits 0" [ "$rc" -eq 0 ]
check "rotation with -o DIR/ renders output.path" \
    [ "$(cd "$T/rd" && find . -type f | sort | tr '\n' ' ')" = "./part/000001.parquet ./part/000002.parquet ./part/000003.parquet " ]
# Again into the same directory: {seq} moves past existing files, nothing is overwritten.
"$PARQD" convert --config "$T/rot.yaml" -o "$T/rd" "$T/eight.ndjson" 2>/dev/null
check "existing directory output keeps old files and adds new" \
    [ "$(find "$T/rd" -name '*.parquet' | wc -l)" -eq 6 ]
if [ "$READERS" = 1 ]; then
    check "rotated files hold every row once" \
        [ "$(duck "select count(*)::INTEGER as c, sum(id)::INTEGER as s from read_parquet('$T/rf/*.parquet')")" = '[{"c":8,"s":36}]' ]
    check "rotated files hold 3, 3, 2 rows" \
        [ "$(duck "select count(*)::INTEGER as c from read_parquet('$T/rf/*.parquet', filename=true) group by filename order by filename")" = '[{"c":3},{"c":3},{"c":2}]' ]
fi

# ---- I/O failure: exit 3, nothing published, no temp files ------------------------------
awk 'BEGIN { for (i = 0; i < 300000; i++) printf "{\"id\":%d,\"msg\":\"%08x%08x\"}\n", i, i * 2654435761 % 4294967296, i * 40503 }' \
    >"$T/many.ndjson"
mkdir -p "$T/full"
(
    ulimit -f 512    # 512 KiB: the output cannot fit
    "$PARQD" convert --schema "$T/schema.yaml" -o "$T/full/" "$T/many.ndjson" 2>"$T/full.err"
)
rc=$?
check "write failure exits 3" [ "$rc" -eq 3 ]
check "write failure leaves no parquet file" [ -z "$(find "$T/full" -name '*.parquet')" ]
check "write failure leaves no temp file" no_temp "$T/full"
check "write failure is explained" grep -q 'file too large' "$T/full.err"

# ---- -o -: one complete file on standard output ------------------------------------------
# hyp: reads a Parquet file from stdin with hyparquet, prints its rows as JSON.
hyp() {
    (cd "$INTEROP" && node --input-type=module -e '
import { parquetReadObjects } from "hyparquet";
import { compressors } from "hyparquet-compressors";
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const b = Buffer.concat(chunks);
const file = b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
const rows = await parquetReadObjects({ file, compressors });
console.log(JSON.stringify(rows, (k, v) => typeof v === "bigint" ? Number(v) : v));
')
}
mkdir -p "$T/stage" "$T/cwd"
# rot.yaml rotates every 3 rows: on stdout the 8 rows still make one file.
got=$(parqd_abs=$(realpath "$PARQD") && cd "$T/cwd" && TMPDIR="$T/stage" "$parqd_abs" convert --config "$T/rot.yaml" -o - \
    "$T/eight.ndjson" 2>"$T/stdout.err" | if [ "$READERS" = 1 ]; then hyp; else cat >/dev/null; fi;
    echo "rc=${PIPESTATUS[0]}")
check "-o - exits 0 into a pipe" grep -q 'rc=0$' <<<"$got"
check "-o - writes no file named '-'" [ -z "$(ls -A "$T/cwd")" ]
check "-o - leaves nothing in TMPDIR" [ -z "$(ls -A "$T/stage")" ]
check "-o - summary names standard output" \
    grep -q '^parqd convert: 8 records in, 8 written, 0 rejected, 1 file, [0-9]* bytes: standard output$' \
    "$T/stdout.err"
want='[{"id":1,"msg":null,"n":null},{"id":2,"msg":null,"n":null},{"id":3,"msg":null,"n":null},{"id":4,"msg":null,"n":null},{"id":5,"msg":null,"n":null},{"id":6,"msg":null,"n":null},{"id":7,"msg":null,"n":null},{"id":8,"msg":null,"n":null}]'
[ "$READERS" = 1 ] && check "-o -: hyparquet reads the piped file, every row by value" \
    [ "$(head -1 <<<"$got")" = "$want" ]
TMPDIR="$T/stage" "$PARQD" convert --schema "$T/schema.yaml" -o - "$T/eight.ndjson" \
    2>/dev/null >"$T/stdout.parquet"
"$PARQD" convert --schema "$T/schema.yaml" -o "$T/named.parquet" "$T/eight.ndjson" 2>/dev/null
check "-o - into a regular file: the same bytes as -o FILE" cmp -s "$T/stdout.parquet" "$T/named.parquet"
# A terminal gets no Parquet bytes: exit 1 with the reason (script(1) gives a pty).
if command -v script >/dev/null; then
    script -qec "TMPDIR='$T/stage' '$PARQD' convert -o - '$T/eight.ndjson'" /dev/null >"$T/tty.out" 2>&1
    check "-o - on a terminal exits 1" [ "$?" = 1 ]
    check "-o - on a terminal says why" grep -q 'standard output is a terminal' "$T/tty.out"
    check "-o - on a terminal writes nothing to it" bash -c "! grep -q PAR1 '$T/tty.out'"
else
    echo "note: script(1) missing: -o - on a terminal not checked"
fi
# A reader that goes away: exit 3 with the reason, and the staged file removed.
(TMPDIR="$T/stage" "$PARQD" convert --schema "$T/schema.yaml" -o - "$T/many.ndjson" \
    2>"$T/epipe.err"; echo $? >"$T/epipe.rc") | head -c 100 >/dev/null
check "-o -: a closed pipe exits 3" [ "$(cat "$T/epipe.rc")" = 3 ]
check "-o -: a closed pipe is explained" grep -q 'writing standard output failed.*Broken pipe' "$T/epipe.err"
check "-o -: a closed pipe leaves nothing in TMPDIR" [ -z "$(ls -A "$T/stage")" ]

# ---- -v: each file's automatic shredding ------------------------------------
for i in 1 2 3; do printf '{"level":"info","status":%d,"req":{"path":"/p%d"}}\n' $((200 + i)) "$i"; done \
    >"$T/auto.ndjson"
"$PARQD" convert -v -o "$T/auto.parquet" "$T/auto.ndjson" 2>"$T/auto.err"
rc=$?
check "-v exits 0" [ "$rc" -eq 0 ]
check "-v names the shredded fields" grep -qF \
    'parqd convert: file from record 1: column event shredded as {"level":"string","req":{"path":"string"},"status":"int16"}' \
    "$T/auto.err"
"$PARQD" convert -o "$T/auto2.parquet" "$T/auto.ndjson" 2>"$T/auto2.err"
check "without -v, no shredding line" bash -c "! grep -q 'shredded as' '$T/auto2.err'"

# ---- output.time_from: directories of each record's event time ---------------
# A typed timestamp column (ms) read from `at`: strings, epoch ms, and a
# record without it (its ingestion time: today's directory).
cat >"$T/ev-schema.yaml" <<'EOF'
columns:
  - {name: ts, type: "timestamp(ms, utc)", from: at}
  - {name: svc, type: string}
EOF
cat >"$T/ev.yaml" <<EOF
schema: ev-schema.yaml
output:
  dir: $T/ev-out
  path: "svc={{svc}}/dt=%Y-%m-%d/hour=%H/{seq}.parquet"
  time_from: ts
EOF
printf '%s\n' '{"svc":"a","at":"2026-03-01T10:05:00Z"}' '{"svc":"a","at":1772362800500}' \
    '{"svc":"b","at":"2026-03-01T10:59:59.999+00:00"}' '{"svc":"b"}' >"$T/ev.ndjson"
"$PARQD" convert --config "$T/ev.yaml" "$T/ev.ndjson" 2>"$T/ev.err"
check "time_from: convert exits 0" [ "$?" -eq 0 ]
ev_dirs=$(cd "$T/ev-out" 2>/dev/null && find . -name '*.parquet' -printf '%h\n' | sort | tr '\n' ' ')
ev_want="./svc=a/dt=2026-03-01/hour=10 ./svc=a/dt=2026-03-01/hour=11 ./svc=b/dt=2026-03-01/hour=10 ./svc=b/dt=$(date -u +%Y-%m-%d)/hour="
check "time_from: each record under its event hour, the one without under its ingestion hour ($ev_dirs)" \
    [ "${ev_dirs#"$ev_want"}" != "$ev_dirs" ]
sed 's/time_from: ts/time_from: svc/' "$T/ev.yaml" >"$T/ev-bad.yaml"
"$PARQD" check --config "$T/ev-bad.yaml" >/dev/null 2>"$T/ev-bad.err"
check "time_from: check refuses a string column at its line and column" \
    grep -qF "ev-bad.yaml:5:14: output.time_from: column 'svc' is string, not a timestamp" "$T/ev-bad.err"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
