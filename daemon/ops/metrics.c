/* metrics.c - the metrics.listen HTTP endpoint: /metrics in Prometheus
 * text format 0.0.4 and /health (see metrics.h).
 *
 * Thread: the loop thread. The body of /metrics is metrics_render.c's.
 *
 * HTTP, as little as a scraper needs and no more than a hostile client
 * can abuse. Only the request line is parsed (method, target, version);
 * headers are read and ignored up to the blank line. Bounds: 8 KiB of
 * request (431 beyond), 10 s from accept to the end of the response
 * (slow clients are closed), 64 connections at once: a new one past that
 * closes the oldest connection still waiting for its request (an idle or
 * slow client: issue 21, 64 idle connections must not blind the
 * scraper), and only when every one is answering is the new one accepted
 * and closed at once, so it does not wait in the backlog. One response
 * per connection, "Connection: close". After the response the server
 * shuts its side down and reads until the client closes (at most
 * MT_LINGER_MS): closing with unread request bytes would make the kernel
 * send a reset, and a reset can destroy the response before the client
 * read it (e.g. a 431 answered before the client finished sending). */
#include "metrics.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "health.h"

#define MT_MAX_REQUEST 8192
#define MT_MAX_CONNS 64
#define MT_TIMEOUT_MS 10000
#define MT_LINGER_MS 2000
#define MT_BACKLOG 128

#define MT_CT_PROM "text/plain; version=0.0.4; charset=utf-8"
#define MT_CT_TEXT "text/plain; charset=utf-8"

typedef enum mt_state {
    MT_READING,                  /* until the blank line after the headers */
    MT_WRITING,                  /* the response is queued */
    MT_DRAINING,                 /* our side shut down; reading until the client closes */
    MT_CLOSING
} mt_state;

typedef struct mt_conn {
    uv_tcp_t tcp;
    uv_timer_t timer;
    uv_write_t write;
    uv_shutdown_t shutdown;
    mt_server *srv;
    struct mt_conn *prev, *next;
    mt_state state;
    bool peer_eof;
    int open_handles;            /* tcp + timer until both closed */
    char head[512];              /* response status line and headers */
    char *body;                  /* malloc'd response body, or NULL */
    size_t len;
    char req[MT_MAX_REQUEST + 1];
} mt_conn;

struct mt_server {
    uv_loop_t *loop;
    uv_tcp_t listener;
    mt_conn *conns;
    size_t n_conns;
    size_t n_closing;            /* of n_conns, closing (their handles not closed yet) */
    uint64_t timeout_ms;
    bool closing, listener_closed;
};

static void maybe_free_server(mt_server *s)
{
    if (s->closing && s->listener_closed && s->conns == NULL)
        free(s);
}

static void on_conn_closed(uv_handle_t *h)
{
    mt_conn *c = h->data;
    if (--c->open_handles > 0)
        return;
    mt_server *s = c->srv;
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        s->conns = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    s->n_conns--;
    s->n_closing--;
    free(c->body);
    free(c);
    maybe_free_server(s);
}

/* Idempotent: pending write/shutdown callbacks run with UV_ECANCELED
 * while the handle closes and call it again. */
static void conn_close(mt_conn *c)
{
    if (c->state == MT_CLOSING)
        return;
    c->state = MT_CLOSING;
    c->srv->n_closing++;
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
    uv_close((uv_handle_t *)&c->timer, on_conn_closed);
}

static void on_timeout(uv_timer_t *t)
{
    conn_close(t->data);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
    mt_conn *c = req->data;
    if (status < 0 || c->peer_eof || c->state == MT_CLOSING) {
        conn_close(c);
        return;
    }
    c->state = MT_DRAINING;
    uv_timer_start(&c->timer, on_timeout, MT_LINGER_MS, 0);
}

static void on_written(uv_write_t *req, int status)
{
    mt_conn *c = req->data;
    if (status < 0 || c->state == MT_CLOSING) {
        conn_close(c);
        return;
    }
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shutdown) != 0)
        conn_close(c);
}

static const char *status_text(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Internal Server Error";
    }
}

/* Queues the response; body is malloc'd and now owned by c (NULL: none).
 * HEAD gets the headers GET would get, without the body. */
