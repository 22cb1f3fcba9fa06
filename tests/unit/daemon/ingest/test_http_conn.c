/* test_http_conn.c - one HTTP connection without a socket
 * (daemon/ingest/http_conn.c, http_route.c, http_bulk.c): requests in,
 * records and replies out, through a fake daemon (records counted, seqs
 * handed out, durability moved by hand).
 *
 * Thread: the test's (the module's is the loop thread). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "http_conn.h"

typedef struct fake {
    char out[1 << 16];
    size_t out_len;
    char recs[1 << 16];
    size_t recs_len;
    uint64_t next_seq;           /* the seq the next record gets */
    int records, oversized, read_done, want_durable;
    bool ended, held, waiting, busy;
    ls_callbacks cb;
    hp_io io;
    hp_conn *h;
    const hp_auth *auth;         /* what the connection reads per request */
} fake;

static int f_write(void *u, const char *d, size_t n)
{
    fake *f = u;
    assert_true(f->out_len + n < sizeof f->out);
    memcpy(f->out + f->out_len, d, n);
    f->out_len += n;
    f->out[f->out_len] = '\0';
    return 0;
}
static void f_end(void *u) { ((fake *)u)->ended = true; }
static void f_hold(void *u, bool h) { ((fake *)u)->held = h; }
static void f_wait(void *u, bool w) { ((fake *)u)->waiting = w; }

static int f_line(void *u, const char *source, const fr_line *l)
{
    fake *f = u;
    (void)source;
    if (l->oversized) {
        f->oversized++;
        return 0;
    }
    f->records++;
    f->next_seq++;
    memcpy(f->recs + f->recs_len, l->data, l->len);
    f->recs_len += l->len;
    f->recs[f->recs_len++] = '\n';
    return 0;
}
static void f_read_done(void *u) { ((fake *)u)->read_done++; }
static uint64_t f_next_seq(void *u) { return ((fake *)u)->next_seq; }
static void f_want(void *u) { ((fake *)u)->want_durable++; }
static bool f_busy(void *u) { return ((fake *)u)->busy; }

static fake *fake_new_lim(const hp_limits *lim, const hp_auth *auth)
{
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->next_seq = 1;
    f->cb = (ls_callbacks){.user = f, .on_line = f_line, .on_read_done = f_read_done,
                           .next_seq = f_next_seq, .want_durable = f_want, .busy = f_busy};
    f->io = (hp_io){.user = f, .write = f_write, .end = f_end, .hold = f_hold, .wait = f_wait};
    f->auth = auth;
    f->h = hp_conn_new(lim, "tcp:192.0.2.1:1", &f->cb, &f->auth, &f->io);
    assert_non_null(f->h);
    return f;
}

static fake *fake_new_shared(uint64_t max_body, const hp_auth *auth, hp_budget *bodies)
{
    hp_limits lim = {.max_body_bytes = max_body, .max_line_bytes = 1024, .bodies = bodies};
    return fake_new_lim(&lim, auth);
}

static fake *fake_new(uint64_t max_body, const hp_auth *auth)
{
    return fake_new_shared(max_body, auth, NULL);
}

static void fake_free(fake *f)
{
    hp_conn_free(f->h);
    free(f);
}

