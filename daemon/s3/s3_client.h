/* s3_client.h - signed S3 requests over libcurl, with retries.
 *
 * One client per store: endpoint, bucket, region, addressing style, TLS
 * settings and credentials; a pool of curl easy handles, each keeping its
 * connection alive between requests (connection reuse), taken by
 * whichever thread sends a request. Every request is signed with SigV4
 * (s3_sigv4.h) with its payload's SHA-256, and carries a Content-Length.
 *
 * Retries: a connection error, a timeout, a 5xx, SlowDown, RequestTimeout
 * or an Error inside a 200 is sent again after an exponential backoff with
 * full jitter (200 ms doubling to 10 s, S3_ATTEMPTS attempts: the thread
 * sleeps, nothing spins); then the request fails with the last error.
 * Other 4xx (AccessDenied, NoSuchBucket, InvalidAccessKeyId, a bad
 * region's AuthorizationHeaderMalformed...) and a TLS certificate that
 * does not verify fail at once: retrying cannot fix them. Errors read "S3 PutObject s3://bucket/key: 403 AccessDenied:
 * Access Denied" - never a secret.
 *
 * Threads: any, several at once (the pool has a lock). */
#ifndef PQ_S3_CLIENT_H
#define PQ_S3_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "config.h"
#include "err.h"
#include "s3_metrics.h"
#include "s3_sigv4.h"
#include "s3_xml.h"

#define S3_ATTEMPTS 6

typedef struct s3_client s3_client;

typedef struct s3_request {
    s3_op op;
    const char *method;          /* GET PUT POST DELETE HEAD */
    const char *key;             /* object key (prefix included); NULL: the bucket */
    const s3_param *params;
    size_t n_params;
    const s3_header *headers;    /* extra headers, signed (x-amz-meta-*, Content-MD5) */
    size_t n_headers;
    const void *body;
    size_t body_len;
    bool ok_404;                 /* HEAD: 404 is an answer, not an error */
} s3_request;

typedef struct s3_response {
    long status;                 /* last HTTP status; 0: no answer */
    pq_buf body;                 /* the reply (XML), bounded */
    char etag[128];
    char meta_spool[64];         /* x-amz-meta-parqd-spool */
    s3_xml_error error;          /* parsed S3 error, if any */
    bool retryable;              /* the failure was of the retryable kind */
} s3_response;

void s3_response_init(s3_response *r);
void s3_response_free(s3_response *r);

/* Creates a client for cfg (copied) with creds (copied; the caller may
 * wipe its copy). A plain-http endpoint that is not loopback sets
 * *plaintext_warning. 0, PQ_ENOMEM, PQ_EINVAL (bad endpoint). */
int s3_client_new(s3_client **out, const cf_s3 *cfg, const s3_creds *creds,
                  bool *plaintext_warning, pq_err *err);
void s3_client_free(s3_client *c);

/* Sends r (with retries). 0 on a 2xx (or an allowed 404: resp->status),
 * else PQ_EIO with err. resp is reset first. */
int s3_client_do(s3_client *c, const s3_request *r, s3_response *resp, pq_err *err);

/* "s3://bucket/key" for messages and intents. */
int s3_client_url(const s3_client *c, const char *key, char *out, size_t cap);
const char *s3_client_bucket(const s3_client *c);
const char *s3_client_prefix(const s3_client *c);
uint64_t s3_client_part_size(const s3_client *c);

/* Tests: attempts per request and the first backoff (ms). */
void s3_client_set_retry(s3_client *c, int attempts, unsigned first_ms);

#endif
