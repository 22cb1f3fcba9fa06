/* metrics.c - the metrics.listen HTTP endpoint: /metrics in Prometheus
 * text format 0.0.4 and /health (see metrics.h).
 *
 * Thread: the loop thread (the server); mt_render reads only atomics and
 * /proc, so it may run anywhere.
 *
 * HTTP, as little as a scraper needs and no more than a hostile client
 * can abuse. Only the request line is parsed (method, target, version);
 * headers are read and ignored up to the blank line. Bounds: 8 KiB of
 * request (431 beyond), 10 s from accept to the end of the response
 * (slow clients are closed), 64 connections at once (more are accepted
 * and closed at once, so they do not wait in the backlog). One response
 * per connection, "Connection: close". After the response the server
 * shuts its side down and reads until the client closes (at most
 * MT_LINGER_MS): closing with unread request bytes would make the kernel
 * send a reset, and a reset can destroy the response before the client
 * read it (e.g. a 431 answered before the client finished sending). */
#include "metrics.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "buf.h"
#include "counters.h"
#include "health.h"

#define MT_MAX_REQUEST 8192
#define MT_MAX_CONNS 64
#define MT_TIMEOUT_MS 10000
#define MT_LINGER_MS 2000
#define MT_BACKLOG 128

#define MT_CT_PROM "text/plain; version=0.0.4; charset=utf-8"
#define MT_CT_TEXT "text/plain; charset=utf-8"

/* ========================================================================
 * /metrics: Prometheus text exposition format 0.0.4
 * ======================================================================== */

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
    {"parqd_connections_refused_total", "counter",
     "Input connections closed at once: over limits.max_connections, or a peer not allowed.",
     MT_C(connections_refused), 0},
    {"parqd_connections_idle_closed_total", "counter",
     "Input connections closed after limits.idle_timeout without data.",
     MT_C(connections_idle_closed), 0},
    {"parqd_connections_open", "gauge", "Input connections open now.", MT_C(connections_open), 0},
    {"parqd_backpressure_seconds_total", "counter",
     "Time reading from inputs was paused because the writer was behind.",
     MT_C(backpressure_us), 1},
    {"parqd_backpressure_active", "gauge", "1 while reading from inputs is paused, else 0.",
     MT_C(backpressure_active), 0},
    {"parqd_spool_bytes", "gauge", "Bytes in spool segment files.", MT_C(spool_bytes), 0},
    {"parqd_spool_records_replayed_total", "counter",
     "Records replayed from the spool after a restart.", MT_C(spool_records_replayed), 0},
    {"parqd_spool_write_errors_total", "counter", "Failed writes or syncs of the spool.",
     MT_C(spool_write_errors), 0},
    {"parqd_buffered_bytes", "gauge", "Bytes of records accepted but not yet in a Parquet file.",
     MT_C(buffered_bytes), 0},
    {"parqd_rows_written_total", "counter", "Rows written to Parquet files.",
     MT_C(rows_written), 0},
    {"parqd_row_groups_written_total", "counter", "Row groups written to Parquet files.",
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
    family(o, "parqd_records_rejected_total", "counter",
           "Records written to the dead-letter file instead of Parquet, by reason.");
    for (int r = 0; r < DM_REJECT_COUNT; r++)
        put(o, "parqd_records_rejected_total{reason=\"%s\"} %" PRIu64 "\n", mt_reject_reasons[r],
            dm_get(&dm_counters_global.records_rejected[r]));
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
        const uint64_t us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec +
                            (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
        family(o, "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.");
        put(o, "process_cpu_seconds_total %" PRIu64 ".%06" PRIu64 "\n", us / 1000000u, us % 1000000u);
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

char *mt_render(void)
{
    mt_out o = {.oom = false};
    pq_buf_init(&o.b);
    family(&o, "parqd_up", "gauge", "1 while parqd is running.");
    put(&o, "parqd_up 1\n");
    render_counters(&o);
    render_process(&o);
    if (o.oom || o.b.data == NULL) {
        pq_buf_free(&o.b);
        return NULL;
    }
    return (char *)o.b.data;     /* put() keeps it NUL-terminated */
}

/* ========================================================================
 * The HTTP server
 * ======================================================================== */

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

static void on_connection(uv_stream_t *listener, int status)
{
    mt_server *s = listener->data;
    if (status < 0 || s->closing)
        return;
    mt_conn *c = s->n_conns < MT_MAX_CONNS ? malloc(sizeof *c) : NULL;
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
