/* test_pathtpl.c - output path templates (daemon/output/pathtpl.c): strftime
 * fields in UTC, {host} {pid} {seq}, and what is refused.
 *
 * The daemon sources are linked only into the parqd binary, not into a
 * library the unit tests link, so this test compiles the module under test
 * directly by including its .c file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../../daemon/output/pathtpl.c"

/* 2024-02-29T23:59:58Z, a Thursday, day 060 of a leap year. */
static const time_t T = 1709251198;

static const char *render(const char *tmpl, uint64_t seq, pq_err *err, int *rc)
{
    static char out[PT_PATH_MAX];
    *rc = pt_render(tmpl, T, "web-01.example", 4242, seq, out, sizeof out, err);
    return out;
}

static void expect(const char *tmpl, uint64_t seq, const char *want)
{
    pq_err err = {0};
    int rc;
    const char *got = render(tmpl, seq, &err, &rc);
    if (rc != 0)
        fail_msg("'%s': %s", tmpl, err.msg);
    assert_string_equal(got, want);
}

static void expect_error(const char *tmpl, int code, const char *needle)
{
    pq_err err = {0};
    int rc;
    render(tmpl, 1, &err, &rc);
    if (rc != code)
        fail_msg("'%s': rc %d, expected %d (%s)", tmpl, rc, code, err.msg);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("'%s': message '%s' lacks '%s'", tmpl, err.msg, needle);
}

static void test_pathtpl_design_example(void **state)
{
    (void)state;
    expect("dt=%Y-%m-%d/hour=%H/{host}-{pid}-{seq}.parquet", 1,
           "dt=2024-02-29/hour=23/web-01.example-4242-000001.parquet");
    /* config.h's default template */
    expect("dt=%Y-%m-%d/%H%M%S-{host}-{pid}-{seq}.parquet", 7,
           "dt=2024-02-29/235958-web-01.example-4242-000007.parquet");
}

static void test_pathtpl_strftime_fields_are_utc(void **state)
{
    (void)state;
    setenv("TZ", "America/New_York", 1);
    tzset();
    expect("%Y%m%d%H%M%S-%j-%F-%s-%y-%a-%b-{seq}", 0,
           "20240229235958-060-2024-02-29-1709251198-24-Thu-Feb-000000");
    expect("%T_%R_%%_%u_{seq}", 0, "23:59:58_23:59_%_4_000000");
    unsetenv("TZ");
    tzset();
}

static void test_pathtpl_seq_is_zero_padded_to_six_and_grows(void **state)
{
    (void)state;
    expect("{seq}.parquet", 0, "000000.parquet");
    expect("{seq}.parquet", 123456, "123456.parquet");
    expect("{seq}.parquet", 1234567, "1234567.parquet");
    expect("{seq}.parquet", UINT64_MAX, "18446744073709551615.parquet");
}

static void test_pathtpl_host_slashes_and_controls_become_underscores(void **state)
{
    (void)state;
    pq_err err = {0};
    char out[128];
    assert_int_equal(pt_render("{host}/{seq}", T, "a/b\tc", 1, 2, out, sizeof out, &err), 0);
    assert_string_equal(out, "a_b_c/000002");
    assert_int_equal(pt_render("{host}-{seq}", T, NULL, 1, 2, out, sizeof out, &err), 0);
    assert_string_equal(out, "localhost-000002");
    /* A host that renders to ".." is caught on the result. */
    assert_int_equal(pt_render("{host}/{seq}", T, "..", 1, 2, out, sizeof out, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "'..'"));
}

/* {uuid}: RFC 9562 version 4 (version nibble 4, variant bits 10), fresh
 * per render, and enough on its own to keep names unique. */