static void respond(mt_conn *c, int status, const char *ctype, const char *extra, char *body,
                    bool head)
{
    const size_t blen = body != NULL ? strlen(body) : 0;
    c->body = body;
    c->state = MT_WRITING;
    const int n = snprintf(c->head, sizeof c->head,
                           "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                           "Cache-Control: no-store\r\nConnection: close\r\n%s\r\n",
                           status, status_text(status), ctype, blen, extra);
    uv_buf_t bufs[2] = {uv_buf_init(c->head, (unsigned)n), uv_buf_init(body, (unsigned)blen)};
    c->write.data = c;
    if (uv_write(&c->write, (uv_stream_t *)&c->tcp, bufs, head || blen == 0 ? 1 : 2,
                 on_written) != 0)
        conn_close(c);
}

static void respond_text(mt_conn *c, int status, const char *extra, const char *text, bool head)
{
    char *body = strdup(text);
    if (body == NULL)
        status = 500;
    respond(c, status, MT_CT_TEXT, extra, body, head);
}

static void serve_health(mt_conn *c, bool head)
{
    char problems[2048];
    if (dm_health_get(problems, sizeof problems)) {
        respond_text(c, 200, "", "ok\n", head);
        return;
    }
    const size_t n = strlen(problems);
    char *body = malloc(n + 2);
    if (body == NULL) {
        respond_text(c, 503, "", "unhealthy\n", head);
        return;
    }
    memcpy(body, problems, n);
    memcpy(body + n, "\n", 2);
    respond(c, 503, MT_CT_TEXT, "", body, head);
}

static void serve_metrics(mt_conn *c, bool head)
{
    char *body = mt_render();
    if (body == NULL) {
        respond_text(c, 500, "", "out of memory rendering metrics\n", head);
        return;
    }
    respond(c, 200, MT_CT_PROM, "", body, head);
}

static bool is(const char *p, size_t len, const char *word)
{
    return len == strlen(word) && memcmp(p, word, len) == 0;
}

/* The path of a request target: origin form "/metrics?x" or absolute
 * form "http://host:9170/metrics" (RFC 9112 3.2), without the query.
 * Returns false for anything else ("*", garbage). */
static bool target_path(const char *t, size_t len, const char **path, size_t *plen)
{
    const char *end = t + len;
    const char *sep = memchr(t, ':', len);
    if (len > 0 && t[0] != '/') {
        if (sep == NULL || end - sep < 3 || memcmp(sep, "://", 3) != 0)
            return false;
        const char *p = memchr(sep + 3, '/', (size_t)(end - sep - 3));
        t = p != NULL ? p : "/";
        end = p != NULL ? end : t + 1;
    }
    if (t == end)
        return false;
    size_t n = 0;
    while (t + n < end && t[n] != '?' && t[n] != '#')
        n++;
    *path = t;
    *plen = n;
    return true;
}

/* Answers the request line (without its line break). */
static void route(mt_conn *c, const char *line, size_t len)
{
    const char *sp1 = memchr(line, ' ', len);
    const char *sp2 = sp1 != NULL ? memchr(sp1 + 1, ' ', len - (size_t)(sp1 + 1 - line)) : NULL;
    if (sp2 == NULL || sp1 == line || sp2 == sp1 + 1) {
        respond_text(c, 400, "", "bad request line\n", false);
        return;
    }
    const char *ver = sp2 + 1;
    const size_t vlen = len - (size_t)(ver - line);
    if (vlen != 8 || memcmp(ver, "HTTP/1.", 7) != 0 || ver[7] < '0' || ver[7] > '9') {
        const bool http = vlen >= 5 && memcmp(ver, "HTTP/", 5) == 0 && !memchr(ver, ' ', vlen);
        respond_text(c, http ? 505 : 400, "", http ? "only HTTP/1.x\n" : "bad request line\n",
                     false);
        return;
    }
    const char *path;
    size_t plen;
    if (!target_path(sp1 + 1, (size_t)(sp2 - sp1 - 1), &path, &plen)) {
        respond_text(c, 400, "", "bad request target\n", false);
        return;
    }
    const size_t mlen = (size_t)(sp1 - line);
    const bool get = is(line, mlen, "GET"), head = is(line, mlen, "HEAD");
    const bool metrics = is(path, plen, "/metrics"), health = is(path, plen, "/health");
    if (!metrics && !health)
        respond_text(c, 404, "", "not found: try /metrics or /health\n", head);
    else if (!get && !head)
        respond_text(c, 405, "Allow: GET, HEAD\r\n", "method not allowed\n", false);
    else if (metrics)
        serve_metrics(c, head);
    else
        serve_health(c, head);
}

