#!/usr/bin/env bash
# test_daemon_path_grammar.sh - output.path has one grammar (issue 20):
# `parqd check` and the daemon's start-up accept and refuse exactly the
# same templates, and a refusal reads FILE:LINE:COL with the column of
# the offending character, the same from both (and from `parqd convert
# --config`, which loads the same configuration). Each row of the table is
# tried with both; an accepted template must also start the daemon (ready,
# then SIGTERM, exit 0) and name the file `parqd convert` writes (read back
# with DuckDB). {{FIELD}}s parse (their errors are in the table), and a
# record without the field lands under __HIVE_DEFAULT_PARTITION__.
#
#   bash test_daemon_path_grammar.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed".
set -u
BUILD=${1:?usage: test_daemon_path_grammar.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_path_grammar

# TEMPLATE (as written inside YAML double quotes) | ok, or COL|REASON. The
# value starts at column 9 (`  path: "`), so offset N is column 10 + N;
# a scalar with a YAML escape is reported at its start (column 9).
TABLE=$(cat <<'EOF'
dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet|ok
x/%F/{uuid}.parquet|ok
service={{service}}/dt=%Y-%m-%d/hour=%H/{host}-{seq}.parquet|ok
i={{_index}}/p={{/id.orig_h/a~1b}}/{uuid}.parquet|ok
..a/b../.../{seq}.parquet|ok
100%%/{seq}.parquet|ok
{{svc}/{seq}|10|'\{\{' without a closing '\}\}'
a/{{}}/{seq}|12|empty field name
a/{{x..y}}/{seq}|16|empty key in a dotted path
a/{{/x~2}}/{seq}|16|'~' must be followed by 0 or 1
a/{{x{y}}/{seq}|15|may not contain '\{' or '\}'
{host}-{pod}-{seq}|17|unknown placeholder '\{pod\}'
{host}.parquet|24|must contain \{seq\} or \{uuid\}
/abs/{seq}|10|absolute path
a/../{seq}|12|'\.\.' would leave the output directory
a//{seq}|11|empty directory name
%D/{seq}|10|unsupported % field
{seq}}|15|'\}' without an opening '\{'
a\x7Fb/{seq}|9|control character in the path
a\tb/{seq}|9|control character in the path
EOF
)

n=0
while IFS='|' read -r tmpl col why; do
    n=$((n + 1))
    dir="$T/case$n"
    mkdir -p "$dir"
    port=$(free_port)
    printf 'inputs:\n  - {type: tcp, listen: "127.0.0.1:%s"}\noutput:\n  path: "%s"\n' \
        "$port" "$tmpl" >"$dir/c.yaml"
    (cd "$dir" && "$PARQD" check --config c.yaml) >"$dir/check.out" 2>"$dir/check.err"
    check_rc=$?
    if [ "$col" = ok ]; then
        check "check accepts '$tmpl'" test "$check_rc" = 0
        if DCWD="$dir" daemon_start c.yaml "$dir/run.log"; then
            ok "start-up accepts '$tmpl'"
            daemon_stop TERM 20
            check "'$tmpl': SIGTERM exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
        else
            bad "start-up accepts '$tmpl'" "$(tail -n 2 "$dir/run.log" | tr '\n' ' ')"
            [ -n "${DPID:-}" ] && daemon_stop KILL 5
        fi
        # convert renders it: one file under out/, read back by DuckDB.
        printf '{"n":%d}\n' "$n" >"$dir/in.ndjson"
        (cd "$dir" && "$PARQD" convert --config c.yaml -o conv/ in.ndjson) >/dev/null 2>"$dir/conv.err"
        f=$(parquet_files "$dir/conv")
        check "convert renders '$tmpl' ($(sed "s|^$dir/conv/||" <<<"$f"))" test "$(grep -c . <<<"$f")" = 1
        got=$(duck "SELECT CAST(variant_extract(event, 'n') AS INT) AS n FROM read_parquet('$f', hive_partitioning = false)")
        check "'$tmpl': DuckDB reads the record back ($got)" test "$got" = "[{\"n\":$n}]"
        continue
    fi
    (cd "$dir" && timeout 20 "$PARQD" --config c.yaml) >/dev/null 2>"$dir/run.err"
    run_rc=$?
    : >"$dir/in.ndjson"
    (cd "$dir" && "$PARQD" convert --config c.yaml -o out/ in.ndjson) >/dev/null 2>"$dir/conv.err"
    conv_rc=$?
    want="c.yaml:4:$col: output.path: .*$why"
    check "check refuses '$tmpl' (exit $check_rc)" test "$check_rc" = 1
    check "start-up refuses '$tmpl' (exit $run_rc)" test "$run_rc" = 1
    if grep -qE -- "$want" "$dir/check.err"; then ok "check: '$tmpl' at 4:$col: $why"; else
        bad "check: '$tmpl' at 4:$col: $why" "$(cat "$dir/check.err")"; fi
    # The same message from both, after their program prefixes.
    a=$(grep -oE 'c\.yaml:[0-9]+:[0-9]+: .*' "$dir/check.err" | head -n 1)
    b=$(grep -oE 'c\.yaml:[0-9]+:[0-9]+: .*' "$dir/run.err" | head -n 1)
    check "'$tmpl': start-up says what check says ('$b')" test -n "$a" -a "$a" = "$b"
    c=$(grep -oE 'c\.yaml:[0-9]+:[0-9]+: .*' "$dir/conv.err" | head -n 1)
    check "'$tmpl': convert refuses it too (exit $conv_rc) with the same words" \
        test "$conv_rc" = 1 -a "$c" = "$a"
done <<<"$TABLE"

finish
