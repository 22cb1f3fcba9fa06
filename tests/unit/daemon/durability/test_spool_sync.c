/* test_spool_sync.c - the spool's background sync (spool_sync.c): what a
 * sync covers, appends going on while it runs, sp_sync and sp_close
 * waiting for it. Its failure is in test_spool_faults.c (a failing
 * fdatasync needs the hook). The fixture is spool_fixture.h. */
#include "spool_fixture.h"

static pthread_mutex_t notify_mu = PTHREAD_MUTEX_INITIALIZER;
static int notified;

static void count_notify(void *user)
{
    (void)user;
    pthread_mutex_lock(&notify_mu);
    notified++;
    pthread_mutex_unlock(&notify_mu);
}

static int notify_count(void)
{
    pthread_mutex_lock(&notify_mu);
    int n = notified;
    pthread_mutex_unlock(&notify_mu);
    return n;
}

/* Polls as the daemon's loop does when woken. */
static void poll_until_done(sp_spool *s)
{
    pq_err err = {0};
    while (sp_sync_running(s))
        usleep(1000);
    assert_int_equal(sp_sync_poll(s, &err), 0);
}

/* A sync covers what was flushed when it started: the rolled segments and
 * the current one, whose fds it syncs and closes (the current one's a
 * dup: the appender keeps appending to it). */
static void test_spool_background_sync_covers_what_was_flushed(void **state)
{
    (void)state;
    pq_err err = {0};
    notified = 0;
    sp_spool *s = open_ok(100, NULL);
    for (int i = 0; i < 4; i++) {
        append_seq_lines(s, 3);
        flush_ok(s);
    }
    assert_int_equal(s->nunsynced, 3);
    assert_int_equal(sp_synced_seq(s), 1);
    assert_int_equal(sp_sync_start(s, count_notify, NULL, &err), 0);
    assert_int_equal(s->nunsynced, 0);
    assert_false(s->dirty);
    /* The appender goes on meanwhile; a start while one runs is a no-op. */
    append_seq_lines(s, 2);
    flush_ok(s);
    assert_int_equal(sp_sync_start(s, count_notify, NULL, &err), 0);
    poll_until_done(s);
    assert_int_equal(notify_count(), 1);
    assert_int_equal(sp_synced_seq(s), 13);
    assert_true(s->dirty);                       /* the 2 appended after the start */
    assert_int_equal(sp_sync_start(s, count_notify, NULL, &err), 0);
    poll_until_done(s);
    assert_int_equal(notify_count(), 2);
    assert_int_equal(sp_synced_seq(s), 15);
    expect_seq_lines(s, 1, 1, 15);
    sp_close(s);
}

/* sp_sync waits for a running background sync (whose fds hold records it
 * promises are durable), then syncs the rest itself; sp_close stops the
 * helper with a job collected or not. */
static void test_spool_sync_waits_for_the_background_sync(void **state)
{
    (void)state;
    pq_err err = {0};
    sp_spool *s = open_ok(100, NULL);
    append_seq_lines(s, 5);
    flush_ok(s);
    assert_int_equal(sp_sync_start(s, NULL, NULL, &err), 0);
    append_seq_lines(s, 5);
    flush_ok(s);
    assert_int_equal(sp_sync(s, &err), 0);
    assert_false(sp_sync_running(s));
    assert_int_equal(sp_synced_seq(s), 11);
    assert_int_equal(s->nunsynced, 0);
    assert_false(s->dirty || s->dir_dirty);
    append_seq_lines(s, 5);
    flush_ok(s);
    assert_int_equal(sp_sync_start(s, NULL, NULL, &err), 0);
    sp_close(s);                                 /* with the job still running, or done */
    s = open_ok(100, NULL);
    expect_seq_lines(s, 1, 1, 16);
    sp_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_spool_background_sync_covers_what_was_flushed),
        T(test_spool_sync_waits_for_the_background_sync),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
