#!/usr/bin/env bash
# test_systemd_units.sh - systemd/parqd.service and parqd.socket pass
# `systemd-analyze verify` (offline: no systemd as PID 1 needed) with
# ExecStart pointed at the built binary, without a single warning about
# them; a deliberately broken copy must be flagged (so a verify that
# checks nothing cannot pass); the directives the daemon relies on are
# there; and the sandbox's exposure score is printed (not judged).
#     bash tests/scripts/test_systemd_units.sh BUILD_DIR [TESTDATA_DIR]
set -u
BUILD=${1:?usage: test_systemd_units.sh BUILD_DIR [TESTDATA_DIR]}
PARQD="$(cd "$BUILD" 2>/dev/null && pwd)/parqd"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d /tmp/parqd-units-XXXXXX)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

command -v systemd-analyze >/dev/null || {
    bad "systemd-analyze not found (Debian package systemd; make deps installs it)"; finish; }
[ -x "$PARQD" ] || { bad "$PARQD not built"; finish; }

# The units as installed, but running the binary just built.
mkdir -p "$TMP/units" "$TMP/broken"
sed "s#^ExecStart=/usr/local/bin/parqd #ExecStart=$PARQD #" "$ROOT/systemd/parqd.service" \
    > "$TMP/units/parqd.service"
cp "$ROOT/systemd/parqd.socket" "$TMP/units/parqd.socket"
if grep -q "^ExecStart=$PARQD " "$TMP/units/parqd.service"; then ok; else
    bad "could not point ExecStart at $PARQD"; fi

# verify OUTFILE UNIT... ; exit status of systemd-analyze verify. Only our
# units' errors count (--recursive-errors=no: not those of network.target
# and friends, which a container may lack).
verify() {
    local out=$1
    shift
    (cd "$TMP" && systemd-analyze verify --man=no --recursive-errors=no "$@") >"$out" 2>&1
}

verify "$TMP/verify.out" units/parqd.service units/parqd.socket
rc=$?
if [ "$rc" -eq 0 ]; then ok; else bad "systemd-analyze verify exited $rc"; fi
if grep -q 'parqd' "$TMP/verify.out"; then
    bad "systemd-analyze verify has remarks about our units:"; sed 's/^/    /' "$TMP/verify.out"
else
    ok
    [ -s "$TMP/verify.out" ] && { echo "note: verify said (not about our units):";
                                   sed 's/^/    /' "$TMP/verify.out"; }
fi

# The check must be able to fail: an unknown key, an unknown syscall group
# and a missing binary are all reported.
sed -e 's/^UMask=0027$/UMask=0027\nNoSuchKey=1\nSystemCallFilter=@no-such-group/' \
    -e 's#^ExecStart=[^ ]*#ExecStart=/nonexistent/parqd#' \
    "$TMP/units/parqd.service" > "$TMP/broken/parqd.service"
cp "$TMP/units/parqd.socket" "$TMP/broken/parqd.socket"
verify "$TMP/broken.out" broken/parqd.service broken/parqd.socket
for want in "Unknown key 'NoSuchKey'" "@no-such-group" "/nonexistent/parqd"; do
    if grep -qF -- "$want" "$TMP/broken.out"; then ok; else
        bad "verify did not flag '$want' in a broken unit:"; sed 's/^/    /' "$TMP/broken.out"; fi
done

# What the daemon and the operator rely on (see the comments in the units).
need() { if grep -qx -- "$2" "$ROOT/systemd/$1"; then ok; else bad "$1 lacks '$2'"; fi; }
for line in Type=notify NotifyAccess=main WatchdogSec=30s 'ExecReload=/bin/kill -HUP $MAINPID' \
        DynamicUser=yes StateDirectory=parqd RuntimeDirectory=parqd ConfigurationDirectory=parqd \
        WorkingDirectory=/var/lib/parqd ProtectSystem=strict 'CapabilityBoundingSet=' \
        'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' SystemCallFilter=@system-service \
        UMask=0027 LimitNOFILE=65536 TimeoutStopSec=90 Restart=on-failure; do
    need parqd.service "$line"
done
for line in ListenStream=127.0.0.1:5170 ListenStream=/run/parqd.sock SocketMode=0660 \
        Service=parqd.service WantedBy=sockets.target; do
    need parqd.socket "$line"
done
# Socket activation stays optional: the service must not require the socket.
if grep -qE '^(Requires|BindsTo|Requisite)=.*parqd\.socket' "$ROOT/systemd/parqd.service"; then
    bad "parqd.service requires parqd.socket (socket activation is meant to be optional)"
else ok; fi

# Exposure score (0 = locked down, 10 = exposed): printed for the record.
if systemd-analyze security --offline=yes "$TMP/units/parqd.service" >"$TMP/sec.out" 2>&1; then
    echo "note: $(grep -a 'Overall exposure level' "$TMP/sec.out" | sed 's/^→ *//')"
else
    echo "note: systemd-analyze security --offline=yes unavailable:"; sed 's/^/    /' "$TMP/sec.out"
fi

finish
