/* http_conn.c - one HTTP/1.1 connection (http_conn.h): http-parser's
 * callbacks gather a request (path, the headers that matter, the body,
 * inflated when gzip), check it against the limits, hand it to the
 * endpoints (http_route.c) and queue the reply; replies go out in request
 * order, each once the spool is durable up to the records it accepted.
 *
 * Thread: the loop thread. */
#include "http_conn.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <http_parser.h>
#include <zlib.h>

#include "counters.h"
#include "http_reply.h"

#define HP_URL_MAX 2048
#define HP_NAME_MAX 32
#define HP_AUTHZ_MAX 4096

typedef enum hp_hdr { H_NONE, H_CT, H_CE, H_AUTHZ, H_EXPECT, H_CL, H_TE } hp_hdr;

typedef struct hp_queued {
    struct hp_queued *next;
    uint64_t need;               /* sent once durable >= need */
    uint64_t t0_us;              /* when it was queued (need > 0: ack latency) */
    bool close;
    size_t len;
    char data[];
} hp_queued;

struct hp_conn {
    http_parser p;
    http_parser_settings settings;
    hp_limits lim;
    hp_route_ctx route;
    const hp_auth *const *auth;  /* the listener's: a reload swaps *auth */
    hp_io io;
    /* the request being read */
    bool in_msg, in_headers_done;
    size_t hdr_bytes, n_hdrs;
    char url[HP_URL_MAX + 1];
    size_t url_len;
    char name[HP_NAME_MAX + 1];
    size_t name_len;
    bool in_value;
    hp_hdr cur;
    char ct[64], ce[32], expect[32];
    size_t ct_len, ce_len, expect_len;
    char authz[HP_AUTHZ_MAX];
    size_t authz_len;
    bool has_authz, cl_seen, te_seen, too_big;
    z_stream *z;                 /* gzip body */
    pq_buf body;
    size_t charged;              /* body bytes counted in lim.bodies */
    uint64_t delivered;          /* records this feed: on_read_done */
    /* replies */
    hp_queued *qhead, *qtail;
    size_t nq;
    uint64_t durable;
    bool stop;                   /* the connection ends: parse nothing more */
    bool failed;                 /* a write failed: close now */
};

static hp_conn *of(http_parser *p) { return p->data; }

/* The ingest counters count ingest endpoints only (a scrape is not
 * traffic: the metrics port must not move them). */
static void count(const hp_conn *h, _Atomic uint64_t *c, uint64_t n)
{
    if (h->lim.ep->ingest)
        dm_add(c, n);
}

/* ---- replies ---------------------------------------------------------- */

static uint64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void count_ack(const hp_conn *h, uint64_t us)
{
    if (!h->lim.ep->ingest)
        return;
    static const uint64_t bounds[] = DM_HTTP_ACK_BUCKETS_US;
    size_t i = 0;
    while (i < sizeof bounds / sizeof bounds[0] && us > bounds[i])
        i++;
    dm_add(&dm_counters_global.http_ack_us_bucket[i], 1);
    dm_add(&dm_counters_global.http_ack_us_sum, us);
    dm_add(&dm_counters_global.http_ack_count, 1);
}

static dm_http_ep endpoint_of(const char *url, size_t len)
{
    if (len >= 7 && memcmp(url, "/ingest", 7) == 0)
        return DM_HTTP_EP_INGEST;
    if (len >= 8 && memcmp(url, "/v1/logs", 8) == 0)
        return DM_HTTP_EP_OTLP;
    if (len == 1 || (len > 1 && url[1] == '?'))
        return DM_HTTP_EP_ROOT;
    const char *q = memchr(url, '?', len);
    size_t n = q ? (size_t)(q - url) : len;
    return n >= 6 && memcmp(url + n - 6, "/_bulk", 6) == 0 ? DM_HTTP_EP_BULK : DM_HTTP_EP_OTHER;
}

static void count_request(const hp_conn *h, int status)
{
    static const int statuses[] = DM_HTTP_STATUSES;
    size_t i = 0;
    while (i < sizeof statuses / sizeof statuses[0] && statuses[i] != status)
        i++;
    count(h, &dm_counters_global.http_requests[endpoint_of(h->url, h->url_len)][i], 1);
}

