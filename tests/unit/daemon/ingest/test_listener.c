/* test_listener.c - the ingest server (daemon/ingest/listener.c, connection.c,
 * lsock.c) over real sockets: TCP on 127.0.0.1 and ::1, Unix sockets in a
 * mkdtemp directory, inherited listening sockets. Clients are plain
 * blocking sockets driven from the test thread between turns of the uv
 * loop (the kernel queues connections and bytes meanwhile), or a writer
 * thread for the 100 MiB line.
 *
 * Random streams use a seeded PRNG; the seed is printed when a check
 * fails. */
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
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
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

static uint64_t prng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint64_t seed_from_env(void)
{
    const char *e = getenv("TEST_SEED");
    return e != NULL ? strtoull(e, NULL, 10) : (uint64_t)time(NULL) * 2654435761u + 1;
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

/* ---- lines split at random boundaries, several clients at once ---------- */

#define N_CLIENTS 8

typedef struct expect_line {
    size_t off, len;
} expect_line;

typedef struct stream_case {
    char *bytes;
    size_t len, cap, sent;
    expect_line *expect;
    size_t n_expect, next;
    int fd, port;
} stream_case;

static void put(stream_case *c, const void *p, size_t n)
{
    if (c->len + n > c->cap) {
        c->cap = (c->len + n) * 2;
        c->bytes = realloc(c->bytes, c->cap);
        assert_non_null(c->bytes);
    }
    memcpy(c->bytes + c->len, p, n);
    c->len += n;
}

/* Lines "c<id> l<j> <random bytes>" ending in "\n" or "\r\n", blank lines
 * in between, the last line without a newline. Payload bytes are anything
 * but '\n' (NUL and invalid UTF-8 included) and never end in '\r'. */
static void make_stream(stream_case *c, int id, uint64_t *rng)
{
    size_t lines = 50 + prng(rng) % 100;
    memset(c, 0, sizeof *c);
    c->expect = calloc(lines, sizeof *c->expect);
    for (size_t j = 0; j < lines; j++) {
        if (prng(rng) % 8 == 0) {
            bool spaces = prng(rng) % 2;
            put(c, spaces ? "  \t\r\n" : "\n", spaces ? 5 : 1);
        }
        char head[32];
        int hn = snprintf(head, sizeof head, "c%d l%zu ", id, j);
        size_t start = c->len;
        put(c, head, (size_t)hn);
        size_t pay = prng(rng) % 300;
        for (size_t b = 0; b < pay; b++) {
            char ch = (char)(prng(rng) & 0xFF);
            if (ch == '\n' || (b + 1 == pay && ch == '\r'))
                ch = 'x';
            put(c, &ch, 1);
        }
        c->expect[c->n_expect++] = (expect_line){start, c->len - start};
        if (j + 1 < lines) {
            bool crlf = prng(rng) % 2;
            put(c, crlf ? "\r\n" : "\n", crlf ? 2 : 1);
        }
    }
}

static void send_streams(uv_loop_t *loop, stream_case *cs, uint64_t *rng)
{
    for (;;) {
        int live[N_CLIENTS], n = 0;
        for (int i = 0; i < N_CLIENTS; i++)
            if (cs[i].sent < cs[i].len)
                live[n++] = i;
        if (n == 0)
            break;
        stream_case *c = &cs[live[prng(rng) % (uint64_t)n]];
        size_t chunk = 1 + prng(rng) % (prng(rng) % 4 == 0 ? 8 : 1500);
        if (chunk > c->len - c->sent)
            chunk = c->len - c->sent;
        send_all(c->fd, c->bytes + c->sent, chunk);
        c->sent += chunk;
        if (prng(rng) % 3 == 0)
            uv_run(loop, UV_RUN_NOWAIT);
    }
    for (int i = 0; i < N_CLIENTS; i++)
        shutdown(cs[i].fd, SHUT_WR);         /* EOF: the last line goes out now */
}

/* Every line arrives whole, once, in its client's order, under the right
 * source. */
static void check_streams(const sink *k, stream_case *cs, const char *unix_src, uint64_t seed)
{
    for (size_t i = 0; i < k->n; i++) {
        const got_line *g = &k->lines[i];
        int id = -1;
        if (sscanf(g->data, "c%d ", &id) != 1 || id < 0 || id >= N_CLIENTS)
            fail_msg("seed %llu: line %zu does not name a client: '%.40s'",
                     (unsigned long long)seed, i, g->data);
        stream_case *c = &cs[id];
        if (c->next >= c->n_expect)
            fail_msg("seed %llu: client %d: more lines than sent", (unsigned long long)seed, id);
        const expect_line *e = &c->expect[c->next++];
        if (g->len != e->len || memcmp(g->data, c->bytes + e->off, e->len) != 0 || g->oversized)
            fail_msg("seed %llu: client %d line %zu differs (%zu bytes, want %zu)",
                     (unsigned long long)seed, id, c->next - 1, g->len, e->len);
        char want[192];
        if (unix_src != NULL)
            snprintf(want, sizeof want, "%s", unix_src);
        else
            snprintf(want, sizeof want, "tcp:127.0.0.1:%d", c->port);
        if (strcmp(g->src, want) != 0)
            fail_msg("seed %llu: source '%s', want '%s'", (unsigned long long)seed, g->src, want);
    }
    for (int i = 0; i < N_CLIENTS; i++)
        if (cs[i].next != cs[i].n_expect)
            fail_msg("seed %llu: client %d: %zu of %zu lines arrived", (unsigned long long)seed,
                     i, cs[i].next, cs[i].n_expect);
}

static void concurrent_clients(bool tcp)
{
    uint64_t seed = seed_from_env(), rng = seed;
    char path[128], src[160];
    tmp_path(path, sizeof path, "in.sock");
    snprintf(src, sizeof src, "unix:%s", path);
    cf_input in = tcp ? tcp_in("127.0.0.1", 0) : unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int port = ls_server_bound_port(s, 0);
    assert_true(tcp ? port > 0 : port == 0);

    stream_case cs[N_CLIENTS];
    size_t total = 0;
    for (int i = 0; i < N_CLIENTS; i++) {
        make_stream(&cs[i], i, &rng);
        cs[i].fd = tcp ? tcp_client("127.0.0.1", port) : unix_client(path);
        cs[i].port = tcp ? local_port(cs[i].fd) : 0;
        total += cs[i].n_expect;
    }
    send_streams(&loop, cs, &rng);
    wait_lines(&loop, &k, total);
    assert_true(wait_conns(&loop, s, 0, 5000));      /* EOF closed them */
    check_streams(&k, cs, tcp ? NULL : src, seed);
    assert_true(k.read_done >= 1 && k.read_done <= total);
    assert_int_equal(dm_get(&dm_counters_global.records_received), total);
    assert_int_equal(dm_get(&dm_counters_global.connections_accepted), N_CLIENTS);
    assert_int_equal(dm_get(&dm_counters_global.connections_open), 0);
    size_t bytes = 0;
    for (int i = 0; i < N_CLIENTS; i++) {
        bytes += cs[i].len;
        close(cs[i].fd);
        free(cs[i].bytes);
        free(cs[i].expect);
    }
    assert_int_equal(dm_get(&dm_counters_global.bytes_received), bytes);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_tcp_lines_split_at_random_boundaries_arrive_in_order(void **state)
{
    (void)state;
    concurrent_clients(true);
}

static void test_listener_unix_lines_split_at_random_boundaries_arrive_in_order(void **state)
{
    (void)state;
    concurrent_clients(false);
}

/* ---- single-connection behaviour ---------------------------------------- */

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

static void test_listener_last_line_without_newline_delivered_at_eof(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int fd = tcp_client("127.0.0.1", f.port);
    send_str(fd, "{\"a\":1}\n{\"b\":2}");
    close(fd);
    wait_lines(&f.loop, &f.k, 2);
    assert_string_equal(f.k.lines[0].data, "{\"a\":1}");
    assert_string_equal(f.k.lines[1].data, "{\"b\":2}");
    assert_int_equal(f.k.lines[1].lineno, 2);
    assert_true(wait_conns(&f.loop, f.s, 0, 5000));
    tcp_stop(&f);
}

static void test_listener_source_is_the_tcp_peer(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int fd = tcp_client("127.0.0.1", f.port);
    send_str(fd, "x\n");
    wait_lines(&f.loop, &f.k, 1);
    char want[64];
    snprintf(want, sizeof want, "tcp:127.0.0.1:%d", local_port(fd));
    assert_string_equal(f.k.lines[0].src, want);
    close(fd);
    tcp_stop(&f);
}

static void test_listener_read_done_once_per_read_with_lines(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int fd = tcp_client("127.0.0.1", f.port);
    send_str(fd, "a\nb\nc\n");
    wait_lines(&f.loop, &f.k, 3);
    assert_int_equal(f.k.read_done, 1);
    send_str(fd, "half a line");                  /* no line completes: no group commit */
    wait_count(&f.loop, &dm_counters_global.bytes_received, 6 + 11);
    assert_int_equal(f.k.read_done, 1);
    send_str(fd, "\n");
    wait_lines(&f.loop, &f.k, 4);
    assert_string_equal(f.k.lines[3].data, "half a line");
    assert_int_equal(f.k.read_done, 2);
    close(fd);
    tcp_stop(&f);
}

static void test_listener_reset_mid_line_delivers_the_partial_line(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int fd = tcp_client("127.0.0.1", f.port);
    send_str(fd, "{\"whole\":1}\n{\"cut\":");
    wait_count(&f.loop, &dm_counters_global.bytes_received, 19);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};     /* close sends RST */
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    close(fd);
    wait_lines(&f.loop, &f.k, 2);
    assert_string_equal(f.k.lines[1].data, "{\"cut\":");
    assert_true(wait_conns(&f.loop, f.s, 0, 5000));
    tcp_stop(&f);
}

static void test_listener_clients_that_connect_and_vanish(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    for (int i = 0; i < 40; i++) {
        int fd = tcp_client("127.0.0.1", f.port);
        if (i % 2) {
            struct linger lg = {.l_onoff = 1, .l_linger = 0};
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        close(fd);
        if (i % 10 == 0)
            uv_run(&f.loop, UV_RUN_NOWAIT);
    }
    wait_count(&f.loop, &dm_counters_global.connections_accepted, 40);
    assert_true(wait_conns(&f.loop, f.s, 0, 5000));
    assert_int_equal(f.k.n, 0);
    assert_int_equal(dm_get(&dm_counters_global.connections_open), 0);
    tcp_stop(&f);
}

/* Random bytes, '\n', '\r' and NUL included, come out as the framer's
 * lines: split at '\n', one trailing '\r' dropped, blank lines skipped. */
static void test_listener_garbage_bytes_are_delivered_as_lines(void **state)
{
    (void)state;
    uint64_t seed = seed_from_env(), rng = seed;
    tcp_fixture f;
    tcp_start(&f, NULL);
    size_t n = 20000;
    unsigned char *b = malloc(n);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = prng(&rng);
        b[i] = r % 16 == 0 ? '\n' : r % 16 == 1 ? '\r' : r % 16 == 2 ? ' ' : (unsigned char)(r >> 8);
    }
    int fd = tcp_client("127.0.0.1", f.port);
    for (size_t off = 0; off < n;) {
        size_t chunk = 1 + prng(&rng) % 700;
        if (chunk > n - off)
            chunk = n - off;
        send_all(fd, b + off, chunk);
        off += chunk;
        uv_run(&f.loop, UV_RUN_NOWAIT);
    }
    close(fd);
    assert_true(wait_conns(&f.loop, f.s, 0, 5000));
    size_t want = 0, start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && b[i] != '\n')
            continue;
        if (i == n && start == n)
            break;
        size_t len = i - start;
        if (len > 0 && b[start + len - 1] == '\r')
            len--;
        bool blank = true;
        for (size_t j = start; j < start + len; j++)
            blank = blank && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r');
        if (!blank) {
            if (want >= f.k.n || f.k.lines[want].len != len ||
                memcmp(f.k.lines[want].data, b + start, len) != 0)
                fail_msg("seed %llu: line %zu differs", (unsigned long long)seed, want);
            want++;
        }
        start = i + 1;
    }
    assert_int_equal(f.k.n, want);
    free(b);
    tcp_stop(&f);
}

