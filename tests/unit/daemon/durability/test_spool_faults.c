/* test_spool_faults.c - the spool's write side on a failing device
 * (daemon/durability/spool.c): a full disk after a short write, a partial
 * write that cannot be cut off again, a failing fdatasync.
 *
 * This test compiles spool.c (and spool_sync.c, the background sync) itself with its SP_WRITE / SP_FTRUNCATE /
 * SP_FDATASYNC hooks pointed at wrappers that fail on demand (the object
 * wins over the pq_daemon library's copy at link time; the other spool
 * files come from the library). test_spool_damage.c covers the real
 * kernel path with RLIMIT_FSIZE; the fixture is spool_fixture.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static long write_budget = -1;     /* bytes written before ENOSPC; -1: no limit */
static int fail_ftruncate = 0;
static int fail_fdatasync = 0;

static ssize_t test_write(int fd, const void *p, size_t n)
{
    if (write_budget >= 0) {
        if (write_budget == 0) {
            errno = ENOSPC;
            return -1;
        }
        if ((long)n > write_budget)
            n = (size_t)write_budget;            /* a short write first */
    }
    ssize_t w = write(fd, p, n);
    if (w > 0 && write_budget >= 0)
        write_budget -= w;
    return w;
}

static int test_ftruncate(int fd, off_t len)
{
    if (fail_ftruncate) {
        errno = EIO;
        return -1;
    }
    return ftruncate(fd, len);
}

