/* test_pathtpl.c - output path templates (daemon/output/pathtpl.c and
 * pathtpl_render.c): strftime fields in UTC, {host} {pid} {seq}, {{FIELD}}
 * values escaped as Hive escapes them, and what is refused.
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
#include "../../../../daemon/output/pathtpl_render.c"

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
    expect_error("%Q-{seq}", PQ_EINVAL, "offset 0: unsupported % field");
    expect_error("%-d-{seq}", PQ_EINVAL, "unsupported % field");
    expect_error("%n{seq}", PQ_EINVAL, "unsupported % field");
    expect_error("{seq}%", PQ_EINVAL, "unsupported % field");
    expect_error("data.parquet", PQ_EINVAL, "must contain {seq} or {uuid}");
}

static void test_pathtpl_traversal_and_absolute_paths_are_refused(void **state)
{
    (void)state;
    expect_error("/var/tmp/{seq}", PQ_EINVAL, "absolute");
    expect_error("../{seq}", PQ_EINVAL, "'..' would leave the output directory");
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


/* Renders tmpl with the given field values (NULL: missing or null). */
static int render_fields(const char *tmpl, const pt_value *vals, size_t n, char *out,
                         size_t cap, pq_err *err)
{
    pt_template t;
    size_t off = 0;
    int rc = pt_parse(tmpl, &t, &off, err);
    const pt_vars v = {.t = T, .host = "h", .pid = 1, .seq = 3, .fields = vals, .n_fields = n};
    rc = rc ? rc : pt_render_vars(&t, &v, out, cap, err);
    pt_free(&t);
    return rc;
}

static void test_pathtpl_fields_parse_dotted_pointer_and_index(void **state)
{
    (void)state;
    pt_template t;
    size_t off = 9;
    pq_err err = {0};
    assert_int_equal(pt_parse("s={{service}}/k={{kubernetes.pod}}/p={{/id.orig_h/a~1b~0}}/"
                              "i={{_index}}/%H/{seq}", &t, &off, &err), 0);
    assert_int_equal(t.n_fields, 4);
    assert_true(t.has_time);
    assert_int_equal(t.fields[0].n_keys, 1);
    assert_string_equal(t.fields[0].keys[0], "service");
    assert_int_equal(t.fields[1].n_keys, 2);
    assert_string_equal(t.fields[1].keys[1], "pod");
    assert_int_equal(t.fields[2].n_keys, 2);
    assert_string_equal(t.fields[2].keys[0], "id.orig_h");
    assert_string_equal(t.fields[2].keys[1], "a/b~");
    assert_true(t.fields[3].index);
    assert_int_equal(t.fields[3].n_keys, 0);
    pt_free(&t);
    assert_int_equal(pt_parse("{seq}", &t, &off, &err), 0);
    assert_false(t.has_time);
    pt_free(&t);
}

/* Hive's FileUtils.escapePathName: exactly the controls, DEL and
 * " # % ' * / : = ? \ { [ ] ^ become %XX; the rest (space, '<', UTF-8) stay. */
static void test_pathtpl_hive_escape_set(void **state)
{
    (void)state;
    const char *esc = "\"#%'*/:=?\\{[]^\x7f";
    char out[16];
    for (int c = 1; c < 0x80; c++) {
        if (c == '.')
            continue;            /* "." alone is a directory name: below */
        const char v[1] = {(char)c};
        size_t n = pt_hive_escape(v, 1, out, sizeof out);
        bool want = c < 0x20 || strchr(esc, c) != NULL;
        if (want) {
            char x[4];
            snprintf(x, sizeof x, "%%%02X", c);
            assert_string_equal(out, x);
        } else {
            assert_int_equal(n, 1);
            assert_int_equal(out[0], c);
        }
    }
    assert_int_equal(pt_hive_escape("a\0b", 3, out, sizeof out), 5);
    assert_string_equal(out, "a%00b");
    pt_hive_escape("caf\xc3\xa9 <x>|", 10, out, sizeof out);
    assert_string_equal(out, "caf\xc3\xa9 <x>|");
    pt_hive_escape(NULL, 0, out, sizeof out);
    assert_string_equal(out, "__HIVE_DEFAULT_");   /* truncated to cap - 1 */
    assert_int_equal(pt_hive_escape("", 0, out, sizeof out), strlen(PT_HIVE_DEFAULT));
    assert_int_equal(pt_hive_escape("a.b", 3, out, sizeof out), 3);
    assert_string_equal(out, "a.b");
}

