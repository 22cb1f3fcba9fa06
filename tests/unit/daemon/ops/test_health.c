/* test_health.c - the /health problem table (daemon/ops/health.c): healthy by
 * default, problems named by component and "; "-separated in component
 * order, replace and clear, the 255-byte cut (never inside a UTF-8
 * character), one line per problem, short buffers, and concurrent use. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "health.h"

static int clear_all(void **state)
{
    (void)state;
    for (int c = 0; c < DM_HEALTH_COMPONENTS; c++)
        dm_health_clear((dm_component)c);
    return 0;
}

static void test_health_ok_when_no_problem(void **state)
{
    (void)state;
    char buf[64] = "junk";
    assert_true(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "");
}

static void test_health_problem_is_named_by_component(void **state)
{
    (void)state;
    char buf[512];
    dm_health_set(DM_HEALTH_OUTPUT, "%s writing %s; retrying in %ds", "No space left on device",
                  "out/x.parquet", 8);
    assert_false(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf,
                        "output: No space left on device writing out/x.parquet; retrying in 8s");
}

static void test_health_several_problems_in_component_order(void **state)
{
    (void)state;
    char buf[512];
    dm_health_set(DM_HEALTH_BACKPRESSURE, "reading paused for 12s");
    dm_health_set(DM_HEALTH_SPOOL, "fsync failed");
    dm_health_set(DM_HEALTH_DEADLETTER, "Permission denied");
    assert_false(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "spool: fsync failed; dead_letter: Permission denied; "
                             "backpressure: reading paused for 12s");
}

static void test_health_set_replaces_and_clear_removes(void **state)
{
    (void)state;
    char buf[512];
    dm_health_set(DM_HEALTH_OUTPUT, "first");
    dm_health_set(DM_HEALTH_OUTPUT, "second");
    assert_false(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "output: second");
    dm_health_set(DM_HEALTH_SPOOL, "x");
    dm_health_clear(DM_HEALTH_OUTPUT);
    assert_false(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "spool: x");
    dm_health_clear(DM_HEALTH_SPOOL);
    assert_true(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "");
}

static void test_health_problem_cut_to_255_bytes(void **state)
{
    (void)state;
    char big[1000], buf[1024];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    dm_health_set(DM_HEALTH_SPOOL, "%s", big);
    assert_false(dm_health_get(buf, sizeof buf));
    assert_int_equal(strlen(buf), strlen("spool: ") + 255);

    /* 254 ASCII bytes + "é": the second byte would be byte 256, so the
     * whole character goes */
    memset(big, 'a', 254);
    strcpy(big + 254, "\xc3\xa9tail");
    dm_health_set(DM_HEALTH_SPOOL, "%s", big);
    assert_false(dm_health_get(buf, sizeof buf));
    assert_int_equal(strlen(buf), strlen("spool: ") + 254);
    assert_int_equal(buf[strlen(buf) - 1], 'a');

    /* 253 + "é" fits exactly: kept */
    memset(big, 'a', 253);
    strcpy(big + 253, "\xc3\xa9tail");
    dm_health_set(DM_HEALTH_SPOOL, "%s", big);
    assert_false(dm_health_get(buf, sizeof buf));
    assert_int_equal(strlen(buf), strlen("spool: ") + 255);
    assert_string_equal(buf + strlen(buf) - 2, "\xc3\xa9");
}

static void test_health_problem_is_one_line(void **state)
{
    (void)state;
    char buf[256];
    dm_health_set(DM_HEALTH_OUTPUT, "disk\nfull\r\n");
    assert_false(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "output: disk full  ");
    dm_health_set(DM_HEALTH_OUTPUT, "%s", "");       /* still a problem */
    assert_false(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "output: unhealthy");
}

static void test_health_short_buffer_is_terminated(void **state)
{
    (void)state;
    char buf[8];
    memset(buf, 'Q', sizeof buf);
    dm_health_set(DM_HEALTH_OUTPUT, "a long problem");
    dm_health_set(DM_HEALTH_SPOOL, "another");
    assert_false(dm_health_get(buf, sizeof buf));
    assert_string_equal(buf, "spool: ");
    assert_false(dm_health_get(buf, 0));             /* writes nothing */
    assert_false(dm_health_get(NULL, 0));
}

static void test_health_out_of_range_component_ignored(void **state)
{
    (void)state;
    char buf[64];
    dm_health_set(DM_HEALTH_COMPONENTS, "nope");
    dm_health_clear(DM_HEALTH_COMPONENTS);
    assert_true(dm_health_get(buf, sizeof buf));
}

/* Writers and readers at once: every reading is one whole state. */
static void *flipper(void *arg)
{
    const dm_component c = (dm_component)(intptr_t)arg;
    for (int i = 0; i < 20000; i++) {
        if (i % 2 == 0)
            dm_health_set(c, "problem %d of a fixed width %s", i % 10, "xxxxxxxxxxxxxxxx");
        else
            dm_health_clear(c);
    }
    return NULL;
}

static void test_health_concurrent_set_and_get(void **state)
{
    (void)state;
    pthread_t th[2];
    pthread_create(&th[0], NULL, flipper, (void *)(intptr_t)DM_HEALTH_SPOOL);
    pthread_create(&th[1], NULL, flipper, (void *)(intptr_t)DM_HEALTH_OUTPUT);
    char buf[512];
    for (int i = 0; i < 20000; i++) {
        const bool ok = dm_health_get(buf, sizeof buf);
        const size_t len = strlen(buf);
        const size_t one = strlen("spool: problem 0 of a fixed width xxxxxxxxxxxxxxxx");
        const size_t two = one + strlen("; ") + one + 1;    /* "output" is 1 longer */
        assert_true(ok ? len == 0 : len == one || len == one + 1 || len == two);
    }
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_health_ok_when_no_problem, clear_all),
        cmocka_unit_test_setup(test_health_problem_is_named_by_component, clear_all),
        cmocka_unit_test_setup(test_health_several_problems_in_component_order, clear_all),
        cmocka_unit_test_setup(test_health_set_replaces_and_clear_removes, clear_all),
        cmocka_unit_test_setup(test_health_problem_cut_to_255_bytes, clear_all),
        cmocka_unit_test_setup(test_health_problem_is_one_line, clear_all),
        cmocka_unit_test_setup(test_health_short_buffer_is_terminated, clear_all),
        cmocka_unit_test_setup(test_health_out_of_range_component_ignored, clear_all),
        cmocka_unit_test_setup(test_health_concurrent_set_and_get, clear_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
