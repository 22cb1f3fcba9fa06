/* test_spool.c - the spool (daemon/durability/spool*.c, daemon/durability/crc32c.c): the on-disk
 * bytes, round trips with random lines, seq continuity across reopen and
 * segment rolls, trimming on commit, the publication intent across a
 * crash, torn and garbled tails, a corrupt checkpoint, a failing write
 * (RLIMIT_FSIZE), and a reader running alongside appends.
 *
 * Real files in a fresh directory under $TMPDIR (or /tmp). Random tests
 * print their seed; SPOOL_SEED=<n> replays one. */
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

/* ---- CRC32C ------------------------------------------------------------------- */

static void test_crc32c_known_vectors(void **state)
{
    (void)state;
    uint8_t zeros[32] = {0}, ones[32], inc[32];
    memset(ones, 0xFF, sizeof ones);
    for (int i = 0; i < 32; i++)
        inc[i] = (uint8_t)i;
    /* RFC 3720 B.4 (iSCSI) and the "123456789" check value. */
    uint32_t (*const impls[2])(uint32_t, const void *, size_t) = {crc32c, crc32c_sw};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(impls[k](0, "123456789", 9), 0xE3069283u);
        assert_int_equal(impls[k](0, zeros, 32), 0x8A9136AAu);
        assert_int_equal(impls[k](0, ones, 32), 0x62A8AB43u);
        assert_int_equal(impls[k](0, inc, 32), 0x46DD794Eu);
        assert_int_equal(impls[k](0, "", 0), 0);
    }
}

static void test_crc32c_hardware_and_tables_agree_at_every_length_and_alignment(void **state)
{
    (void)state;
    seed_rng(__func__);
    uint8_t buf[600];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (uint8_t)rnd();
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n + off <= 520; n++) {
            const uint32_t a = crc32c(0, buf + off, n), b = crc32c_sw(0, buf + off, n);
            assert_int_equal(a, b);
            /* Extending equals the CRC of the concatenation. */
            const size_t cut = n / 3;
            assert_int_equal(crc32c(crc32c(0, buf + off, cut), buf + off + cut, n - cut), a);
        }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Prints the throughput of both implementations. Only a generous floor is
 * asserted (the machine is shared and may run sanitizers). */
static void test_crc32c_speed(void **state)
{
    (void)state;
    const size_t n = (size_t)16 << 20;
    uint8_t *p = malloc(n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 131 + 7);
    uint32_t sink = 0;
    double t0 = now_s();
    for (int i = 0; i < 4; i++)
        sink ^= crc32c_sw(sink, p, n);
    double t1 = now_s();
    for (int i = 0; i < 4; i++)
        sink ^= crc32c(sink, p, n);
    double t2 = now_s();
    const double sw = 4.0 * (double)n / (t1 - t0) / 1e9, hw = 4.0 * (double)n / (t2 - t1) / 1e9;
    print_message("crc32c: slice-by-8 %.2f GB/s, dispatched %.2f GB/s (%08x)\n", sw, hw, sink);
    assert_true(sw > 0.05);
    free(p);
}

/* ---- format --------------------------------------------------------------------- */

/* One record written out byte by byte (CRCs from an independent bitwise
 * CRC32C), so the format in spool.c's header comment is what lands. */
static void test_spool_format_bytes(void **state)
{
    (void)state;
    static const uint8_t want[] = {
        /* header: "PQSPOOL\0", version 1, first seq 7, CRC32C */
        0x50, 0x51, 0x53, 0x50, 0x4F, 0x4F, 0x4C, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x33, 0x91, 0xBD, 0x6B,
        /* record: length 27, CRC32C, seq 7, ingest_us -2, source "tcp", {"a":1} */
        0x1B, 0x00, 0x00, 0x00, 0xEB, 0xDE, 0xDE, 0xFB, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x03, 0x74, 0x63, 0x70,
        0x7B, 0x22, 0x61, 0x22, 0x3A, 0x31, 0x7D};
    pq_err err = {0};
    sp_spool *s = open_ok(0, NULL);
    append_seq_lines(s, 6);
    flush_ok(s);
    assert_int_equal(sp_checkpoint_commit(s, 7, &err), 0);
    uint64_t seq;
    assert_int_equal(sp_append(s, -2, "tcp", 3, "{\"a\":1}", 7, &seq, &err), 0);
    assert_int_equal(seq, 7);
    assert_int_equal(sp_pending_bytes(s), sizeof want - 24);
    flush_ok(s);
    char p[700], names[200];
    segments(names, sizeof names);
    assert_string_equal(names, "7");
    seg_path(p, sizeof p, 7);
    size_t n;
    uint8_t *got = slurp(p, &n);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(sp_disk_bytes(s), sizeof want);
    free(got);
    sp_close(s);
}

/* ---- round trips ---------------------------------------------------------------- */