static void test_listener_on_line_error_closes_the_connection(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    f.k.fail_on = "bad";
    int fd = tcp_client("127.0.0.1", f.port);
    send_str(fd, "ok\nbad\nnever\n");
    assert_true(run_until(&f.loop, peer_closed_pred, &fd, 5000));
    assert_int_equal(f.k.n, 2);
    assert_string_equal(f.k.lines[1].data, "bad");
    assert_int_equal(ls_server_connections(f.s), 0);
    close(fd);
    tcp_stop(&f);
}

/* Closing from inside on_line (a fatal error downstream): the current
 * read is still framed, then everything closes. */
static void test_listener_close_from_on_line(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    f.k.close_on = "stop";
    int a = tcp_client("127.0.0.1", f.port), b = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 2, 5000));
    send_str(b, "b-partial");
    wait_count(&f.loop, &dm_counters_global.bytes_received, 9);
    send_str(a, "stop\nafter\ntail");
    assert_true(run_until(&f.loop, is_closed, f.s, 5000));
    assert_int_equal(f.k.n, 4);
    assert_string_equal(f.k.lines[0].data, "stop");
    assert_string_equal(f.k.lines[1].data, "b-partial");   /* closed while a was framing */
    assert_string_equal(f.k.lines[2].data, "after");
    assert_string_equal(f.k.lines[3].data, "tail");
    ls_server_destroy(f.s);
    uv_run(&f.loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&f.loop), 0);
    sink_free(&f.k);
    close(a);
    close(b);
}

