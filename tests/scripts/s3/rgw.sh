# rgw.sh - a throw-away single-node Ceph cluster with radosgw on loopback,
# for the S3 tests (sourced, not run):
#
#   . rgw.sh; rgw_start DIR || exit 1     sets RGW_ENDPOINT, AWS_ACCESS_KEY_ID,
#                                         AWS_SECRET_ACCESS_KEY (a new user)
#   rgw_mb BUCKET; rgw_ls BUCKET; rgw_list BUCKET [PREFIX]; rgw_uploads BUCKET
#   rgw_get BUCKET KEY FILE; rgw_get_all BUCKET PREFIX DIR    (curl, SigV4)
#   rgw_stop_gw / rgw_start_gw            radosgw alone (an outage)
#   rgw_stop                              everything (also from a trap)
#
# With RGW_TLS=DIR (server.crt and server.key in it, for 127.0.0.1),
# radosgw also serves https on RGW_TLS_ENDPOINT.
#
# One ceph-mon, one ceph-osd (memstore: nothing on disk worth keeping),
# radosgw with the beast frontend, all plain processes under DIR with
# cephx off. What makes it start in seconds and not hang: with cephx off
# radosgw also needs `ms mon client mode = crc`; short paxos intervals;
# pools of size one on a single OSD, which puts itself into the CRUSH map
# as it starts (no `ceph osd crush add`: a ceph CLI call costs 0.4 CPU-s);
# radosgw stopped with SIGTERM (after SIGKILL the next bucket creation
# stalls). Debian packages ceph-mon, ceph-osd, radosgw, ceph-common; curl
# and perl for the S3 requests.

rgw_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

rgw_conf() {
    cat > "$RGW_DIR/ceph.conf" <<CONF
[global]
fsid = $RGW_FSID
mon host = 127.0.0.1:$RGW_MON_PORT
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms bind ipv4 = true
ms bind ipv6 = false
paxos propose interval = 0.05
paxos min wait = 0.01
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon allow pool delete = true
osd crush chooseleaf type = 0
osd objectstore = memstore
memstore device bytes = 4294967296
osd fast shutdown = false
mon warn on pool no redundancy = false
mgr initial modules =
run dir = $RGW_DIR/run
admin socket = $RGW_DIR/run/\$name.asok
log file = $RGW_DIR/log/\$name.log
pid file = $RGW_DIR/run/\$name.pid
[mon.a]
mon data = $RGW_DIR/mon
[osd.0]
osd data = $RGW_DIR/osd
osd journal = $RGW_DIR/osd/journal
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT$RGW_SSL_FRONTEND
rgw data = $RGW_DIR/rgw
rgw dns name = 127.0.0.1
rgw thread pool size = 64
CONF
}

rgw_ceph() { ceph -c "$RGW_DIR/ceph.conf" "$@"; }

rgw_start_gw() {
    radosgw -c "$RGW_DIR/ceph.conf" -n client.rgw.a --pid-file "$RGW_DIR/run/rgw.pid" \
        >/dev/null 2>&1 &
    local i
    for i in $(seq 1 300); do
        curl -s -o /dev/null "http://127.0.0.1:$RGW_PORT/" && return 0
        sleep 0.1
    done
    echo "rgw: radosgw did not answer on 127.0.0.1:$RGW_PORT (see $RGW_DIR/log)" >&2
    return 1
}

rgw_stop_gw() {
    local pid
    pid=$(cat "$RGW_DIR/run/rgw.pid" 2>/dev/null) || return 0
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    rm -f "$RGW_DIR/run/rgw.pid"
}

rgw_start() {
    RGW_DIR=$1
    rm -rf "$RGW_DIR"
    mkdir -p "$RGW_DIR"/{run,log,mon,osd,rgw}
    RGW_FSID=$(python3 -c 'import uuid; print(uuid.uuid4())')
    RGW_MON_PORT=$(rgw_free_port)
    RGW_PORT=$(rgw_free_port)
    RGW_SSL_FRONTEND=""
    if [ -n "${RGW_TLS:-}" ]; then
        RGW_SSL_PORT=$(rgw_free_port)
        RGW_SSL_FRONTEND=" ssl_endpoint=127.0.0.1:$RGW_SSL_PORT ssl_certificate=$RGW_TLS/server.crt ssl_private_key=$RGW_TLS/server.key"
        RGW_TLS_ENDPOINT="https://127.0.0.1:$RGW_SSL_PORT"
        export RGW_TLS_ENDPOINT
    fi
    rgw_conf
    local c="$RGW_DIR/ceph.conf"
    monmaptool --create --add a "127.0.0.1:$RGW_MON_PORT" --fsid "$RGW_FSID" \
        "$RGW_DIR/monmap" >/dev/null 2>&1 || { echo "rgw: monmaptool failed" >&2; return 1; }
    ceph-mon -c "$c" -i a --mkfs --monmap "$RGW_DIR/monmap" >/dev/null 2>&1 ||
        { echo "rgw: ceph-mon --mkfs failed" >&2; return 1; }
    ceph-mon -c "$c" -i a || { echo "rgw: ceph-mon did not start" >&2; return 1; }
    local id
    id=$(rgw_ceph osd create 2>/dev/null) || { echo "rgw: osd create failed" >&2; return 1; }
    ceph-osd -c "$c" -i "$id" --mkfs >/dev/null 2>&1 || { echo "rgw: osd mkfs failed" >&2; return 1; }
    ceph-osd -c "$c" -i "$id" >/dev/null 2>&1 || { echo "rgw: ceph-osd did not start" >&2; return 1; }
    rgw_start_gw || return 1
    local out
    out=$(radosgw-admin -c "$c" user create --uid=parqd-test --display-name=parqd-test 2>/dev/null) ||
        { echo "rgw: user create failed" >&2; return 1; }
    AWS_ACCESS_KEY_ID=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["access_key"])')
    AWS_SECRET_ACCESS_KEY=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["secret_key"])')
    export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
    export AWS_DEFAULT_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
    RGW_ENDPOINT="http://127.0.0.1:$RGW_PORT"
    export RGW_ENDPOINT
}