static void flush_queue(hp_conn *h)
{
    while (h->qhead != NULL && h->qhead->need <= h->durable && !h->failed) {
        hp_queued *q = h->qhead;
        h->qhead = q->next;
        if (h->qhead == NULL)
            h->qtail = NULL;
        h->nq--;
        if (q->need > 0)
            count_ack(h, mono_us() - q->t0_us);
        if (h->io.write(h->io.user, q->data, q->len) != 0)
            h->failed = true;
        bool close = q->close;
        free(q);
        if (close) {
            h->io.end(h->io.user);
            break;
        }
    }
    if (h->qhead == NULL || h->qhead->need <= h->durable)
        h->io.wait(h->io.user, false);
    if (h->nq < HP_MAX_QUEUED / 2)
        h->io.hold(h->io.user, false);
}

/* Queues the reply: status line, headers, body. */
static void queue_reply(hp_conn *h, hp_reply *r, uint64_t need, bool close)
{
    char head[512];
    int n = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                     "%s%s%s%s%s\r\n",
                     r->status, hp_status_text(r->status),
                     r->content_type ? r->content_type : "application/json", r->body.len,
                     h->lim.ep->headers ? h->lim.ep->headers : "",
                     r->headers ? r->headers : "", close ? "Connection: close\r\n" : "",
                     r->status == 429 ? "Retry-After: 1\r\n" : "",
                     r->status == 401 ? "WWW-Authenticate: Bearer, Basic realm=\"parqd\"\r\n"
                                      : "");
    size_t blen = r->head ? 0 : r->body.len;
    /* the head is our own text: an endpoint's headers that do not fit are a bug */
    hp_queued *q = n > 0 && (size_t)n < sizeof head ? malloc(sizeof *q + (size_t)n + blen) : NULL;
    if (q == NULL) {
        h->failed = true;
        return;
    }
    memcpy(q->data, head, (size_t)n);
    if (blen > 0)
        memcpy(q->data + n, r->body.data, blen);
    q->len = (size_t)n + blen;
    q->need = need;
    q->t0_us = need > 0 ? mono_us() : 0;
    q->close = close;
    q->next = NULL;
    if (h->qtail != NULL)
        h->qtail->next = q;
    else
        h->qhead = q;
    h->qtail = q;
    h->nq++;
    count_request(h, r->status);
    count(h, &dm_counters_global.http_records, r->records);
    if (need > h->durable) {
        h->io.wait(h->io.user, true);
        if (h->route.cb->want_durable != NULL)
            h->route.cb->want_durable(h->route.cb->user);
    }
    flush_queue(h);
    if (h->nq >= HP_MAX_QUEUED)
        h->io.hold(h->io.user, true);
}

static void release_body(hp_conn *h)
{
    if (h->lim.bodies != NULL)
        h->lim.bodies->used -= h->charged;
    h->charged = 0;
}

/* A refusal: the reply, then the connection ends (the rest of what the
 * peer sent is never parsed). */
static int refuse(hp_conn *h, int status, const char *type, const char *reason)
{
    hp_reply r = {.status = status};
    pq_buf_init(&r.body);
    hp_reply_error(&r, status, type, reason);
    queue_reply(h, &r, 0, true);
    pq_buf_free(&r.body);
    release_body(h);             /* what was read of it is dropped now */
    pq_buf_reset(&h->body);
    h->stop = true;
    return 1;                    /* stops http_parser_execute */
}

/* ---- request parsing ------------------------------------------------ */

static void reset_request(hp_conn *h)
{
    release_body(h);
    h->in_msg = h->in_headers_done = false;
    h->hdr_bytes = h->n_hdrs = h->url_len = h->name_len = 0;
    h->in_value = false;
    h->cur = H_NONE;
    h->ct_len = h->ce_len = h->expect_len = h->authz_len = 0;
    h->ct[0] = h->ce[0] = h->expect[0] = h->authz[0] = '\0';
    h->has_authz = h->cl_seen = h->te_seen = h->too_big = false;
    if (h->z != NULL) {
        inflateEnd(h->z);
        free(h->z);
        h->z = NULL;
    }
    pq_buf_reset(&h->body);
    if (h->body.cap > (1u << 20)) {  /* a big body's buffer goes back */
        pq_buf_free(&h->body);
        pq_buf_init(&h->body);
    }
}

