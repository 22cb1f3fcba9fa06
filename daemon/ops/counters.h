/* counters.h - the daemon's counters and gauges, shared by every thread:
 * the loop thread (listeners, spool), the pipeline workers and the metrics
 * endpoint, which renders them as Prometheus text (metrics.c).
 *
 * Every field is a relaxed atomic: a counter is only ever added to, a
 * gauge stored; readers take no lock and may see a sum a moment old,
 * which is all a scrape needs. One global instance, `dm_counters`, lives
 * in counters.c; tests may zero it. */
#ifndef PQ_COUNTERS_H
#define PQ_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

/* Why a record went to the dead letters (label `reason` in /metrics). */
typedef enum dm_reject {
    DM_REJECT_INVALID_JSON,      /* not parseable / not an object */
    DM_REJECT_TOO_LONG,          /* over limits.max_line_bytes */
    DM_REJECT_SCHEMA,            /* missing required column, value did not fit without a rest column */
    DM_REJECT_COUNT
} dm_reject;

/* Why an output file was closed (label `reason` in /metrics): rotate.
 * max_bytes, rotate.max_rows, rotate.max_age, a record whose time renders
 * other directories than the file's (output.path's time fields), or
 * everything being published at once (shutdown, SIGHUP, the end of
 * `parqd convert`). */
typedef enum dm_close {
    DM_CLOSE_SIZE,
    DM_CLOSE_ROWS,
    DM_CLOSE_AGE,
    DM_CLOSE_PERIOD,
    DM_CLOSE_SHUTDOWN,
    DM_CLOSE_MAX_OPEN,           /* output.max_open_files: the least recently written */
    DM_CLOSE_COUNT
} dm_close;

/* Why a connection was closed at once (label `reason` in /metrics). */
typedef enum dm_refuse {
    DM_REFUSE_MAX_CONNECTIONS,   /* limits.max_connections reached */
    DM_REFUSE_OUT_OF_FDS,        /* the process ran out of file descriptors */
    DM_REFUSE_TLS_HANDSHAKE,     /* TLS input: handshake failed or timed out */
    DM_REFUSE_TLS_SUBJECT,       /* TLS input: client certificate subject not allowed */
    DM_REFUSE_PEER_CRED,         /* Unix input: SO_PEERCRED uid/gid not allowed */
    DM_REFUSE_COUNT
} dm_refuse;

/* HTTP inputs: requests by endpoint and status (metrics_render.c names them). */
typedef enum dm_http_ep {
    DM_HTTP_EP_INGEST, DM_HTTP_EP_BULK, DM_HTTP_EP_OTLP, DM_HTTP_EP_ROOT, DM_HTTP_EP_OTHER,
    DM_HTTP_EP_COUNT
} dm_http_ep;
#define DM_HTTP_STATUSES {200, 400, 401, 404, 405, 408, 413, 415, 429, 431, 500, 503}
#define DM_HTTP_STATUS_COUNT 13          /* the list above and one for any other */
/* Acknowledgement latency buckets, upper bounds in microseconds. */
#define DM_HTTP_ACK_BUCKETS_US {500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, \
                                250000, 500000, 1000000, 2500000}
#define DM_HTTP_ACK_BUCKET_COUNT 13      /* the bounds above and +Inf */

typedef struct dm_counters {
    /* ingest (loop thread) */
    _Atomic uint64_t records_received;   /* framed lines, oversized included */
    _Atomic uint64_t bytes_received;     /* socket bytes */
    _Atomic uint64_t connections_accepted;
    _Atomic uint64_t connections_refused;   /* every reason below */
    _Atomic uint64_t connections_refused_by[DM_REFUSE_COUNT];
    _Atomic uint64_t connections_idle_closed;
    _Atomic uint64_t connections_open;      /* gauge */
    _Atomic uint64_t backpressure_us;       /* total time reading was paused */
    _Atomic uint64_t backpressure_active;   /* gauge: 1 while paused */
    /* HTTP inputs (loop thread) */
    _Atomic uint64_t http_requests[DM_HTTP_EP_COUNT][DM_HTTP_STATUS_COUNT];
    _Atomic uint64_t http_records;          /* accepted into the spool */
    _Atomic uint64_t http_body_bytes;       /* as received (before gzip decoding) */
    _Atomic uint64_t http_ack_us_bucket[DM_HTTP_ACK_BUCKET_COUNT]; /* not cumulative */
    _Atomic uint64_t http_ack_us_sum;
    _Atomic uint64_t http_ack_count;
    /* spool (loop thread) */
    _Atomic uint64_t spool_bytes;           /* gauge: bytes in segment files */
    _Atomic uint64_t spool_records_replayed;
    _Atomic uint64_t spool_write_errors;
    /* pipeline (workers) */
    _Atomic uint64_t buffered_bytes;        /* gauge: accepted, not yet in a file */
    _Atomic uint64_t records_rejected[DM_REJECT_COUNT];
    _Atomic uint64_t rows_written;          /* in published files */
    _Atomic uint64_t row_groups_written;    /* in published files */
    _Atomic uint64_t files_written;         /* published */
    _Atomic uint64_t files_closed[DM_CLOSE_COUNT]; /* by the assembler, by reason */
    _Atomic uint64_t row_groups_closed_early;  /* limits.max_buffered_bytes, many open files */
    _Atomic uint64_t records_time_fallback;    /* output.time_from: no usable event time */
    _Atomic uint64_t files_open;            /* gauge: output files open for writing */
    _Atomic uint64_t bytes_written;         /* Parquet bytes published */
    _Atomic uint64_t write_errors;
    _Atomic uint64_t queue_batches;         /* gauge: batches waiting for a worker */
    _Atomic uint64_t worker_busy_us;        /* total time workers spent working */
    _Atomic uint64_t workers;               /* gauge: worker threads */
} dm_counters;

extern dm_counters dm_counters_global;

static inline void dm_add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

static inline void dm_set(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, v, memory_order_relaxed);
}

static inline uint64_t dm_get(const _Atomic uint64_t *c)
{
    return atomic_load_explicit((_Atomic uint64_t *)c, memory_order_relaxed);
}

#endif