/* Answers once the headers are complete (a blank line: CRLF CRLF, or bare
 * LFs, which RFC 9112 2.2 lets a server accept), or with 431 once 8 KiB
 * came without one. Empty lines before the request line are skipped
 * (RFC 9112 2.2). */
static void on_request_bytes(mt_conn *c)
{
    char *p = c->req, *end = c->req + c->len;
    while (p < end && (*p == '\r' || *p == '\n'))
        p++;
    for (char *nl = p; (nl = memchr(nl, '\n', (size_t)(end - nl))) != NULL; nl++) {
        const char *q = nl + 1;
        if (q < end && *q == '\r')
            q++;
        if (q < end && *q == '\n') {
            char *eol = memchr(p, '\n', (size_t)(end - p));
            size_t len = (size_t)(eol - p);
            if (len > 0 && p[len - 1] == '\r')
                len--;
            route(c, p, len);
            return;
        }
    }
    if (c->len >= MT_MAX_REQUEST)
        respond_text(c, 431, "", "request headers too large (limit 8 KiB)\n", false);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    mt_conn *c = h->data;
    if (c->state == MT_READING)
        *buf = uv_buf_init(c->req + c->len, (unsigned)(MT_MAX_REQUEST - c->len));
    else                         /* after the response: read to discard */
        *buf = uv_buf_init(c->req, MT_MAX_REQUEST);
}

static void on_read(uv_stream_t *st, ssize_t nread, const uv_buf_t *buf)
{
    (void)buf;
    mt_conn *c = st->data;
    if (nread == 0 || c->state == MT_CLOSING)
        return;
    if (nread > 0) {
        if (c->state == MT_READING) {
            c->len += (size_t)nread;
            on_request_bytes(c);
        }
        return;
    }
    if (nread != UV_EOF || c->state == MT_DRAINING || (c->state == MT_READING && c->len == 0)) {
        conn_close(c);
        return;
    }
    c->peer_eof = true;          /* half-closed: it may still read our answer */
    uv_read_stop(st);
    if (c->state == MT_READING)
        respond_text(c, 400, "", "incomplete request\n", false);
}

static void free_handle(uv_handle_t *h)
{
    free(h);
}

static void refuse(uv_stream_t *listener)
{
    /* If even this fails nothing is accepted until memory returns: libuv
     * stops polling a listener whose last connection was not taken. */
    uv_tcp_t *t = malloc(sizeof *t);
    if (t == NULL)
        return;
    uv_tcp_init(listener->loop, t);
    uv_accept(listener, (uv_stream_t *)t);
    uv_close((uv_handle_t *)t, free_handle);
}

/* Full: the oldest connection still waiting for its request makes room
 * (new connections are at the head of the list, the oldest at the tail). */
static void evict_oldest_reading(mt_server *s)
{
    mt_conn *victim = NULL;
    for (mt_conn *c = s->conns; c != NULL; c = c->next)
        if (c->state == MT_READING)
            victim = c;
    if (victim != NULL)
        conn_close(victim);
}

static void on_connection(uv_stream_t *listener, int status)
{
    mt_server *s = listener->data;
    if (status < 0 || s->closing)
        return;
    if (s->n_conns - s->n_closing >= MT_MAX_CONNS)
        evict_oldest_reading(s);
    mt_conn *c = s->n_conns - s->n_closing < MT_MAX_CONNS ? malloc(sizeof *c) : NULL;
    if (c == NULL) {
        refuse(listener);
        return;
    }
    memset(c, 0, offsetof(mt_conn, req));
    c->srv = s;
    c->state = MT_READING;
    c->open_handles = 2;
    uv_tcp_init(s->loop, &c->tcp);
    uv_timer_init(s->loop, &c->timer);
    c->tcp.data = c->timer.data = c;
    c->next = s->conns;
    if (s->conns != NULL)
        s->conns->prev = c;
    s->conns = c;
    s->n_conns++;
    if (uv_accept(listener, (uv_stream_t *)&c->tcp) != 0 ||
        uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) != 0) {
        conn_close(c);
        return;
    }
    uv_timer_start(&c->timer, on_timeout, s->timeout_ms, 0);
}