static int on_message_begin(http_parser *p)
{
    hp_conn *h = of(p);
    reset_request(h);
    h->in_msg = true;
    return 0;
}

static int count_header_bytes(hp_conn *h, size_t n)
{
    h->hdr_bytes += n;
    if (h->hdr_bytes > h->lim.max_header_bytes) {
        char why[96];
        snprintf(why, sizeof why, "request line and headers exceed max_header_bytes (%zu)",
                 h->lim.max_header_bytes);
        return refuse(h, 431, "request_header_fields_too_large", why);
    }
    return 0;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
    hp_conn *h = of(p);
    if (count_header_bytes(h, n) != 0)
        return 1;
    size_t room = HP_URL_MAX - h->url_len;
    size_t k = n < room ? n : room;
    memcpy(h->url + h->url_len, at, k);
    h->url_len += k;
    return 0;
}

static hp_hdr which(const char *name, size_t len)
{
    static const struct { const char *n; hp_hdr h; } known[] = {
        {"content-type", H_CT}, {"content-encoding", H_CE}, {"authorization", H_AUTHZ},
        {"expect", H_EXPECT}, {"content-length", H_CL}, {"transfer-encoding", H_TE},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strlen(known[i].n) == len && strncasecmp(known[i].n, name, len) == 0)
            return known[i].h;
    return H_NONE;
}

static int on_header_field(http_parser *p, const char *at, size_t n)
{
    hp_conn *h = of(p);
    if (count_header_bytes(h, n) != 0)
        return 1;
    if (h->in_value || h->n_hdrs == 0) {
        if (++h->n_hdrs > h->lim.max_headers) {
            char why[80];
            snprintf(why, sizeof why, "more than max_headers (%zu) headers", h->lim.max_headers);
            return refuse(h, 431, "request_header_fields_too_large", why);
        }
        h->name_len = 0;
        h->in_value = false;
    }
    size_t room = HP_NAME_MAX - h->name_len, k = n < room ? n : room;
    memcpy(h->name + h->name_len, at, k);
    h->name_len += k;
    return 0;
}

static void keep(char *dst, size_t cap, size_t *len, const char *at, size_t n)
{
    size_t k = n < cap - 1 - *len ? n : cap - 1 - *len;
    memcpy(dst + *len, at, k);
    *len += k;
    dst[*len] = '\0';
}

static int on_header_value(http_parser *p, const char *at, size_t n)
{
    hp_conn *h = of(p);
    if (count_header_bytes(h, n) != 0)
        return 1;
    if (!h->in_value) {
        h->in_value = true;
        h->cur = which(h->name, h->name_len);
        h->cl_seen |= h->cur == H_CL;
        h->te_seen |= h->cur == H_TE;
        h->has_authz |= h->cur == H_AUTHZ;
    }
    switch (h->cur) {
    case H_CT: keep(h->ct, sizeof h->ct, &h->ct_len, at, n); break;
    case H_CE: keep(h->ce, sizeof h->ce, &h->ce_len, at, n); break;
    case H_EXPECT: keep(h->expect, sizeof h->expect, &h->expect_len, at, n); break;
    case H_AUTHZ: keep(h->authz, sizeof h->authz, &h->authz_len, at, n); break;
    default: break;
    }
    return 0;
}

static bool is_post(const http_parser *p) { return p->method == HTTP_POST || p->method == HTTP_PUT; }

/* Everything decided before the body: smuggling, auth, size, gzip,
 * backpressure. 0: read the body; 1: refused (the parser stops). */
