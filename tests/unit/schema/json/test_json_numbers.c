/* test_json_numbers.c - numbers in the NDJSON line parser
 * (schema/json/json.c): syntax, integer/double classification, correctly
 * rounded doubles and the exact decimal text. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "json.h"
#include "json_recorder.h"

/* ---- numbers ----------------------------------------------------------- */

static json_number num_of(const char *text)
{
    assert_int_equal(parse(text), 0);
    assert_int_equal(g_rec.events, 1);
    return g_rec.last_num;
}

static void test_json_int64_max_and_min_are_exact(void **state)
{
    (void)state;
    json_number n = num_of("9223372036854775807");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == INT64_MAX);
    n = num_of("-9223372036854775808");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == INT64_MIN);
    assert_true(n.d == -9223372036854775808.0);
    n = num_of("-1");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == -1);
}

static void test_json_above_int64_max_is_uint64(void **state)
{
    (void)state;
    json_number n = num_of("9223372036854775808");
    assert_int_equal(n.kind, JSON_NUM_UINT64);
    assert_true(n.u == (uint64_t)INT64_MAX + 1);
    n = num_of("10000000000000000000"); /* 20 digits, still fits */
    assert_int_equal(n.kind, JSON_NUM_UINT64);
    assert_true(n.u == 10000000000000000000ULL);
}

static void test_json_uint64_max_is_exact(void **state)
{
    (void)state;
    json_number n = num_of("18446744073709551615");
    assert_int_equal(n.kind, JSON_NUM_UINT64);
    assert_true(n.u == UINT64_MAX);
    assert_true(n.d == 18446744073709551616.0);
}

static void test_json_2_pow_64_becomes_double(void **state)
{
    (void)state;
    json_number n = num_of("18446744073709551616");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 18446744073709551616.0);
    n = num_of("-9223372036854775809"); /* below INT64_MIN */
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == -9223372036854775808.0);
    n = num_of("123456789012345678901234567890");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 1.2345678901234568e29);
}

static void test_json_negative_zero_is_int64_zero_with_negative_double(void **state)
{
    (void)state;
    json_number n = num_of("-0");
    assert_int_equal(n.kind, JSON_NUM_INT64);
    assert_true(n.i == 0);
    assert_true(n.negative);
    assert_true(n.d == 0.0 && signbit(n.d));
    n = num_of("-0.0");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 0.0 && signbit(n.d));
}

static void test_json_float_syntax_is_double_even_when_integral(void **state)
{
    (void)state;
    json_number n = num_of("1.0");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 1.0);
    n = num_of("1E2");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 100.0);
}

static void test_json_1e400_is_out_of_range(void **state)
{
    (void)state;
    assert_rejects("{\"x\":1e400}", PQ_ELIMIT, "byte 5: number out of range: 1e400 does not fit a double");
    assert_rejects("-1e400", PQ_ELIMIT, "number out of range");
    assert_rejects("1.8e308", PQ_ELIMIT, "number out of range");
    /* 2^1024 - 2^970 (halfway to the next binade) rounds to infinity too. */
    assert_rejects("179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792",
                   PQ_ELIMIT, "number out of range: 1797693134862315807937289714053034150799... does not fit");
    json_number n = num_of("1.7976931348623157e308");
    assert_true(n.d == DBL_MAX);
}

/* Correctly rounded: 1e-400 is far below half the smallest denormal
 * (2^-1075 ~ 2.47e-324), so the nearest double is +0.0 - not an error. */
static void test_json_1e_minus_400_rounds_to_zero(void **state)
{
    (void)state;
    json_number n = num_of("1e-400");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
    assert_true(n.d == 0.0 && !signbit(n.d));
    n = num_of("-1e-400");
    assert_true(n.d == 0.0 && signbit(n.d));
    /* ...while 5e-324 is the smallest denormal, 2^-1074. */
    n = num_of("5e-324");
    assert_true(n.d == 4.9406564584124654e-324);
    assert_true(n.d > 0.0 && n.d < DBL_MIN);
    n = num_of("0e999999999999");
    assert_true(n.d == 0.0);
}

static void test_json_doubles_are_correctly_rounded(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "0.1", "1.5e2", "3.141592653589793", "2.2250738585072014e-308",
        "0.000431060791015625", "0.0006840229034423828", "1e23", "8.98846567431158e307",
        "9007199254740993", "9007199254740993.0", "0.30000000000000000000000000001",
        "2.4703282292062328e-324", "1.00000000000000011102230246251565404236316680908203126",
        "123456789012345678901234567890e-20", "1e-22", "1e22", "4.35e-5",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_number n = num_of(cases[i]);
        const double want = strtod(cases[i], NULL);
        if (n.d != want)
            fail_msg("%s: got %.17g want %.17g", cases[i], n.d, want);
    }
}

