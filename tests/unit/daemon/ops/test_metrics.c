/* test_metrics.c - the metrics HTTP endpoint (daemon/ops/metrics.c, served
 * by the inputs' HTTP code) over real loopback TCP: an mt_server on an
 * ephemeral port runs its own uv loop in a thread while the test is the
 * client, with blocking sockets.
 *
 * Checked: /metrics parses as Prometheus text format 0.0.4 (every line a
 * HELP, a TYPE or a sample `name{labels} value`, HELP and TYPE once per
 * family before its samples, counters named _total) and follows
 * dm_counters_global; /health 200 "ok" then 503 with the problem; HEAD;
 * 404, 405, 400, 505; keep-alive (several scrapes on one connection);
 * 431 past the header limit; slow clients answered 408 at the header
 * timeout and idle ones closed at the idle timeout; a full server closes
 * its oldest idle connection for a scraper; scrapes move no ingest
 * counter; and that closing the server closes every handle
 * (uv_loop_close succeeds) even with clients connected. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "health.h"
#include "metrics.h"

/* ---- the server, in its own loop thread --------------------------------- */

typedef struct server {
    uv_loop_t loop;
    uv_async_t stop;
    mt_server *mt;
    pthread_t thread;
    int port;
} server;

static void on_stop(uv_async_t *a)
{
    server *s = a->data;
    mt_server_close(s->mt);
    uv_close((uv_handle_t *)a, NULL);
}

static void *loop_main(void *arg)
{
    server *s = arg;
    uv_run(&s->loop, UV_RUN_DEFAULT);
    return NULL;
}

/* timeout_ms: the header timeout, and half the idle timeout (a slowloris
 * client is answered 408 before it counts as idle); max_conns:
 * limits.max_connections. */
static server *server_start_ex(uint64_t timeout_ms, size_t max_conns)
{
    server *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(uv_loop_init(&s->loop), 0);
    cf_config cf;
    pq_err err = {0};
    assert_int_equal(cf_config_default(&cf, &err), 0);
    char host[] = "127.0.0.1";
    cf.metrics.listen = (cf_addr){.host = host, .port = 0};
    cf.limits.idle_timeout_ms = 2 * timeout_ms;
    cf.limits.max_connections = max_conns;
    assert_int_equal(mt_server_new(&s->mt, &s->loop, &cf, timeout_ms, &err), 0);
    cf.metrics.listen.host = NULL;   /* ours, not the configuration's */
    cf_config_free(&cf);
    s->port = mt_server_port(s->mt);
    assert_true(s->port > 0);
    s->stop.data = s;
    assert_int_equal(uv_async_init(&s->loop, &s->stop, on_stop), 0);
    assert_int_equal(pthread_create(&s->thread, NULL, loop_main, s), 0);
    return s;
}

static server *server_start(uint64_t timeout_ms)
{
    return server_start_ex(timeout_ms, 1024);
}

/* Closes the server; the loop ends only once every handle is closed, and
 * uv_loop_close then proves none is left. */
static void server_stop(server *s)
{
    uv_async_send(&s->stop);
    pthread_join(s->thread, NULL);
    mt_server_destroy(s->mt);
    assert_int_equal(uv_loop_close(&s->loop), 0);
    free(s);
}

static int setup(void **state)
{
    memset(&dm_counters_global, 0, sizeof dm_counters_global);
    for (int c = 0; c < DM_HEALTH_COMPONENTS; c++)
        dm_health_clear((dm_component)c);
    *state = server_start(10000);
    return 0;
}

static int teardown(void **state)
{
    server_stop(*state);
    return 0;
}

/* ---- the client ------------------------------------------------------------ */

static int client(int port)
{
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&in, sizeof in), 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return fd;
}

static void send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        assert_true(w > 0);
        p += w;
        n -= (size_t)w;
    }
}

/* Reads until the server closes; returns the bytes (malloc'd, NUL-ended).
 * A reset after the response counts as the end. */
