/* test_listener_lines.c - lines in, lines out through the ingest server
 * (daemon/ingest/listener.c, connection.c) over real sockets: streams
 * split at random boundaries from several TCP and Unix clients at once,
 * the last line at EOF or reset, the source of each line, on_read_done,
 * clients that vanish, garbage bytes, on_line errors and a close from
 * on_line, a 100 MiB line, a slowloris client.
 *
 * Clients are plain blocking sockets driven from the test thread between
 * turns of the uv loop (the kernel queues connections and bytes
 * meanwhile), or a writer thread for the 100 MiB line. Random streams use
 * a seeded PRNG; the seed is printed when a check fails (TEST_SEED=<n>
 * replays one). */
#include "listener_fixture.h"

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
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