/* "127.0.0.1:9170", "[::1]:9170" for messages. */
static void addr_text(const cf_addr *a, char *buf, size_t n)
{
    const bool v6 = strchr(a->host, ':') != NULL;
    snprintf(buf, n, "%s%s%s:%u", v6 ? "[" : "", a->host, v6 ? "]" : "", (unsigned)a->port);
}

/* A listening socket for addr ("localhost" is resolved; blocking, but
 * only at startup), or -1 with err set. */
static int listen_socket(const cf_addr *addr, pq_err *err)
{
    char port[8], where[300];
    addr_text(addr, where, sizeof where);
    snprintf(port, sizeof port, "%u", (unsigned)addr->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = AI_NUMERICSERV};
    struct addrinfo *ai = NULL;
    const int g = getaddrinfo(addr->host, port, &hints, &ai);
    if (g != 0) {
        pq_err_set(err, PQ_EIO, "metrics.listen %s: %s", where, gai_strerror(g));
        return -1;
    }
    const int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    const int one = 1;
    const char *step = "socket";
    if (fd >= 0 && (step = "setsockopt", setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
                                                    sizeof one)) == 0 &&
        (step = "bind", bind(fd, ai->ai_addr, ai->ai_addrlen)) == 0 &&
        (step = "listen", listen(fd, MT_BACKLOG)) == 0) {
        freeaddrinfo(ai);
        return fd;
    }
    pq_err_set(err, PQ_EIO, "metrics.listen %s: %s: %s", where, step, strerror(errno));
    if (fd >= 0)
        close(fd);
    freeaddrinfo(ai);
    return -1;
}

static void on_listener_closed(uv_handle_t *h)
{
    mt_server *s = h->data;
    s->listener_closed = true;
    maybe_free_server(s);
}

int mt_server_new(mt_server **out, uv_loop_t *loop, const cf_addr *addr, pq_err *err)
{
    *out = NULL;
    const int fd = listen_socket(addr, err);
    if (fd < 0)
        return PQ_EIO;
    mt_server *s = calloc(1, sizeof *s);
    if (s == NULL) {
        close(fd);
        return pq_err_set(err, PQ_ENOMEM, "metrics.listen: out of memory");
    }
    s->loop = loop;
    s->timeout_ms = MT_TIMEOUT_MS;
    uv_tcp_init(loop, &s->listener);
    s->listener.data = s;
    int rc = uv_tcp_open(&s->listener, fd);
    if (rc != 0)
        close(fd);
    else
        rc = uv_listen((uv_stream_t *)&s->listener, MT_BACKLOG, on_connection);
    if (rc != 0) {
        /* the handle is initialised: it goes (and frees s) with the loop */
        s->closing = true;
        uv_close((uv_handle_t *)&s->listener, on_listener_closed);
        char where[300];
        addr_text(addr, where, sizeof where);
        return pq_err_set(err, PQ_EIO, "metrics.listen %s: %s", where, uv_strerror(rc));
    }
    *out = s;
    return 0;
}

int mt_server_port(const mt_server *s)
{
    struct sockaddr_storage ss;
    int len = sizeof ss;
    if (uv_tcp_getsockname(&s->listener, (struct sockaddr *)&ss, &len) != 0)
        return -1;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -1;
}

void mt_server_set_timeout(mt_server *s, uint64_t ms)
{
    s->timeout_ms = ms;
}

void mt_server_close(mt_server *s)
{
    if (s == NULL || s->closing)
        return;
    s->closing = true;
    uv_close((uv_handle_t *)&s->listener, on_listener_closed);
    for (mt_conn *c = s->conns; c != NULL; c = c->next)
        conn_close(c);
}
