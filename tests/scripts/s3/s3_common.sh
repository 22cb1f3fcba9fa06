# s3_common.sh - what the S3 test scripts (tests/scripts/s3/test_s3_*.sh)
# share: the daemon test library, a radosgw cluster for this script (stopped
# on exit, with everything lib.sh started), a bucket, and a parqd
# configuration writer. Sourced after BUILD is set.
S3_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$S3_DIR/../../daemon/lib.sh"
. "$S3_DIR/rgw.sh"

# s3_init NAME: lib_init, then a cluster and the bucket "logs" (a FAIL and
# exit when the cluster cannot start: radosgw missing is a failure, not a
# skip).
s3_init() {
    lib_init "$1"
    trap 'rgw_stop; lib_cleanup' EXIT
    for t in ceph-mon ceph-osd radosgw radosgw-admin curl perl; do
        command -v "$t" >/dev/null || { bad "prerequisites" "$t not found (make deps)"; finish; }
    done
    local t0=$(date +%s.%N)
    if ! rgw_start "$T/rgw" >"$T/rgw.out" 2>&1 || ! rgw_mb logs; then
        bad "radosgw cluster starts" "$(tail -n 3 "$T/rgw.out" | tr '\n' ' ')"
        finish
    fi
    ok "radosgw cluster starts ($(printf '%.1f' "$(echo "$(date +%s.%N) - $t0" | bc)") s)"
}

# s3_config FILE PORT PORT_M PREFIX [EXTRA_OUTPUT_YAML] [SYNC]: a daemon
# configuration writing to s3://logs/PREFIX on this cluster.
s3_config() {
    cat >"$1" <<CONF
inputs:
  - {type: tcp, listen: "127.0.0.1:$2"}
output:
  s3:
    bucket: logs
    prefix: "$4"
    endpoint: "$RGW_ENDPOINT"
    path_style: true
    part_size: 5MiB
${5:-  rotate: {max_rows: 1000\}}
spool: {dir: $T/spool, sync: ${6:-batch}}
errors: {dead_letter: $T/rejects.ndjson}
metrics: {listen: "127.0.0.1:$3"}
log: {level: info}
CONF
}

# s3_download PREFIX DIR: every object under PREFIX into DIR.
s3_download() {
    rgw_get_all logs "$1" "$2"
}

# s3_no_uploads_left: no incomplete multipart upload in the bucket.
s3_no_uploads_left() {
    local u
    u=$(rgw_uploads logs) && [ -z "$u" ]
}