static char *read_all(int fd, size_t *len)
{
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    for (;;) {
        const ssize_t r = recv(fd, buf + n, cap - n, 0);
        if (r == 0 || (r < 0 && errno == ECONNRESET))
            break;
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            fail_msg("recv: %s", strerror(errno));
        n += (size_t)r;
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
            assert_non_null(buf);
        }
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

typedef struct response {
    char *raw;
    int status;
    char *headers;               /* into raw: the lines after the status line */
    char *body;                  /* into raw */
    size_t body_len;
} response;

static response parse_response(char *raw, size_t len)
{
    response r = {.raw = raw};
    char *end = strstr(raw, "\r\n\r\n");
    if (end == NULL || sscanf(raw, "HTTP/1.1 %d ", &r.status) != 1)
        fail_msg("not an HTTP/1.1 response: '%.200s'", raw);
    *end = '\0';
    r.headers = strstr(raw, "\r\n") + 2;
    r.body = end + 4;
    r.body_len = len - (size_t)(r.body - raw);
    return r;
}

/* The value of header name (case-insensitive), or NULL; in a static buffer. */
static const char *header(const response *r, const char *name)
{
    static char val[256];
    const size_t nlen = strlen(name);
    for (const char *p = r->headers; p != NULL && *p != '\0';) {
        const char *eol = strstr(p, "\r\n");
        const size_t llen = eol != NULL ? (size_t)(eol - p) : strlen(p);
        if (llen > nlen && strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
            snprintf(val, sizeof val, "%.*s", (int)(llen - nlen - 2), p + nlen + 2);
            return val;
        }
        p = eol != NULL ? eol + 2 : NULL;
    }
    return NULL;
}

/* Reads one response on a keep-alive connection and not a byte more
 * (a pipelined next one stays in the socket): the headers a byte at a
 * time, then Content-Length bytes of body (none after HEAD). */
static response read_response(int fd, bool head)
{
    size_t n = 0, cap = 1 << 16, want = SIZE_MAX;
    char *buf = malloc(cap + 1);
    assert_non_null(buf);
    while (n < want) {
        const size_t ask = want == SIZE_MAX ? 1 : want - n;
        const ssize_t r = recv(fd, buf + n, ask, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            fail_msg("connection ended after %zu bytes of a response", n);
        n += (size_t)r;
        buf[n] = '\0';
        if (want == SIZE_MAX && n >= 4 && memcmp(buf + n - 4, "\r\n\r\n", 4) == 0) {
            const char *cl = strcasestr(buf, "\r\nContent-Length: ");
            want = n + (head || cl == NULL ? 0 : strtoul(cl + 18, NULL, 10));
            if (want > cap) {
                cap = want;
                buf = realloc(buf, cap + 1);
                assert_non_null(buf);
            }
        }
        assert_true(n < cap || n == want);
    }
    return parse_response(buf, n);
}

static response request(int port, const char *req, size_t req_len)
{
    const int fd = client(port);
    send_all(fd, req, req_len);
    response r = read_response(fd, strncmp(req, "HEAD ", 5) == 0);
    close(fd);
    return r;
}

static response get(int port, const char *req)
{
    return request(port, req, strlen(req));
}

/* Every response: Content-Length right, never cached. */
static void assert_framing(const response *r, bool head)
{
    const char *cl = header(r, "Content-Length");
    assert_non_null(cl);
    if (!head)
        assert_int_equal(strtoul(cl, NULL, 10), r->body_len);
    else
        assert_int_equal(r->body_len, 0);
    assert_string_equal(header(r, "Cache-Control"), "no-store");
}

/* ---- a Prometheus text format 0.0.4 checker ------------------------------- */

typedef struct family {
    char name[128];
    char type[16];
    bool help, typed;
    int samples;
} family;

static bool metric_name(const char *s, size_t n)
{
    if (n == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == ':'))
        return false;
    for (size_t i = 1; i < n; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == ':'))
            return false;
    return true;
}

