/* http_conn.h - one HTTP/1.1 connection's requests and replies, without a
 * socket (the loop's glue is conn_http.c; the fuzzer drives this alone):
 * bytes in, records out to the listener's callbacks (listener_cb.h),
 * replies out through hp_io in request order, each sent only once the
 * spool holds the records it acknowledges (README.md "Inputs over HTTP").
 *
 *     hp_conn *h = hp_conn_new(&lim, source, cb, auth, &io);
 *     hp_conn_feed(h, buf, n);       every read: 0, or -1 to close at once
 *     hp_conn_durable(h, seq);       the spool holds every record < seq
 *     hp_conn_timeout(h);            headers took too long: 408, close
 *     hp_conn_free(h);
 *
 * Framing is http-parser's (keep-alive, pipelining, Content-Length and
 * chunked bodies); on top of it: Content-Encoding gzip inflated with the
 * body limit applied to the inflated size (413), header bytes and count
 * limits (431), both Content-Length and Transfer-Encoding or two lengths
 * (400, close: request smuggling), credentials (401), backpressure (429
 * with Retry-After). Every refusal that leaves the request's body unread
 * closes the connection after its reply.
 *
 * Memory: the parser and this struct (~1 KiB) while idle; the body of
 * the request being read (at most max_body_bytes, inflated) and the
 * queued replies (at most HP_MAX_QUEUED before reading stops).
 *
 * Thread: the loop thread (one connection is never shared). */
#ifndef PQ_HTTP_CONN_H
#define PQ_HTTP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_auth.h"
#include "http_reply.h"
#include "listener_cb.h"

/* Defaults of an http input's max_header_bytes, max_headers and
 * header_timeout (README.md "Inputs over HTTP"); metrics.listen uses them. */
#define HP_MAX_HEADER_BYTES (16 * 1024)  /* request line and headers */
#define HP_MAX_HEADERS 100
#define HP_HEADER_TIMEOUT_MS 10000       /* first byte to the end of the headers */
#define HP_MAX_QUEUED 64                 /* replies waiting before reading stops */

/* Request bodies held at once by all the connections sharing it (one per
 * server): a request whose body would pass cap is answered 429, so a
 * thousand clients each sending max_body_bytes cannot exhaust memory. */
typedef struct hp_budget {
    size_t used, cap;
} hp_budget;

typedef struct hp_limits {
    uint64_t max_body_bytes;
    size_t max_line_bytes;
    size_t max_header_bytes;     /* 0: HP_MAX_HEADER_BYTES (431 beyond) */
    size_t max_headers;          /* 0: HP_MAX_HEADERS (431 beyond) */
    hp_budget *bodies;           /* kept, not copied; NULL: no shared bound */
    const hp_endpoints *ep;      /* kept; NULL: hp_endpoints_ingest */
} hp_limits;

/* An http listener's settings: its input's max_body_bytes, header limits
 * and header_timeout (0: the defaults above), and what its requests are
 * for. The listener keeps them (listener.h); each connection takes its
 * hp_limits from them. */
typedef struct hp_settings {
    uint64_t max_body_bytes;
    size_t max_header_bytes, max_headers;
    uint64_t header_timeout_ms;
    const hp_endpoints *ep;
} hp_settings;

/* What the connection does on its socket. */
typedef struct hp_io {
    void *user;
    /* 0, or non-zero when the peer cannot take it (the connection then
     * closes). */
    int (*write)(void *user, const char *data, size_t len);
    void (*end)(void *user);                 /* close once the writes are sent */
    void (*hold)(void *user, bool held);     /* stop / start reading */
    void (*wait)(void *user, bool waiting);  /* replies wait for the spool */
} hp_io;

typedef struct hp_conn hp_conn;

/* NULL when memory ran out. source, cb and auth must outlive the
 * connection; *auth is read at every request (NULL: no credentials), so a
 * reload that swaps it applies to open connections' next requests. */
hp_conn *hp_conn_new(const hp_limits *lim, const char *source, const ls_callbacks *cb,
                     const hp_auth *const *auth, const hp_io *io);
void hp_conn_free(hp_conn *h);
/* 0, or -1: close now (the peer does not read its replies, no memory). */
int hp_conn_feed(hp_conn *h, const char *data, size_t len);
void hp_conn_durable(hp_conn *h, uint64_t durable);
/* Whether a request has begun whose headers have not all arrived. */
bool hp_conn_in_headers(const hp_conn *h);
void hp_conn_timeout(hp_conn *h);
/* Whether a request's body is being read or a reply is still queued: the
 * connection is in use, not idle between requests. */
bool hp_conn_busy(const hp_conn *h);

#endif