static void test_pathtpl_fields_render_hive_style(void **state)
{
    (void)state;
    pq_err err = {0};
    char out[512];
    const pt_value v[2] = {{"a/b=c d", 7}, {NULL, 0}};
    assert_int_equal(render_fields("svc={{svc}}/x={{x.y}}/%H/{seq}.parquet", v, 2, out,
                                   sizeof out, &err), 0);
    assert_string_equal(out, "svc=a%2Fb%3Dc d/x=__HIVE_DEFAULT_PARTITION__/23/000003.parquet");
    /* A value can neither climb out nor name the directory itself. */
    const pt_value dots[1] = {{"..", 2}};
    assert_int_equal(render_fields("{{v}}/{seq}", dots, 1, out, sizeof out, &err), 0);
    assert_string_equal(out, "%2E%2E/000003");
    const pt_value one[1] = {{".", 1}};
    assert_int_equal(render_fields("{{v}}/{seq}", one, 1, out, sizeof out, &err), 0);
    assert_string_equal(out, "%2E/000003");
    /* A value too long for one component is refused, not cut. */
    char big[300];
    memset(big, 'v', sizeof big);
    const pt_value lv[1] = {{big, sizeof big}};
    assert_int_equal(render_fields("{{v}}/{seq}", lv, 1, out, sizeof out, &err), PQ_ELIMIT);
    assert_int_equal(render_fields("{{v}}/{seq}", lv, 1, out, 64, &err), PQ_ELIMIT);
    static char huge[2 * PT_PATH_MAX];            /* escapes to 3 x its length */
    memset(huge, '/', sizeof huge);
    const pt_value hv[1] = {{huge, sizeof huge}};
    assert_int_equal(render_fields("{{v}}/{seq}", hv, 1, out, sizeof out, &err), PQ_ELIMIT);
    /* The wrong number of values is the caller's bug, reported. */
    assert_int_equal(render_fields("{{v}}/{seq}", lv, 0, out, sizeof out, &err), PQ_EINVAL);
    /* pt_render has no record to take values from. */
    assert_int_equal(pt_render("{{v}}/{seq}", T, "h", 1, 1, out, sizeof out, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "per record"));
}

