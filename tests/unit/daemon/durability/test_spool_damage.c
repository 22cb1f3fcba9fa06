/* test_spool_damage.c - a damaged or failing spool (daemon/durability/
 * spool*.c): torn tails of every length, a garbled byte in the last or an
 * earlier segment, newer formats and non-directories refused at open,
 * and a write that fails (RLIMIT_FSIZE) without a partial record.
 *
 * Real files in a fresh directory under $TMPDIR (or /tmp). */
#include "spool_fixture.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_spool_torn_tail_of_every_length_is_cut),
        T(test_spool_garbled_byte_in_the_last_segment_is_detected_and_cut),
        T(test_spool_garbled_byte_in_an_earlier_segment_is_reported_and_skipped),
        T(test_spool_open_rejects_newer_formats_and_non_directories),
        T(test_spool_failed_write_keeps_records_and_leaves_no_partial_record),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
