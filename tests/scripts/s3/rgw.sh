# rgw.sh - a throw-away single-node Ceph cluster with radosgw on loopback,
# for the S3 tests (sourced, not run):
#
#   . rgw.sh; rgw_start DIR || exit 1     sets RGW_ENDPOINT, AWS_ACCESS_KEY_ID,
#                                         AWS_SECRET_ACCESS_KEY (a new user)
#   rgw_mb BUCKET; rgw_ls BUCKET; rgw_get BUCKET KEY FILE; rgw_uploads BUCKET
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
# pools of size one on a single OSD; radosgw stopped with SIGTERM (after
# SIGKILL the next bucket creation stalls). Debian packages ceph-mon,
# ceph-osd, radosgw, ceph-common; awscli for the object reads.

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
    rgw_ceph osd crush add "osd.$id" 1.0 host=localhost root=default >/dev/null 2>&1
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

rgw_aws() { aws --endpoint-url "$RGW_ENDPOINT" "$@"; }
rgw_mb() { rgw_aws s3 mb "s3://$1" >/dev/null; }
rgw_ls() { rgw_aws s3api list-objects-v2 --bucket "$1" --query 'Contents[].Key' --output text; }
rgw_get() { rgw_aws s3 cp "s3://$1/$2" "$3" --quiet; }
rgw_uploads() {
    rgw_aws s3api list-multipart-uploads --bucket "$1" --query 'Uploads[].Key' --output text
}
