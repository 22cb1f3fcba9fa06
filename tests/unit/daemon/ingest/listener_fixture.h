/* listener_fixture.h - what the ingest server's tests share
 * (test_listener_lines.c, test_listener_limits.c, test_listener_sockets.c):
 * the log replaced by a counter of warnings, a recorder for delivered
 * lines, turning the uv loop until something holds, configurations,
 * plain blocking clients, a temporary directory per test, and one TCP
 * listener on 127.0.0.1 (tcp_start / tcp_stop).
 *
 * Included by one test file per executable. Each file uses only some of
 * the helpers, so an unused one is no warning here (and only here). */
#ifndef PQ_LISTENER_FIXTURE_H
#define PQ_LISTENER_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "listener.h"
#include "log.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

/* ---- the log, replaced (weak: daemon/ops/log.c wins once it is linked) --- */

static int warnings;
static char last_warning[512];

__attribute__((weak)) void lg_log(cf_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (level == CF_LOG_WARNING) {
        warnings++;
        vsnprintf(last_warning, sizeof last_warning, fmt, ap);
    }
    va_end(ap);
}

/* ---- a recorder for delivered lines ---------------------------------- */

typedef struct got_line {
    char *src;
    char *data;
    size_t len, total;
    uint64_t lineno;
    bool oversized;
} got_line;

typedef struct sink {
    got_line *lines;
    size_t n, cap;
    size_t read_done;
    const char *fail_on;         /* on_line returns 1 for this content */
    const char *close_on;        /* on_line calls ls_server_close for this content */
    ls_server *srv;
} sink;

static int on_line(void *user, const char *source, const fr_line *l)
{
    sink *k = user;
    if (k->n == k->cap) {
        k->cap = k->cap ? k->cap * 2 : 64;
        k->lines = realloc(k->lines, k->cap * sizeof *k->lines);
        assert_non_null(k->lines);
    }
    got_line *g = &k->lines[k->n++];
    g->src = strdup(source);
    g->data = malloc(l->len + 1);
    assert_non_null(g->data);
    memcpy(g->data, l->data, l->len);
    g->data[l->len] = '\0';
    g->len = l->len;
    g->total = l->total;
    g->lineno = l->lineno;
    g->oversized = l->oversized;
    if (k->close_on != NULL && strcmp(g->data, k->close_on) == 0)
        ls_server_close(k->srv);
    return k->fail_on != NULL && strcmp(g->data, k->fail_on) == 0;
}

static void on_read_done(void *user)
{
    ((sink *)user)->read_done++;
}

static void sink_free(sink *k)
{
    for (size_t i = 0; i < k->n; i++) {
        free(k->lines[i].src);
        free(k->lines[i].data);
    }
    free(k->lines);
    memset(k, 0, sizeof *k);
}

/* ---- loop and time ----------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

typedef bool (*pred_fn)(void *ctx);

/* Turns the loop until pred holds; false after timeout_ms. */
static bool run_until(uv_loop_t *loop, pred_fn pred, void *ctx, uint64_t timeout_ms)
{
    uint64_t end = now_ms() + timeout_ms;
    for (;;) {
        uv_run(loop, UV_RUN_NOWAIT);
        if (pred(ctx))
            return true;
        if (now_ms() > end)
            return false;
        usleep(500);
    }
}

static bool never(void *ctx)
{
    (void)ctx;
    return false;
}

static void run_for(uv_loop_t *loop, uint64_t ms)
{
    run_until(loop, never, NULL, ms);
}

typedef struct want_lines {
    sink *k;
    size_t n;
} want_lines;

static bool has_lines(void *ctx)
{
    want_lines *w = ctx;
    return w->k->n >= w->n;
}

static void wait_lines(uv_loop_t *loop, sink *k, size_t n)
{
    want_lines w = {k, n};
    assert_true(run_until(loop, has_lines, &w, 5000));
}

typedef struct want_count {
    _Atomic uint64_t *c;
    uint64_t n;
} want_count;

static bool has_count(void *ctx)
{
    want_count *w = ctx;
    return dm_get(w->c) >= w->n;
}

static void wait_count(uv_loop_t *loop, _Atomic uint64_t *c, uint64_t n)
{
    want_count w = {c, n};
    assert_true(run_until(loop, has_count, &w, 5000));
}

typedef struct want_conns {
    ls_server *s;
    size_t n;
} want_conns;

static bool has_conns(void *ctx)
{
    want_conns *w = ctx;
    return ls_server_connections(w->s) == w->n;
}

static bool wait_conns(uv_loop_t *loop, ls_server *s, size_t n, uint64_t timeout_ms)
{
    want_conns w = {s, n};
    return run_until(loop, has_conns, &w, timeout_ms);
}

static bool is_closed(void *ctx)
{
    return ls_server_closed(ctx);
}

/* Shuts the server down as the daemon will, and checks nothing is left
 * on the loop. */
static void shutdown_server(uv_loop_t *loop, ls_server *s)
{
    ls_server_stop_accepting(s);
    ls_server_close(s);
    assert_true(run_until(loop, is_closed, s, 5000));
    ls_server_destroy(s);
    uv_run(loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(loop), 0);
}

