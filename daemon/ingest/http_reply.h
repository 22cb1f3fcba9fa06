/* http_reply.h - what a request asked for and what it gets back: the
 * request as http_conn.c parsed it, the reply being built, and the
 * endpoints (http_route.c) that turn one into the other (README.md
 * "Inputs over HTTP").
 *
 * Thread: the loop thread. */
#ifndef PQ_HTTP_REPLY_H
#define PQ_HTTP_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "listener_cb.h"

typedef enum hp_method { HP_GET, HP_HEAD, HP_POST, HP_OTHER } hp_method;

typedef struct hp_request {
    hp_method method;
    const char *path;            /* NUL-terminated, without the query */
    const char *body;            /* inflated */
    size_t body_len;
    bool json_ct;                /* Content-Type application/json (OTLP) */
    bool protobuf_ct;            /* Content-Type application/x-protobuf */
} hp_request;

typedef struct hp_reply {
    int status;
    const char *content_type;    /* NULL: application/json */
    pq_buf body;
    bool head;                   /* HEAD: headers only */
    uint64_t records;            /* accepted: the reply waits for the spool */
    int fail;                    /* non-zero: the daemon refused a record (close) */
    const char *headers;         /* NULL, or header lines ("Allow: GET\r\n") for this reply */
} hp_reply;

typedef struct hp_route_ctx {
    const char *source;
    const ls_callbacks *cb;
    size_t max_line_bytes;
} hp_route_ctx;

/* What a server's requests are for: the ingest endpoints below, or
 * metrics.listen's (daemon/ops/metrics.c). The connection code
 * (http_conn.c) is the same for both: framing, limits, timeouts. */
typedef struct hp_endpoints {
    /* Answers rq into r (status and body; r->body starts empty). */
    void (*route)(const hp_route_ctx *ctx, const hp_request *rq, hp_reply *r);
    const char *headers;         /* header lines on every reply */
    bool ingest;                 /* requests and bytes count in the ingest counters */
} hp_endpoints;

/* POST /ingest, /_bulk, /{index}/_bulk, /v1/logs; GET and HEAD /
 * (http_route.c). Records go to ctx->cb->on_line. */
extern const hp_endpoints hp_endpoints_ingest;
/* A JSON error body: {"error":{"type":type,"reason":reason},"status":N}. */
void hp_reply_error(hp_reply *r, int status, const char *type, const char *reason);
const char *hp_status_text(int status);
/* Appends s as a JSON string (quoted, escaped). */
int hp_json_str(pq_buf *b, const char *s, size_t len);
/* Appends printf output. */
int hp_printf(pq_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
