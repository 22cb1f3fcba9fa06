#!/usr/bin/env bash
# test_deb_install.sh - the Debian package of `make deb` (packaging/deb.cmake)
# installed on this machine as an operator would:
#   1. cpack builds it from BUILD_DIR (into a temporary directory); lintian
#      reports no error; it holds the files README "Installing the Debian
#      package" lists, the /etc files as conffiles;
#   2. dpkg -i; the units run /usr/bin/parqd and keep DynamicUser= and
#      StateDirectory= (systemd-analyze verify, offline);
#      `parqd check --config /etc/parqd/parqd.yaml` passes;
#   3. /usr/bin/parqd runs with that configuration the way the service
#      would (working directory /var/lib/parqd, /run/parqd, an unprivileged
#      uid from systemd's DynamicUser range owning only those two, umask
#      0027); a line sent over TCP lands in a file DuckDB reads back;
#   4. dpkg --purge leaves nothing of the package behind; only the state
#      directory stays, with the file in it.
# It changes the machine, so it runs only where that is safe and cleans up
# after itself, also on failure (a trap purges the package and removes the
# directories it created). Skipped (exit 77) with the reason: not root; no
# dpkg or cpack; a sanitizer build (the package is the main build's); a
# parqd package, /etc/parqd, /var/lib/parqd, /run/parqd or /usr/bin/parqd
# already here (never touched); ports 5170 or 9170 busy (the packaged
# configuration's).
#
#   bash test_deb_install.sh BUILD_DIR [TESTDATA_DIR]
#
# Last line: "N passed, M failed[, K skipped]".
set -u
BUILD=${1:?usage: test_deb_install.sh BUILD_DIR [TESTDATA_DIR]}
. "$(dirname "$0")/../daemon/lib.sh"

not_here() { echo "SKIP test_deb_install: $*"; exit 77; }
[ "$(id -u)" = 0 ] || not_here "needs root (it installs and purges a package with dpkg)"
for tool in dpkg dpkg-deb dpkg-query cpack setpriv; do
    command -v "$tool" >/dev/null || not_here "$tool not found (Debian packages dpkg, cmake, util-linux)"
done
sanitized_build && not_here "a sanitizer build: the package is built and tested from the main build"
[ -f "$BUILD/CPackConfig.cmake" ] || not_here "$BUILD/CPackConfig.cmake missing (configure with CMake first)"
if dpkg-query -W -f='${db:Status-Status}' parqd 2>/dev/null | grep -qv '^not-installed$'; then
    not_here "a parqd package is already on this machine ($(dpkg-query -W -f='${Version} ${db:Status-Status}' parqd)); not touching it"
fi
for p in /etc/parqd /var/lib/parqd /var/lib/private/parqd /run/parqd /usr/bin/parqd \
         /lib/systemd/system/parqd.service /lib/systemd/system/parqd.socket; do
    [ -e "$p" ] && not_here "$p exists already (not from this test); not touching it"
done
port_busy 127.0.0.1 5170 || port_busy 127.0.0.1 9170 &&
    not_here "port 5170 or 9170 is in use (the packaged configuration listens there)"

lib_init test_deb_install
INSTALLED=0
# Runs on every exit: the daemon is killed by lib_cleanup (spawned), the
# package purged, the directories this test created removed.
deb_cleanup() {
    [ -n "${DPID:-}" ] && kill -9 "$DPID" 2>/dev/null
    [ "$INSTALLED" = 1 ] && dpkg --purge parqd >"$T/purge-trap.log" 2>&1
    rm -rf /var/lib/parqd /run/parqd
}
trap 'deb_cleanup; lib_cleanup' EXIT
DUID=61999   # in systemd's DynamicUser range (61184-65519), as the service's would be

# ---- 1. the package ------------------------------------------------------------------
if ! cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >"$T/cpack.log" 2>&1; then
    bad "cpack builds the package" "$(tail -n 5 "$T/cpack.log" | tr '\n' ' ')"
    finish