typedef struct line_rec {
    uint8_t *line;
    size_t len;
    char source[300];
    size_t source_len;
    int64_t ingest_us;
} line_rec;

static void random_record(line_rec *r)
{
    const uint64_t k = rnd() % 10;
    r->len = k < 2 ? 0 : k < 8 ? rnd() % 200 : rnd() % (64 * 1024 + 1);
    r->line = malloc(r->len ? r->len : 1);
    assert_non_null(r->line);
    for (size_t i = 0; i < r->len; i++)
        r->line[i] = (uint8_t)rnd();         /* any bytes, NUL and '\n' included */
    r->source_len = rnd() % 4 == 0 ? 0 : rnd() % 300;
    for (size_t i = 0; i < r->source_len; i++)
        r->source[i] = (char)(rnd() % 256);
    r->ingest_us = (int64_t)rnd();
}

static void check_record(const sp_record *got, const line_rec *want, uint64_t seq)
{
    assert_int_equal(got->seq, seq);
    assert_int_equal(got->len, want->len);
    assert_memory_equal(got->line, want->line, want->len);
    const size_t sl = want->source_len > SP_SOURCE_MAX ? SP_SOURCE_MAX : want->source_len;
    assert_int_equal(got->source_len, sl);
    assert_memory_equal(got->source, want->source, sl);
    assert_int_equal(got->ingest_us, want->ingest_us);
}

/* Random lines (0..64 KiB of any bytes, sources up to 300 bytes, cut to
 * 255), flushed at random points, reopened at random points, small
 * segments: every record replays, from the start and from the middle. */