static void test_pathtpl_field_errors_have_offsets(void **state)
{
    (void)state;
    static const struct { const char *tmpl; size_t off; const char *why; } bad[] = {
        {"{{svc}/{seq}", 0, "'{{' without a closing '}}'"},
        {"a/{{}}/{seq}", 2, "empty field name"},
        {"a/{{x..y}}/{seq}", 6, "empty key in a dotted path"},
        {"a/{{.x}}/{seq}", 4, "empty key in a dotted path"},
        {"a/{{/x~2}}/{seq}", 6, "'~' must be followed by 0 or 1"},
        {"a/{{x\ty}}/{seq}", 5, "control character in a field name"},
        {"a/{{x{y}}/{seq}", 5, "may not contain '{' or '}'"},
        {"a/b\x7f/{seq}", 3, "control character in the path"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        pt_template t;
        size_t off = 999;
        pq_err err = {0};
        int rc = pt_parse(bad[i].tmpl, &t, &off, &err);
        pt_free(&t);
        if (rc != PQ_EINVAL || off != bad[i].off || strstr(err.msg, bad[i].why) == NULL)
            fail_msg("'%s': rc %d off %zu '%s', expected offset %zu '%s'", bad[i].tmpl, rc, off,
                     err.msg, bad[i].off, bad[i].why);
    }
    char many[256] = "";
    for (int i = 0; i < PT_FIELDS_MAX + 1; i++)
        strcat(many, "{{f}}");
    strcat(many, "{seq}");
    pt_template t;
    size_t off = 0;
    pq_err err = {0};
    assert_int_equal(pt_parse(many, &t, &off, &err), PQ_ELIMIT);
    assert_int_equal(off, 5 * PT_FIELDS_MAX);
    pt_free(&t);
}

/* Only the directories' time fields partition: the file name's stamp it. */
static void test_pathtpl_directories_time_period_and_key(void **state)
{
    (void)state;
    /* key: pt_dir_time_key at T, which renders nothing without a '%' in
     * the directories (t.dir_time, decided once by pt_parse) */
    static const struct { const char *tmpl; int64_t period; const char *key; } cases[] = {
        {"dt=%Y-%m-%d/hour=%H/{host}-{seq}.parquet", 3600, "2024/02/29/23/"},
        {"dt=%Y-%m-%d/%H%M%S-{host}-{pid}-{seq}.parquet", 86400, "2024/02/29/"},
        {"%Y/%m/{seq}", 86400, "2024/02/"},
        {"{seq}-%S.parquet", 0, ""},
        {"s={{svc}}/%%/{seq}", 0, "%/"},
        {"m=%M/{{/a/b}}/{seq}", 60, "59/"},
        {"t=%s/%H/{seq}", 1, "1709251198/23/"},
        {"{{/a%S/b}}/{seq}", 0, ""},      /* inside a field: not a time field */
        {"s={{svc}}/d={{day}}/{seq}", 0, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        pt_template t;
        size_t off = 0;
        pq_err err = {0};
        assert_int_equal(pt_parse(cases[i].tmpl, &t, &off, &err), 0);
        if (pt_dir_period(&t) != cases[i].period)
            fail_msg("'%s': period %lld, expected %lld", cases[i].tmpl,
                     (long long)pt_dir_period(&t), (long long)cases[i].period);
        char key[64];
        assert_int_equal(pt_dir_time_key(&t, T, key, sizeof key, &err), 0);
        if (strcmp(key, cases[i].key) != 0 || t.dir_time != (cases[i].key[0] != '\0'))
            fail_msg("'%s': key '%s' (dir_time %d), expected '%s'", cases[i].tmpl, key,
                     t.dir_time, cases[i].key);
        pt_free(&t);
    }
    pt_template t;
    size_t off = 0;
    pq_err err = {0};
    char a[64], b[64];
    assert_int_equal(pt_parse("dt=%F/hour=%H/%M-{seq}", &t, &off, &err), 0);
    assert_int_equal(pt_dir_time_key(&t, T, a, sizeof a, &err), 0);
    assert_string_equal(a, "2024-02-29/23/");
    assert_int_equal(pt_dir_time_key(&t, T - 3000, b, sizeof b, &err), 0);  /* 23:09: same */
    assert_string_equal(a, b);
    assert_int_equal(pt_dir_time_key(&t, T + 2, b, sizeof b, &err), 0);     /* next day */
    assert_string_equal(b, "2024-03-01/00/");
    assert_int_equal(pt_dir_time_key(&t, T, a, 8, &err), PQ_ELIMIT);
    pt_free(&t);
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
        cmocka_unit_test(test_pathtpl_fields_parse_dotted_pointer_and_index),
        cmocka_unit_test(test_pathtpl_hive_escape_set),
        cmocka_unit_test(test_pathtpl_fields_render_hive_style),
        cmocka_unit_test(test_pathtpl_field_errors_have_offsets),
        cmocka_unit_test(test_pathtpl_directories_time_period_and_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