fi
DEB=$(ls "$T"/pkg/parqd_*.deb 2>/dev/null | head -1)
check "cpack builds parqd_VERSION_ARCH.deb" test -f "$DEB"
[ -f "$DEB" ] || finish
if command -v lintian >/dev/null; then
    lintian --fail-on error "$DEB" >"$T/lintian.log" 2>&1
    lrc=$?
    sed 's/^/    lintian: /' "$T/lintian.log" | grep -v 'running with root privileges'
    check "lintian reports no error" test "$lrc" = 0
else
    skip "lintian" "not installed (Debian package lintian; make deps-deb installs it)"
fi
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's#^\./#/#' >"$T/contents"
for f in /usr/bin/parqd /lib/systemd/system/parqd.service /lib/systemd/system/parqd.socket \
         /etc/parqd/parqd.yaml /etc/parqd/schemas/access.yaml /usr/share/man/man8/parqd.8.gz \
         /usr/share/doc/parqd/README.md /usr/share/doc/parqd/copyright /usr/share/doc/parqd/changelog.gz; do
    check "the package holds $f" grep -qx "$f" "$T/contents"
done
NSCHEMAS=$(ls "$ROOT"/conf/schemas/*.yaml | wc -l)
check "the package holds every example schema ($NSCHEMAS)" \
    test "$(grep -c '^/etc/parqd/schemas/.*\.yaml$' "$T/contents")" = "$NSCHEMAS"

# ---- 2. installed ---------------------------------------------------------------------
if ! dpkg -i "$DEB" >"$T/install.log" 2>&1; then
    INSTALLED=1
    bad "dpkg -i" "$(tail -n 5 "$T/install.log" | tr '\n' ' ')"
    finish
fi
INSTALLED=1
ok "dpkg -i installs it"
CONFFILES=$(dpkg-query -W -f='${Conffiles}\n' parqd | awk 'NF { print $1 }')
check "/etc/parqd/parqd.yaml is a conffile" grep -qx /etc/parqd/parqd.yaml <<<"$CONFFILES"
check "every /etc/parqd/schemas file is a conffile" \
    test "$(grep -c '^/etc/parqd/schemas/' <<<"$CONFFILES")" = "$NSCHEMAS"
SVC=/lib/systemd/system/parqd.service
check "the service runs /usr/bin/parqd with /etc/parqd/parqd.yaml" \
    grep -qx 'ExecStart=/usr/bin/parqd --config /etc/parqd/parqd.yaml' "$SVC"
for d in DynamicUser=yes StateDirectory=parqd WorkingDirectory=/var/lib/parqd RuntimeDirectory=parqd; do
    check "the service keeps $d" grep -qx "$d" "$SVC"
done
check "no unit names /usr/local any more" bash -c "! grep -q /usr/local $SVC /lib/systemd/system/parqd.socket"
if command -v systemd-analyze >/dev/null; then
    (cd / && systemd-analyze verify --man=no --recursive-errors=no "$SVC" /lib/systemd/system/parqd.socket) \
        >"$T/verify.log" 2>&1
    vrc=$?
    check "systemd-analyze verify: the installed units, no error or warning about them" \
        bash -c "[ $vrc = 0 ] && ! grep -q 'parqd\.s' '$T/verify.log'"
    [ "$vrc" = 0 ] || sed 's/^/    /' "$T/verify.log"
else
    skip "systemd-analyze verify" "systemd-analyze not found (Debian package systemd)"
fi
check "man -w parqd finds parqd(8)" bash -c 'man -w 8 parqd 2>/dev/null | grep -q /usr/share/man/man8/parqd.8.gz ||
    [ -f /usr/share/man/man8/parqd.8.gz ]'
check "parqd(8) is a man page (roff)" bash -c 'zcat /usr/share/man/man8/parqd.8.gz | grep -q "^\.TH \"parqd\" \"8\""'
/usr/bin/parqd check --config /etc/parqd/parqd.yaml >"$T/check.out" 2>&1
crc=$?
check "parqd check --config /etc/parqd/parqd.yaml exits 0 (got $crc)" test "$crc" = 0
check "parqd check prints the schema of /etc/parqd/schemas/access.yaml" grep -q 'trace_id' "$T/check.out"

# ---- 3. the daemon, as the service would run it ------------------------------------------
# What systemd does for the unit: StateDirectory= and RuntimeDirectory=
# owned by the dynamic uid, which owns nothing else.
install -d -o "$DUID" -g "$DUID" -m 0755 /var/lib/parqd /run/parqd
DLOG="$T/parqd.log"
# shellcheck disable=SC2016
spawn bash -c 'cd /var/lib/parqd && umask 0027 &&
    exec setpriv --reuid "$1" --regid "$1" --clear-groups /usr/bin/parqd --config /etc/parqd/parqd.yaml 2>>"$2"' \
    _ "$DUID" "$DLOG"
DPID=$SPAWNED
if daemon_wait_ready "$DLOG" 0 20; then
    ok "/usr/bin/parqd starts with /etc/parqd/parqd.yaml as uid $DUID in /var/lib/parqd"
    LINE='{"ts":"2026-11-26T12:00:00.123456Z","host":"web-1","request":{"method":"GET","path":"/deb"},"response":{"status":200},"note":"test_deb_install"}'
    printf '%s\n' "$LINE" >/dev/tcp/127.0.0.1/5170
    check "the Unix input is /run/parqd/parqd.sock" test -S /run/parqd/parqd.sock
    daemon_stop TERM 30
    check "SIGTERM: exit 0 (got $DSTATUS)" test "$DSTATUS" = 0
    FILES=$(parquet_files /var/lib/parqd/out)
    check "one file under /var/lib/parqd/out" test "$(grep -c . <<<"$FILES")" = 1
    F=$(head -1 <<<"$FILES")
    check "the file belongs to uid $DUID, not readable by others (UMask)" \
        bash -c "[ \"\$(stat -c '%u %A' '$F')\" = '$DUID -rw-r-----' ]"
    got=$(duck "SELECT host, method, path, status, CAST(rest AS JSON)::VARCHAR AS rest FROM read_parquet('$F')")
    check "DuckDB reads the line back by value" \
        test "$got" = '[{"host":"web-1","method":"GET","path":"/deb","status":200,"rest":"{\"note\":\"test_deb_install\"}"}]'
    [ "$got" = '[{"host":"web-1","method":"GET","path":"/deb","status":200,"rest":"{\"note\":\"test_deb_install\"}"}]' ] ||
        echo "    DuckDB: $got"
else
    bad "/usr/bin/parqd starts with /etc/parqd/parqd.yaml" "$(tail -n 3 "$DLOG" | tr '\n' ' ')"
fi

# ---- 4. purged ---------------------------------------------------------------------------
if dpkg --purge parqd >"$T/purge.log" 2>&1; then
    INSTALLED=0
    ok "dpkg --purge parqd"
else
    bad "dpkg --purge parqd" "$(tail -n 5 "$T/purge.log" | tr '\n' ' ')"
fi
check "dpkg no longer knows parqd" bash -c \
    "! dpkg-query -W -f='\${db:Status-Status}' parqd 2>/dev/null | grep -qv '^not-installed\$'"
left=$(while read -r f; do
    case "$f" in */) f=${f%/} ;; esac
    [ -e "$f" ] || continue
    [ -d "$f" ] && [ -n "$(ls -A "$f" 2>/dev/null)" ] && continue   # a shared directory (/etc, /usr/bin)
    echo "$f"
done <"$T/contents")
check "nothing of the package is left${left:+: $(tr '\n' ' ' <<<"$left")}" test -z "$left"
check "/etc/parqd is gone (conffiles purged)" test ! -e /etc/parqd
check "the state directory stays, with the file in it" test -n "$(parquet_files /var/lib/parqd/out)"
finish