static family *find_family(family *f, int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(f[i].name) == len && memcmp(f[i].name, name, len) == 0)
            return &f[i];
    return NULL;
}

/* Labels "{a=\"x\",b=\"y\"}" starting at *p; advances past '}'. */
static void check_labels(const char **p)
{
    const char *s = *p + 1;
    while (*s != '}') {
        const char *eq = strchr(s, '=');
        assert_non_null(eq);
        assert_true(metric_name(s, (size_t)(eq - s)));
        assert_int_equal(eq[1], '"');
        s = eq + 2;
        while (*s != '"') {
            assert_true(*s != '\n' && *s != '\0');
            s += *s == '\\' ? 2 : 1;
        }
        s++;
        if (*s == ',')
            s++;
        else
            assert_int_equal(*s, '}');
    }
    *p = s + 1;
}

/* Checks the whole body; returns the number of families. */
static int check_exposition(const char *body)
{
    family fam[64];
    int nf = 0;
    assert_true(strlen(body) > 0 && body[strlen(body) - 1] == '\n');
    for (const char *line = body; *line != '\0';) {
        const char *eol = strchr(line, '\n');
        const size_t len = (size_t)(eol - line);
        if (strncmp(line, "# HELP ", 7) == 0 || strncmp(line, "# TYPE ", 7) == 0) {
            const char *name = line + 7, *sp = memchr(name, ' ', (size_t)(eol - name));
            assert_non_null(sp);
            assert_true(metric_name(name, (size_t)(sp - name)));
            family *f = find_family(fam, nf, name, (size_t)(sp - name));
            if (f == NULL) {
                assert_true(nf < 64);
                f = &fam[nf++];
                memset(f, 0, sizeof *f);
                snprintf(f->name, sizeof f->name, "%.*s", (int)(sp - name), name);
            }
            assert_int_equal(f->samples, 0);                 /* before the samples */
            if (line[2] == 'H') {
                assert_false(f->help);
                f->help = true;
                assert_true(eol - sp > 1);                   /* some text */
            } else {
                assert_false(f->typed);
                f->typed = true;
                snprintf(f->type, sizeof f->type, "%.*s", (int)(eol - sp - 1), sp + 1);
                assert_true(strcmp(f->type, "counter") == 0 || strcmp(f->type, "gauge") == 0 ||
                            strcmp(f->type, "histogram") == 0);
            }
        } else {
            assert_int_not_equal(line[0], '#');
            size_t nlen = 0;
            while (line + nlen < eol && line[nlen] != '{' && line[nlen] != ' ')
                nlen++;
            if (!metric_name(line, nlen))
                fail_msg("bad sample line '%.*s'", (int)len, line);
            family *f = find_family(fam, nf, line, nlen);
            /* a histogram's samples: <name>_bucket, <name>_sum, <name>_count */
            static const char *const hsuffix[] = {"_bucket", "_sum", "_count"};
            for (int k = 0; f == NULL && k < 3; k++) {
                size_t sl = strlen(hsuffix[k]);
                if (nlen > sl && memcmp(line + nlen - sl, hsuffix[k], sl) == 0)
                    f = find_family(fam, nf, line, nlen - sl);
                if (f != NULL && strcmp(f->type, "histogram") != 0)
                    f = NULL;
            }
            if (f == NULL || !f->help || !f->typed)
                fail_msg("sample '%.*s' without HELP and TYPE first", (int)len, line);
            f->samples++;
            const char *p = line + nlen;
            if (*p == '{')
                check_labels(&p);
            assert_int_equal(*p, ' ');
            char *end;
            const double v = strtod(p + 1, &end);
            if (end != eol || isnan(v))
                fail_msg("bad value in '%.*s'", (int)len, line);
        }
        line = eol + 1;
    }
    for (int i = 0; i < nf; i++) {
        assert_true(fam[i].help && fam[i].typed);
        assert_true(fam[i].samples > 0);
        const size_t n = strlen(fam[i].name);
        const bool total = n > 6 && strcmp(fam[i].name + n - 6, "_total") == 0;
        if (total != (strcmp(fam[i].type, "counter") == 0))
            fail_msg("%s: type %s but %s _total", fam[i].name, fam[i].type,
                     total ? "named" : "not named");
        if (strncmp(fam[i].name, "process_", 8) != 0)
            assert_memory_equal(fam[i].name, "parqd_", 6);
    }
    return nf;
}

