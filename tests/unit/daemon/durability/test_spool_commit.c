/* test_spool_commit.c - the spool's watermark (daemon/durability/
 * spool*.c): trimming on commit, the seq after everything was trimmed,
 * the publication intent across a crash, and a corrupt checkpoint.
 *
 * Real files in a fresh directory under $TMPDIR (or /tmp). */
#include "spool_fixture.h"

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
    /* Everything committed: the segment being appended to stays (the
     * publisher never unlinks the appender's file), the next flush starts
     * a new one, and the next commit removes the old one. */
    append_seq_lines(s, 1);                      /* seq 13, pending */
    assert_int_equal(sp_checkpoint_commit(s, 13, &err), 0);
    segments(names, sizeof names);
    assert_string_equal(names, "10");
    flush_ok(s);
    segments(names, sizeof names);
    assert_string_equal(names, "10 13");
    assert_int_equal(sp_checkpoint_commit(s, 13, &err), 0);
    segments(names, sizeof names);
    assert_string_equal(names, "13");
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
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

/* With the remover (spool_reap.c) the commit takes the segments off the
 * list at once and their files go on its thread; after sp_reap_hold (a
 * clean stop) they stay, and the next sp_open leaves them out unread,
 * queued for its own remover, and replays from the watermark. */
static bool segments_are(const char *want)
{
    char names[200];
    for (int i = 0; i < 2000; i++) {     /* 2 s at most */
        segments(names, sizeof names);
        if (strcmp(names, want) == 0)
            return true;
        usleep(1000);
    }
    print_error("segments: %s, wanted %s\n", names, want);
    return false;
}

static void test_spool_remover_unlinks_committed_segments_and_a_hold_leaves_them(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(100, NULL);
    assert_int_equal(sp_reap_start(s, &err), 0);
    for (int i = 0; i < 4; i++) {
        append_seq_lines(s, 3);
        flush_ok(s);
    }
    assert_true(segments_are("1 4 7 10"));
    assert_int_equal(sp_checkpoint_commit(s, 7, &err), 0);
    assert_true(segments_are("7 10"));
    assert_int_equal(sp_disk_bytes(s), segments_bytes());
    sp_reap_hold(s);
    assert_int_equal(sp_checkpoint_commit(s, 10, &err), 0);
    assert_int_equal(sp_committed(s), 10);
    usleep(20000);
    assert_true(segments_are("7 10"));           /* held: 7 stays on disk */
    expect_seq_lines(s, sp_committed(s), 10, 13);
    sp_close(s);
    /* The next start does not read segment 7 and leaves it to its remover
     * (or, without one, to sp_close). */
    sp_open_report rep;
    s = open_ok(100, &rep);
    char names[200];
    segments(names, sizeof names);
    assert_string_equal(names, "7 10");
    assert_int_equal(sp_committed(s), 10);
    assert_int_equal(rep.records, 3);
    expect_seq_lines(s, sp_committed(s), 10, 13);
    sp_close(s);
    segments(names, sizeof names);
    assert_string_equal(names, "10");
    s = open_ok(100, &rep);
    assert_int_equal(sp_reap_start(s, &err), 0);
    assert_true(segments_are("10"));
    expect_seq_lines(s, sp_committed(s), 10, 13);
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
        assert_string_equal(names, "4 7");       /* 4..6 committed: unread, queued */
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
    sp_close(s);                                 /* no remover ran: it unlinks 4 */
    segments(names, sizeof names);
    assert_string_equal(names, final_exists ? "7" : "4 7");
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
    /* Records not yet flushed cannot be in a file: the pipeline gets a
     * line only after its flush. */
    assert_int_equal(sp_checkpoint_intent(s, "/x.parquet", 4, &err), PQ_EINVAL);
    flush_ok(s);
    assert_int_equal(sp_checkpoint_intent(s, "/x.parquet", 5, &err), PQ_EINVAL);
    assert_int_equal(sp_checkpoint_intent(s, "", 2, &err), PQ_EINVAL);
    assert_int_equal(sp_checkpoint_intent(s, "/x.parquet", 4, &err), 0);
    sp_close(s);
}

/* ---- partitioned output: published ranges by key (format 2) ------------------------ */

static void expect_ranges(sp_spool *s, const char *want, uint64_t want_dl)
{
    pq_err err = {0};
    sp_range *r = NULL;
    size_t n = 0;
    uint64_t dl = 0;
    assert_int_equal(sp_published_ranges(s, &r, &n, &dl, &err), 0);
    char got[512] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%s:%llu-%llu", i ? " " : "",
                                r[i].key, (unsigned long long)r[i].first,
                                (unsigned long long)r[i].end);
    assert_string_equal(got, want);
    assert_int_equal(dl, want_dl);
    sp_ranges_free(r, n);
}