static void test_spool_round_trip_random_lines_across_reopens(void **state)
{
    (void)state;
    seed_rng(__func__);
    enum { N = 400 };
    line_rec *recs = calloc(N, sizeof *recs);
    assert_non_null(recs);
    pq_err err = {0};
    sp_spool *s = open_ok(256 * 1024, NULL);
    for (size_t i = 0; i < N; i++) {
        random_record(&recs[i]);
        uint64_t seq;
        assert_int_equal(sp_append(s, recs[i].ingest_us, recs[i].source, recs[i].source_len,
                                   recs[i].line, recs[i].len, &seq, &err), 0);
        assert_int_equal(seq, i + 1);
        if (rnd() % 8 == 0)
            flush_ok(s);
        if (rnd() % 50 == 0) {
            flush_ok(s);
            assert_int_equal(sp_sync(s, &err), 0);
            sp_close(s);
            sp_open_report rep;
            s = open_ok(256 * 1024, &rep);
            assert_string_equal(rep.warning, "");
            assert_int_equal(rep.bytes_cut, 0);
            assert_int_equal(rep.records, i + 1);
            assert_int_equal(sp_next_seq(s), i + 2);
        }
    }
    flush_ok(s);
    assert_int_equal(sp_sync(s, &err), 0);
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    char names[4096];
    segments(names, sizeof names);
    assert_true(strchr(names, ' ') != NULL);      /* it rolled */
    for (int pass = 0; pass < 2; pass++) {
        const uint64_t from = pass == 0 ? 1 : 1 + rnd() % N;
        sp_reader *r;
        assert_int_equal(sp_reader_open(&r, s, from, &err), 0);
        sp_record rec;
        uint64_t seq = from;
        int rc;
        while ((rc = sp_reader_next(r, &rec, &err)) == 1) {
            check_record(&rec, &recs[seq - 1], seq);
            seq++;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(seq, N + 1);
        sp_reader_close(r);
    }
    sp_close(s);
    for (size_t i = 0; i < N; i++)
        free(recs[i].line);
    free(recs);
}

static void test_spool_seq_continuity_across_reopen_and_segment_rolls(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(100, NULL);      /* every flush of 2+ records rolls */
    assert_int_equal(sp_next_seq(s), 1);
    assert_int_equal(sp_committed(s), 1);
    for (int i = 0; i < 5; i++) {
        append_seq_lines(s, 2);
        flush_ok(s);
    }
    char names[200];
    segments(names, sizeof names);
    assert_string_equal(names, "1 3 5 7 9");
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    assert_int_equal(sp_sync(s, &err), 0);
    sp_close(s);

    sp_open_report rep;
    s = open_ok(50, &rep);                  /* every segment is full */
    assert_int_equal(rep.segments, 5);
    assert_int_equal(rep.records, 10);
    assert_string_equal(rep.warning, "");
    assert_int_equal(sp_next_seq(s), 11);
    assert_int_equal(sp_flushed_seq(s), 11);
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    append_seq_lines(s, 1);
    flush_ok(s);                            /* segment 9 is full: a new one */
    append_seq_lines(s, 2);
    flush_ok(s);
    segments(names, sizeof names);
    assert_string_equal(names, "1 3 5 7 9 11 12");
    /* Every header carries its file's first seq. */
    for (uint64_t f = 1; f <= 12; f++) {
        char p[700];
        seg_path(p, sizeof p, f);
        if (file_size(p) == UINT64_MAX)
            continue;
        size_t n;
        uint8_t *b = slurp(p, &n);
        assert_true(n > 24);
        assert_int_equal(sp_get64(b + 12), f);
        assert_int_equal(sp_get64(b + 24 + 8), f);   /* and so does its first record */
        free(b);
    }
    expect_seq_lines(s, 1, 1, 14);
    expect_seq_lines(s, 6, 6, 14);
    sp_close(s);
    /* Reopening a spool whose last segment is below the limit appends to it. */
    s = open_ok(1 << 20, NULL);
    append_seq_lines(s, 3);
    flush_ok(s);
    segments(names, sizeof names);
    assert_string_equal(names, "1 3 5 7 9 11 12");
    expect_seq_lines(s, 1, 1, 17);
    sp_close(s);
}

/* ---- commit, trim, intent -------------------------------------------------------- */

static void test_spool_commit_trims_exactly_the_segments_below_the_watermark(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(100, NULL);
    for (int i = 0; i < 4; i++) {
        append_seq_lines(s, 3);
        flush_ok(s);
    }
    char names[200];
    segments(names, sizeof names);
    assert_string_equal(names, "1 4 7 10");      /* 1..3, 4..6, 7..9, 10..12 */
    assert_int_equal(sp_checkpoint_commit(s, 3, &err), 0);
    segments(names, sizeof names);
    assert_string_equal(names, "1 4 7 10");      /* seq 3 is not committed yet */
    assert_int_equal(sp_checkpoint_commit(s, 4, &err), 0);
    segments(names, sizeof names);
    assert_string_equal(names, "4 7 10");
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    assert_int_equal(sp_checkpoint_commit(s, 6, &err), 0);
    segments(names, sizeof names);
    assert_string_equal(names, "4 7 10");
    assert_int_equal(sp_checkpoint_commit(s, 10, &err), 0);
    segments(names, sizeof names);
    assert_string_equal(names, "10");
    assert_int_equal(sp_committed(s), 10);
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    expect_seq_lines(s, sp_committed(s), 10, 13);
    /* Going backwards or past what exists is a caller bug. */
    assert_int_equal(sp_checkpoint_commit(s, 9, &err), PQ_EINVAL);
    assert_int_equal(sp_checkpoint_commit(s, 14, &err), PQ_EINVAL);
    /* Everything committed: the current segment goes too, the next flush
     * starts a new one. */
    append_seq_lines(s, 1);                      /* seq 13, pending */
    assert_int_equal(sp_checkpoint_commit(s, 13, &err), 0);
    segments(names, sizeof names);
    assert_string_equal(names, "");
    assert_int_equal(sp_disk_bytes(s), 0);
    flush_ok(s);
    segments(names, sizeof names);
    assert_string_equal(names, "13");
    sp_close(s);
    /* The watermark survives a restart; replay starts there. */
    sp_open_report rep;
    s = open_ok(100, &rep);
    assert_int_equal(sp_committed(s), 13);
    assert_int_equal(sp_next_seq(s), 14);
    assert_int_equal(rep.records, 1);
    expect_seq_lines(s, sp_committed(s), 13, 14);
    sp_close(s);
}

/* After everything is committed and trimmed, seqs still continue across a
 * restart (the watermark, not the segments, says where). */
static void test_spool_seq_continues_from_the_watermark_when_no_segment_is_left(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(0, NULL);
    append_seq_lines(s, 5);
    flush_ok(s);
    assert_int_equal(sp_checkpoint_commit(s, 6, &err), 0);
    sp_close(s);
    s = open_ok(0, NULL);
    assert_int_equal(sp_next_seq(s), 6);
    assert_int_equal(sp_committed(s), 6);
    assert_int_equal(sp_disk_bytes(s), 0);
    append_seq_lines(s, 1);
    flush_ok(s);
    expect_seq_lines(s, 1, 6, 7);
    sp_close(s);
}

/* The crash between the rename of a Parquet file and sp_checkpoint_commit:
 * the intent is on disk, the commit is not. */
static void intent_then_crash(bool final_exists)
{
    pq_err err = {0};
    char final_path[700];
    snprintf(final_path, sizeof final_path, "%s/out file\nwith newline.parquet", root);
    sp_spool *s = open_ok(100, NULL);
    for (int i = 0; i < 3; i++) {
        append_seq_lines(s, 3);
        flush_ok(s);
    }
    assert_int_equal(sp_checkpoint_commit(s, 4, &err), 0);
    assert_int_equal(sp_checkpoint_intent(s, final_path, 8, &err), 0);
    sp_close(s);                                 /* the crash */
    if (final_exists)
        spit(final_path, "PAR1", 4);
    sp_open_report rep;
    s = open_ok(100, &rep);
    char names[200];
    segments(names, sizeof names);
    if (final_exists) {
        assert_int_equal(sp_committed(s), 8);
        assert_non_null(strstr(rep.warning, "had completed"));
        assert_string_equal(names, "7");         /* 4..6 trimmed */
        assert_int_equal(rep.records, 2);
        expect_seq_lines(s, sp_committed(s), 8, 10);
    } else {
        assert_int_equal(sp_committed(s), 4);
        assert_non_null(strstr(rep.warning, "had not completed"));
        assert_string_equal(names, "4 7");
        assert_int_equal(rep.records, 6);
        expect_seq_lines(s, sp_committed(s), 4, 10);
    }
    assert_int_equal(sp_next_seq(s), 10);
    sp_close(s);
    /* Settled for good: the checkpoint was rewritten without the intent,
     * so removing the file now changes nothing. */
    unlink(final_path);
    s = open_ok(100, &rep);
    assert_string_equal(rep.warning, "");
    assert_int_equal(sp_committed(s), final_exists ? 8 : 4);
    sp_close(s);
}

static void test_spool_intent_with_the_final_file_present_counts_as_committed(void **state)
{
    (void)state;
    intent_then_crash(true);
}

static void test_spool_intent_without_the_final_file_is_dropped(void **state)
{
    (void)state;
    intent_then_crash(false);
}

static void test_spool_intent_rejects_seqs_outside_the_spool(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(0, NULL);
    append_seq_lines(s, 3);
    assert_int_equal(sp_checkpoint_intent(s, "/x.parquet", 5, &err), PQ_EINVAL);
    assert_int_equal(sp_checkpoint_intent(s, "", 2, &err), PQ_EINVAL);
    assert_int_equal(sp_checkpoint_intent(s, "/x.parquet", 4, &err), 0);
    sp_close(s);
}

/* ---- a corrupt checkpoint ---------------------------------------------------------- */

static void test_spool_corrupt_checkpoint_is_an_error(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(0, NULL);
    append_seq_lines(s, 5);
    flush_ok(s);
    assert_int_equal(sp_checkpoint_commit(s, 3, &err), 0);
    sp_close(s);
    char cp[700];
    snprintf(cp, sizeof cp, "%s/checkpoint", dir);
    size_t n;
    uint8_t *good = slurp(cp, &n);
    assert_non_null(memmem(good, n, "committed 3\n", 12));
    /* Every single-byte change, a truncation at every length, and junk. */
    for (size_t i = 0; i <= 2 * n; i++) {
        uint8_t *bad = malloc(n + 1);
        memcpy(bad, good, n);
        size_t bn = n;
        if (i < n)
            bad[i] ^= i % 2 ? 0x01 : 0x20;
        else
            bn = i - n;                          /* truncated to 0..n-1 bytes */
        if (bn == n && i >= n) {
            free(bad);
            continue;
        }
        spit(cp, bad, bn);
        free(bad);
        s = NULL;
        int rc = sp_open(&s, dir, 0, NULL, &err);
        if (bn == 0 && rc == 0) {
            /* An empty file is not "no checkpoint" either. */
            fail_msg("an empty checkpoint opened");
        }
        assert_int_equal(rc, PQ_EIO);
        assert_null(s);
        assert_non_null(strstr(err.msg, "checkpoint"));
        assert_non_null(strstr(err.msg, "refusing"));
    }
    spit(cp, good, n);
    s = open_ok(0, NULL);
    assert_int_equal(sp_committed(s), 3);
    sp_close(s);
    free(good);
}

static void test_spool_corrupt_checkpoint_without_segments_is_ignored(void **state)
{
    (void)state;
    assert_int_equal(mkdir(dir, 0700), 0);
    char cp[700];
    snprintf(cp, sizeof cp, "%s/checkpoint", dir);
    spit(cp, "garbage\n", 8);
    sp_open_report rep;
    sp_spool *s = open_ok(0, &rep);
    assert_non_null(strstr(rep.warning, "ignored"));
    assert_int_equal(sp_committed(s), 1);
    append_seq_lines(s, 2);
    flush_ok(s);
    sp_close(s);
    /* It was replaced by a good one: the next start has segments and
     * must not fail. */
    s = open_ok(0, &rep);
    assert_string_equal(rep.warning, "");
    expect_seq_lines(s, 1, 1, 3);
    sp_close(s);
}

/* ---- torn and garbled tails --------------------------------------------------------- */

typedef struct built {
    uint8_t *bytes[2];       /* segment files 1 and `second` */
    size_t len[2];
    uint64_t second;         /* first seq of the second segment */
    size_t last_start;       /* offset of the second segment's last record */
} built;

/* Segment 1 holds seqs 1..3, the second one 4..6 (flushed separately). */
static void build_two_segments(built *b)
{
    sp_spool *s = open_ok(100, NULL);
    append_seq_lines(s, 3);
    flush_ok(s);
    append_seq_lines(s, 2);
    flush_ok(s);
    sp_close(s);
    char p[700];
    seg_path(p, sizeof p, 4);
    b->second = 4;
    b->last_start = (size_t)file_size(p);
    s = open_ok(1 << 20, NULL);                  /* append seq 6 to segment 4 */
    append_seq_lines(s, 1);
    flush_ok(s);
    sp_close(s);
    seg_path(p, sizeof p, 1);
    b->bytes[0] = slurp(p, &b->len[0]);
    seg_path(p, sizeof p, 4);
    b->bytes[1] = slurp(p, &b->len[1]);
}

static void restore(const built *b, size_t second_len, const uint8_t *second)
{
    pqt_rm_rf(dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    char p[700];
    seg_path(p, sizeof p, 1);
    spit(p, b->bytes[0], b->len[0]);
    seg_path(p, sizeof p, b->second);
    spit(p, second ? second : b->bytes[1], second_len);
}

/* Cuts the last segment at every byte offset: the intact prefix replays,
 * the report says what was cut (file, offset, bytes), appends continue
 * with the right seq. A cut inside the header removes the segment. */
static void test_spool_torn_tail_of_every_length_is_cut(void **state)
{
    (void)state;
    built b;
    build_two_segments(&b);
    char p[700], offset[64];
    seg_path(p, sizeof p, 4);
    const size_t r5 = 24 + 8 + 17 + 13 + make_line((char[128]){0}, 4);
    for (size_t t = 0; t < b.len[1]; t++) {
        restore(&b, t, NULL);
        sp_open_report rep;
        sp_spool *s = open_ok(1 << 20, &rep);
        size_t intact_end;
        uint64_t end;
        if (t >= b.last_start) {
            intact_end = b.last_start;
            end = 6;
        } else if (t >= r5) {
            intact_end = r5;
            end = 5;
        } else {
            intact_end = 0;                      /* no intact record */
            end = 4;
        }
        assert_int_equal(rep.bytes_cut, t - intact_end);
        if (intact_end == 0) {
            assert_int_equal(file_size(p), UINT64_MAX);
            assert_non_null(strstr(rep.warning, p));
            assert_non_null(strstr(rep.warning, "removed the segment"));
        } else if (t > intact_end) {
            assert_int_equal(file_size(p), intact_end);
            assert_non_null(strstr(rep.warning, p));
            snprintf(offset, sizeof offset, "offset %zu:", intact_end);
            assert_non_null(strstr(rep.warning, offset));
            snprintf(offset, sizeof offset, "cut %zu bytes", t - intact_end);
            assert_non_null(strstr(rep.warning, offset));
        } else {
            assert_int_equal(file_size(p), t);
            assert_string_equal(rep.warning, "");
        }
        assert_int_equal(rep.records, end - 1);
        assert_int_equal(sp_next_seq(s), end);
        expect_seq_lines(s, 1, 1, end);
        append_seq_lines(s, 2);
        flush_ok(s);
        expect_seq_lines(s, 1, 1, end + 2);
        sp_close(s);
        /* And the repaired spool opens clean. */
        s = open_ok(1 << 20, &rep);
        assert_string_equal(rep.warning, "");
        sp_close(s);
    }
    free(b.bytes[0]);
    free(b.bytes[1]);
}

/* Every byte of the last segment's middle record flipped: detected, the
 * segment is cut right before it. */
static void test_spool_garbled_byte_in_the_last_segment_is_detected_and_cut(void **state)
{
    (void)state;
    built b;
    build_two_segments(&b);
    const size_t r5 = 24 + 8 + 17 + 13 + make_line((char[128]){0}, 4);
    uint8_t *bad = malloc(b.len[1]);
    char p[700];
    seg_path(p, sizeof p, 4);
    for (size_t i = r5; i < b.last_start; i++)
        for (int flip = 0; flip < 2; flip++) {
            memcpy(bad, b.bytes[1], b.len[1]);
            bad[i] ^= flip ? 0xFF : 0x01 << (i % 8);
            restore(&b, b.len[1], bad);
            sp_open_report rep;
            sp_spool *s = open_ok(1 << 20, &rep);
            assert_int_equal(rep.bytes_cut, b.len[1] - r5);
            assert_int_equal(file_size(p), r5);
            char offset[64];
            snprintf(offset, sizeof offset, "offset %zu:", r5);
            assert_non_null(strstr(rep.warning, offset));
            assert_int_equal(sp_next_seq(s), 5);
            expect_seq_lines(s, 1, 1, 5);
            sp_close(s);
        }
    free(bad);
    free(b.bytes[0]);
    free(b.bytes[1]);
}

/* A bad record in an earlier segment: reported, nothing cut; the reader
 * reports it (file and offset) and goes on with the next segment. */
static void test_spool_garbled_byte_in_an_earlier_segment_is_reported_and_skipped(void **state)
{
    (void)state;
    built b;
    build_two_segments(&b);
    const size_t r2 = 24 + 8 + 17 + 13 + make_line((char[128]){0}, 1);
    for (size_t i = r2; i < r2 + 30; i++) {
        uint8_t *bad = b.bytes[0];
        bad[i] ^= 0x10;
        restore(&b, b.len[1], NULL);
        bad[i] ^= 0x10;
        sp_open_report rep;
        sp_spool *s = open_ok(1 << 20, &rep);
        char p[700], offset[64];
        seg_path(p, sizeof p, 1);
        assert_int_equal(rep.bytes_cut, 0);
        assert_int_equal(file_size(p), b.len[0]);
        assert_non_null(strstr(rep.warning, p));
        snprintf(offset, sizeof offset, "offset %zu:", r2);
        assert_non_null(strstr(rep.warning, offset));
        assert_int_equal(rep.records, 4);         /* 1, 4, 5, 6 */
        assert_int_equal(sp_next_seq(s), 7);

        pq_err err = {0};
        sp_reader *r;
        sp_record rec;
        assert_int_equal(sp_reader_open(&r, s, 1, &err), 0);
        assert_int_equal(sp_reader_next(r, &rec, &err), 1);
        assert_int_equal(rec.seq, 1);
        assert_int_equal(sp_reader_next(r, &rec, &err), PQ_EPARSE);
        assert_non_null(strstr(err.msg, p));
        assert_non_null(strstr(err.msg, offset));
        for (uint64_t want = 4; want <= 6; want++) {
            assert_int_equal(sp_reader_next(r, &rec, &err), 1);
            assert_int_equal(rec.seq, want);
        }
        assert_int_equal(sp_reader_next(r, &rec, &err), 0);
        sp_reader_close(r);
        /* Appends continue after the last segment. */
        append_seq_lines(s, 1);
        flush_ok(s);
        assert_int_equal(sp_flushed_seq(s), 8);
        sp_close(s);
    }
    free(b.bytes[0]);
    free(b.bytes[1]);
}

static void test_spool_open_rejects_newer_formats_and_non_directories(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = NULL;
    spit(dir, "x", 1);
    assert_int_equal(sp_open(&s, dir, 0, NULL, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "not a directory"));
    unlink(dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    uint8_t h[24 + 40];
    memset(h, 0, sizeof h);
    sp_header_encode(h, 1);
    sp_put32(h + 8, 2);                          /* version 2, CRC redone */
    sp_put32(h + 20, crc32c(0, h, 20));
    char p[700];
    seg_path(p, sizeof p, 1);
    spit(p, h, sizeof h);
    assert_int_equal(sp_open(&s, dir, 0, NULL, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "newer"));
    assert_non_null(strstr(err.msg, p));
    assert_int_equal(file_size(p), sizeof h);    /* untouched */
}

/* ---- write failures ---------------------------------------------------------------- */

static int set_fsize_limit(rlim_t soft)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0)
        return -1;
    rl.rlim_cur = soft;
    return setrlimit(RLIMIT_FSIZE, &rl);
}

/* A write that fails half-way (RLIMIT_FSIZE: EFBIG, as ENOSPC would) loses
 * nothing: the partial write is cut off, the records stay buffered, and
 * the next flush after the limit is lifted writes them. */
static void test_spool_failed_write_keeps_records_and_leaves_no_partial_record(void **state)
{
    (void)state;
    pq_err err = {0};
    struct rlimit saved;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
    signal(SIGXFSZ, SIG_IGN);
    sp_spool *s = open_ok(4096, NULL);
    append_seq_lines(s, 5);
    flush_ok(s);
    char p[700];
    seg_path(p, sizeof p, 1);
    const uint64_t before = file_size(p);
    append_seq_lines(s, 10);
    const size_t pending = sp_pending_bytes(s);

    assert_int_equal(set_fsize_limit(before + 50), 0);   /* a short write, then EFBIG */
    int rc = sp_flush(s, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    assert_int_equal(rc, PQ_EIO);
    assert_non_null(strstr(err.msg, p));
    assert_non_null(strstr(err.msg, strerror(EFBIG)));
    assert_non_null(strstr(err.msg, "10 records kept"));
    assert_int_equal(file_size(p), before);
    assert_int_equal(sp_pending_bytes(s), pending);
    assert_int_equal(sp_flushed_seq(s), 6);
    assert_int_equal(sp_disk_bytes(s), before);
    expect_seq_lines(s, 1, 1, 6);                /* the file has whole records only */

    flush_ok(s);
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    expect_seq_lines(s, 1, 1, 16);

    /* The same when the flush would start a new segment: the new file
     * goes away and comes back on the retry. */
    append_seq_lines(s, 200);                    /* segment 1 is past 4096 now */
    flush_ok(s);
    append_seq_lines(s, 3);
    assert_int_equal(set_fsize_limit(10), 0);
    rc = sp_flush(s, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
    assert_int_equal(rc, PQ_EIO);
    char names[200];
    segments(names, sizeof names);
    assert_string_equal(names, "1");
    flush_ok(s);
    segments(names, sizeof names);
    assert_string_equal(names, "1 216");
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    expect_seq_lines(s, 1, 1, 219);
    assert_int_equal(sp_sync(s, &err), 0);
    sp_close(s);
    sp_open_report rep;
    s = open_ok(4096, &rep);
    assert_string_equal(rep.warning, "");
    assert_int_equal(sp_next_seq(s), 219);
    sp_close(s);
    signal(SIGXFSZ, SIG_DFL);
}

/* ---- reader and appends -------------------------------------------------------------- */

static void test_spool_reader_sees_records_flushed_after_it_reached_the_end(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(300, NULL);
    append_seq_lines(s, 3);
    flush_ok(s);
    sp_reader *r;
    sp_record rec;
    assert_int_equal(sp_reader_open(&r, s, 1, &err), 0);
    for (uint64_t want = 1; want <= 3; want++) {
        assert_int_equal(sp_reader_next(r, &rec, &err), 1);
        assert_int_equal(rec.seq, want);
    }
    assert_int_equal(sp_reader_next(r, &rec, &err), 0);
    /* Appended but not flushed: not visible. */
    append_seq_lines(s, 2);
    assert_int_equal(sp_reader_next(r, &rec, &err), 0);
    flush_ok(s);
    /* More, rolling several segments, before the reader looks again. */
    for (int i = 0; i < 6; i++) {
        append_seq_lines(s, 2);
        flush_ok(s);
    }
    char names[200];
    segments(names, sizeof names);
    assert_true(strchr(names, ' ') != NULL);
    uint64_t want = 4;
    int rc;
    while ((rc = sp_reader_next(r, &rec, &err)) == 1)
        assert_int_equal(rec.seq, want++);
    assert_int_equal(rc, 0);
    assert_int_equal(want, 18);
    sp_reader_close(r);
    /* A new reader sees everything. */
    expect_seq_lines(s, 1, 1, 18);
    expect_seq_lines(s, 12, 12, 18);
    /* A reader over trimmed segments starts at what is left. */
    assert_int_equal(sp_checkpoint_commit(s, 9, &err), 0);
    expect_seq_lines(s, 9, 9, 18);
    sp_close(s);
}

/* The reader reads in large chunks, not a syscall per record, and a line
 * larger than its chunk still comes back whole. */
static void test_spool_reader_handles_records_larger_than_its_buffer(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(0, NULL);
    const size_t big = SP_CHUNK * 3 + 17;
    char *line = malloc(big);
    for (size_t i = 0; i < big; i++)
        line[i] = (char)(i * 7);
    uint64_t seq;
    assert_int_equal(sp_append(s, 1, "a", 1, "small", 5, &seq, &err), 0);
    assert_int_equal(sp_append(s, 2, "b", 1, line, big, &seq, &err), 0);
    assert_int_equal(sp_append(s, 3, "c", 1, "after", 5, &seq, &err), 0);
    flush_ok(s);
    sp_reader *r;
    sp_record rec;
    assert_int_equal(sp_reader_open(&r, s, 0, &err), 0);
    assert_int_equal(sp_reader_next(r, &rec, &err), 1);
    assert_int_equal(rec.len, 5);
    assert_int_equal(sp_reader_next(r, &rec, &err), 1);
    assert_int_equal(rec.len, big);
    assert_memory_equal(rec.line, line, big);
    assert_int_equal(sp_reader_next(r, &rec, &err), 1);
    assert_memory_equal(rec.line, "after", 5);
    assert_int_equal(sp_reader_next(r, &rec, &err), 0);
    sp_reader_close(r);
    /* Oversized lines are refused without reading them. */
    assert_int_equal(sp_append(s, 4, "d", 1, line, SP_LINE_MAX + 1, &seq, &err), PQ_EINVAL);
    assert_int_equal(sp_next_seq(s), 4);
    free(line);
    sp_close(s);
}

/* A reader on another thread while the loop thread appends, flushes and
 * rolls small segments: it sees every record exactly once, in order, and
 * never a partly written one (a flush in progress reads as "the end"). */
typedef struct tail_ctx {
    const sp_spool *s;
    uint64_t total;
    uint64_t got;
    uint64_t ends;           /* times the reader caught up with the writer */
    int bad;                 /* first failure, for the main thread to assert */
} tail_ctx;

static void *tail_thread(void *arg)
{
    tail_ctx *t = arg;
    sp_reader *r;
    pq_err err = {0};
    if (sp_reader_open(&r, t->s, 1, &err) != 0) {
        t->bad = 1;
        return NULL;
    }
    char line[128];
    sp_record rec;
    for (long spins = 0; t->got < t->total && spins < 50000000; spins++) {
        int rc = sp_reader_next(r, &rec, &err);
        if (rc == 0) {
            t->ends++;
            continue;
        }
        if (rc != 1 || rec.seq != t->got + 1) {
            t->bad = rc != 1 ? 2 : 3;
            break;
        }
        size_t n = make_line(line, rec.seq);
        if (rec.len != n || memcmp(rec.line, line, n) != 0) {
            t->bad = 4;
            break;
        }
        t->got++;
    }
    sp_reader_close(r);
    return NULL;
}

static void test_spool_reader_on_another_thread_alongside_appends(void **state)
{
    (void)state;
    sp_spool *s = open_ok(4096, NULL);
    tail_ctx t = {.s = s, .total = 20000};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, tail_thread, &t), 0);
    for (uint64_t done = 0; done < t.total;) {
        size_t k = 1 + (size_t)(done * 7919 % 37);
        if (done + k > t.total)
            k = (size_t)(t.total - done);
        append_seq_lines(s, k);
        flush_ok(s);
        done += k;
    }
    assert_int_equal(pthread_join(th, NULL), 0);
    print_message("reader: %" PRIu64 " records, caught up with the writer %" PRIu64 " times\n",
                  t.got, t.ends);
    assert_int_equal(t.bad, 0);
    assert_int_equal(t.got, t.total);
    char names[65536];
    segments(names, sizeof names);
    assert_true(strchr(names, ' ') != NULL);
    sp_close(s);
}

/* ---- sync -------------------------------------------------------------------------- */

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int n = 0;
    while (readdir(d) != NULL)
        n++;
    closedir(d);
    return n;
}