/* AddressSanitizer keeps freed blocks (each step of a growing buffer)
 * resident in its quarantine, and adds shadow memory. */
#if defined(__SANITIZE_ADDRESS__)
#define MEM_SLACK 3
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEM_SLACK 3
#endif
#endif
#ifndef MEM_SLACK
#define MEM_SLACK 1
#endif

/* A line without end: memory stays at max_line_bytes, and the line comes
 * out once, truncated and flagged, when it ends. */
typedef struct big_writer {
    int fd;
    size_t bytes;
    int go[2];                   /* a pipe: the thread writes once measuring began */
} big_writer;

static void *write_big(void *arg)
{
    big_writer *w = arg;
    char c;
    if (read(w->go[0], &c, 1) != 1)
        return NULL;
    static char chunk[1 << 16];
    memset(chunk, 'x', sizeof chunk);
    for (size_t sent = 0; sent < w->bytes; sent += sizeof chunk)
        send_all(w->fd, chunk, sizeof chunk);
    send_str(w->fd, "\n{\"after\":1}\n");
    close(w->fd);
    return NULL;
}

typedef struct rss_watch {
    sink *k;
    size_t peak;
} rss_watch;

static bool big_done(void *ctx)
{
    rss_watch *w = ctx;
    size_t r = rss_bytes();
    if (r > w->peak)
        w->peak = r;
    return w->k->n >= 2;
}

