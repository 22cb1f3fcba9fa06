/* fuzz_conn.c - libFuzzer target for a connection's byte handling
 * (daemon/ingest/connection.c: cn_stream_feed / cn_stream_finish, the code
 * read_cb runs), without sockets: the input decides the bytes and where
 * the reads split them.
 *
 * Input: byte 0 picks max_line_bytes (1..64, or up to ~16 KiB to cross
 * the framer's first 4 KiB buffer), byte 1 makes on_line fail at that
 * line (0: never, as a downstream rejection closing the connection),
 * then reads: a length byte L > 0 and L bytes; L == 0 and two bytes
 * (c, k) is a read of (k + 1) * 64 copies of c, so long lines cost little
 * input. The stream ends with EOF/reset (cn_stream_finish) unless on_line
 * failed.
 *
 * Checked: the lines delivered are exactly what an independent splitter
 * makes of the concatenated reads ('\n' ends a line, one trailing '\r'
 * goes, blank lines are skipped, a line over max_line_bytes is cut to
 * max_line_bytes, flagged and carries its full length), with line
 * numbers; no line exceeds max_line_bytes; the framer never holds more
 * than max_line_bytes + 1 and holds nothing between lines; on_read_done
 * runs once per read that delivered a line; the byte and record
 * counters add up. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "counters.h"

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz_conn: check failed: %s (line %d)\n", #cond, __LINE__); \
        abort(); } } while (0)

#define MAX_STREAM (8u << 20)

typedef struct got {
    char *data;
    size_t len, total;
    uint64_t lineno;
    bool oversized;
} got;

typedef struct fz {
    size_t max;
    uint64_t stop_at;            /* 0: never */
    got *lines;
    size_t n, cap;
    size_t read_done;
} fz;

static int on_line(void *user, const char *source, const fr_line *l)
{
    fz *z = user;
    CHECK(strcmp(source, "tcp:192.0.2.7:51234") == 0);
    CHECK(l->len <= z->max);
    CHECK(l->oversized ? l->total > z->max && l->len == z->max : l->len == l->total);
    if (z->n == z->cap) {
        z->cap = z->cap ? z->cap * 2 : 16;
        z->lines = realloc(z->lines, z->cap * sizeof *z->lines);
        CHECK(z->lines != NULL);
    }
    got *g = &z->lines[z->n++];
    g->data = malloc(l->len + 1);
    CHECK(g->data != NULL);
    memcpy(g->data, l->data, l->len);
    g->len = l->len;
    g->total = l->total;
    g->lineno = l->lineno;
    g->oversized = l->oversized;
    return z->stop_at != 0 && z->n == z->stop_at ? 7 : 0;
}

static void on_read_done(void *user)
{
    ((fz *)user)->read_done++;
}

/* Memory bounded: at most max + 1 bytes, and none between lines. */
static void check_framer(const cn_stream *st, size_t max)
{
    CHECK(st->fr.len <= max + 1);
    CHECK(st->fr.cap <= max + 1);
    if (fr_pending(&st->fr) == 0)
        CHECK(st->fr.buf == NULL && st->fr.cap == 0);
}

static bool blank(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
            return false;
    return true;
}

/* The independent splitter: compares the line [p, p + n) (its '\n'
 * excluded), number lineno, with the next delivered one. */
static void expect(const fz *z, size_t *next, const uint8_t *p, size_t n, uint64_t lineno)
{
    if (n > 0 && p[n - 1] == '\r')
        n--;
    bool over = n > z->max;
    if (!over && blank(p, n))
        return;
    if (*next >= z->n) {
        CHECK(z->stop_at != 0);  /* only a failing on_line ends delivery early */
        return;
    }
    const got *g = &z->lines[(*next)++];
    CHECK(g->lineno == lineno);
    CHECK(g->oversized == over);
    CHECK(g->total == n);
    CHECK(g->len == (over ? z->max : n));
    CHECK(memcmp(g->data, p, g->len) == 0);
}

static void check_lines(const fz *z, const uint8_t *s, size_t len, bool finished)
{
    size_t next = 0, start = 0;
    uint64_t lineno = 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '\n') {
            expect(z, &next, s + start, i - start, ++lineno);
            start = i + 1;
        }
    if (finished && start < len)
        expect(z, &next, s + start, len - start, ++lineno);
    CHECK(next == z->n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    fz z = {0};
    z.max = data[0] & 0x40 ? 1 + ((size_t)(data[0] & 0x3F) << 8) : 1 + (data[0] & 0x3F);
    z.stop_at = data[1];
    ls_callbacks cb = {.user = &z, .on_line = on_line, .on_read_done = on_read_done};
    cn_stream st;
    CHECK(cn_stream_init(&st, z.max, "tcp:192.0.2.7:51234", &cb) == 0);
    uint64_t bytes0 = dm_get(&dm_counters_global.bytes_received);
    uint64_t recs0 = dm_get(&dm_counters_global.records_received);

    size_t len = 0, cap = 256, pos = 2;
    uint8_t *stream = malloc(cap);
    static uint8_t run[256 * 64];
    CHECK(stream != NULL);
    int rc = 0;
    while (rc == 0 && pos < size) {
        const uint8_t *chunk;
        size_t n = data[pos++];
        if (n == 0) {                             /* a run of one byte */
            uint8_t c = pos < size ? data[pos] : 'x';
            size_t k = pos + 1 < size ? data[pos + 1] : 0;
            pos += 2;
            n = (k + 1) * 64;
            memset(run, c, n);
            chunk = run;
        } else {
            if (n > size - pos)
                n = size - pos;
            chunk = data + pos;
            pos += n;
        }
        if (len + n > MAX_STREAM)
            break;
        if (len + n > cap) {
            cap = (len + n) * 2;
            stream = realloc(stream, cap);
            CHECK(stream != NULL);
        }
        memcpy(stream + len, chunk, n);
        len += n;
        size_t lines = z.n, done = z.read_done;
        rc = cn_stream_feed(&st, chunk, n);
        CHECK(rc == 0 || rc == 7);
        CHECK(z.read_done == done + (z.n > lines ? 1 : 0));
        if (rc == 0)
            check_framer(&st, z.max);
    }
    bool finished = rc == 0;
    CHECK(finished || z.n == z.stop_at);
    if (finished) {                               /* EOF or reset: the last line counts */
        size_t lines = z.n, done = z.read_done;
        rc = cn_stream_finish(&st);
        CHECK(rc == 0 || rc == 7);
        CHECK(z.read_done == done + (z.n > lines ? 1 : 0));
        CHECK(st.fr.buf == NULL);
    }
    check_lines(&z, stream, len, finished);
    CHECK(dm_get(&dm_counters_global.bytes_received) - bytes0 == len);
    CHECK(dm_get(&dm_counters_global.records_received) - recs0 == z.n);
    cn_stream_free(&st);
    for (size_t i = 0; i < z.n; i++)
        free(z.lines[i].data);
    free(z.lines);
    free(stream);
    return 0;
}