static void test_pathtpl_uuid_is_a_fresh_v4_per_file(void **state)
{
    (void)state;
    pq_err err = {0};
    char a[128], b[128];
    assert_int_equal(pt_render("x/{uuid}.parquet", T, "h", 1, 0, a, sizeof a, &err), 0);
    assert_int_equal(pt_render("x/{uuid}.parquet", T, "h", 1, 0, b, sizeof b, &err), 0);
    assert_int_equal(strlen(a), strlen("x/") + 36 + strlen(".parquet"));
    assert_string_not_equal(a, b);
    const char *u = a + 2;
    for (size_t i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            assert_int_equal(u[i], '-');
        else
            assert_non_null(strchr("0123456789abcdef", u[i]));
    }
    assert_int_equal(u[14], '4');
    assert_non_null(strchr("89ab", u[19]));
}

static void test_pathtpl_unknown_placeholders_are_refused(void **state)
{
    (void)state;
    expect_error("{hostname}-{seq}.parquet", PQ_EINVAL, "unknown placeholder '{hostname}'");
    expect_error("{seq}-{}.parquet", PQ_EINVAL, "offset 6");
    expect_error("{seq.parquet", PQ_EINVAL, "without a closing '}'");
    expect_error("x}{seq}", PQ_EINVAL, "without an opening '{'");
    expect_error("{SEQ}", PQ_EINVAL, "unknown placeholder");
    expect_error("%Q-{seq}", PQ_EINVAL, "unsupported field '%Q'");
    expect_error("%-d-{seq}", PQ_EINVAL, "unsupported field");
    expect_error("%n{seq}", PQ_EINVAL, "unsupported field");
    expect_error("{seq}%", PQ_EINVAL, "unsupported field");
    expect_error("data.parquet", PQ_EINVAL, "must contain {seq} or {uuid}");
}

static void test_pathtpl_traversal_and_absolute_paths_are_refused(void **state)
{
    (void)state;
    expect_error("/var/tmp/{seq}", PQ_EINVAL, "absolute");
    expect_error("../{seq}", PQ_EINVAL, "'..' would leave output.dir");
    expect_error("a/../../{seq}", PQ_EINVAL, "'..'");
    expect_error("{seq}/..", PQ_EINVAL, "'..'");
    expect_error("a//{seq}", PQ_EINVAL, "empty directory name");
    expect_error("{seq}/", PQ_EINVAL, "empty directory name");
    expect_error("a\n{seq}", PQ_EINVAL, "control character");
    expect_error("", PQ_EINVAL, "empty");
    /* Names that only look like traversal are fine. */
    expect("..a/b../.../{seq}", 1, "..a/b../.../000001");
    expect("./{seq}", 1, "./000001");
}

static void test_pathtpl_length_limits(void **state)
{
    (void)state;
    pq_err err = {0};
    char small[8];
    assert_int_equal(pt_render("{seq}.parquet", T, "h", 1, 1, small, sizeof small, &err),
                     PQ_ELIMIT);
    char tmpl[400];
    memset(tmpl, 'a', 300);
    strcpy(tmpl + 300, "{seq}");
    expect_error(tmpl, PQ_ELIMIT, "exceeds 255");
}

static void test_pathtpl_check_relative(void **state)
{
    (void)state;
    pq_err err = {0};
    assert_int_equal(pt_check_relative("a/b.parquet", &err), 0);
    assert_int_equal(pt_check_relative("a/..", &err), PQ_EINVAL);
    assert_int_equal(pt_check_relative("/a", &err), PQ_EINVAL);
    assert_int_equal(pt_check_relative("a/.", &err), PQ_EINVAL);
    assert_int_equal(pt_check_relative("", &err), PQ_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pathtpl_design_example),
        cmocka_unit_test(test_pathtpl_uuid_is_a_fresh_v4_per_file),
        cmocka_unit_test(test_pathtpl_strftime_fields_are_utc),
        cmocka_unit_test(test_pathtpl_seq_is_zero_padded_to_six_and_grows),
        cmocka_unit_test(test_pathtpl_host_slashes_and_controls_become_underscores),
        cmocka_unit_test(test_pathtpl_unknown_placeholders_are_refused),
        cmocka_unit_test(test_pathtpl_traversal_and_absolute_paths_are_refused),
        cmocka_unit_test(test_pathtpl_length_limits),
        cmocka_unit_test(test_pathtpl_check_relative),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
