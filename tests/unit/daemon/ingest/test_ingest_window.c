/* test_ingest_window.c - the input window's flow control (daemon/ingest/
 * ingest.c, dm_window_paused): reading pauses once the lines not yet
 * parsed reach the window, whether they are in the pipeline or in
 * batches waiting for the spool's sync (the caller adds both), and
 * resumes only at half. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "daemon.h"

#define MiB ((size_t)1 << 20)

static void test_window_pauses_at_the_window(void **state)
{
    (void)state;
    assert_false(dm_window_paused(false, 0, 12 * MiB));
    assert_false(dm_window_paused(false, 12 * MiB - 1, 12 * MiB));
    assert_true(dm_window_paused(false, 12 * MiB, 12 * MiB));
    assert_true(dm_window_paused(false, 40 * MiB, 12 * MiB));
}

static void test_window_resumes_only_at_half(void **state)
{
    (void)state;
    assert_true(dm_window_paused(true, 11 * MiB, 12 * MiB));
    assert_true(dm_window_paused(true, 6 * MiB + 1, 12 * MiB));
    assert_false(dm_window_paused(true, 6 * MiB, 12 * MiB));
    assert_false(dm_window_paused(true, 0, 12 * MiB));
    /* Not paused below the window, whatever it holds: no hysteresis on
     * the way up. */
    assert_false(dm_window_paused(false, 11 * MiB, 12 * MiB));
}

/* The default window with its batches waiting for a sync counted: a
 * pipeline half full and DM_SYNC_WAIT_BATCHES batches of PL_BATCH_BYTES
 * waiting fill it (before, only the pipeline's bytes counted, and up to
 * 16 MiB + 8 batches were in flight). */
static void test_default_window_holds_the_waiting_batches(void **state)
{
    (void)state;
    const size_t waiting = DM_SYNC_WAIT_BATCHES * PL_BATCH_BYTES;
    assert_true(DM_INPUT_WINDOW_BYTES / 2 + waiting >= DM_INPUT_WINDOW_BYTES);
    assert_true(dm_window_paused(false, DM_INPUT_WINDOW_BYTES / 2 + waiting, DM_INPUT_WINDOW_BYTES));
    assert_true(DM_INPUT_WINDOW_BYTES + PL_BATCH_BYTES <= 16 * PL_BATCH_BYTES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window_pauses_at_the_window),
        cmocka_unit_test(test_window_resumes_only_at_half),
        cmocka_unit_test(test_default_window_holds_the_waiting_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
