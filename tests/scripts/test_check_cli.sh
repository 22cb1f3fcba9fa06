#!/usr/bin/env bash
# test_check_cli.sh - `parqd check` end to end: the default schema with no
# configuration, good and bad configurations and schemas written to a temp
# dir (exit 0/1, errors as FILE:LINE:COL on stderr), --schema overriding,
# the example conf/parqd.yaml, and usage errors.
#     bash tests/scripts/test_check_cli.sh BUILD_DIR [TESTDATA_DIR]
set -u
BUILD=${1:?usage: test_check_cli.sh BUILD_DIR [TESTDATA_DIR]}
PARQD="$(cd "$BUILD" 2>/dev/null && pwd)/parqd"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/parqd-check-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# run NAME EXPECTED_STATUS ARGS... ; leaves output in $TMP/out, $TMP/err
run() {
    local name=$1 want=$2
    shift 2
    (cd "$TMP" && "$PARQD" "$@") >"$TMP/out" 2>"$TMP/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then ok; else
        bad "$name: exit $got, expected $want"; sed 's/^/    /' "$TMP/err"; fi
}
has_out() { if grep -qF -- "$2" "$TMP/out"; then ok; else bad "$1: stdout lacks '$2'"; fi; }
has_err() { if grep -qE -- "$2" "$TMP/err"; then ok; else
    bad "$1: stderr does not match /$2/"; sed 's/^/    /' "$TMP/err"; fi; }

[ -x "$PARQD" ] || { echo "FAIL: $PARQD not built"; echo "0 passed, 1 failed"; exit 1; }

# --- no configuration: the built-in default schema -----------------------
run "default" 0 check
has_out "default" "message schema {"
has_out "default" "  optional group event (VARIANT(1)) {"
has_out "default" "    required binary metadata;"
has_out "default" "  required int64 _ingest_ts (TIMESTAMP(MICROS,true));"
has_out "default" "# config: (built-in defaults)"
has_out "default" "compression=zstd"
has_out "default" "  event: auto, decided per file from its first row group (max_columns=256 max_depth=4 min_presence=0.5)"

# --- a good configuration with a schema file -------------------------------
mkdir -p "$TMP/conf/schemas"
cat >"$TMP/conf/schemas/access.yaml" <<'EOF'
columns:
  - {name: ts, type: timestamp, unit: us, utc: true, from: time, required: true}
  - {name: level, type: string, bloom: true}
  - {name: status, type: int32, from: http.status, encoding: delta_binary_packed}
  - {name: tags, type: "list<string>"}
  - {name: attrs, type: variant, from: attributes,
     shred: {user_id: string, latency_ms: double, tags: [string]}}
  - {name: user, type: struct, fields: [{name: email, type: string}]}
  - {name: rest, type: variant, from: "*"}
EOF
cat >"$TMP/conf/good.yaml" <<'EOF'
inputs:
  - {type: tcp, listen: "[::1]:5170"}
schema: schemas/access.yaml
output:
  dir: out
  compression: gzip
  compression_level: 9
  encryption:
    footer_key: {id: k0, file: k0.hex}
    columns:
      - {column: user.email, key: {id: k1, file: k1.hex}}
EOF
run "good config" 0 check --config conf/good.yaml
has_out "good config" "  required int64 ts (TIMESTAMP(MICROS,true));"
has_out "good config" "      required group latency_ms {"
has_out "good config" "encoding=delta_binary_packed"
has_out "good config" "compression=gzip(9)"
has_out "good config" "bloom=on(fpp 0.01, ndv auto)"
has_out "good config" "key=k1"
has_out "good config" "  attrs: the schema's shred tree"
has_out "good config" "  rest: auto, decided per file"
has_out "good config" "# schema: conf/schemas/access.yaml"
run "good config (--config=)" 0 check --config=conf/good.yaml

# --- bad configurations: exit 1, FILE:LINE:COL on stderr -------------------
cat >"$TMP/bad_key.yaml" <<'EOF'
output:
  compresion: zstd
EOF
run "unknown key" 1 check --config bad_key.yaml
has_err "unknown key" "^parqd: bad_key.yaml:2:3: output: unknown key 'compresion' \(did you mean 'compression'\?\)$"

cat >"$TMP/bad_size.yaml" <<'EOF'
output:
  rotate: {max_bytes: 256MB}
