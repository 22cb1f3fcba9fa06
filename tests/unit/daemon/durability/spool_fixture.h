/* spool_fixture.h - what the spool's tests share (test_crc32c.c,
 * test_spool_format.c, test_spool_commit.c, test_spool_damage.c,
 * test_spool_reader.c, test_spool_faults.c): a fresh directory per test
 * (root, the spool in root/spool), a seeded PRNG (SPOOL_SEED=<n> replays
 * a seed), reading and writing whole files, the segments present, opening
 * and flushing without an error, and lines that can be told apart by seq
 * (append_seq_lines, expect_seq_lines).
 *
 * Real files under $TMPDIR (or /tmp). Included by one test file per
 * executable. Each file uses only some of the helpers, so an unused one
 * is no warning here (and only here). */
#ifndef PQ_SPOOL_FIXTURE_H
#define PQ_SPOOL_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "spool.h"
#include "spool_int.h"
#include "tmpdir.h"

static char root[512];     /* this test's directory */
static char dir[600];      /* the spool under test: root/spool */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

/* ---- helpers ------------------------------------------------------------------ */

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/test_spool_XXXXXX", t && *t ? t : "/tmp");
    if (mkdtemp(root) == NULL)
        return -1;
    snprintf(dir, sizeof dir, "%s/spool", root);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    pqt_rm_rf(root);
    return 0;
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static uint64_t seed_rng(const char *test)
{
    const char *env = getenv("SPOOL_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ (uint64_t)getpid();
    if (seed == 0)
        seed = 1;
    rng_state = seed;
    print_message("%s: seed %" PRIu64 " (SPOOL_SEED=%" PRIu64 " replays it)\n", test, seed,
                  seed);
    return seed;
}

static void seg_path(char *out, size_t n, uint64_t first)
{
    snprintf(out, n, "%s/%020" PRIu64 ".spool", dir, first);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)sz + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return p;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : UINT64_MAX;
}

/* The segment first seqs present in dir, ascending, as "1 4 7". */
static void segments(char *out, size_t n)
{
    uint64_t *v = NULL;
    size_t k = 0;
    pq_err err = {0};
    assert_int_equal(sp_seg_list(dir, &v, &k, &err), 0);
    out[0] = '\0';
    for (size_t i = 0; i < k; i++)
        snprintf(out + strlen(out), n - strlen(out), "%s%" PRIu64, i ? " " : "", v[i]);
    free(v);
}

static uint64_t segments_bytes(void)
{
    uint64_t *v = NULL, sum = 0;
    size_t k = 0;
    pq_err err = {0};
    assert_int_equal(sp_seg_list(dir, &v, &k, &err), 0);
    for (size_t i = 0; i < k; i++) {
        char p[700];
        seg_path(p, sizeof p, v[i]);
        sum += file_size(p);
    }
    free(v);
    return sum;
}

static sp_spool *open_ok(uint64_t segment_bytes, sp_open_report *rep)
{
    sp_spool *s = NULL;
    pq_err err = {0};
    int rc = sp_open(&s, dir, segment_bytes, rep, &err);
    if (rc != 0)
        print_error("sp_open: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_non_null(s);
    return s;
}

/* A deterministic line for seq: "line <seq> " padded with 'x' to a length
 * that varies with seq. */
static size_t make_line(char *buf, uint64_t seq)
{
    int n = sprintf(buf, "{\"seq\":%" PRIu64 ",\"pad\":\"", seq);
    size_t pad = (size_t)(seq * 7 % 23);
    memset(buf + n, 'x', pad);
    n += (int)pad;
    n += sprintf(buf + n, "\"}");
    return (size_t)n;
}

static void append_seq_lines(sp_spool *s, size_t count)
{
    pq_err err = {0};
    char line[128];
    for (size_t i = 0; i < count; i++) {
        uint64_t want = sp_next_seq(s), got = 0;
        size_t n = make_line(line, want);
        assert_int_equal(sp_append(s, (int64_t)want * 1000, "tcp:1.2.3.4:5", 13, line, n, &got,
                                   &err), 0);
        assert_int_equal(got, want);
    }
}

static void flush_ok(sp_spool *s)
{
    pq_err err = {0};
    int rc = sp_flush(s, &err);
    if (rc != 0)
        print_error("sp_flush: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(sp_pending_bytes(s), 0);
    assert_int_equal(sp_flushed_seq(s), sp_next_seq(s));
}

/* Replays from `from` and checks the records are exactly first..last-1
 * with make_line's lines (over a spool only fed by append_seq_lines). */
static void expect_seq_lines(const sp_spool *s, uint64_t from, uint64_t first, uint64_t end)
{
    sp_reader *r;
    pq_err err = {0};
    assert_int_equal(sp_reader_open(&r, s, from, &err), 0);
    sp_record rec;
    char line[128];
    uint64_t want = first;
    int rc;
    while ((rc = sp_reader_next(r, &rec, &err)) == 1) {
        assert_int_equal(rec.seq, want);
        size_t n = make_line(line, want);
        assert_int_equal(rec.len, n);
        assert_memory_equal(rec.line, line, n);
        assert_int_equal(rec.source_len, 13);
        assert_memory_equal(rec.source, "tcp:1.2.3.4:5", 13);
        assert_int_equal(rec.ingest_us, (int64_t)want * 1000);
        want++;
    }
    if (rc != 0)
        print_error("sp_reader_next: %s\n", err.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(want, end);
    sp_reader_close(r);
}

#pragma GCC diagnostic pop

#endif
