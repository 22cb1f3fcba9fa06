/* test_spool_format.c - the spool's records on disk (daemon/durability/
 * spool*.c): one record byte by byte, round trips with random lines
 * across reopens, seq continuity across reopen and segment rolls.
 *
 * Real files in a fresh directory under $TMPDIR (or /tmp). Random tests
 * print their seed; SPOOL_SEED=<n> replays one. */
#include "spool_fixture.h"

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
    assert_string_equal(names, "1 7");           /* 1 goes at the next commit */
    seg_path(p, sizeof p, 7);
    size_t n;
    uint8_t *got = slurp(p, &n);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(got, want, sizeof want);
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
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

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_spool_format_bytes),
        T(test_spool_round_trip_random_lines_across_reopens),
        T(test_spool_seq_continuity_across_reopen_and_segment_rolls),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