static void small_lines(cf_config *cf)
{
    cf->limits.max_line_bytes = 1 << 20;
}

static void test_listener_100mib_line_keeps_memory_at_max_line_bytes(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, small_lines);
    big_writer w = {tcp_client("127.0.0.1", f.port), (size_t)100 << 20, {-1, -1}};
    assert_int_equal(pipe(w.go), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, write_big, &w), 0);
    usleep(20000);                                /* the thread's own memory is in */
    size_t before = rss_bytes();
    assert_int_equal(write(w.go[1], "g", 1), 1);
    rss_watch rw = {&f.k, before};
    assert_true(run_until(&f.loop, big_done, &rw, 60000));
    pthread_join(t, NULL);
    close(w.go[0]);
    close(w.go[1]);
    size_t growth = rw.peak - before;
    print_message("100 MiB line: RSS grew by %zu KiB (max_line_bytes 1 MiB)\n", growth >> 10);
    assert_true(growth < MEM_SLACK * ((size_t)8 << 20));
    assert_true(f.k.lines[0].oversized);
    assert_int_equal(f.k.lines[0].len, 1 << 20);
    assert_int_equal(f.k.lines[0].total, (size_t)100 << 20);
    assert_false(f.k.lines[1].oversized);
    assert_string_equal(f.k.lines[1].data, "{\"after\":1}");
    tcp_stop(&f);
}

/* A client sending one byte at a time keeps its connection: each byte is
 * activity. */
static void short_idle(cf_config *cf)
{
    cf->limits.idle_timeout_ms = 300;
}

static void test_listener_slowloris_client_is_not_idle_closed(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, short_idle);
    int fd = tcp_client("127.0.0.1", f.port);
    const char *msg = "{\"slow\":true}\n";
    for (const char *p = msg; *p != '\0'; p++) {
        send_all(fd, p, 1);
        run_for(&f.loop, 100);
        assert_false(peer_closed(fd));
    }
    assert_int_equal(f.k.n, 1);
    assert_string_equal(f.k.lines[0].data, "{\"slow\":true}");
    assert_int_equal(dm_get(&dm_counters_global.connections_idle_closed), 0);
    assert_true(run_until(&f.loop, peer_closed_pred, &fd, 5000));   /* then silence */
    assert_int_equal(dm_get(&dm_counters_global.connections_idle_closed), 1);
    close(fd);
    tcp_stop(&f);
}

/* ---- idle timeout, backpressure, limits ------------------------------- */

static void idle_200ms(cf_config *cf)
{
    cf->limits.idle_timeout_ms = 200;
}

static void test_listener_idle_connection_is_closed_after_idle_timeout(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, idle_200ms);
    int quiet = tcp_client("127.0.0.1", f.port), chatty = tcp_client("127.0.0.1", f.port);
    uint64_t t0 = now_ms();
    send_str(quiet, "{\"unfinished\":");
    uint64_t closed_at = 0;
    while (now_ms() - t0 < 3000 && closed_at == 0) {
        send_str(chatty, "{}\n");
        run_for(&f.loop, 50);
        if (peer_closed(quiet))
            closed_at = now_ms();
    }
    assert_true(closed_at != 0);
    print_message("idle connection closed after %llu ms (idle_timeout 200 ms)\n",
                  (unsigned long long)(closed_at - t0));
    assert_true(closed_at - t0 >= 190 && closed_at - t0 < 1500);
    assert_false(peer_closed(chatty));
    assert_int_equal(dm_get(&dm_counters_global.connections_idle_closed), 1);
    assert_int_equal(ls_server_connections(f.s), 1);
    /* Its unfinished line was not dropped. */
    bool found = false;
    for (size_t i = 0; i < f.k.n; i++)
        found = found || strcmp(f.k.lines[i].data, "{\"unfinished\":") == 0;
    assert_true(found);
    close(quiet);
    close(chatty);
    tcp_stop(&f);
}