/* Rolled segments stay open until sp_sync makes them durable, but never
 * more than SP_UNSYNCED_MAX of them (sync: none never calls sp_sync). */
static void test_spool_sync_covers_rolled_segments_with_bounded_descriptors(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(50, NULL);
    const int base = count_fds();
    for (int i = 0; i < 3; i++) {
        append_seq_lines(s, 1);
        flush_ok(s);
    }
    assert_int_equal(count_fds(), base + 3);     /* current + 2 rolled, unsynced */
    assert_int_equal(sp_sync(s, &err), 0);
    assert_int_equal(count_fds(), base + 1);
    for (int i = 0; i < 3 * SP_UNSYNCED_MAX; i++) {
        append_seq_lines(s, 1);
        flush_ok(s);
    }
    assert_int_equal(count_fds(), base + 1 + SP_UNSYNCED_MAX);
    assert_int_equal(sp_sync(s, &err), 0);
    assert_int_equal(count_fds(), base + 1);
    assert_int_equal(sp_sync(s, &err), 0);      /* nothing dirty: nothing to do */
    sp_close(s);
    assert_int_equal(count_fds(), base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_known_vectors),
        cmocka_unit_test(test_crc32c_hardware_and_tables_agree_at_every_length_and_alignment),
        cmocka_unit_test(test_crc32c_speed),
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_spool_format_bytes),
        T(test_spool_round_trip_random_lines_across_reopens),
        T(test_spool_seq_continuity_across_reopen_and_segment_rolls),
        T(test_spool_commit_trims_exactly_the_segments_below_the_watermark),
        T(test_spool_seq_continues_from_the_watermark_when_no_segment_is_left),
        T(test_spool_intent_with_the_final_file_present_counts_as_committed),
        T(test_spool_intent_without_the_final_file_is_dropped),
        T(test_spool_intent_rejects_seqs_outside_the_spool),
        T(test_spool_corrupt_checkpoint_is_an_error),
        T(test_spool_corrupt_checkpoint_without_segments_is_ignored),
        T(test_spool_torn_tail_of_every_length_is_cut),
        T(test_spool_garbled_byte_in_the_last_segment_is_detected_and_cut),
        T(test_spool_garbled_byte_in_an_earlier_segment_is_reported_and_skipped),
        T(test_spool_open_rejects_newer_formats_and_non_directories),
        T(test_spool_failed_write_keeps_records_and_leaves_no_partial_record),
        T(test_spool_reader_sees_records_flushed_after_it_reached_the_end),
        T(test_spool_reader_handles_records_larger_than_its_buffer),
        T(test_spool_reader_on_another_thread_alongside_appends),
        T(test_spool_sync_covers_rolled_segments_with_bounded_descriptors),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