rgw_stop() {
    [ -n "${RGW_DIR:-}" ] || return 0
    rgw_stop_gw
    local f pid
    for f in "$RGW_DIR"/run/*.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null) && kill -TERM "$pid" 2>/dev/null
    done
    sleep 0.3
    for f in "$RGW_DIR"/run/*.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f" 2>/dev/null) && kill -KILL "$pid" 2>/dev/null
    done
    true
}

# The S3 requests of the tests go through curl, which signs SigV4 itself
# (--aws-sigv4): a client independent of parqd's, and a few milliseconds a
# call where the aws CLI's Python start-up took a CPU second. curl 7.88's
# signer takes the URL as written into the canonical request, so: paths
# and query values percent-encoded as SigV4 wants (rgw_uri), query
# parameters in sorted order, "uploads=" for "uploads", and the payload
# hash (x-amz-content-sha256, which radosgw requires) given as a header.
rgw_curl() {
    curl -sS --fail-with-body --aws-sigv4 "aws:amz:us-east-1:s3" \
        --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@"
}
# rgw_uri [/]: stdin's lines percent-encoded but for A-Za-z0-9-._~ (and
# "/" with the argument /, for paths), as SigV4's canonical request does.
rgw_uri() {
    perl -pe 's{([^A-Za-z0-9\-._~\n'"${1:-}"'])}{sprintf("%%%02X", ord($1))}ge'
}
# rgw_unxml: the five XML entities of S3 listings decoded (keys are text).
rgw_unxml() {
    sed -e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&apos;/'"'"'/g; s/&#39;/'"'"'/g; s/&amp;/\&/g'
}
# rgw_xml_get URL: the response body, or its error on stderr and status 1.
rgw_xml_get() {
    local xml
    xml=$(rgw_curl "$1" 2>&1) || { printf '%s\n' "$xml" >&2; return 1; }
    printf '%s\n' "$xml"
}

rgw_mb() { rgw_curl -X PUT "$RGW_ENDPOINT/$1" >/dev/null; }
# rgw_list BUCKET [PREFIX]: "KEY<TAB>SIZE" for each object, every page of
# ListObjectsV2 (1000 keys each).
rgw_list() {
    local q xml token=""
    q="list-type=2"
    [ -z "${2:-}" ] || q+="&prefix=$(printf '%s\n' "$2" | rgw_uri)"
    while :; do
        xml=$(rgw_xml_get "$RGW_ENDPOINT/$1?${token:+continuation-token=$token&}$q") || return 1
        sed 's|<Contents>|\n|g' <<<"$xml" |
            sed -n 's|^<Key>\([^<]*\)</Key>.*<Size>\([0-9]*\)</Size>.*|\1\t\2|p' | rgw_unxml
        case $xml in *"<IsTruncated>true</IsTruncated>"*) ;; *) return 0 ;; esac
        token=$(sed -n 's|.*<NextContinuationToken>\([^<]*\)</NextContinuationToken>.*|\1|p' <<<"$xml" |
            rgw_unxml | rgw_uri)
        [ -n "$token" ] || { echo "rgw_list: a truncated listing without a token" >&2; return 1; }
    done
}
# rgw_ls BUCKET: its keys, one a line (nothing when empty).
rgw_ls() {
    local list
    list=$(rgw_list "$1") || return 1
    [ -z "$list" ] || cut -f 1 <<<"$list"
}
rgw_get() { rgw_curl -o "$3" "$RGW_ENDPOINT/$1/$(printf '%s\n' "$2" | rgw_uri /)"; }
# rgw_get_all BUCKET PREFIX DIR: every object under PREFIX into DIR (the
# rest of its key as the path), in one curl; fails unless every file has
# its listed size.
rgw_get_all() {
    local list
    mkdir -p "$3"
    list=$(rgw_list "$1" "$2") || return 1
    [ -n "$list" ] || return 0
    cut -f 1 <<<"$list" | rgw_uri / | paste - <(cut -f 1 <<<"$list") |
        awk -F '\t' -v ep="$RGW_ENDPOINT/$1/" -v dir="$3/" -v n=${#2} '{
            out = dir substr($2, n + 1)
            gsub(/[\\"]/, "\\\\&", out)
            printf "url = \"%s%s\"\noutput = \"%s\"\n", ep, $1, out }' >"$3.curl"
    rgw_curl --no-progress-meter --create-dirs --parallel --parallel-max 10 -K "$3.curl" || return 1
    rm -f "$3.curl"
    [ "$(cd "$3" && find . -type f -printf '%P\t%s\n' | sort)" = \
      "$(awk -F '\t' -v n=${#2} '{ print substr($1, n + 1) "\t" $2 }' <<<"$list" | sort)" ] ||
        { echo "rgw_get_all: the files in $3 are not the objects listed under $2" >&2; return 1; }
}
# rgw_uploads BUCKET: the keys of incomplete multipart uploads, one a line.
rgw_uploads() {
    local xml
    xml=$(rgw_xml_get "$RGW_ENDPOINT/$1?uploads=") || return 1
    sed 's|<Upload>|\n|g' <<<"$xml" | sed -n 's|^<Key>\([^<]*\)</Key>.*|\1|p' | rgw_unxml
}