/* Files of keys a and b open at once: a's published range stays above the
 * watermark (b is still open from seq 2), is dropped once the watermark
 * passes it, and a pending intent settles into a range across a crash. */
static void test_spool_published_ranges_by_key(void **state)
{
    (void)state;
    pq_err err = {0};
    char final_path[700];
    snprintf(final_path, sizeof final_path, "%s/a-2.parquet", root);
    sp_spool *s = open_ok(100, NULL);
    for (int i = 0; i < 3; i++) {
        append_seq_lines(s, 3);
        flush_ok(s);                             /* 1..3, 4..6, 7..9 */
    }
    /* a: [1, 5) published while b is open from 2 */
    assert_int_equal(sp_checkpoint_intent_range(s, "/x/a-1.parquet", "svc=a/", 1, 5, &err), 0);
    assert_int_equal(sp_checkpoint_commit_range(s, "svc=a/", 1, 5, 2, 3, &err), 0);
    assert_int_equal(sp_committed(s), 2);
    expect_ranges(s, "svc=a/:1-5", 3);
    /* seqs outside the window are a caller bug */
    assert_int_equal(sp_checkpoint_commit_range(s, "k", 1, 5, 3, 0, &err), PQ_EINVAL);
    assert_int_equal(sp_checkpoint_commit_range(s, "k", 3, 11, 3, 0, &err), PQ_EINVAL);
    assert_int_equal(sp_checkpoint_commit_range(s, "k", 3, 5, 1, 0, &err), PQ_EINVAL);
    /* b: [2, 8) published, nothing else open: the watermark moves to 8,
     * a's range is below it and goes */
    assert_int_equal(sp_checkpoint_commit_range(s, "svc=b/", 2, 8, 8, 8, &err), 0);
    assert_int_equal(sp_committed(s), 8);
    expect_ranges(s, "", 8);
    char names[200];
    segments(names, sizeof names);
    assert_string_equal(names, "7");
    /* c: [8, 9) published while a's next file is open from 8; then a's
     * file has its intent written and the process dies */
    assert_int_equal(sp_checkpoint_commit_range(s, "svc=c/", 8, 9, 8, 9, &err), 0);
    assert_int_equal(sp_checkpoint_intent_range(s, final_path, "svc=a/", 8, 10, &err), 0);
    sp_close(s);
    spit(final_path, "PAR1", 4);                 /* its rename had happened */
    sp_open_report rep;
    s = open_ok(100, &rep);
    assert_non_null(strstr(rep.warning, "had completed"));
    assert_int_equal(sp_committed(s), 8);
    expect_ranges(s, "svc=c/:8-9 svc=a/:8-10", 9);
    sp_close(s);
    /* settled for good, and read back the same */
    unlink(final_path);
    s = open_ok(100, &rep);
    assert_string_equal(rep.warning, "");
    expect_ranges(s, "svc=c/:8-9 svc=a/:8-10", 9);
    /* a format 1 commit keeps the ranges above its watermark */
    assert_int_equal(sp_checkpoint_commit(s, 9, &err), 0);
    expect_ranges(s, "svc=a/:8-10", 9);
    sp_close(s);
}

/* An intent of a key whose file never appeared: dropped, and the ranges
 * already published stay. */
static void test_spool_range_intent_without_the_file_is_dropped(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(0, NULL);
    append_seq_lines(s, 6);
    flush_ok(s);
    assert_int_equal(sp_checkpoint_commit_range(s, "k=1/", 2, 4, 1, 0, &err), 0);
    assert_int_equal(sp_checkpoint_intent_range(s, "/nonexistent/k=2/f.parquet", "k=2/", 1, 6,
                                                &err), 0);
    sp_close(s);
    sp_open_report rep;
    s = open_ok(0, &rep);
    assert_non_null(strstr(rep.warning, "had not completed"));
    assert_int_equal(sp_committed(s), 1);
    expect_ranges(s, "k=1/:2-4", 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_spool_commit_trims_exactly_the_segments_below_the_watermark),
        T(test_spool_seq_continues_from_the_watermark_when_no_segment_is_left),
        T(test_spool_remover_unlinks_committed_segments_and_a_hold_leaves_them),
        T(test_spool_intent_with_the_final_file_present_counts_as_committed),
        T(test_spool_intent_without_the_final_file_is_dropped),
        T(test_spool_intent_rejects_seqs_outside_the_spool),
        T(test_spool_published_ranges_by_key),
        T(test_spool_range_intent_without_the_file_is_dropped),
        T(test_spool_corrupt_checkpoint_is_an_error),
        T(test_spool_corrupt_checkpoint_without_segments_is_ignored),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