static int test_fdatasync(int fd)
{
    if (fail_fdatasync) {
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}

#define SP_WRITE test_write
#define SP_FTRUNCATE test_ftruncate
#define SP_FDATASYNC test_fdatasync
#include "../../../../daemon/durability/spool.c"
#include "../../../../daemon/durability/spool_sync.c"
#include "spool_fixture.h"

/* The spool fixture's fresh directory, and no fault armed. */
static int faults_setup(void **state)
{
    write_budget = -1;
    fail_ftruncate = fail_fdatasync = 0;
    return setup(state);
}

static void seg_file(char *out, size_t n, uint64_t first)
{
    snprintf(out, n, "%s/%020llu.spool", dir, (unsigned long long)first);
}

/* Records "line <seq>" from tcp:x, 38 bytes each on disk. */
static void append(sp_spool *s, int count)
{
    pq_err err = {0};
    for (int i = 0; i < count; i++) {
        char line[32];
        int n = snprintf(line, sizeof line, "line %03llu", (unsigned long long)sp_next_seq(s));
        assert_int_equal(sp_append(s, 0, "tcp:x", 5, line, (size_t)n, NULL, &err), 0);
    }
}

/* Replays everything: the seqs read, PQ_EPARSE counted, lines checked. */
static int replay(const sp_spool *s, uint64_t *seqs, size_t cap, size_t *n)
{
    sp_reader *r;
    pq_err err = {0};
    assert_int_equal(sp_reader_open(&r, s, 1, &err), 0);
    sp_record rec;
    int rc, parse_errors = 0;
    *n = 0;
    while ((rc = sp_reader_next(r, &rec, &err)) != 0) {
        if (rc == PQ_EPARSE) {
            parse_errors++;
            continue;
        }
        assert_int_equal(rc, 1);
        char want[32];
        int len = snprintf(want, sizeof want, "line %03llu", (unsigned long long)rec.seq);
        assert_int_equal(rec.len, (size_t)len);
        assert_memory_equal(rec.line, want, (size_t)len);
        assert_true(*n < cap);
        seqs[(*n)++] = rec.seq;
    }
    sp_reader_close(r);
    return parse_errors;
}

static void test_spool_disk_full_after_a_short_write_loses_nothing(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s;
    assert_int_equal(sp_open(&s, dir, 0, NULL, &err), 0);
    append(s, 4);
    assert_int_equal(sp_flush(s, &err), 0);
    char p[700];
    seg_file(p, sizeof p, 1);
    const uint64_t before = file_size(p);
    append(s, 6);
    const size_t pending = sp_pending_bytes(s);
    write_budget = 50;                           /* 50 bytes, then ENOSPC */
    assert_int_equal(sp_flush(s, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, p));
    assert_non_null(strstr(err.msg, "No space left on device"));
    assert_non_null(strstr(err.msg, "6 records kept"));
    assert_int_equal(file_size(p), before);
    assert_int_equal(sp_pending_bytes(s), pending);
    assert_int_equal(sp_flushed_seq(s), 5);
    assert_int_equal(sp_disk_bytes(s), before);
    /* Still full: nothing is written at all. */
    write_budget = 0;
    assert_int_equal(sp_flush(s, &err), PQ_EIO);
    assert_int_equal(file_size(p), before);
    write_budget = -1;
    assert_int_equal(sp_flush(s, &err), 0);
    assert_int_equal(sp_flushed_seq(s), 11);
    uint64_t seqs[64];
    size_t n;
    assert_int_equal(replay(s, seqs, 64, &n), 0);
    assert_int_equal(n, 10);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(seqs[i], i + 1);
    sp_close(s);
}

/* The partial write stays (the cut failed): the next flush must not append
 * after it, so it starts a new segment; the damage then reads as a bad
 * record in an earlier segment, reported, and every seq replays once. */
static void test_spool_partial_write_that_cannot_be_cut_moves_to_a_new_segment(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s;
    assert_int_equal(sp_open(&s, dir, 0, NULL, &err), 0);
    append(s, 4);
    assert_int_equal(sp_flush(s, &err), 0);
    char p[700];
    seg_file(p, sizeof p, 1);
    const uint64_t before = file_size(p);
    append(s, 3);
    write_budget = 40;                           /* record 5 and part of 6 */
    fail_ftruncate = 1;
    assert_int_equal(sp_flush(s, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "No space left on device"));
    assert_non_null(strstr(err.msg, "removing the partial write failed too"));
    assert_non_null(strstr(err.msg, "in a new segment"));
    assert_int_equal(file_size(p), before + 40);
    assert_int_equal(sp_disk_bytes(s), before + 40);
    write_budget = -1;
    fail_ftruncate = 0;
    assert_int_equal(sp_flush(s, &err), 0);
    char p5[700];
    seg_file(p5, sizeof p5, 5);
    assert_int_equal(file_size(p5), 24 + 3 * 38);
    assert_int_equal(sp_disk_bytes(s), file_size(p) + file_size(p5));
    assert_int_equal(sp_sync(s, &err), 0);
    uint64_t seqs[64];
    size_t n;
    /* Segment 1 holds a whole record 5 and a cut one: seq 5 twice is
     * skipped, the cut one is reported. */
    assert_int_equal(replay(s, seqs, 64, &n), 1);
    assert_int_equal(n, 7);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(seqs[i], i + 1);
    sp_close(s);

    sp_open_report rep;
    assert_int_equal(sp_open(&s, dir, 0, &rep, &err), 0);
    assert_int_equal(rep.bytes_cut, 0);
    assert_non_null(strstr(rep.warning, p));
    assert_non_null(strstr(rep.warning, "skipped"));
    assert_int_equal(sp_next_seq(s), 8);
    assert_int_equal(replay(s, seqs, 64, &n), 1);
    assert_int_equal(n, 7);
    append(s, 1);
    assert_int_equal(sp_flush(s, &err), 0);
    assert_int_equal(replay(s, seqs, 64, &n), 1);
    assert_int_equal(n, 8);
    assert_int_equal(seqs[7], 8);
    sp_close(s);
}

static void test_spool_fdatasync_failure_is_an_error_and_is_retried(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s;
    assert_int_equal(sp_open(&s, dir, 40, NULL, &err), 0);   /* every flush rolls */
    append(s, 1);
    assert_int_equal(sp_flush(s, &err), 0);
    append(s, 1);
    assert_int_equal(sp_flush(s, &err), 0);
    fail_fdatasync = 1;
    assert_int_equal(sp_sync(s, &err), PQ_EIO);
    char p[700];
    seg_file(p, sizeof p, 1);                    /* the rolled one comes first */
    assert_non_null(strstr(err.msg, p));
    assert_non_null(strstr(err.msg, "fdatasync failed"));
    fail_fdatasync = 0;
    assert_int_equal(sp_sync(s, &err), 0);
    assert_int_equal(s->nunsynced, 0);
    assert_false(s->dirty);
    sp_close(s);
}

/* A background sync that fails hands every fd it did not sync back (the
 * rolled segments' in front, the current one dirty again, the directory
 * still to sync), moves nothing past the failure, and the next sync, in
 * the background or not, makes all of it durable. */
static void test_spool_background_sync_failure_gives_everything_back(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s;
    assert_int_equal(sp_open(&s, dir, 40, NULL, &err), 0);   /* every flush rolls */
    for (int i = 0; i < 3; i++) {
        append(s, 1);
        assert_int_equal(sp_flush(s, &err), 0);
    }
    assert_int_equal(s->nunsynced, 2);
    assert_true(s->dirty && s->dir_dirty);
    fail_fdatasync = 1;
    assert_int_equal(sp_sync_start(s, NULL, NULL, &err), 0);
    assert_int_equal(s->nunsynced, 0);
    assert_int_equal(sp_sync_wait(s, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "fdatasync of the segment from seq 1 failed"));
    assert_int_equal(sp_synced_seq(s), 1);
    assert_int_equal(s->nunsynced, 2);
    assert_int_equal(s->unsynced[0].first, 1);
    assert_int_equal(s->unsynced[1].first, 2);
    assert_true(s->dirty && s->dir_dirty);
    fail_fdatasync = 0;
    assert_int_equal(sp_sync_start(s, NULL, NULL, &err), 0);
    assert_int_equal(sp_sync_wait(s, &err), 0);
    assert_int_equal(sp_synced_seq(s), 4);
    assert_int_equal(s->nunsynced, 0);
    assert_false(s->dirty || s->dir_dirty);
    sp_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spool_disk_full_after_a_short_write_loses_nothing,
                                        faults_setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_spool_partial_write_that_cannot_be_cut_moves_to_a_new_segment, faults_setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_spool_fdatasync_failure_is_an_error_and_is_retried,
                                        faults_setup, teardown),
        cmocka_unit_test_setup_teardown(test_spool_background_sync_failure_gives_everything_back,
                                        faults_setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