static void feed(fake *f, const char *s) { assert_int_equal(hp_conn_feed(f->h, s, strlen(s)), 0); }

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_http_ingest_reply_waits_for_the_spool(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    feed(f, "POST /ingest HTTP/1.1\r\nHost: x\r\nContent-Length: 16\r\n\r\n{\"a\":1}\n{\"a\":2}\n");
    assert_int_equal(f->records, 2);
    assert_string_equal(f->recs, "{\"a\":1}\n{\"a\":2}\n");
    assert_int_equal(f->out_len, 0);             /* not durable yet: no reply */
    assert_true(f->waiting);
    assert_int_equal(f->want_durable, 1);
    assert_int_equal(f->read_done, 1);
    hp_conn_durable(f->h, 2);                   /* record 1 durable, record 2 not */
    assert_int_equal(f->out_len, 0);
    hp_conn_durable(f->h, 3);
    assert_non_null(strstr(f->out, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(f->out, "{\"accepted\":2,\"rejected\":0,\"errors\":[]}"));
    assert_false(f->waiting);
    assert_false(f->ended);
    fake_free(f);
}

static void test_http_pipelined_replies_keep_request_order(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    feed(f, "POST /ingest HTTP/1.1\r\nContent-Length: 8\r\n\r\n{\"a\":1}\n"
            "GET / HTTP/1.1\r\n\r\n"
            "POST /ingest HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
            "4\r\n{\"b\"\r\n4\r\n:2}\n\r\n0\r\n\r\n");
    assert_int_equal(f->records, 2);
    assert_string_equal(f->recs, "{\"a\":1}\n{\"b\":2}\n");
    assert_int_equal(f->out_len, 0);             /* the banner waits behind the first */
    hp_conn_durable(f->h, 2);
    assert_int_equal(count(f->out, "HTTP/1.1 200"), 2);
    assert_non_null(strstr(f->out, "You Know, for Search"));
    hp_conn_durable(f->h, 3);
    assert_int_equal(count(f->out, "HTTP/1.1 200"), 3);
    fake_free(f);
}

static char *gzip_of(const char *s, size_t n, size_t *out_len)
{
    size_t cap = compressBound((uLong)n) + 64;
    char *out = malloc(cap);
    z_stream z = {0};
    assert_int_equal(deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (Bytef *)s;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out;
    z.avail_out = (uInt)cap;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    *out_len = z.total_out;
    deflateEnd(&z);
    return out;
}

static void post_gzip(fake *f, const char *body, size_t n)
{
    size_t glen;
    char *gz = gzip_of(body, n, &glen);
    char head[256];
    snprintf(head, sizeof head, "POST /ingest HTTP/1.1\r\nContent-Encoding: gzip\r\n"
             "Content-Length: %zu\r\n\r\n", glen);
    feed(f, head);
    assert_int_equal(hp_conn_feed(f->h, gz, glen), 0);
    free(gz);
}

static void test_http_gzip_body_is_inflated(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    const char *body = "{\"z\":1}\n{\"z\":2}\n{\"z\":3}\n";
    post_gzip(f, body, strlen(body));
    assert_int_equal(f->records, 3);
    assert_string_equal(f->recs, body);
    fake_free(f);
}

static void test_http_gzip_bomb_is_413_not_buffered(void **state)
{
    (void)state;
    fake *f = fake_new(64 * 1024, NULL);
    size_t n = 8 << 20;                          /* 8 MiB of newlines: ~8 KiB of gzip */
    char *big = malloc(n);
    memset(big, '\n', n);
    post_gzip(f, big, n);
    free(big);
    assert_int_equal(f->records, 0);
    assert_non_null(strstr(f->out, "HTTP/1.1 413 "));
    assert_non_null(strstr(f->out, "Connection: close"));
    assert_true(f->ended);
    fake_free(f);
}

static void test_http_body_over_limit_is_413_before_reading(void **state)
{
    (void)state;
    fake *f = fake_new(100, NULL);
    feed(f, "POST /ingest HTTP/1.1\r\nContent-Length: 104857600\r\n\r\n{\"a\":1}\n");
    assert_int_equal(f->records, 0);
    assert_non_null(strstr(f->out, "HTTP/1.1 413 "));
    assert_true(f->ended);
    fake_free(f);
}

static void test_http_smuggling_is_400_and_close(void **state)
{
    (void)state;
    const char *reqs[] = {
        "POST /ingest HTTP/1.1\r\nContent-Length: 8\r\nTransfer-Encoding: chunked\r\n\r\n"
        "8\r\n{\"a\":1}\n\r\n0\r\n\r\n",
        "POST /ingest HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 8\r\n\r\n"
        "8\r\n{\"a\":1}\n\r\n0\r\n\r\n",
        "POST /ingest HTTP/1.1\r\nContent-Length: 8\r\nContent-Length: 9\r\n\r\n{\"a\":1}\n",
        "\x01\x02garbage\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof reqs / sizeof reqs[0]; i++) {
        fake *f = fake_new(1 << 20, NULL);
        feed(f, reqs[i]);
        assert_int_equal(f->records, 0);
        assert_non_null(strstr(f->out, "HTTP/1.1 400 "));
        assert_true(f->ended);
        /* nothing after the refusal is parsed */
        feed(f, "POST /ingest HTTP/1.1\r\nContent-Length: 8\r\n\r\n{\"a\":1}\n");
        assert_int_equal(f->records, 0);
        fake_free(f);
    }
}

static void test_http_header_limits_are_431(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    feed(f, "GET / HTTP/1.1\r\nX-Big: ");
    char pad[4096];
    memset(pad, 'a', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    for (int i = 0; i < 5 && !f->ended; i++)
        feed(f, pad);
    assert_non_null(strstr(f->out, "HTTP/1.1 431 "));
    assert_true(f->ended);
    fake_free(f);
    f = fake_new(1 << 20, NULL);
    feed(f, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 101 && !f->ended; i++)
        feed(f, "X-A: b\r\n");
    assert_non_null(strstr(f->out, "HTTP/1.1 431 "));
    fake_free(f);
}

/* An input's max_header_bytes and max_headers (config) replace the
 * defaults: past either, 431 naming the limit. */
static void test_http_configured_header_limits_are_431(void **state)
{
    (void)state;
    hp_limits lim = {.max_body_bytes = 1 << 20, .max_line_bytes = 1024,
                     .max_header_bytes = 1024, .max_headers = 8};
    fake *f = fake_new_lim(&lim, NULL);
    char pad[1100];
    memset(pad, 'p', sizeof pad - 1);
    pad[sizeof pad - 1] = '\0';
    feed(f, "GET / HTTP/1.1\r\nX-Big: ");
    feed(f, pad);
    assert_non_null(strstr(f->out, "HTTP/1.1 431 "));
    assert_non_null(strstr(f->out, "exceed max_header_bytes (1024)"));
    fake_free(f);

    f = fake_new_lim(&lim, NULL);
    feed(f, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 8; i++)
        feed(f, "X-A: b\r\n");
    feed(f, "\r\n");
    assert_non_null(strstr(f->out, "HTTP/1.1 200 "));        /* 8 headers: fine */
    feed(f, "GET / HTTP/1.1\r\n");
    for (int i = 0; i < 9; i++)
        feed(f, "X-A: b\r\n");
    assert_non_null(strstr(f->out, "HTTP/1.1 431 "));
    assert_non_null(strstr(f->out, "more than max_headers (8) headers"));
    assert_true(f->ended);
    fake_free(f);
}

/* /ingest: lines that are not JSON objects are rejected in the reply, with
 * their reasons, not counted as accepted; they still go on (to the dead
 * letters, as from any input). */
static void test_http_ingest_reply_counts_invalid_json_as_rejected(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    const char *body = "{\"a\":1}\nnot json\n[1,2]\n\n  {\"b\":2}\n{\"c\":\n";
    char req[256];
    snprintf(req, sizeof req, "POST /ingest HTTP/1.1\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    feed(f, req);
    assert_int_equal(f->records, 5);                 /* all but the blank line go on */
    hp_conn_durable(f->h, f->next_seq);
    assert_non_null(strstr(f->out, "HTTP/1.1 200 OK\r\n"));
    assert_non_null(strstr(f->out, "{\"accepted\":2,\"rejected\":3,\"errors\":["
                                   "\"line 2: invalid JSON: "));
    assert_non_null(strstr(f->out, "\"line 3: not a JSON object\""));
    assert_non_null(strstr(f->out, "\"line 6: invalid JSON: "));
    fake_free(f);
}

static void test_http_busy_is_429_with_retry_after(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    f->busy = true;
    feed(f, "POST /ingest HTTP/1.1\r\nContent-Length: 8\r\n\r\n{\"a\":1}\n");
    assert_int_equal(f->records, 0);
    assert_non_null(strstr(f->out, "HTTP/1.1 429 "));
    assert_non_null(strstr(f->out, "Retry-After: 1\r\n"));
    fake_free(f);
}

static void test_http_bulk_items_and_errors(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    const char *body = "{\"index\":{\"_index\":\"a\",\"_id\":\"x1\"}}\n{\"m\":1}\n"
                       "{\"create\":{}}\n{\"m\":2}\n"
                       "{\"update\":{\"_id\":\"u\"}}\n{\"doc\":{}}\n"
                       "{\"delete\":{\"_id\":\"d\"}}\n";
    char req[1024];
    snprintf(req, sizeof req, "POST /logs/_bulk HTTP/1.1\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    feed(f, req);
    assert_int_equal(f->records, 2);
    assert_string_equal(f->recs, "{\"m\":1}\n{\"m\":2}\n");
    hp_conn_durable(f->h, 100);
    assert_non_null(strstr(f->out, "\"errors\":true "));
    assert_non_null(strstr(f->out, "{\"index\":{\"_index\":\"a\",\"_id\":\"x1\""));
    assert_non_null(strstr(f->out, "{\"create\":{\"_index\":\"logs\",\"_id\":\"pq2\""));
    assert_int_equal(count(f->out, "\"status\":201"), 2);
    assert_int_equal(count(f->out, "\"status\":400"), 2);
    fake_free(f);
}

static void test_http_bulk_malformed_action_takes_nothing(void **state)
{
    (void)state;
    fake *f = fake_new(1 << 20, NULL);
    const char *body = "{\"index\":{}}\n{\"m\":1}\nnot json\n{\"m\":2}\n";
    char req[512];
    snprintf(req, sizeof req, "POST /_bulk HTTP/1.1\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    feed(f, req);
    assert_int_equal(f->records, 0);
    assert_non_null(strstr(f->out, "HTTP/1.1 400 "));
    assert_false(f->ended);                      /* the body was read: keep-alive */
    fake_free(f);
}

/* Bodies held by all connections together stay under the shared cap: a
 * request that would pass it gets 429; the bytes go back once a request
 * is answered or refused. */
static void test_http_bodies_share_one_budget(void **state)
{
    (void)state;
    hp_budget b = {.cap = 100};
    fake *a = fake_new_shared(1 << 20, NULL, &b), *c = fake_new_shared(1 << 20, NULL, &b);
    char body[61];
    memset(body, ' ', 60);
    body[59] = '\n';
    body[60] = '\0';
    memcpy(body, "{\"k\":1}", 7);
    feed(a, "POST /ingest HTTP/1.1\r\nContent-Length: 60\r\n\r\n");
    assert_int_equal(hp_conn_feed(a->h, body, 50), 0);          /* 50 held */
    feed(c, "POST /ingest HTTP/1.1\r\nContent-Length: 60\r\n\r\n");
    feed(c, body);                                              /* 50 + 60 > 100 */
    assert_non_null(strstr(c->out, "HTTP/1.1 429 "));
    assert_int_equal(c->records, 0);
    assert_int_equal(b.used, 50);                               /* c's part went back */
    assert_int_equal(hp_conn_feed(a->h, body + 50, 10), 0);
    assert_int_equal(a->records, 1);
    assert_int_equal(b.used, 0);
    fake_free(c);
    c = fake_new_shared(1 << 20, NULL, &b);
    feed(c, "POST /ingest HTTP/1.1\r\nContent-Length: 60\r\n\r\n");
    feed(c, body);
    assert_int_equal(c->records, 1);
    fake_free(a);
    fake_free(c);
    assert_int_equal(b.used, 0);
}

/* A secret file of the given mode in a fresh directory; returns its path. */
static char *secret_file(const char *text, int mode)
{
    char tmpl[] = "/tmp/test_http_auth_XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *path = malloc(strlen(tmpl) + 8);
    sprintf(path, "%s/token", tmpl);
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(chmod(path, (mode_t)mode), 0);
    return path;
}

static void drop_secret(char *path)
{
    unlink(path);
    *strrchr(path, '/') = '\0';
    rmdir(path);
    free(path);
}

static void test_http_bearer_token_checked(void **state)
{
    (void)state;
    char *path = secret_file("s3cret\n", 0600);
    cf_http cfg = {.bearer_token_file = path};
    hp_auth *a = NULL;
    pq_err e = {0};
    assert_int_equal(hp_auth_load(&a, &cfg, 0, &e), 0);
    fake *f = fake_new(1 << 20, a);
    feed(f, "POST /ingest HTTP/1.1\r\nAuthorization: Bearer s3cres\r\nContent-Length: 8\r\n\r\n"
            "{\"a\":1}\n");
    assert_int_equal(f->records, 0);
    assert_non_null(strstr(f->out, "HTTP/1.1 401 "));
    fake_free(f);
    f = fake_new(1 << 20, a);
    feed(f, "POST /ingest HTTP/1.1\r\nAuthorization: Bearer s3cret\r\nContent-Length: 8\r\n\r\n"
            "{\"a\":1}\n");
    assert_int_equal(f->records, 1);
    fake_free(f);
    hp_auth_free(a);
    assert_true(chmod(path, 0644) == 0);
    assert_int_not_equal(hp_auth_load(&a, &cfg, 0, &e), 0);
    assert_non_null(strstr(e.msg, "group or others"));
    assert_null(strstr(e.msg, "s3cret"));
    drop_secret(path);
}

static void test_http_basic_credentials_checked(void **state)
{
    (void)state;
    char *path = secret_file("elastic:changeme\n", 0600);
    cf_http cfg = {.basic_file = path};
    hp_auth *a = NULL;
    pq_err e = {0};
    assert_int_equal(hp_auth_load(&a, &cfg, 0, &e), 0);
    assert_true(hp_auth_check(a, "Basic ZWxhc3RpYzpjaGFuZ2VtZQ==", 30));
    assert_false(hp_auth_check(a, "Basic ZWxhc3RpYzpjaGFuZ2VtZA==", 30));
    assert_false(hp_auth_check(a, NULL, 0));
    hp_auth_free(a);
    drop_secret(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_http_ingest_reply_waits_for_the_spool),
        cmocka_unit_test(test_http_pipelined_replies_keep_request_order),
        cmocka_unit_test(test_http_gzip_body_is_inflated),
        cmocka_unit_test(test_http_gzip_bomb_is_413_not_buffered),
        cmocka_unit_test(test_http_body_over_limit_is_413_before_reading),
        cmocka_unit_test(test_http_smuggling_is_400_and_close),
        cmocka_unit_test(test_http_header_limits_are_431),
        cmocka_unit_test(test_http_configured_header_limits_are_431),
        cmocka_unit_test(test_http_ingest_reply_counts_invalid_json_as_rejected),
        cmocka_unit_test(test_http_busy_is_429_with_retry_after),
        cmocka_unit_test(test_http_bulk_items_and_errors),
        cmocka_unit_test(test_http_bulk_malformed_action_takes_nothing),
        cmocka_unit_test(test_http_bodies_share_one_budget),
        cmocka_unit_test(test_http_bearer_token_checked),
        cmocka_unit_test(test_http_basic_credentials_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
