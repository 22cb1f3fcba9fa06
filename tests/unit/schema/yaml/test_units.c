/* test_units.c - configuration sizes and durations (schema/yaml/
 * units.c): units, overflow, garbage and ambiguous units, and formatting
 * back. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "units.h"

/* un_parse_size and un_parse_duration_ms share this signature. */
typedef int (*parse_fn)(const char *s, uint64_t *out, const char **why);

static uint64_t parsed(parse_fn parse, const char *s)
{
    uint64_t v = 12345;
    const char *why = NULL;
    int rc = parse(s, &v, &why);
    if (rc != 0)
        print_message("'%s': %s\n", s, why);
    assert_int_equal(rc, 0);
    return v;
}

static const char *parse_error(parse_fn parse, const char *s)
{
    uint64_t v = 0;
    const char *why = NULL;
    assert_int_equal(parse(s, &v, &why), PQ_EINVAL);
    assert_non_null(why);
    return why;
}

static uint64_t size_of(const char *s) { return parsed(un_parse_size, s); }
static const char *size_error(const char *s) { return parse_error(un_parse_size, s); }
static uint64_t ms_of(const char *s) { return parsed(un_parse_duration_ms, s); }
static const char *duration_error(const char *s) { return parse_error(un_parse_duration_ms, s); }

static void test_size_plain_and_binary_units(void **state)
{
    (void)state;
    assert_int_equal(size_of("0"), 0);
    assert_int_equal(size_of("1"), 1);
    assert_int_equal(size_of("1048576"), 1048576);
    assert_int_equal(size_of("1B"), 1);
    assert_int_equal(size_of("1KiB"), 1024);
    assert_int_equal(size_of("64MiB"), 64u << 20);
    assert_int_equal(size_of("64 MiB"), 64u << 20);
    assert_int_equal(size_of("64mib"), 64u << 20);
    assert_int_equal(size_of("2GiB"), (uint64_t)2 << 30);
    assert_int_equal(size_of("3TiB"), (uint64_t)3 << 40);
    assert_int_equal(size_of("18446744073709551615"), UINT64_MAX);
    assert_int_equal(size_of("16777215TiB"), (uint64_t)16777215 << 40);
}

static void test_size_rejects_overflow(void **state)
{
    (void)state;
    assert_string_equal(size_error("18446744073709551616"), "number too large");
    assert_string_equal(size_error("16777216TiB"), "size too large");
    assert_string_equal(size_error("99999999999999999999999GiB"), "number too large");
}

static void test_size_rejects_garbage_and_ambiguous_units(void **state)
{
    (void)state;
    assert_string_equal(size_error(""), "expected a whole number");
    assert_string_equal(size_error("abc"), "expected a whole number");
    assert_string_equal(size_error("-1"), "negative values are not allowed");
    assert_string_equal(size_error("+1"), "write the number without a sign");
    assert_string_equal(size_error("1.5MiB"), "fractions are not allowed (use a smaller unit)");
    const char *ambiguous = "unknown unit (expected B, KiB, MiB, GiB or TiB; KB/MB/GB are ambiguous)";
    assert_string_equal(size_error("64MB"), ambiguous);
    assert_string_equal(size_error("1K"), ambiguous);
    assert_string_equal(size_error("12abc"), ambiguous);
    assert_string_equal(size_error("1 KiB x"), ambiguous);
}

static void test_duration_units(void **state)
{
    (void)state;
    assert_int_equal(ms_of("0"), 0);
    assert_int_equal(ms_of("0s"), 0);
    assert_int_equal(ms_of("250ms"), 250);
    assert_int_equal(ms_of("60s"), 60000);
    assert_int_equal(ms_of("5m"), 300000);
    assert_int_equal(ms_of("2h"), 7200000);
    assert_int_equal(ms_of("1h30m"), 5400000);
    assert_int_equal(ms_of("1h 30m 15s"), 5415000);
    assert_int_equal(ms_of("1m500ms"), 60500);
}

static void test_duration_rejects_bad_input(void **state)
{
    (void)state;
    assert_string_equal(duration_error("5"), "missing unit (expected ms, s, m or h, e.g. 60s)");
    assert_string_equal(duration_error("5d"), "unknown unit (expected ms, s, m or h)");
    assert_string_equal(duration_error("-1s"), "negative values are not allowed");
    assert_string_equal(duration_error("1.5s"), "fractions are not allowed (use a smaller unit)");
    assert_string_equal(duration_error(""), "expected a duration like 500ms, 60s, 5m or 1h");
    assert_string_equal(duration_error("s"), "expected a whole number");
    assert_string_equal(duration_error("18446744073709551615h"), "duration too large");
    assert_string_equal(duration_error("99999999999999999999ms"), "number too large");
}

static void test_size_and_duration_formatting(void **state)
{
    (void)state;
    char b[32];
    un_format_size(64u << 20, b, sizeof b);
    assert_string_equal(b, "64MiB");
    un_format_size(1000, b, sizeof b);
    assert_string_equal(b, "1000");
    un_format_size(0, b, sizeof b);
    assert_string_equal(b, "0");
    un_format_duration_ms(5400000, b, sizeof b);
    assert_string_equal(b, "1h30m");
    un_format_duration_ms(1500, b, sizeof b);
    assert_string_equal(b, "1500ms");
    un_format_duration_ms(60000, b, sizeof b);
    assert_string_equal(b, "1m");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_size_plain_and_binary_units),
        cmocka_unit_test(test_size_rejects_overflow),
        cmocka_unit_test(test_size_rejects_garbage_and_ambiguous_units),
        cmocka_unit_test(test_duration_units),
        cmocka_unit_test(test_duration_rejects_bad_input),
        cmocka_unit_test(test_size_and_duration_formatting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
