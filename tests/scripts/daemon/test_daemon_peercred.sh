#!/usr/bin/env bash
# test_daemon_peercred.sh - who may write to a Unix input (issue 11):
# allow_uids / allow_gids checked with SO_PEERCRED (and SO_PEERGROUPS for
# supplementary groups). Three users are created for the test (and
# removed at exit): one allowed by user name in allow_uids, one allowed as
# a supplementary member of a group named in allow_gids, one allowed by
# neither; each sends its own records with `runuser -u`, and so does root
# (this script), which is on neither list. Checks: the two allowed users'
# records land (verify.mjs compares the multiset of records with the lines
# they sent), nothing from the other two does, /metrics counts
# parqd_connections_refused_total{reason="peer_cred"}, and the log names
# the refused uid once; after the refused user is added to allow_uids
# and SIGHUP, its records land.
#
# Needs root (useradd, runuser); otherwise a named SKIP.
#
#   bash test_daemon_peercred.sh BUILD_DIR TESTDATA_DIR
#
# Last line: "N passed, M failed[, K skipped]".
set -u
BUILD=${1:?usage: test_daemon_peercred.sh BUILD_DIR TESTDATA_DIR}
. "$(dirname "$0")/../../daemon/lib.sh"
lib_init test_daemon_peercred

if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v runuser >/dev/null; then
    skip "SO_PEERCRED with users made for the test" "needs root, useradd and runuser"
    finish
fi

SUFFIX=$$
U_UID="pqt_uid_$SUFFIX"       # allowed by allow_uids (by name)
U_GRP="pqt_grp_$SUFFIX"       # allowed by allow_gids (supplementary group)
U_NO="pqt_no_$SUFFIX"         # allowed by neither
G_ALLOW="pqt_allow_$SUFFIX"
USERS=()
cleanup_users() {
    local u
    for u in "${USERS[@]}"; do
        userdel "$u" 2>/dev/null
    done
    groupdel "$G_ALLOW" 2>/dev/null
    lib_cleanup
}
trap cleanup_users EXIT
if ! groupadd "$G_ALLOW" 2>/dev/null; then
    skip "SO_PEERCRED with users made for the test" "groupadd failed (read-only /etc?)"
    finish
fi
for u in "$U_UID" "$U_GRP" "$U_NO"; do
    if useradd -M -N -s /usr/sbin/nologin "$u" 2>/dev/null; then
        USERS+=("$u")
    else
        skip "SO_PEERCRED with users made for the test" "useradd $u failed"
        finish
    fi
done
usermod -a -G "$G_ALLOW" "$U_GRP"
check "the group member's primary group is not the allowed one" \
    test "$(id -g "$U_GRP")" != "$(getent group "$G_ALLOW" | cut -d: -f3)"

# The clients run as other users: they need to reach the socket and read
# their input.
chmod 755 "$T"
SOCK="$T/parqd.sock"
PORT_M=$(free_port)
DLOG="$T/parqd.log"
cat >"$T/parqd.yaml" <<EOF
inputs:
  - {type: unix, path: "$SOCK", mode: "0666", allow_uids: [$U_UID], allow_gids: [$G_ALLOW]}
output: {dir: $T/out}
spool: {dir: $T/spool}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$PORT_M"}
EOF
for who in uid grp no root; do
    node "$LIB_DIR/gen.mjs" --lines 200 --payload 60 --seed "$who" --tag "$who" \
        --out "$T/$who.ndjson" >/dev/null
    chmod 644 "$T/$who.ndjson"
done

if ! daemon_start "$T/parqd.yaml" "$DLOG"; then
    bad "parqd starts"
    finish
fi
ok "parqd starts"
SINCE=$(now_us)

# send_as USER FILE: writes FILE to the socket as USER; prints what the
# client saw ("sent" or the error).
SENDER='
const s = require("net").connect(process.argv[1], () => s.end(require("fs").readFileSync(process.argv[2])));
s.on("error", e => { console.log("error " + e.code); process.exit(0); });
s.on("close", () => { console.log("sent"); process.exit(0); });'
send_as() {
    if [ "$1" = root ]; then
        node -e "$SENDER" "$SOCK" "$2"
    else
        runuser -u "$1" -- node -e "$SENDER" "$SOCK" "$2"
    fi
}
metrics() { http_get 127.0.0.1 "$PORT_M" /metrics | tail -n +2; }
received_is() { [ "$(metric "$(metrics)" parqd_records_received_total)" = "$1" ]; }
refused_is() { [ "$(metric "$(metrics)" 'parqd_connections_refused_total{reason="peer_cred"}')" = "$1" ]; }

echo "  $U_UID: $(send_as "$U_UID" "$T/uid.ndjson")"
check "$U_UID (allow_uids by name): its 200 records are received" wait_for 20 received_is 200
echo "  $U_GRP: $(send_as "$U_GRP" "$T/grp.ndjson")"
check "$U_GRP (supplementary group in allow_gids): its 200 records are received" \
    wait_for 20 received_is 400
echo "  $U_NO: $(send_as "$U_NO" "$T/no.ndjson")"
check "$U_NO (on neither list): refused" wait_for 10 refused_is 1
echo "  root: $(send_as root "$T/root.ndjson")"
check "root (on neither list): refused" wait_for 10 refused_is 2
sleep 0.5
check "nothing from the refused peers was received (400)" received_is 400
metrics >"$T/metrics.txt"
check "log: the refusal names the peer's uid" \
    grep -q "Unix peer not in allow_uids / allow_gids; latest: .*uid $(id -u "$U_NO") " "$DLOG"
check "log: refusals logged once (at most once a minute)" \
    test "$(grep -c 'Unix peer not in allow_uids' "$DLOG")" = 1

# SIGHUP: the allow lists are reloaded (the socket stays as it is).
sed -i "s/allow_uids: \[$U_UID\]/allow_uids: [$U_UID, $U_NO]/" "$T/parqd.yaml"
node "$LIB_DIR/gen.mjs" --lines 200 --payload 60 --seed no2 --tag no2 --out "$T/no2.ndjson" >/dev/null
chmod 644 "$T/no2.ndjson"
kill -HUP "$DPID"
check "SIGHUP: reload done" wait_for 20 grep -q 'reload: done' "$DLOG"
echo "  $U_NO after the reload: $(send_as "$U_NO" "$T/no2.ndjson")"
check "$U_NO, added to allow_uids by the reload: its 200 records are received" \
    wait_for 20 received_is 600
check "no further refusal" refused_is 2

daemon_stop TERM 60
check "SIGTERM: parqd exits 0 (got $DSTATUS)" test "$DSTATUS" = 0
UNTIL=$(now_us)
node_checks verify.mjs --out "$T/out" --since-us "$SINCE" --until-us "$UNTIL" --tmp "$T" \
    "$T/uid.ndjson" "$T/grp.ndjson" "$T/no2.ndjson"
finish
