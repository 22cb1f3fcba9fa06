/* metrics_render.c - the /metrics body: dm_counters_global and a few
 * process metrics in Prometheus text exposition format 0.0.4 (see
 * metrics.h; the HTTP side is metrics.c).
 *
 * Thread: any. Counters are relaxed atomic loads (counters.h), process
 * metrics come from /proc and getrusage; nothing is cached but the
 * process start time, which cannot change.
 *
 * Names follow the Prometheus conventions: prefix parqd_, base units
 * (bytes, seconds: microsecond counters are printed as seconds with six
 * decimals, exactly), counters end in _total; the process_* families are
 * the ones every client library exports, so stock dashboards work. */
#include "metrics.h"

#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "buf.h"
#include "counters.h"

typedef struct mt_out {
    pq_buf b;
    bool oom;
} mt_out;

static void put(mt_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(mt_out *o, const char *fmt, ...)
{
    if (o->oom)
        return;
    for (size_t want = 256;;) {
        if (pq_buf_reserve(&o->b, want) != 0) {
            o->oom = true;
            return;
        }
        const size_t room = o->b.cap - o->b.len;
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf((char *)o->b.data + o->b.len, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            o->oom = true;
            return;
        }
        if ((size_t)n < room) {
            o->b.len += (size_t)n;
            return;
        }
        want = (size_t)n + 1;
    }
}

static void family(mt_out *o, const char *name, const char *type, const char *help)
{
    put(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Counters and gauges read straight from dm_counters_global. */
typedef struct mt_metric {
    const char *name, *type, *help;
    size_t off;                  /* of the _Atomic uint64_t in dm_counters */
    bool usec;                   /* microseconds, shown as seconds */
} mt_metric;

#define MT_C(f) offsetof(dm_counters, f)
static const mt_metric mt_metrics[] = {
    {"parqd_records_received_total", "counter",
     "Lines framed from input connections, oversized lines included.", MT_C(records_received), 0},
    {"parqd_received_bytes_total", "counter", "Bytes read from input connections.",
     MT_C(bytes_received), 0},
    {"parqd_connections_accepted_total", "counter", "Input connections accepted.",
     MT_C(connections_accepted), 0},
    {"parqd_connections_idle_closed_total", "counter",
     "Input connections closed after limits.idle_timeout without data.",
     MT_C(connections_idle_closed), 0},
    {"parqd_connections_open", "gauge", "Input connections open now.", MT_C(connections_open), 0},
    {"parqd_backpressure_seconds_total", "counter",
     "Time reading from inputs was paused because the workers were behind "
     "(limits.max_buffered_bytes, or 12 MiB of lines not yet parsed).",
     MT_C(backpressure_us), 1},
    {"parqd_backpressure_active", "gauge",
     "1 while reading from inputs is paused because limits.max_buffered_bytes is reached "
     "or the spool cannot be written, else 0.",
     MT_C(backpressure_active), 0},
    {"parqd_spool_bytes", "gauge", "Bytes in spool segment files.", MT_C(spool_bytes), 0},
    {"parqd_spool_records_replayed_total", "counter",
     "Records replayed from the spool after a restart.", MT_C(spool_records_replayed), 0},
    {"parqd_spool_write_errors_total", "counter", "Failed writes or syncs of the spool.",
     MT_C(spool_write_errors), 0},
    {"parqd_buffered_bytes", "gauge", "Bytes of records accepted but not yet in a Parquet file.",
     MT_C(buffered_bytes), 0},
    {"parqd_rows_written_total", "counter", "Rows in published Parquet files.",
     MT_C(rows_written), 0},
    {"parqd_row_groups_written_total", "counter", "Row groups in published Parquet files.",
     MT_C(row_groups_written), 0},
    {"parqd_files_written_total", "counter", "Parquet files completed and published.",
     MT_C(files_written), 0},
    {"parqd_written_bytes_total", "counter", "Bytes of Parquet files published.",
     MT_C(bytes_written), 0},
    {"parqd_write_errors_total", "counter", "Failed writes of Parquet files.",
     MT_C(write_errors), 0},
    {"parqd_queue_batches", "gauge", "Batches waiting for a pipeline worker.",
     MT_C(queue_batches), 0},
    {"parqd_worker_busy_seconds_total", "counter", "Time pipeline workers spent working.",
     MT_C(worker_busy_us), 1},
    {"parqd_workers", "gauge", "Pipeline worker threads.", MT_C(workers), 0},
};
#undef MT_C

static const char *const mt_reject_reasons[DM_REJECT_COUNT] = {
    [DM_REJECT_INVALID_JSON] = "invalid_json",
    [DM_REJECT_TOO_LONG] = "too_long",
    [DM_REJECT_SCHEMA] = "schema",
};

static const char *const mt_close_reasons[DM_CLOSE_COUNT] = {
    [DM_CLOSE_SIZE] = "size",
    [DM_CLOSE_ROWS] = "rows",
    [DM_CLOSE_AGE] = "age",
    [DM_CLOSE_PERIOD] = "period",
    [DM_CLOSE_SHUTDOWN] = "shutdown",
    [DM_CLOSE_MAX_OPEN] = "max_open_files",
};

static const char *const mt_refuse_reasons[DM_REFUSE_COUNT] = {
    [DM_REFUSE_MAX_CONNECTIONS] = "max_connections",
    [DM_REFUSE_OUT_OF_FDS] = "out_of_fds",
    [DM_REFUSE_TLS_HANDSHAKE] = "tls_handshake",
    [DM_REFUSE_TLS_SUBJECT] = "tls_subject",
    [DM_REFUSE_PEER_CRED] = "peer_cred",
};

static uint64_t counter_at(size_t off)
{
    return dm_get((const _Atomic uint64_t *)((const char *)&dm_counters_global + off));
}

static void render_counters(mt_out *o)
{
    for (size_t i = 0; i < sizeof mt_metrics / sizeof mt_metrics[0]; i++) {
        const mt_metric *m = &mt_metrics[i];
        const uint64_t v = counter_at(m->off);
        family(o, m->name, m->type, m->help);
        if (m->usec)
            put(o, "%s %" PRIu64 ".%06" PRIu64 "\n", m->name, v / 1000000u, v % 1000000u);
        else
            put(o, "%s %" PRIu64 "\n", m->name, v);
    }
    family(o, "parqd_connections_refused_total", "counter",
           "Input connections closed at once, by reason: over limits.max_connections, out of "
           "file descriptors, a failed or timed-out TLS handshake, a client certificate subject "
           "not allowed, a Unix peer whose uid/gid is not allowed.");
    for (int r = 0; r < DM_REFUSE_COUNT; r++)
        put(o, "parqd_connections_refused_total{reason=\"%s\"} %" PRIu64 "\n",
            mt_refuse_reasons[r], dm_get(&dm_counters_global.connections_refused_by[r]));
    family(o, "parqd_records_rejected_total", "counter",
           "Records written to the dead-letter file instead of Parquet, by reason.");
    for (int r = 0; r < DM_REJECT_COUNT; r++)
        put(o, "parqd_records_rejected_total{reason=\"%s\"} %" PRIu64 "\n", mt_reject_reasons[r],
            dm_get(&dm_counters_global.records_rejected[r]));
    family(o, "parqd_files_closed_total", "counter",
           "Output files closed (then published), by reason: rotate.max_bytes (size), "
           "rotate.max_rows (rows), rotate.max_age (age), a record whose time renders other "
           "directories of output.path, or a partitioned file whose period has passed and "
           "that has been idle for rotate.max_age (period), all files at once on shutdown, SIGHUP or "
           "the end of a convert (shutdown), or a new {{FIELD}} partition past "
           "output.max_open_files closing the least recently written (max_open_files).");
    for (int r = 0; r < DM_CLOSE_COUNT; r++)
        put(o, "parqd_files_closed_total{reason=\"%s\"} %" PRIu64 "\n", mt_close_reasons[r],
            dm_get(&dm_counters_global.files_closed[r]));
    family(o, "parqd_row_groups_closed_early_total", "counter",
           "Row groups closed before their limits because the open files' buffers reached "
           "half of limits.max_buffered_bytes (partitioned output: the largest closes).");
    put(o, "parqd_row_groups_closed_early_total %" PRIu64 "\n",
        dm_get(&dm_counters_global.row_groups_closed_early));
    family(o, "parqd_records_time_fallback_total", "counter",
           "Records routed by their ingestion time although output.time_from is set: the "
           "field was missing, null or not a timestamp.");
    put(o, "parqd_records_time_fallback_total %" PRIu64 "\n",
        dm_get(&dm_counters_global.records_time_fallback));
    family(o, "parqd_files_open", "gauge", "Output files open for writing (partitions).");
    put(o, "parqd_files_open %" PRIu64 "\n", dm_get(&dm_counters_global.files_open));
}

/* ---- HTTP inputs ------------------------------------------------------- */

static const char *const mt_http_eps[DM_HTTP_EP_COUNT] = {
    [DM_HTTP_EP_INGEST] = "ingest", [DM_HTTP_EP_BULK] = "bulk", [DM_HTTP_EP_OTLP] = "otlp",
    [DM_HTTP_EP_ROOT] = "root", [DM_HTTP_EP_OTHER] = "other",
};

static void render_http_requests(mt_out *o)
{
    static const int statuses[] = DM_HTTP_STATUSES;
    family(o, "parqd_http_requests_total", "counter",
           "HTTP requests answered, by endpoint and status (\"other\": any other status).");
    for (int e = 0; e < DM_HTTP_EP_COUNT; e++)
        for (int i = 0; i < DM_HTTP_STATUS_COUNT; i++) {
            uint64_t v = dm_get(&dm_counters_global.http_requests[e][i]);
            char st[16];
            if (i < DM_HTTP_STATUS_COUNT - 1)
                snprintf(st, sizeof st, "%d", statuses[i]);
            else
                snprintf(st, sizeof st, "other");
            put(o, "parqd_http_requests_total{endpoint=\"%s\",status=\"%s\"} %" PRIu64 "\n",
                mt_http_eps[e], st, v);
        }
    family(o, "parqd_http_records_total", "counter",
           "Records accepted from HTTP requests into the spool.");
    put(o, "parqd_http_records_total %" PRIu64 "\n", dm_get(&dm_counters_global.http_records));
    family(o, "parqd_http_body_bytes_total", "counter",
           "HTTP request body bytes received, before gzip decoding.");
    put(o, "parqd_http_body_bytes_total %" PRIu64 "\n",
        dm_get(&dm_counters_global.http_body_bytes));
}

static void render_http_ack(mt_out *o)
{
    static const uint64_t bounds[] = DM_HTTP_ACK_BUCKETS_US;
    family(o, "parqd_http_ack_seconds", "histogram",
           "Time from a request's last byte to its reply, for replies that waited for the "
           "spool (spool.sync).");
    uint64_t cum = 0;
    for (int i = 0; i < DM_HTTP_ACK_BUCKET_COUNT; i++) {
        cum += dm_get(&dm_counters_global.http_ack_us_bucket[i]);
        if (i < DM_HTTP_ACK_BUCKET_COUNT - 1)
            put(o, "parqd_http_ack_seconds_bucket{le=\"%" PRIu64 ".%06" PRIu64 "\"} %" PRIu64
                "\n", bounds[i] / 1000000u, bounds[i] % 1000000u, cum);
        else
            put(o, "parqd_http_ack_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", cum);
    }
    uint64_t sum = dm_get(&dm_counters_global.http_ack_us_sum);
    put(o, "parqd_http_ack_seconds_sum %" PRIu64 ".%06" PRIu64 "\n", sum / 1000000u,
        sum % 1000000u);
    put(o, "parqd_http_ack_seconds_count %" PRIu64 "\n",
        dm_get(&dm_counters_global.http_ack_count));
}

/* ---- process metrics (the names every Prometheus client library uses) -- */

/* Seconds since the epoch at which this process started, from its start
 * in clock ticks after boot (/proc/self/stat field 22) and the boot time
 * (/proc/stat btime); < 0 when /proc cannot tell. It never changes, so it
 * is read once. */
static double mt_start_time = -1;
static pthread_once_t mt_start_once = PTHREAD_ONCE_INIT;

static void read_start_time(void)
{
    char buf[1024];
    unsigned long long ticks = 0, btime = 0;
    FILE *f = fopen("/proc/self/stat", "r");
    if (f == NULL)
        return;
    const size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');     /* the command name may hold ')' and spaces */
    /* after ')': field 3 (state) ... field 22 (starttime) */
    if (p == NULL || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
                            "%*d %*d %*d %*d %*d %*d %llu", &ticks) != 1)
        return;
    if ((f = fopen("/proc/stat", "r")) == NULL)
        return;
    while (fgets(buf, sizeof buf, f) != NULL)
        if (sscanf(buf, "btime %llu", &btime) == 1)
            break;
    fclose(f);
    const long hz = sysconf(_SC_CLK_TCK);
    if (btime > 0 && hz > 0)
        mt_start_time = (double)btime + (double)ticks / (double)hz;
}

static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    long n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;                /* the directory's own fd */
}