static int check_headers(hp_conn *h)
{
    http_parser *p = &h->p;
    if (p->http_major != 1)      /* 0: a request line without a version (HTTP/0.9) */
        return refuse(h, p->http_major == 0 ? 400 : 505, "illegal_argument_exception",
                      "only HTTP/1.x");
    if (h->cl_seen && (h->te_seen || (p->flags & F_CHUNKED)))
        return refuse(h, 400, "illegal_argument_exception",
                      "both Content-Length and Transfer-Encoding");
    const hp_auth *auth = h->auth != NULL ? *h->auth : NULL;
    if (!hp_auth_check(auth, h->has_authz ? h->authz : NULL, h->authz_len))
        return refuse(h, 401, "security_exception", "missing or wrong credentials");
    if (h->cl_seen && p->content_length > h->lim.max_body_bytes)
        return refuse(h, 413, "content_too_long", "body exceeds max_body_bytes");
    if (h->ce_len > 0 && strcasecmp(h->ce, "identity") != 0) {
        if (strcasecmp(h->ce, "gzip") != 0 && strcasecmp(h->ce, "x-gzip") != 0)
            return refuse(h, 415, "illegal_argument_exception",
                          "Content-Encoding other than gzip");
        h->z = calloc(1, sizeof *h->z);
        if (h->z == NULL || inflateInit2(h->z, 16 + MAX_WBITS) != Z_OK) {
            free(h->z);
            h->z = NULL;
            return refuse(h, 500, "internal_error", "out of memory");
        }
    }
    const ls_callbacks *cb = h->route.cb;
    if (is_post(p) && cb->busy != NULL && cb->busy(cb->user))
        return refuse(h, 429, "es_rejected_execution_exception",
                      "parqd is behind: retry later");
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    hp_conn *h = of(p);
    h->in_headers_done = true;
    if (check_headers(h) != 0)
        return -1;               /* -1 stops the parser too (2.9: F_SKIPBODY is 1) */
    if (h->expect_len > 0 && strcasecmp(h->expect, "100-continue") == 0 && h->nq == 0 &&
        h->io.write(h->io.user, "HTTP/1.1 100 Continue\r\n\r\n", 25) != 0)
        h->failed = true;
    return 0;
}

static int body_add(hp_conn *h, const char *at, size_t n)
{
    hp_budget *b = h->lim.bodies;
    if (h->body.len + n > h->lim.max_body_bytes)
        return refuse(h, 413, "content_too_long", h->z ? "inflated body exceeds max_body_bytes"
                                                      : "body exceeds max_body_bytes");
    if (b != NULL && b->used + n > b->cap)
        return refuse(h, 429, "es_rejected_execution_exception",
                      "too many request bodies in flight: retry later");
    if (b != NULL)
        b->used += n;
    h->charged += n;
    if (pq_buf_append(&h->body, at, n) != 0)
        return refuse(h, 500, "internal_error", "out of memory");
    return 0;
}

static int inflate_body(hp_conn *h, const char *at, size_t n)
{
    char out[16384];
    h->z->next_in = (Bytef *)at;
    h->z->avail_in = (uInt)n;
    while (h->z->avail_in > 0) {
        h->z->next_out = (Bytef *)out;
        h->z->avail_out = sizeof out;
        int zr = inflate(h->z, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && h->z->avail_out > 0))
            return refuse(h, 400, "parse_exception", "body is not valid gzip");
        if (body_add(h, out, sizeof out - h->z->avail_out) != 0)
            return 1;
        if (zr == Z_STREAM_END) {   /* concatenated members, as gzip(1) reads them */
            if (h->z->avail_in == 0)
                break;
            inflateReset(h->z);
        }
    }
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    hp_conn *h = of(p);
    count(h, &dm_counters_global.http_body_bytes, n);
    return h->z != NULL ? inflate_body(h, at, n) : body_add(h, at, n);
}

static hp_method method_of(const http_parser *p)
{
    switch (p->method) {
    case HTTP_GET: return HP_GET;
    case HTTP_HEAD: return HP_HEAD;
    case HTTP_POST: case HTTP_PUT: return HP_POST;
    default: return HP_OTHER;
    }
}

/* The path of an absolute-form target ("http://host:9200/_bulk", which
 * RFC 9112 3.2.2 has servers accept) is "/_bulk"; "http://host" is "/". */
static const char *origin_path(const char *url)
{
    if (url[0] == '/')
        return url;
    const char *sep = strstr(url, "://");
    if (sep == NULL)
        return url;              /* "*" and the like: no endpoint has it */
    const char *slash = strchr(sep + 3, '/');
    return slash != NULL ? slash : "/";
}