static void test_listener_paused_connections_are_not_idle_closed(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, idle_200ms);
    int fd = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 1, 5000));
    ls_server_pause(f.s);
    run_for(&f.loop, 600);                         /* three idle timeouts, paused */
    assert_false(peer_closed(fd));
    assert_int_equal(ls_server_connections(f.s), 1);
    ls_server_resume(f.s);
    uint64_t t0 = now_ms();
    assert_true(run_until(&f.loop, peer_closed_pred, &fd, 5000));
    uint64_t took = now_ms() - t0;
    print_message("closed %llu ms after resume\n", (unsigned long long)took);
    assert_true(took >= 50);                       /* the paused time did not count */
    assert_int_equal(dm_get(&dm_counters_global.connections_idle_closed), 1);
    close(fd);
    tcp_stop(&f);
}

static void test_listener_pause_stops_delivery_and_resume_restarts_it(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int a = tcp_client("127.0.0.1", f.port);
    send_str(a, "before\n");
    wait_lines(&f.loop, &f.k, 1);
    ls_server_pause(f.s);
    assert_true(ls_server_paused(f.s));
    assert_int_equal(dm_get(&dm_counters_global.backpressure_active), 1);
    send_str(a, "while paused\n");
    int b = tcp_client("127.0.0.1", f.port);       /* accepted while paused: starts paused */
    send_str(b, "new client\n");
    assert_true(wait_conns(&f.loop, f.s, 2, 5000));
    run_for(&f.loop, 200);
    assert_int_equal(f.k.n, 1);
    assert_int_equal(dm_get(&dm_counters_global.bytes_received), 7);
    ls_server_resume(f.s);
    assert_false(ls_server_paused(f.s));
    wait_lines(&f.loop, &f.k, 3);
    assert_int_equal(dm_get(&dm_counters_global.backpressure_active), 0);
    assert_true(dm_get(&dm_counters_global.backpressure_us) >= 150000);
    close(a);
    close(b);
    tcp_stop(&f);
}

static void max_two(cf_config *cf)
{
    cf->limits.max_connections = 2;
}

static void test_listener_max_connections_refuses_extras(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, max_two);
    int a = tcp_client("127.0.0.1", f.port), b = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 2, 5000));
    int c = tcp_client("127.0.0.1", f.port);       /* the kernel completes it; we close it */
    assert_true(run_until(&f.loop, peer_closed_pred, &c, 5000));
    assert_int_equal(dm_get(&dm_counters_global.connections_refused), 1);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, "limits.max_connections (2)"));
    int d = tcp_client("127.0.0.1", f.port), e = tcp_client("127.0.0.1", f.port);
    wait_count(&f.loop, &dm_counters_global.connections_refused, 3);
    assert_int_equal(warnings, 1);                 /* at most once a minute */
    send_str(a, "a\n");
    send_str(b, "b\n");
    wait_lines(&f.loop, &f.k, 2);
    assert_int_equal(ls_server_connections(f.s), 2);
    /* A reload raising the limit applies at once. */
    f.cf.limits.max_connections = 3;
    ls_server_set_limits(f.s, &f.cf);
    int g = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 3, 5000));
    /* and a freed slot is usable again */
    close(a);
    assert_true(wait_conns(&f.loop, f.s, 2, 5000));
    int h = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 3, 5000));
    assert_int_equal(dm_get(&dm_counters_global.connections_refused), 3);
    close(b), close(c), close(d), close(e), close(g), close(h);
    tcp_stop(&f);
}

/* Out of file descriptors, accept fails: libuv sheds the pending
 * connection with its spare fd (silently: its trick does not report
 * EMFILE), the open connections stay, and accepting works again once fds
 * free up. */