static void render_process(mt_out *o)
{
    const long page = sysconf(_SC_PAGESIZE);
    unsigned long long vm, rss;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f != NULL) {
        if (fscanf(f, "%llu %llu", &vm, &rss) == 2 && page > 0) {
            family(o, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
            put(o, "process_virtual_memory_bytes %llu\n", vm * (unsigned long long)page);
            family(o, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
            put(o, "process_resident_memory_bytes %llu\n", rss * (unsigned long long)page);
        }
        fclose(f);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        const uint64_t us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
                            (uint64_t)ru.ru_utime.tv_usec +
                            (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
        family(o, "process_cpu_seconds_total", "counter",
               "Total user and system CPU time spent in seconds.");
        put(o, "process_cpu_seconds_total %" PRIu64 ".%06" PRIu64 "\n", us / 1000000u,
            us % 1000000u);
    }
    pthread_once(&mt_start_once, read_start_time);
    if (mt_start_time >= 0) {
        family(o, "process_start_time_seconds", "gauge",
               "Start time of the process since unix epoch in seconds.");
        put(o, "process_start_time_seconds %.2f\n", mt_start_time);
    }
    const long fds = open_fds();
    struct rlimit rl;
    if (fds >= 0) {
        family(o, "process_open_fds", "gauge", "Number of open file descriptors.");
        put(o, "process_open_fds %ld\n", fds);
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        family(o, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
        put(o, "process_max_fds %llu\n", (unsigned long long)rl.rlim_cur);
    }
}

static _Atomic(mt_extra_fn) extra;

void mt_set_extra(mt_extra_fn fn) { atomic_store(&extra, fn); }

char *mt_render(void)
{
    mt_out o = {.oom = false};
    pq_buf_init(&o.b);
    family(&o, "parqd_up", "gauge", "1 while parqd is running.");
    put(&o, "parqd_up 1\n");
    render_counters(&o);
    render_http_requests(&o);
    render_http_ack(&o);
    render_process(&o);
    mt_extra_fn fn = atomic_load(&extra);
    if (fn != NULL && !o.oom) {
        fn(&o.b);                /* put() keeps no NUL in len */
        o.oom = pq_buf_push(&o.b, '\0') != 0;
    }
    if (o.oom || o.b.data == NULL) {
        pq_buf_free(&o.b);
        return NULL;
    }
    return (char *)o.b.data;     /* put() keeps it NUL-terminated */
}