static void test_json_number_grammar_is_strict(void **state)
{
    (void)state;
    assert_rejects("01", PQ_EPARSE, "byte 0: leading zeros are not allowed");
    assert_rejects("-01", PQ_EPARSE, "byte 1: leading zeros are not allowed");
    assert_rejects("-", PQ_EPARSE, "byte 1: expected a digit after '-', got end of line");
    assert_rejects("-a", PQ_EPARSE, "expected a digit after '-', got 'a'");
    assert_rejects("1.", PQ_EPARSE, "byte 2: expected a digit after '.'");
    assert_rejects("1.e5", PQ_EPARSE, "expected a digit after '.', got 'e'");
    assert_rejects(".5", PQ_EPARSE, "byte 0: expected a value");
    assert_rejects("+1", PQ_EPARSE, "expected a value");
    assert_rejects("1e", PQ_EPARSE, "byte 2: expected a digit in the exponent");
    assert_rejects("1e+", PQ_EPARSE, "expected a digit in the exponent");
    assert_rejects("0x10", PQ_EPARSE, "byte 1: trailing characters");
    assert_rejects("1.5.2", PQ_EPARSE, "trailing characters");
    assert_rejects("[1 2]", PQ_EPARSE, "byte 3: expected ',' or ']' after array element, got '2'");
}

static void test_json_number_exposes_its_parts_as_written(void **state)
{
    (void)state;
    json_number n = num_of("-12.50E+3");
    assert_true(n.negative);
    assert_int_equal(n.len, 9);
    assert_memory_equal(n.raw, "-12.50E+3", 9);
    assert_int_equal(n.int_len, 2);
    assert_memory_equal(n.int_digits, "12", 2);
    assert_int_equal(n.frac_len, 2);
    assert_memory_equal(n.frac_digits, "50", 2);
    assert_true(n.exp10 == 3);
    assert_true(n.d == -12500.0);
}

static void check_decimal(const char *text, json_int128 want, int32_t want_scale)
{
    json_number n = num_of(text);
    json_int128 v = 0;
    int32_t scale = -1;
    assert_int_equal(json_number_decimal(&n, &v, &scale), 0);
    if (v != want || scale != want_scale)
        fail_msg("%s: got %lld scale %d", text, (long long)v, scale);
}

static void test_json_decimal_of_0_1_is_exact(void **state)
{
    (void)state;
    check_decimal("0.1", 1, 1);
}

static void test_json_decimal_keeps_written_scale_of_123_4500(void **state)
{
    (void)state;
    check_decimal("123.4500", 1234500, 4);
}

static void test_json_decimal_of_minus_1e_minus_3(void **state)
{
    (void)state;
    check_decimal("-1e-3", -1, 3);
}

static void test_json_decimal_beyond_64_bits_is_exact(void **state)
{
    (void)state;
    /* 12345678901234567890123 needs 74 bits. */
    const json_int128 want = (json_int128)1234567890123456789LL * 10000 + 123;
    check_decimal("12345678901234567890.123", want, 3);
    json_number n = num_of("12345678901234567890.123");
    assert_int_equal(n.kind, JSON_NUM_DOUBLE);
}

static void test_json_decimal_positive_exponent_and_integers(void **state)
{
    (void)state;
    check_decimal("1.5e3", 1500, 0);
    check_decimal("42", 42, 0);
    check_decimal("-9223372036854775808", INT64_MIN, 0);
    check_decimal("18446744073709551615", (json_int128)UINT64_MAX, 0);
    check_decimal("0.000", 0, 3);
    check_decimal("-0", 0, 0);
    check_decimal("1e-38", 1, 38);
}

static void test_json_decimal_over_38_digits_is_elimit(void **state)
{
    (void)state;
    json_int128 v;
    int32_t scale;
    json_number n = num_of("123456789012345678901234567890123456789"); /* 39 */
    assert_int_equal(json_number_decimal(&n, &v, &scale), PQ_ELIMIT);
    n = num_of("12345678901234567890123456789012345678"); /* 38 */
    assert_int_equal(json_number_decimal(&n, &v, &scale), 0);
    n = num_of("1e-39");
    assert_int_equal(json_number_decimal(&n, &v, &scale), PQ_ELIMIT);
    n = num_of("1e38");
    assert_int_equal(json_number_decimal(&n, &v, &scale), PQ_ELIMIT);
    n = num_of("1e37");
    assert_int_equal(json_number_decimal(&n, &v, &scale), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_int64_max_and_min_are_exact),
        cmocka_unit_test(test_json_above_int64_max_is_uint64),
        cmocka_unit_test(test_json_uint64_max_is_exact),
        cmocka_unit_test(test_json_2_pow_64_becomes_double),
        cmocka_unit_test(test_json_negative_zero_is_int64_zero_with_negative_double),
        cmocka_unit_test(test_json_float_syntax_is_double_even_when_integral),
        cmocka_unit_test(test_json_1e400_is_out_of_range),
        cmocka_unit_test(test_json_1e_minus_400_rounds_to_zero),
        cmocka_unit_test(test_json_doubles_are_correctly_rounded),
        cmocka_unit_test(test_json_number_grammar_is_strict),
        cmocka_unit_test(test_json_number_exposes_its_parts_as_written),
        cmocka_unit_test(test_json_decimal_of_0_1_is_exact),
        cmocka_unit_test(test_json_decimal_keeps_written_scale_of_123_4500),
        cmocka_unit_test(test_json_decimal_of_minus_1e_minus_3),
        cmocka_unit_test(test_json_decimal_beyond_64_bits_is_exact),
        cmocka_unit_test(test_json_decimal_positive_exponent_and_integers),
        cmocka_unit_test(test_json_decimal_over_38_digits_is_elimit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