static void test_listener_out_of_fds_sheds_connections_and_recovers(void **state)
{
    (void)state;
    tcp_fixture f;
    tcp_start(&f, NULL);
    int a = tcp_client("127.0.0.1", f.port);
    assert_true(wait_conns(&f.loop, f.s, 1, 5000));
    int b = tcp_client("127.0.0.1", f.port);      /* queued in the kernel */
    struct rlimit old, low;
    getrlimit(RLIMIT_NOFILE, &old);
    int next = dup(0);                             /* the lowest free fd */
    close(next);
    low = old;
    low.rlim_cur = (rlim_t)next;                   /* no new fd at all */
    assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
    bool shed = run_until(&f.loop, peer_closed_pred, &b, 5000);
    setrlimit(RLIMIT_NOFILE, &old);
    assert_true(shed);
    assert_int_equal(ls_server_connections(f.s), 1);
    assert_false(peer_closed(a));
    int c = tcp_client("127.0.0.1", f.port);
    send_str(c, "{\"back\":1}\n");
    wait_lines(&f.loop, &f.k, 1);
    assert_int_equal(ls_server_connections(f.s), 2);
    close(a), close(b), close(c);
    tcp_stop(&f);
}

/* ---- addresses ---------------------------------------------------------- */

static bool ipv6_loopback_available(void)
{
    int fd = socket(AF_INET6, SOCK_STREAM, 0);
    if (fd < 0)
        return false;
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    bool ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    close(fd);
    return ok;
}

static void test_listener_tcp_ipv6_loopback(void **state)
{
    (void)state;
    if (!ipv6_loopback_available()) {
        print_message("IPv6 loopback (::1) unavailable on this machine: skipped\n");
        skip();
    }
    cf_input in = tcp_in("::1", 0);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int port = ls_server_bound_port(s, 0);
    int fd = tcp_client("::1", port);
    send_str(fd, "{\"v6\":true}\n");
    wait_lines(&loop, &k, 1);
    char want[64];
    snprintf(want, sizeof want, "tcp:[::1]:%d", local_port(fd));
    assert_string_equal(k.lines[0].src, want);
    assert_string_equal(k.lines[0].data, "{\"v6\":true}");
    close(fd);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_tcp_host_name_is_resolved(void **state)
{
    (void)state;
    cf_input in = tcp_in("localhost", 0);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int fd = tcp_client("localhost", ls_server_bound_port(s, 0));
    send_str(fd, "hi\n");
    wait_lines(&loop, &k, 1);
    assert_string_equal(k.lines[0].data, "hi");
    close(fd);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_port_in_use_fails_and_leaves_nothing_bound(void **state)
{
    (void)state;
    int port;
    int busy = listening_tcp("127.0.0.1", &port);
    char path[128];
    tmp_path(path, sizeof path, "first.sock");
    cf_input ins[2] = {unix_in(path, -1), tcp_in("127.0.0.1", (uint16_t)port)};
    cf_config cf;
    cfg_init(&cf, ins, 2);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_server *s = (ls_server *)&k;
    pq_err err = {0};
    assert_int_equal(ls_server_new(&s, &loop, &cf, NULL, 0, &cb, &err), PQ_EIO);
    assert_null(s);
    char want[96];
    snprintf(want, sizeof want, "inputs[1] tcp 127.0.0.1:%d: Address already in use", port);
    assert_string_equal(err.msg, want);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);          /* inputs[0] was unbound again */
    assert_int_equal(uv_loop_close(&loop), 0);      /* and no handle is left */
    close(busy);
}

/* ---- Unix socket files ---------------------------------------------------- */

static void test_listener_stale_unix_socket_is_replaced(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "stale.sock");
    close(unix_socket_at(path, true));              /* the file stays, nobody listens */
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int fd = unix_client(path);
    send_str(fd, "{\"fresh\":1}\n");
    wait_lines(&loop, &k, 1);
    char want[160];
    snprintf(want, sizeof want, "unix:%s", path);
    assert_string_equal(k.lines[0].src, want);
    close(fd);
    shutdown_server(&loop, s);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);          /* ours: removed on close */
    sink_free(&k);
}

static void expect_unix_refused(const char *path, const char *why)
{
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_server *s = NULL;
    pq_err err = {0};
    assert_int_equal(ls_server_new(&s, &loop, &cf, NULL, 0, &cb, &err), PQ_EIO);
    char want[256];
    snprintf(want, sizeof want, "inputs[0] unix %s: %s", path, why);
    assert_string_equal(err.msg, want);
    assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_listener_live_unix_socket_is_refused(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "live.sock");
    int live = unix_socket_at(path, true);
    expect_unix_refused(path, "already in use by a running process");
    int fd = unix_client(path);                     /* still the other process's */
    close(fd);
    close(live);
}

static void test_listener_regular_file_at_unix_path_is_refused(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "precious.txt");
    FILE *fp = fopen(path, "w");
    fputs("keep me\n", fp);
    fclose(fp);
    expect_unix_refused(path, "exists and is not a socket (refusing to remove it)");
    char buf[16] = {0};
    fp = fopen(path, "r");
    assert_non_null(fp);
    assert_non_null(fgets(buf, sizeof buf, fp));
    fclose(fp);
    assert_string_equal(buf, "keep me\n");
}

