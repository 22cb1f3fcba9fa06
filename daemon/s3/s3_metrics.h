/* s3_metrics.h - what the S3 store did, for /metrics (README "Metrics"):
 * requests by operation and status class, bytes uploaded, retries, parts
 * in flight, request latency (a histogram), objects published.
 *
 * Threads: any; relaxed atomics. */
#ifndef PQ_S3_METRICS_H
#define PQ_S3_METRICS_H

#include <stdint.h>

#include "buf.h"

typedef enum s3_op {
    S3_OP_PUT, S3_OP_CREATE_MPU, S3_OP_UPLOAD_PART, S3_OP_COMPLETE_MPU, S3_OP_ABORT_MPU,
    S3_OP_LIST_MPU, S3_OP_HEAD, S3_OP_DELETE, S3_OP_HEAD_BUCKET, S3_OP_N
} s3_op;

const char *s3_op_name(s3_op op);

/* One request's outcome: status 0 = no HTTP answer (connection error). */
void s3_metrics_request(s3_op op, long status, uint64_t micros);
void s3_metrics_uploaded(uint64_t bytes);
void s3_metrics_retry(void);
void s3_metrics_parts_in_flight(int delta);
void s3_metrics_published(void);

uint64_t s3_metrics_requests(s3_op op, long status_class);  /* 0, 2..5 (tests) */

/* Appends the parqd_s3_* families (Prometheus text format). */
void s3_metrics_render(pq_buf *out);

#endif
