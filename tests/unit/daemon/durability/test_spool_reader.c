/* test_spool_reader.c - reading the spool back while it grows
 * (daemon/durability/spool_reader.c, spool.c): records flushed after the
 * reader reached the end, records larger than its buffer, a reader on
 * another thread alongside appends; and sync covering rolled segments
 * with a bounded number of descriptors.
 *
 * Real files in a fresh directory under $TMPDIR (or /tmp). */
#include "spool_fixture.h"

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
    assert_int_equal(count_fds(), base - 1);    /* the lock file's went too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_spool_reader_sees_records_flushed_after_it_reached_the_end),
        T(test_spool_reader_handles_records_larger_than_its_buffer),
        T(test_spool_reader_on_another_thread_alongside_appends),
        T(test_spool_sync_covers_rolled_segments_with_bounded_descriptors),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