static int on_message_complete(http_parser *p)
{
    hp_conn *h = of(p);
    h->url[h->url_len] = '\0';
    char *q = strchr(h->url, '?');
    if (q != NULL)
        *q = '\0';
    hp_request rq = {.method = method_of(p), .path = origin_path(h->url),
                     .body = h->body.data ? (const char *)h->body.data : "",
                     .body_len = h->body.len,
                     .json_ct = h->ct_len >= 16 && strncasecmp(h->ct, "application/json", 16) == 0,
                     .protobuf_ct = strstr(h->ct, "protobuf") != NULL};
    hp_reply r = {.status = 200};
    pq_buf_init(&r.body);
    uint64_t before = h->route.cb->next_seq ? h->route.cb->next_seq(h->route.cb->user) : 0;
    h->lim.ep->route(&h->route, &rq, &r);
    uint64_t after = h->route.cb->next_seq ? h->route.cb->next_seq(h->route.cb->user) : 0;
    h->delivered += r.records;
    count(h, &dm_counters_global.records_received, r.records);
    bool close = r.fail != 0 || !http_should_keep_alive(p);
    queue_reply(h, &r, after > before ? after : 0, close);
    pq_buf_free(&r.body);
    h->in_msg = false;
    reset_request(h);
    if (close) {
        h->stop = true;
        return 1;
    }
    return 0;
}

/* ---- the connection ------------------------------------------------- */

hp_conn *hp_conn_new(const hp_limits *lim, const char *source, const ls_callbacks *cb,
                     const hp_auth *const *auth, const hp_io *io)
{
    hp_conn *h = calloc(1, sizeof *h);
    if (h == NULL)
        return NULL;
    http_parser_init(&h->p, HTTP_REQUEST);
    h->p.data = h;
    h->settings = (http_parser_settings){
        .on_message_begin = on_message_begin, .on_url = on_url,
        .on_header_field = on_header_field, .on_header_value = on_header_value,
        .on_headers_complete = on_headers_complete, .on_body = on_body,
        .on_message_complete = on_message_complete,
    };
    h->lim = *lim;
    if (h->lim.max_header_bytes == 0)
        h->lim.max_header_bytes = HP_MAX_HEADER_BYTES;
    if (h->lim.max_headers == 0)
        h->lim.max_headers = HP_MAX_HEADERS;
    if (h->lim.ep == NULL)
        h->lim.ep = &hp_endpoints_ingest;
    h->route = (hp_route_ctx){.source = source, .cb = cb, .max_line_bytes = lim->max_line_bytes};
    h->auth = auth;
    h->io = *io;
    pq_buf_init(&h->body);
    return h;
}

void hp_conn_free(hp_conn *h)
{
    if (h == NULL)
        return;
    reset_request(h);
    pq_buf_free(&h->body);
    while (h->qhead != NULL) {
        hp_queued *q = h->qhead;
        h->qhead = q->next;
        free(q);
    }
    free(h);
}

static void parse_error(hp_conn *h)
{
    enum http_errno e = HTTP_PARSER_ERRNO(&h->p);
    char why[160];
    snprintf(why, sizeof why, "malformed request: %s", http_errno_description(e));
    int status = e == HPE_HEADER_OVERFLOW ? 431 : 400;
    refuse(h, status, status == 431 ? "request_header_fields_too_large" : "parse_exception", why);
}

int hp_conn_feed(hp_conn *h, const char *data, size_t len)
{
    h->delivered = 0;
    count(h, &dm_counters_global.bytes_received, len);
    if (!h->stop && len > 0) {
        size_t n = http_parser_execute(&h->p, &h->settings, data, len);
        if (!h->stop && (n != len || HTTP_PARSER_ERRNO(&h->p) != HPE_OK))
            parse_error(h);
    }
    if (h->delivered > 0 && h->route.cb->on_read_done != NULL)
        h->route.cb->on_read_done(h->route.cb->user);
    return h->failed ? -1 : 0;
}

void hp_conn_durable(hp_conn *h, uint64_t durable)
{
    if (durable > h->durable)
        h->durable = durable;
    flush_queue(h);
}

bool hp_conn_in_headers(const hp_conn *h)
{
    return h->in_msg && !h->in_headers_done && !h->stop;
}

void hp_conn_timeout(hp_conn *h)
{
    if (!hp_conn_in_headers(h))
        return;
    refuse(h, 408, "timeout_exception", "request headers took too long");
}

bool hp_conn_busy(const hp_conn *h)
{
    return (h->in_msg && h->in_headers_done && !h->stop) || h->nq > 0;
}