static void test_listener_unix_mode_is_applied(void **state)
{
    (void)state;
    char a[128], b[128], c[128];
    tmp_path(a, sizeof a, "m600.sock");
    tmp_path(b, sizeof b, "m666.sock");
    tmp_path(c, sizeof c, "umask.sock");
    cf_input ins[3] = {unix_in(a, 0600), unix_in(b, 0666), unix_in(c, -1)};
    cf_config cf;
    cfg_init(&cf, ins, 3);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    mode_t old = umask(022);
    ls_server *s = server_new(&loop, &cf, &k);
    umask(old);
    struct stat st;
    assert_int_equal(stat(a, &st), 0);
    assert_true(S_ISSOCK(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(b, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0666);      /* wider than the umask allows */
    assert_int_equal(stat(c, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);      /* -1: left to the umask */
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_close_delivers_unfinished_lines_and_removes_socket(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "close.sock");
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_server *s = server_new(&loop, &cf, &k);
    int fd = unix_client(path);
    send_str(fd, "{\"done\":1}\n{\"half\":");
    wait_count(&loop, &dm_counters_global.bytes_received, 19);
    assert_int_equal(k.n, 1);
    ls_server_stop_accepting(s);
    struct stat st;
    assert_int_equal(stat(path, &st), -1);          /* no new clients: the file is gone */
    assert_false(ls_server_closed(s));
    ls_server_close(s);
    assert_true(run_until(&loop, is_closed, s, 5000));
    assert_int_equal(k.n, 2);
    assert_string_equal(k.lines[1].data, "{\"half\":");
    assert_true(peer_closed(fd));
    ls_server_destroy(s);
    uv_run(&loop, UV_RUN_NOWAIT);
    assert_int_equal(uv_loop_close(&loop), 0);
    close(fd);
    sink_free(&k);
}

/* ---- socket activation -------------------------------------------------- */

static bool fd_open(int fd)
{
    return fcntl(fd, F_GETFD) != -1;
}

static void test_listener_inherited_tcp_socket_is_adopted_for_its_input(void **state)
{
    (void)state;
    int port;
    int lfd = listening_tcp("127.0.0.1", &port);
    cf_input in = tcp_in("127.0.0.1", (uint16_t)port);   /* binding it would fail: in use */
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {lfd, "parqd-tcp"};
    ls_server *s = NULL;
    pq_err err = {0};
    if (ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(ls_server_bound_port(s, 0), port);
    assert_int_equal(ls_server_bound_port(s, 1), -1);     /* no extra listener */
    assert_false(fd_open(lfd));                           /* the server's now */
    int fd = tcp_client("127.0.0.1", port);
    send_str(fd, "{\"activated\":1}\n");
    wait_lines(&loop, &k, 1);
    assert_string_equal(k.lines[0].data, "{\"activated\":1}");
    close(fd);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_inherited_unix_socket_is_adopted_and_not_removed(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "activated.sock");
    int lfd = unix_socket_at(path, true);
    cf_input in = unix_in(path, 0600);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {lfd, NULL};
    ls_server *s = NULL;
    pq_err err = {0};
    if (ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err) != 0)
        fail_msg("%s", err.msg);
    int fd = unix_client(path);
    send_str(fd, "{\"unix\":1}\n");
    wait_lines(&loop, &k, 1);
    char want[160];
    snprintf(want, sizeof want, "unix:%s", path);
    assert_string_equal(k.lines[0].src, want);
    close(fd);
    shutdown_server(&loop, s);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);           /* systemd's file, not ours to remove */
    sink_free(&k);
}

static void test_listener_unmatched_inherited_socket_becomes_an_extra_input(void **state)
{
    (void)state;
    char path[128];
    tmp_path(path, sizeof path, "configured.sock");
    int port;
    int lfd = listening_tcp("127.0.0.1", &port);
    cf_input in = unix_in(path, -1);
    cf_config cf;
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {lfd, "extra"};
    ls_server *s = NULL;
    pq_err err = {0};
    if (ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err) != 0)
        fail_msg("%s", err.msg);
    assert_int_equal(ls_server_bound_port(s, 0), 0);      /* the configured unix input */
    assert_int_equal(ls_server_bound_port(s, 1), port);   /* plus the inherited one */
    int a = unix_client(path), b = tcp_client("127.0.0.1", port);
    send_str(a, "via unix\n");
    send_str(b, "via tcp\n");
    wait_lines(&loop, &k, 2);
    close(a);
    close(b);
    shutdown_server(&loop, s);
    sink_free(&k);
}

static void test_listener_inherited_socket_that_does_not_listen_is_refused(void **state)
{
    (void)state;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);   /* Accept=yes style */
    cf_config cf;
    cf_input in = tcp_in("127.0.0.1", 0);
    cfg_init(&cf, &in, 1);
    uv_loop_t loop;
    uv_loop_init(&loop);
    sink k = {0};
    ls_callbacks cb = callbacks(&k);
    ls_inherited ih = {fd, "conn"};
    ls_server *s = NULL;
    pq_err err = {0};
    assert_int_equal(ls_server_new(&s, &loop, &cf, &ih, 1, &cb, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "not a listening socket"));
    assert_non_null(strstr(err.msg, "(conn)"));
    assert_true(fd_open(fd));                       /* failure: still the caller's */
    assert_int_equal(uv_loop_close(&loop), 0);
    close(fd);
}

