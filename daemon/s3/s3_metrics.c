/* s3_metrics.c - S3 counters (see s3_metrics.h). */
#include "s3_metrics.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define CLASSES 6                /* 0 (no answer), 1xx.. 5xx by first digit */
static const uint64_t bounds_us[] = {5000, 10000, 25000, 50000, 100000, 250000, 500000,
                                     1000000, 2500000, 5000000, 10000000, 30000000};
#define NB (sizeof bounds_us / sizeof bounds_us[0])

static _Atomic uint64_t requests[S3_OP_N][CLASSES];
static _Atomic uint64_t uploaded, retries, published;
static _Atomic int64_t in_flight;
static _Atomic uint64_t lat_bucket[NB + 1], lat_sum_us, lat_count;

const char *s3_op_name(s3_op op)
{
    static const char *const names[S3_OP_N] = {
        "PutObject", "CreateMultipartUpload", "UploadPart", "CompleteMultipartUpload",
        "AbortMultipartUpload", "ListMultipartUploads", "HeadObject", "DeleteObject",
        "HeadBucket"};
    return op < S3_OP_N ? names[op] : "?";
}

static int class_of(long status)
{
    return status >= 100 && status < 600 ? (int)(status / 100) : 0;
}

void s3_metrics_request(s3_op op, long status, uint64_t micros)
{
    atomic_fetch_add_explicit(&requests[op][class_of(status)], 1, memory_order_relaxed);
    size_t b = 0;
    while (b < NB && micros > bounds_us[b])
        b++;
    atomic_fetch_add_explicit(&lat_bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&lat_sum_us, micros, memory_order_relaxed);
    atomic_fetch_add_explicit(&lat_count, 1, memory_order_relaxed);
}

void s3_metrics_uploaded(uint64_t bytes)
{
    atomic_fetch_add_explicit(&uploaded, bytes, memory_order_relaxed);
}
void s3_metrics_retry(void) { atomic_fetch_add_explicit(&retries, 1, memory_order_relaxed); }
void s3_metrics_parts_in_flight(int delta)
{
    atomic_fetch_add_explicit(&in_flight, delta, memory_order_relaxed);
}
void s3_metrics_published(void)
{
    atomic_fetch_add_explicit(&published, 1, memory_order_relaxed);
}

uint64_t s3_metrics_requests(s3_op op, long status_class)
{
    return atomic_load(&requests[op][status_class >= 0 && status_class < CLASSES ?
                                     status_class : 0]);
}

static void put(pq_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(pq_buf *o, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        pq_buf_append(o, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

static void render_requests(pq_buf *o)
{
    static const char *const cls[CLASSES] = {"error", "1xx", "2xx", "3xx", "4xx", "5xx"};
    put(o, "# HELP parqd_s3_requests_total S3 requests by operation and status class "
           "(error: no HTTP answer).\n# TYPE parqd_s3_requests_total counter\n");
    for (int op = 0; op < S3_OP_N; op++) {
        for (int c = 0; c < CLASSES; c++) {
            uint64_t v = atomic_load_explicit(&requests[op][c], memory_order_relaxed);
            if (v != 0)
                put(o, "parqd_s3_requests_total{op=\"%s\",status=\"%s\"} %" PRIu64 "\n",
                    s3_op_name((s3_op)op), cls[c], v);
        }
    }
}

static void render_latency(pq_buf *o)
{
    put(o, "# HELP parqd_s3_request_seconds S3 request latency.\n"
           "# TYPE parqd_s3_request_seconds histogram\n");
    uint64_t cum = 0;
    for (size_t b = 0; b < NB; b++) {
        cum += atomic_load_explicit(&lat_bucket[b], memory_order_relaxed);
        put(o, "parqd_s3_request_seconds_bucket{le=\"%" PRIu64 ".%06" PRIu64 "\"} %" PRIu64 "\n",
            bounds_us[b] / 1000000, bounds_us[b] % 1000000, cum);
    }
    cum += atomic_load_explicit(&lat_bucket[NB], memory_order_relaxed);
    uint64_t sum = atomic_load_explicit(&lat_sum_us, memory_order_relaxed);
    put(o, "parqd_s3_request_seconds_bucket{le=\"+Inf\"} %" PRIu64 "\n", cum);
    put(o, "parqd_s3_request_seconds_sum %" PRIu64 ".%06" PRIu64 "\n", sum / 1000000,
        sum % 1000000);
    put(o, "parqd_s3_request_seconds_count %" PRIu64 "\n",
        atomic_load_explicit(&lat_count, memory_order_relaxed));
}

void s3_metrics_render(pq_buf *o)
{
    render_requests(o);
    put(o, "# HELP parqd_s3_uploaded_bytes_total Bytes sent in PUT and UploadPart bodies.\n"
           "# TYPE parqd_s3_uploaded_bytes_total counter\nparqd_s3_uploaded_bytes_total %"
           PRIu64 "\n", atomic_load_explicit(&uploaded, memory_order_relaxed));
    put(o, "# HELP parqd_s3_retries_total S3 requests sent again after a retryable error.\n"
           "# TYPE parqd_s3_retries_total counter\nparqd_s3_retries_total %" PRIu64 "\n",
        atomic_load_explicit(&retries, memory_order_relaxed));
    put(o, "# HELP parqd_s3_parts_in_flight Multipart parts being uploaded now.\n"
           "# TYPE parqd_s3_parts_in_flight gauge\nparqd_s3_parts_in_flight %" PRId64 "\n",
        atomic_load_explicit(&in_flight, memory_order_relaxed));
    put(o, "# HELP parqd_s3_objects_published_total Objects made visible (PUT or "
           "CompleteMultipartUpload).\n# TYPE parqd_s3_objects_published_total counter\n"
           "parqd_s3_objects_published_total %" PRIu64 "\n",
        atomic_load_explicit(&published, memory_order_relaxed));
    render_latency(o);
}