EOF
run "ambiguous size" 1 check --config bad_size.yaml
has_err "ambiguous size" "^parqd: bad_size.yaml:2:23: output.rotate.max_bytes: '256MB'"

cat >"$TMP/bad_schema.yaml" <<'EOF'
columns:
  - {name: id, type: string}
  - {name: status, type: int33, from: http.status}
EOF
run "bad schema" 1 check --schema bad_schema.yaml
has_err "bad schema" "^parqd: bad_schema.yaml:3:26: column 'status': unknown type 'int33' \(expected bool, int8..int64, "

cat >"$TMP/bad_inline.yaml" <<'EOF'
schema:
  columns:
    - {name: a, type: variant, from: "*"}
    - {name: b, type: variant, from: "*"}
EOF
cat >"$TMP/inline.yaml" <<'EOF'
schema:
  columns:
    - {name: a, type: "map<string,list<int64>>"}
EOF
run "inline schema" 0 check --config inline.yaml
has_out "inline schema" "# schema: (inline in inline.yaml)"
has_out "inline schema" "  a.key_value.value.list.element encoding=auto"

run "two rest columns" 1 check --config bad_inline.yaml
has_err "two rest columns" "^parqd: bad_inline.yaml:4:7: column 'b': a second rest column"

cat >"$TMP/bad_yaml.yaml" <<'EOF'
output: {dir: out
EOF
run "syntax error" 1 check --config bad_yaml.yaml
has_err "syntax error" "^parqd: bad_yaml.yaml:[0-9]+:[0-9]+: YAML syntax error"

cat >"$TMP/bad_ref.yaml" <<'EOF'
schema: missing.yaml
EOF
run "missing schema file" 1 check --config bad_ref.yaml
has_err "missing schema file" "^parqd: bad_ref.yaml:1:9: schema: missing.yaml: cannot open"

run "missing config file" 1 check --config nope.yaml
has_err "missing config file" "^parqd: nope.yaml: cannot open"

# --- --schema replaces the configuration's schema ----------------------------
run "schema override" 0 check --config bad_ref.yaml --schema conf/schemas/access.yaml
has_out "schema override" "  optional int32 status;"

# --- the example configuration ----------------------------------------------
mkdir -p "$TMP/example/schemas"
cp "$ROOT/conf/parqd.yaml" "$TMP/example/parqd.yaml"
cp "$TMP/conf/schemas/access.yaml" "$TMP/example/schemas/access.yaml"
run "conf/parqd.yaml" 0 check --config example/parqd.yaml
has_out "conf/parqd.yaml" "output: /var/lib/parqd/out/dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet"
# as shipped: its schema path resolves to a schema in the repository
run "the repository's conf/parqd.yaml" 0 check --config "$ROOT/conf/parqd.yaml"
has_out "the repository's conf/parqd.yaml" "  optional int64 response_bytes;"

# --- usage ------------------------------------------------------------------
run "unexpected argument" 1 check extra
has_err "unexpected argument" "usage: parqd check"
run "missing option value" 1 check --config
run "repeated option" 1 check --schema a --schema b
run "unknown command" 1 frobnicate
run "version" 0 version
has_out "version" "parqd version "
run "convert missing input" 1 convert -o "$TMP/never.parquet" "$TMP/no-such-input.ndjson"
has_err "convert missing input" "no-such-input.ndjson"

# --- encryption: what the writer will do per column ---------------------------
printf '000102030405060708090a0b0c0d0e0f\n' > "$TMP/k0.hex"
cat > "$TMP/uniform.yaml" <<EOF
schema:
  columns:
    - {name: a, type: string}
output:
  encryption:
    footer_key: {id: k0, file: $TMP/k0.hex}
EOF
cat > "$TMP/partial.yaml" <<EOF
schema:
  columns:
    - {name: a, type: string}
    - {name: b, type: int64}
output:
  encryption:
    footer_key: {id: k0, file: $TMP/k0.hex}
    columns:
      - {column: b, key: {id: k1, file: $TMP/k0.hex}}
EOF
run "uniform encryption" 0 check --config "$TMP/uniform.yaml"
has_out "uniform encryption" "key=k0(footer, uniform)"
run "per-column encryption" 0 check --config "$TMP/partial.yaml"
has_out "per-column encryption" "key=-(plaintext)"
has_out "per-column encryption" "key=k1"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