/* ---- memory of idle connections ----------------------------------------- */

static void many_conns(cf_config *cf)
{
    cf->limits.max_connections = 4096;
}

static void test_listener_2000_idle_connections_stay_small(void **state)
{
    (void)state;
    size_t n = 2000;
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < 2 * n + 64 && rl.rlim_max >= 2 * n + 64) {
        rl.rlim_cur = 2 * n + 64;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur < 2 * n + 64) {
        print_message("RLIMIT_NOFILE %llu too low for 2000 connections: skipped\n",
                      (unsigned long long)rl.rlim_cur);
        skip();
    }
    tcp_fixture f;
    tcp_start(&f, many_conns);
    int *fds = calloc(n + 1, sizeof *fds);
    fds[n] = tcp_client("127.0.0.1", f.port);       /* warm up the loop's structures */
    send_str(fds[n], "{\"warm\":1}\n{\"partial\":");
    wait_lines(&f.loop, &f.k, 1);
    size_t before = rss_bytes(), heap_before = mallinfo2().uordblks;
    for (size_t i = 0; i < n; i++) {
        fds[i] = tcp_client("127.0.0.1", f.port);
        if (i % 100 == 99)                         /* keep the backlog short */
            assert_true(wait_conns(&f.loop, f.s, i + 2, 5000));
    }
    assert_true(wait_conns(&f.loop, f.s, n + 1, 5000));
    size_t growth = rss_bytes() - before, heap = mallinfo2().uordblks - heap_before;
    /* RSS may reuse pages earlier tests freed; the heap count is exact. */
    print_message("%zu idle connections: RSS +%zu KiB, heap +%zu KiB (%zu bytes each)\n", n,
                  growth >> 10, heap >> 10, heap / n);
    assert_true(growth < ((size_t)16 << 20));
    for (size_t i = 0; i <= n; i++)
        close(fds[i]);
    assert_true(wait_conns(&f.loop, f.s, 0, 10000));
    free(fds);
    tcp_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(test_listener_tcp_lines_split_at_random_boundaries_arrive_in_order),
        T(test_listener_unix_lines_split_at_random_boundaries_arrive_in_order),
        T(test_listener_last_line_without_newline_delivered_at_eof),
        T(test_listener_source_is_the_tcp_peer),
        T(test_listener_read_done_once_per_read_with_lines),
        T(test_listener_reset_mid_line_delivers_the_partial_line),
        T(test_listener_clients_that_connect_and_vanish),
        T(test_listener_garbage_bytes_are_delivered_as_lines),
        T(test_listener_on_line_error_closes_the_connection),
        T(test_listener_close_from_on_line),
        T(test_listener_100mib_line_keeps_memory_at_max_line_bytes),
        T(test_listener_slowloris_client_is_not_idle_closed),
        T(test_listener_idle_connection_is_closed_after_idle_timeout),
        T(test_listener_paused_connections_are_not_idle_closed),
        T(test_listener_pause_stops_delivery_and_resume_restarts_it),
        T(test_listener_max_connections_refuses_extras),
        T(test_listener_out_of_fds_sheds_connections_and_recovers),
        T(test_listener_tcp_ipv6_loopback),
        T(test_listener_tcp_host_name_is_resolved),
        T(test_listener_port_in_use_fails_and_leaves_nothing_bound),
        T(test_listener_stale_unix_socket_is_replaced),
        T(test_listener_live_unix_socket_is_refused),
        T(test_listener_regular_file_at_unix_path_is_refused),
        T(test_listener_unix_mode_is_applied),
        T(test_listener_close_delivers_unfinished_lines_and_removes_socket),
        T(test_listener_inherited_tcp_socket_is_adopted_for_its_input),
        T(test_listener_inherited_unix_socket_is_adopted_and_not_removed),
        T(test_listener_unmatched_inherited_socket_becomes_an_extra_input),
        T(test_listener_inherited_socket_that_does_not_listen_is_refused),
        T(test_listener_2000_idle_connections_stay_small),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