/* The value of the sample line that starts with `sample ` ("parqd_up",
 * "parqd_records_rejected_total{reason=\"schema\"}"); fails when absent. */
static double value_of(const char *body, const char *sample)
{
    const size_t n = strlen(sample);
    for (const char *line = body; *line != '\0'; line = strchr(line, '\n') + 1)
        if (strncmp(line, sample, n) == 0 && line[n] == ' ')
            return strtod(line + n + 1, NULL);
    fail_msg("no sample %s", sample);
    return NAN;
}

/* ---- tests ----------------------------------------------------------------- */

static void test_metrics_exposition_parses(void **state)
{
    server *s = *state;
    response r = get(s->port, "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n");
    assert_int_equal(r.status, 200);
    assert_string_equal(header(&r, "Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    assert_framing(&r, false);
    const int families = check_exposition(r.body);
    assert_true(families >= 25);
    assert_true(value_of(r.body, "parqd_up") == 1);
    assert_true(value_of(r.body, "process_resident_memory_bytes") > 1e5);
    assert_true(value_of(r.body, "process_cpu_seconds_total") >= 0);
    const double start = value_of(r.body, "process_start_time_seconds");
    assert_true(start > (double)time(NULL) - 3600 && start <= (double)time(NULL) + 1);
    assert_true(value_of(r.body, "process_open_fds") >= 3);
    free(r.raw);
}

static void test_metrics_follow_counters(void **state)
{
    server *s = *state;
    dm_add(&dm_counters_global.records_received, 12345);
    dm_add(&dm_counters_global.bytes_received, 1u << 20);
    dm_add(&dm_counters_global.records_rejected[DM_REJECT_TOO_LONG], 7);
    dm_add(&dm_counters_global.records_rejected[DM_REJECT_SCHEMA], 2);
    dm_add(&dm_counters_global.backpressure_us, 1500001);
    dm_set(&dm_counters_global.connections_open, 3);
    dm_add(&dm_counters_global.bytes_written, 999);
    dm_add(&dm_counters_global.files_closed[DM_CLOSE_AGE], 4);
    dm_add(&dm_counters_global.files_closed[DM_CLOSE_SHUTDOWN], 1);
    dm_add(&dm_counters_global.records_time_fallback, 6);
    response r = get(s->port, "GET /metrics HTTP/1.0\r\n\r\n");
    assert_int_equal(r.status, 200);
    check_exposition(r.body);
    assert_true(value_of(r.body, "parqd_records_received_total") == 12345);
    assert_true(value_of(r.body, "parqd_received_bytes_total") == 1 << 20);
    assert_true(value_of(r.body, "parqd_records_rejected_total{reason=\"invalid_json\"}") == 0);
    assert_true(value_of(r.body, "parqd_records_rejected_total{reason=\"too_long\"}") == 7);
    assert_true(value_of(r.body, "parqd_records_rejected_total{reason=\"schema\"}") == 2);
    assert_non_null(strstr(r.body, "\nparqd_backpressure_seconds_total 1.500001\n"));
    assert_true(value_of(r.body, "parqd_connections_open") == 3);
    assert_true(value_of(r.body, "parqd_written_bytes_total") == 999);
    assert_true(value_of(r.body, "parqd_files_closed_total{reason=\"size\"}") == 0);
    assert_true(value_of(r.body, "parqd_files_closed_total{reason=\"rows\"}") == 0);
    assert_true(value_of(r.body, "parqd_files_closed_total{reason=\"age\"}") == 4);
    assert_true(value_of(r.body, "parqd_records_time_fallback_total") == 6);
    assert_true(value_of(r.body, "parqd_files_closed_total{reason=\"shutdown\"}") == 1);
    free(r.raw);

    dm_add(&dm_counters_global.records_received, 5);
    dm_set(&dm_counters_global.connections_open, 0);
    r = get(s->port, "GET /metrics HTTP/1.1\r\n\r\n");
    assert_true(value_of(r.body, "parqd_records_received_total") == 12350);
    assert_true(value_of(r.body, "parqd_connections_open") == 0);
    free(r.raw);
}

static void test_metrics_render_without_server(void **state)
{
    (void)state;
    char *body = mt_render();
    assert_non_null(body);
    assert_memory_equal(body, "# HELP parqd_up ", 16);
    check_exposition(body);
    free(body);
}

static void test_metrics_head_has_headers_only(void **state)
{
    server *s = *state;
    response r = get(s->port, "HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_int_equal(r.status, 200);
    assert_framing(&r, true);
    assert_true(strtoul(header(&r, "Content-Length"), NULL, 10) > 1000);
    free(r.raw);
}

static void test_health_ok_then_503_with_reason(void **state)
{
    server *s = *state;
    response r = get(s->port, "GET /health HTTP/1.1\r\n\r\n");
    assert_int_equal(r.status, 200);
    assert_string_equal(r.body, "ok\n");
    assert_string_equal(header(&r, "Content-Type"), "text/plain; charset=utf-8");
    assert_framing(&r, false);
    free(r.raw);

    dm_health_set(DM_HEALTH_OUTPUT, "No space left on device writing out/x.parquet");
    r = get(s->port, "GET /health HTTP/1.1\r\n\r\n");
    assert_int_equal(r.status, 503);
    assert_string_equal(r.body, "output: No space left on device writing out/x.parquet\n");
    assert_framing(&r, false);
    free(r.raw);

    dm_health_clear(DM_HEALTH_OUTPUT);
    r = get(s->port, "GET /health?verbose=1 HTTP/1.1\r\n\r\n");
    assert_int_equal(r.status, 200);
    free(r.raw);
}

typedef struct route_case {
    const char *req;
    int status;
} route_case;

static void test_metrics_routes_and_errors(void **state)
{
    server *s = *state;
    const route_case cases[] = {
        {"GET /nope HTTP/1.1\r\n\r\n", 404},
        {"GET / HTTP/1.1\r\n\r\n", 404},
        {"GET /metricsx HTTP/1.1\r\n\r\n", 404},
        {"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 405},
        {"DELETE /health HTTP/1.1\r\n\r\n", 405},
        {"get /metrics HTTP/1.1\r\n\r\n", 400},     /* methods are case-sensitive */
        {"GET /metrics HTTP/2.0\r\n\r\n", 505},
        {"GET /metrics\r\n\r\n", 400},
        {"HELLO\r\n\r\n", 400},
        {"GET  /metrics HTTP/1.1\r\n\r\n", 200},   /* http-parser allows extra spaces */
        {"GET metrics HTTP/1.1\r\n\r\n", 400},
        {"GET /metrics FTP/1.0\r\n\r\n", 400},
        {"GET /metrics?name[]=x HTTP/1.1\r\n\r\n", 200},
        {"GET http://localhost:9170/health HTTP/1.1\r\n\r\n", 200},
        {"\r\nGET /health HTTP/1.1\r\n\r\n", 200},    /* a stray CRLF first */
        {"GET /health HTTP/1.0\n\n", 200},            /* bare LFs */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        response r = get(s->port, cases[i].req);
        if (r.status != cases[i].status)
            fail_msg("'%s': status %d, expected %d", cases[i].req, r.status, cases[i].status);
        assert_framing(&r, false);
        if (r.status == 405)
            assert_string_equal(header(&r, "Allow"), "GET, HEAD");
        free(r.raw);
    }
}

/* Headers past the limit (16 KiB, as on an http input) without the blank
 * line: 431, and the response arrives although the client was still
 * sending. */
static void test_metrics_oversized_request_431(void **state)
{
    server *s = *state;
    const size_t n = 40000;
    char *req = malloc(n);
    assert_non_null(req);
    memset(req, 'h', n);
    memcpy(req, "GET /metrics HTTP/1.1\r\nX-Junk: ", 31);
    response r = request(s->port, req, n);
    assert_int_equal(r.status, 431);
    assert_framing(&r, false);
    free(r.raw);

    /* just under the limit is fine */
    const char *head = "GET /metrics HTTP/1.1\r\nX-Pad: ";
    size_t m = 16 * 1024 - 4;
    memset(req, 'p', m);
    memcpy(req, head, strlen(head));
    memcpy(req + m, "\r\n\r\n", 4);
    r = request(s->port, req, m + 4);
    assert_int_equal(r.status, 200);
    free(r.raw);
    free(req);
}

/* A client that half-closes before the blank line: closed unanswered
 * (the request never ended). */
static void test_metrics_incomplete_request_closed(void **state)
{
    server *s = *state;
    const int fd = client(s->port);
    send_all(fd, "GET /metrics HTTP/1.1\r\n", 23);
    shutdown(fd, SHUT_WR);
    size_t len;
    char *raw = read_all(fd, &len);
    close(fd);
    assert_int_equal(len, 0);
    free(raw);
}

/* Keep-alive: scrapes one after another on one connection, pipelined
 * too, each answered in order; "Connection: close" ends it. */
static void test_metrics_keep_alive(void **state)
{
    server *s = *state;
    const int fd = client(s->port);
    for (int i = 0; i < 3; i++) {
        const char *req = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
        send_all(fd, req, strlen(req));
        response r = read_response(fd, false);
        assert_int_equal(r.status, 200);
        assert_null(header(&r, "Connection"));
        free(r.raw);
    }
    const char *two = "GET /metrics HTTP/1.1\r\n\r\nGET /health HTTP/1.1\r\n"
                      "Connection: close\r\n\r\n";
    send_all(fd, two, strlen(two));
    response r = read_response(fd, false);
    assert_int_equal(r.status, 200);
    check_exposition(r.body);
    free(r.raw);
    r = read_response(fd, false);
    assert_string_equal(r.body, "ok\n");
    assert_string_equal(header(&r, "Connection"), "close");
    free(r.raw);
    size_t len;
    char *rest = read_all(fd, &len);
    assert_int_equal(len, 0);
    free(rest);
    close(fd);
}

/* Scrapes are not ingest: no ingest counter moves (the e2e and hostile
 * scripts compare connections_accepted and connections_open). */
static void test_metrics_scrapes_move_no_ingest_counter(void **state)
{
    server *s = *state;
    for (int i = 0; i < 3; i++) {
        response r = get(s->port, "GET /metrics HTTP/1.1\r\n\r\n");
        assert_int_equal(r.status, 200);
        free(r.raw);
    }
    assert_int_equal(dm_get(&dm_counters_global.connections_accepted), 0);
    assert_int_equal(dm_get(&dm_counters_global.connections_open), 0);
    assert_int_equal(dm_get(&dm_counters_global.bytes_received), 0);
    assert_int_equal(dm_get(&dm_counters_global.http_requests[DM_HTTP_EP_OTHER][0]), 0);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Slow clients (here with a 300 ms header timeout, 600 ms idle): one that
 * sends half a request gets 408 at the header timeout, one that sends
 * nothing is closed at the idle timeout. */
static void test_metrics_slow_client_closed(void **state)
{
    (void)state;
    server *s = server_start(300);
    const int a = client(s->port), b = client(s->port);
    send_all(a, "GET /metr", 9);
    const double t0 = now_s();
    size_t len;
    char *got = read_all(a, &len);
    const double t1 = now_s();
    response r = parse_response(got, len);
    assert_int_equal(r.status, 408);
    assert_true(t1 - t0 >= 0.25 && t1 - t0 < 3.0);
    free(got);
    got = read_all(b, &len);
    assert_int_equal(len, 0);
    assert_true(now_s() - t0 < 3.0);
    free(got);
    close(a);
    close(b);
    server_stop(s);
}

#define CLOSE_HEALTH "GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"

/* With limits.max_connections 64, 64 idle connections do not blind a
 * scraper (issue 21): the 65th is served, and the oldest idle connection
 * makes room for it (the server closes it); the 63 others still work. */
static void test_metrics_connection_limit(void **state)
{
    (void)state;
    server *s = server_start_ex(10000, 64);
    int fds[64];
    for (int i = 0; i < 64; i++)
        fds[i] = client(s->port);
    /* the accept queue keeps the order: the 64 are older than each scrape */
    for (int k = 0; k < 3; k++) {  /* scrapes keep working; each evicts one idler */
        const int extra = client(s->port);
        send_all(extra, CLOSE_HEALTH, strlen(CLOSE_HEALTH));
        size_t len;
        char *raw = read_all(extra, &len);
        response r = parse_response(raw, len);
        assert_int_equal(r.status, 200);
        free(r.raw);
        close(extra);
    }
    size_t len;
    char *got = read_all(fds[0], &len);  /* the oldest was closed by the server */
    assert_int_equal(len, 0);
    free(got);
    send_all(fds[63], CLOSE_HEALTH, strlen(CLOSE_HEALTH));
    char *raw = read_all(fds[63], &len);
    response r = parse_response(raw, len);
    assert_int_equal(r.status, 200);
    free(r.raw);
    for (int i = 0; i < 64; i++)
        close(fds[i]);
    server_stop(s);
}

/* Making room skips a connection that is reading a request body: with
 * limits.max_connections 4, A (the least recently active) is in the
 * middle of a body and B is idle after a reply; a fifth connection
 * closes B, and A still gets its answer. Each step waits for a reply,
 * so the server has read what came before it (no sleeps). */
static void test_metrics_room_is_not_made_from_a_body_being_read(void **state)
{
    (void)state;
    server *s = server_start_ex(10000, 4);
    const char *health = "GET /health HTTP/1.1\r\n\r\n";
    const int a = client(s->port), b = client(s->port);
    send_all(b, health, strlen(health));
    free(read_response(b, false).raw);
    const char *part = "POST /health HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc";
    send_all(a, part, strlen(part));
    send_all(b, health, strlen(health));            /* after A's bytes: B is more recent */
    free(read_response(b, false).raw);
    const int c = client(s->port), d = client(s->port);
    send_all(d, health, strlen(health));            /* C and D accepted */
    free(read_response(d, false).raw);
    const int e = client(s->port);                  /* full: B makes room, not A */
    send_all(e, CLOSE_HEALTH, strlen(CLOSE_HEALTH));
    response r = read_response(e, false);
    assert_int_equal(r.status, 200);
    free(r.raw);
    size_t len;
    char *got = read_all(b, &len);
    assert_int_equal(len, 0);                       /* B was closed */
    free(got);
    send_all(a, "defghij", 7);                      /* A's body ends: answered */
    r = read_response(a, false);
    assert_int_equal(r.status, 405);
    free(r.raw);
    close(a), close(b), close(c), close(d), close(e);
    server_stop(s);
}

/* mt_server_close with clients connected (idle, mid-request): they see
 * the connection end, and the loop ends with no handle left (teardown's
 * uv_loop_close). */
static void test_metrics_close_with_open_connections(void **state)
{
    server *s = *state;
    const int a = client(s->port), b = client(s->port);
    send_all(b, "GET /metrics HTTP/1.1\r\nHost:", 28);
    /* make sure both are accepted before closing: a full request on a third */
    response r = get(s->port, "GET /health HTTP/1.1\r\n\r\n");
    assert_int_equal(r.status, 200);
    free(r.raw);
    server_stop(s);
    *state = NULL;
    size_t len;
    char *got = read_all(a, &len);
    assert_int_equal(len, 0);
    free(got);
    got = read_all(b, &len);
    assert_int_equal(len, 0);
    free(got);
    close(a);
    close(b);
}

static int teardown_if_running(void **state)
{
    if (*state != NULL)
        server_stop(*state);
    return 0;
}

/* mt_server_new on addr with the default configuration's limits. */
static int new_at(mt_server **mt, uv_loop_t *loop, const cf_addr *addr, pq_err *err)
{
    cf_config cf;
    assert_int_equal(cf_config_default(&cf, err), 0);
    char *keep = cf.metrics.listen.host;
    cf.metrics.listen = *addr;
    int rc = mt_server_new(mt, loop, &cf, 0, err);
    cf.metrics.listen.host = keep;
    cf_config_free(&cf);
    return rc;
}

static void test_metrics_bind_errors_name_the_address(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    pq_err err = {0};
    mt_server *mt = (mt_server *)&loop;

    /* a port someone else listens on */
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof in;
    assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof in), 0);
    assert_int_equal(listen(fd, 1), 0);
    getsockname(fd, (struct sockaddr *)&in, &sl);
    char host[] = "127.0.0.1", want[64];
    cf_addr addr = {.host = host, .port = ntohs(in.sin_port)};
    assert_int_equal(new_at(&mt, &loop, &addr, &err), PQ_EIO);
    assert_null(mt);
    snprintf(want, sizeof want, "metrics.listen 127.0.0.1:%u: Address already in use",
             (unsigned)addr.port);
    assert_string_equal(err.msg, want);
    close(fd);

    /* an address not on this machine (TEST-NET-1) */
    char far[] = "192.0.2.1";
    addr = (cf_addr){.host = far, .port = 9170};
    assert_int_equal(new_at(&mt, &loop, &addr, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "metrics.listen 192.0.2.1:9170: "));

    char v6[] = "::1";                 /* may be unavailable: only the name matters */
    addr = (cf_addr){.host = v6, .port = 0};
    if (new_at(&mt, &loop, &addr, &err) == 0) {
        assert_true(mt_server_port(mt) > 0);
        mt_server_close(mt);
        uv_run(&loop, UV_RUN_DEFAULT);
        mt_server_destroy(mt);
    } else {
        assert_memory_equal(err.msg, "metrics.listen [::1]:0: ", 24);
    }
    assert_int_equal(uv_loop_close(&loop), 0);
    mt_server_close(NULL);
}

/* localhost is resolved; the server answers there. */
static void test_metrics_listens_on_localhost_name(void **state)
{
    (void)state;
    uv_loop_t loop;
    uv_loop_init(&loop);
    pq_err err = {0};
    mt_server *mt;
    char host[] = "localhost";
    const cf_addr addr = {.host = host, .port = 0};
    assert_int_equal(new_at(&mt, &loop, &addr, &err), 0);
    assert_true(mt_server_port(mt) > 0);
    mt_server_close(mt);
    uv_run(&loop, UV_RUN_DEFAULT);
    mt_server_destroy(mt);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_metrics_exposition_parses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_follow_counters, setup, teardown),
        cmocka_unit_test(test_metrics_render_without_server),
        cmocka_unit_test_setup_teardown(test_metrics_head_has_headers_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_health_ok_then_503_with_reason, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_routes_and_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_oversized_request_431, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_incomplete_request_closed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_keep_alive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_scrapes_move_no_ingest_counter, setup,
                                        teardown),
        cmocka_unit_test(test_metrics_slow_client_closed),
        cmocka_unit_test(test_metrics_connection_limit),
        cmocka_unit_test(test_metrics_room_is_not_made_from_a_body_being_read),
        cmocka_unit_test_setup_teardown(test_metrics_close_with_open_connections, setup,
                                        teardown_if_running),
        cmocka_unit_test(test_metrics_bind_errors_name_the_address),
        cmocka_unit_test(test_metrics_listens_on_localhost_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