/* ---- configuration ----------------------------------------------------- */

static void cfg_init(cf_config *cf, cf_input *ins, size_t n)
{
    memset(cf, 0, sizeof *cf);
    cf->inputs = ins;
    cf->n_inputs = n;
    cf->limits.max_line_bytes = 1 << 20;
    cf->limits.max_connections = 1024;
    cf->limits.max_buffered_bytes = 512u << 20;
    cf->limits.idle_timeout_ms = 0;
}

static cf_input tcp_in(const char *host, uint16_t port)
{
    return (cf_input){.type = CF_INPUT_TCP, .listen = {.host = (char *)host, .port = port},
                      .mode = -1};
}

static cf_input unix_in(const char *path, int mode)
{
    return (cf_input){.type = CF_INPUT_UNIX, .path = (char *)path, .mode = mode};
}

static ls_callbacks callbacks(sink *k)
{
    return (ls_callbacks){.user = k, .on_line = on_line, .on_read_done = on_read_done};
}

static ls_server *server_new(uv_loop_t *loop, const cf_config *cf, sink *k)
{
    ls_callbacks cb = callbacks(k);
    ls_server *s = NULL;
    pq_err err = {0};
    int rc = ls_server_new(&s, loop, cf, NULL, 0, &cb, &err);
    if (rc != 0)
        fail_msg("ls_server_new: %s", err.msg);
    k->srv = s;
    return s;
}

/* ---- clients ------------------------------------------------------------ */

static int tcp_client(const char *host, int port)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    char ps[8];
    snprintf(ps, sizeof ps, "%d", port);
    assert_int_equal(getaddrinfo(host, ps, &hints, &res), 0);
    int fd = -1;
    for (struct addrinfo *ai = res; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    assert_true(fd >= 0);
    return fd;
}

static int unix_client(const char *path)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if (len >= sizeof sun.sun_path)
        fail_msg("connect %s: longer than a Unix socket path may be", path);
    memcpy(sun.sun_path, path, len + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    if (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0)
        fail_msg("connect %s: %s", path, strerror(errno));
    return fd;
}

static void send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        assert_true(w > 0);
        c += w;
        n -= (size_t)w;
    }
}

static void send_str(int fd, const char *s)
{
    send_all(fd, s, strlen(s));
}

/* The server closed this client's connection (EOF or reset). */
static bool peer_closed(int fd)
{
    char c;
    ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return r == 0 || (r < 0 && (errno == ECONNRESET || errno == EPIPE));
}

static bool peer_closed_pred(void *ctx)
{
    return peer_closed(*(int *)ctx);
}

static int local_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&ss, &len), 0);
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
}

/* A listening socket made the way systemd makes one. */
static int listening_tcp(const char *ip, int *port)
{
    struct sockaddr_in in = {.sin_family = AF_INET};
    inet_pton(AF_INET, ip, &in.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    assert_int_equal(bind(fd, (struct sockaddr *)&in, sizeof in), 0);
    assert_int_equal(listen(fd, 16), 0);
    *port = local_port(fd);
    return fd;
}

static int unix_socket_at(const char *path, bool do_listen)
{
    struct sockaddr_un sun = {.sun_family = AF_UNIX};
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
    if (do_listen)
        assert_int_equal(listen(fd, 16), 0);
    return fd;
}

/* ---- fixture: counters, log, a temporary directory ---------------------- */

static char tmpdir[64];

static int setup(void **state)
{
    (void)state;
    memset(&dm_counters_global, 0, sizeof dm_counters_global);
    warnings = 0;
    last_warning[0] = '\0';
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_listener.XXXXXX");
    return mkdtemp(tmpdir) == NULL ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static void tmp_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/%s", tmpdir, name);
}


static size_t rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    assert_non_null(f);
    assert_int_equal(fscanf(f, "%ld %ld", &pages, &resident), 2);
    fclose(f);
    return (size_t)resident * (size_t)sysconf(_SC_PAGESIZE);
}

/* ---- one TCP listener on 127.0.0.1, a port of its own --------------------- */

typedef struct tcp_fixture {
    uv_loop_t loop;
    cf_input in;
    cf_config cf;
    sink k;
    ls_server *s;
    int port;
} tcp_fixture;

static void tcp_start(tcp_fixture *f, void (*tweak)(cf_config *))
{
    memset(f, 0, sizeof *f);
    f->in = tcp_in("127.0.0.1", 0);
    cfg_init(&f->cf, &f->in, 1);
    if (tweak != NULL)
        tweak(&f->cf);
    uv_loop_init(&f->loop);
    f->s = server_new(&f->loop, &f->cf, &f->k);
    f->port = ls_server_bound_port(f->s, 0);
    assert_true(f->port > 0);
}

static void tcp_stop(tcp_fixture *f)
{
    shutdown_server(&f->loop, f->s);
    sink_free(&f->k);
}

#pragma GCC diagnostic pop

#endif
