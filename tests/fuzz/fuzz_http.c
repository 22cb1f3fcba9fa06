/* fuzz_http.c - libFuzzer target for an HTTP connection's request path
 * (daemon/ingest/http_conn.c and the endpoints behind it), without
 * sockets: framing (Content-Length, chunked, pipelining), header limits,
 * gzip bodies and the reply queue.
 *
 * Input: byte 0 picks the mode: bit 0 busy (429), bit 1 a 1 KiB body
 * limit (else 64 KiB), bit 2 "wrapped": the rest is the body of one
 * gzip + chunked POST /ingest built here (chunk sizes from byte 1), so
 * the inflater and the chunk parser see compressed data the fuzzer could
 * not produce itself; else the rest are reads as in fuzz_conn.c (a length
 * byte L and L bytes), with the spool made durable after every odd read.
 *
 * Checked: records never exceed max_line_bytes; the replies written are
 * a sequence of complete HTTP/1.1 responses (status line, headers, a
 * Content-Length body); once everything is durable no reply waits; after
 * a "Connection: close" reply nothing more is written. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "counters.h"
#include "http_conn.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_http: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

#define MAX_LINE 256

typedef struct fz {
    char *out;
    size_t len, cap;
    uint64_t next_seq, durable;
    bool ended, waiting, busy, closed_reply;
} fz;

static int f_write(void *u, const char *d, size_t n)
{
    fz *z = u;
    CHECK(!z->closed_reply);
    if (z->len + n > z->cap) {
        z->cap = (z->len + n) * 2;
        z->out = realloc(z->out, z->cap);
        CHECK(z->out != NULL);
    }
    memcpy(z->out + z->len, d, n);
    z->len += n;
    if (n > 17 && memmem(d, n, "Connection: close\r\n", 19) != NULL)
        z->closed_reply = true;
    return 0;
}
static void f_end(void *u) { ((fz *)u)->ended = true; }
static void f_hold(void *u, bool h) { (void)u; (void)h; }
static void f_wait(void *u, bool w) { ((fz *)u)->waiting = w; }
static int f_line(void *u, const char *s, const fr_line *l)
{
    fz *z = u;
    (void)s;
    CHECK(l->len <= MAX_LINE);
    if (!l->oversized)
        z->next_seq++;
    return 0;
}
static void f_read_done(void *u) { (void)u; }
static uint64_t f_next_seq(void *u) { return ((fz *)u)->next_seq; }
static void f_want(void *u) { (void)u; }
static bool f_busy(void *u) { return ((fz *)u)->busy; }

/* The replies: complete responses back to back (a 100 Continue has no
 * body; a HEAD reply has a Content-Length but no body). */
static bool at_reply(const fz *z, size_t off)
{
    return off == z->len || (z->len - off >= 9 && memcmp(z->out + off, "HTTP/1.1 ", 9) == 0);
}

static void check_replies(const fz *z)
{
    size_t off = 0;
    while (off < z->len) {
        CHECK(at_reply(z, off) && z->len - off >= 12);
        const char *end = memmem(z->out + off, z->len - off, "\r\n\r\n", 4);
        CHECK(end != NULL);
        size_t next = (size_t)(end - z->out) + 4, blen = 0;
        const char *cl = memmem(z->out + off, next - off, "Content-Length: ", 16);
        if (memcmp(z->out + off + 9, "100", 3) != 0) {
            CHECK(cl != NULL);
            blen = strtoul(cl + 16, NULL, 10);
        }
        if (next + blen <= z->len && at_reply(z, next + blen))
            next += blen;
        else
            CHECK(at_reply(z, next));        /* HEAD */
        off = next;
    }
}

static void wrapped(hp_conn *h, fz *z, const uint8_t *d, size_t n)
{
    uLong cap = compressBound((uLong)n) + 64;
    uint8_t *gz = malloc(cap);
    z_stream s = {0};
    CHECK(deflateInit2(&s, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    s.next_in = (Bytef *)(n > 1 ? d + 1 : d);
    s.avail_in = (uInt)(n > 1 ? n - 1 : 0);
    s.next_out = gz;
    s.avail_out = (uInt)cap;
    CHECK(deflate(&s, Z_FINISH) == Z_STREAM_END);
    size_t glen = s.total_out;
    deflateEnd(&s);
    const char *head = "POST /ingest HTTP/1.1\r\nContent-Encoding: gzip\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n";
    hp_conn_feed(h, head, strlen(head));
    size_t step = n > 0 ? (size_t)d[0] % 97 + 1 : 7;
    char line[32];
    for (size_t off = 0; off < glen; off += step) {
        size_t k = glen - off < step ? glen - off : step;
        int m = snprintf(line, sizeof line, "%zx\r\n", k);
        hp_conn_feed(h, line, (size_t)m);
        hp_conn_feed(h, (const char *)gz + off, k);
        hp_conn_feed(h, "\r\n", 2);
    }
    hp_conn_feed(h, "0\r\n\r\n", 5);
    free(gz);
    (void)z;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    fz z = {.next_seq = 1};
    z.busy = data[0] & 1;
    ls_callbacks cb = {.user = &z, .on_line = f_line, .on_read_done = f_read_done,
                       .next_seq = f_next_seq, .want_durable = f_want, .busy = f_busy};
    hp_io io = {.user = &z, .write = f_write, .end = f_end, .hold = f_hold, .wait = f_wait};
    hp_limits lim = {.max_body_bytes = data[0] & 2 ? 1024 : 65536, .max_line_bytes = MAX_LINE};
    hp_conn *h = hp_conn_new(&lim, "tcp:192.0.2.7:1", &cb, NULL, &io);
    CHECK(h != NULL);
    if (data[0] & 4) {
        wrapped(h, &z, data + 1, size - 1);
    } else {
        size_t i = 1;
        for (int k = 0; i < size; k++) {
            size_t len = data[i++];
            if (len > size - i)
                len = size - i;
            hp_conn_feed(h, (const char *)data + i, len);
            i += len;
            if (k & 1)
                hp_conn_durable(h, z.next_seq);
        }
    }
    hp_conn_durable(h, UINT64_MAX);
    CHECK(!z.waiting);
    check_replies(&z);
    hp_conn_free(h);
    free(z.out);
    return 0;
}
