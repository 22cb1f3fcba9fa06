/* test_vnumber.c - JSON numbers to Variant values (the rule at the top of
 * schema/variant/vnumber.c), checked through the test decoder. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "variant.h"
#include "variant_read.h"

#include "variant_fixture.h"

/* ---- JSON numbers (the rule at the top of schema/variant/vnumber.c) ------------ */

/* A decimal text as "[-]digits e exp" with no leading/trailing zero digit
 * ("0" for zero, sign dropped), so that 19.990, 1.999e1 and 19.99 agree. */
static void num_norm(const char *t, char *out, size_t cap)
{
    char dig[128];
    size_t nd = 0, i = 0;
    long long frac = 0, e = 0;
    bool neg = t[0] == '-', in_frac = false, eneg = false;
    i += neg;
    for (; t[i] && t[i] != 'e' && t[i] != 'E'; i++) {
        if (t[i] == '.') {
            in_frac = true;
            continue;
        }
        frac += in_frac;
        if ((nd > 0 || t[i] != '0') && nd < sizeof dig - 1)
            dig[nd++] = t[i];
    }
    if (t[i] && (t[i + 1] == '+' || t[i + 1] == '-'))
        eneg = t[++i] == '-';
    if (t[i])
        e = strtoll(t + i + 1, NULL, 10);
    while (nd > 0 && dig[nd - 1] == '0')
        nd--, frac--;
    dig[nd] = 0;
    if (nd == 0)
        snprintf(out, cap, "0");
    else
        snprintf(out, cap, "%s%se%lld", neg ? "-" : "", dig, (eneg ? -e : e) - frac);
}

/* The type rule, number by number: the Variant type, the value as the
 * test decoder prints it (decimals exactly, doubles in shortest form), and
 * whether that value differs from the text's (rule 4, the only lossy
 * case; every other row is also checked to be the text's exact value). */
typedef struct num_case {
    const char *text;
    int type;
    const char *json;
    bool lossy;
} num_case;

static const num_case number_cases[] = {
    /* 1: integer syntax -> narrowest int; beyond int64 decimal scale 0 */
    {"0", VR_INT8, "0", false},
    {"-0", VR_INT8, "0", false},                        /* integers have no -0 */
    {"127", VR_INT8, "127", false},
    {"-129", VR_INT16, "-129", false},
    {"40000", VR_INT32, "40000", false},
    {"9007199254740993", VR_INT64, "9007199254740993", false},
    {"9223372036854775807", VR_INT64, "9223372036854775807", false},
    {"-9223372036854775808", VR_INT64, "-9223372036854775808", false},
    {"9223372036854775808", VR_DECIMAL16, "9223372036854775808", false},
    {"-9223372036854775809", VR_DECIMAL16, "-9223372036854775809", false},
    {"18446744073709551615", VR_DECIMAL16, "18446744073709551615", false},
    {"100000000000000000000", VR_DECIMAL16, "100000000000000000000", false},
    {"123456789012345678901234567890", VR_DECIMAL16,
     "123456789012345678901234567890", false},
    {"99999999999999999999999999999999999999", VR_DECIMAL16,
     "99999999999999999999999999999999999999", false},  /* 38 digits */
    {"999999999999999999999999999999999999999", VR_DOUBLE, "1e+39", true},  /* 39 */
    /* 2: fraction or exponent -> double when its shortest form is the text */
    {"0.0", VR_DOUBLE, "0", false},
    {"-0.0", VR_DOUBLE, "-0", false},                   /* the sign stays */
    {"0e-50", VR_DOUBLE, "0", false},
    {"1.0", VR_DOUBLE, "1", false},
    {"1e0", VR_DOUBLE, "1", false},
    {"1E+2", VR_DOUBLE, "1e+02", false},
    {"100.00", VR_DOUBLE, "1e+02", false},
    {"1.5", VR_DOUBLE, "1.5", false},
    {"1.50", VR_DOUBLE, "1.5", false},
    {"1.5E+3", VR_DOUBLE, "1.5e+03", false},
    {"-1.5e-3", VR_DOUBLE, "-0.0015", false},
    {"0.1", VR_DOUBLE, "0.1", false},
    {"1e-7", VR_DOUBLE, "1e-07", false},
    {"1e-20", VR_DOUBLE, "1e-20", false},
    {"25.122", VR_DOUBLE, "25.122", false},
    {"19.990", VR_DOUBLE, "19.99", false},
    {"1234567890.1234", VR_DOUBLE, "1234567890.1234", false},
    {"1519940000.123456", VR_DOUBLE, "1519940000.123456", false},   /* 16 digits */
    {"0.0023250579833984375", VR_DOUBLE, "0.0023250579833984375", false},  /* 17 */
    {"0.7531380753138075", VR_DOUBLE, "0.7531380753138075", false},
    {"0.30000000000000004", VR_DOUBLE, "0.30000000000000004", false},
    {"1e37", VR_DOUBLE, "1e+37", false},
    {"1e-38", VR_DOUBLE, "1e-38", false},
    {"1e308", VR_DOUBLE, "1e+308", false},
    {"1.7976931348623157e308", VR_DOUBLE, "1.7976931348623157e+308", false},
    {"-1.7976931348623157e308", VR_DOUBLE, "-1.7976931348623157e+308", false},
    {"2.2250738585072014e-308", VR_DOUBLE, "2.2250738585072014e-308", false},
    {"5e-324", VR_DOUBLE, "5e-324", false},              /* subnormal */
    /* 2^89 and 2^122: the nearest 16-digit decimal misses the narrower
     * lower half-gap, the shortest form is the one above */
    {"6.189700196426902e26", VR_DOUBLE, "6.189700196426902e+26", false},
    {"5.316911983139664e+36", VR_DOUBLE, "5.316911983139664e+36", false},
    {"2.5e-323", VR_DOUBLE, "2.5e-323", false},
    /* 3: digits no double keeps -> decimal with an integer digit */
    {"12345678901234567.8", VR_DECIMAL8, "12345678901234567.8", false},
    {"-12345678901234567.8", VR_DECIMAL8, "-12345678901234567.8", false},
    {"9007199254740993.0", VR_DECIMAL8, "9007199254740993", false},
    {"1.23456789012345678", VR_DECIMAL8, "1.23456789012345678", false},
    {"3.141592653589793238462643383279502884", VR_DECIMAL16,
     "3.141592653589793238462643383279502884", false},  /* 37 digits */
    {"1.8446744073709551615e19", VR_DECIMAL16, "18446744073709551615", false},
    {"123456789012345678901234567890e8", VR_DECIMAL16,
     "12345678901234567890123456789000000000", false},  /* 38 digits */
    /* 4: nothing exact that readers accept -> the correctly rounded double */
    {"0.031190872192382813", VR_DOUBLE, "0.031190872192382812", true},  /* Zeek */
    {"0.20579910278320313", VR_DOUBLE, "0.20579910278320312", true},
    {"0.12345678901234567890", VR_DOUBLE, "0.12345678901234568", true},
    {"0.00000000000000000000123456789012345678", VR_DOUBLE, "1.2345678901234568e-21",
     true},
    {"4.9e-324", VR_DOUBLE, "5e-324", true},
    {"1e-400", VR_DOUBLE, "0", true},
    {"-1e-400", VR_DOUBLE, "-0", true},
    {"123456789012345678901234567890e9", VR_DOUBLE, "1.2345678901234568e+38", true},
    {"1.00000000000000000000000000000000000001", VR_DOUBLE, "1", true},  /* 39 */
    {"3.141592653589793238462643383279502884197", VR_DOUBLE, "3.141592653589793", true},
};

static void check_number_case(const num_case *nc)
{
    vr_builder b;
    vr_variant v;
    vr_prim p;
    OK(vr_builder_init(&b, NULL));
    if (vr_json_number(&b, nc->text, strlen(nc->text)) != 0)
        fail_msg("%s: %s", nc->text, b.err.msg);
    finish(&b, &v);
    OK(vr_value_read(v.value, v.value_len, &p, NULL));
    if ((int)p.type != nc->type)
        fail_msg("%s: type %d, want %d", nc->text, p.type, nc->type);
    char *got = json_of(v.metadata, v.metadata_len, v.value, v.value_len);
    if (strcmp(got, nc->json) != 0)
        fail_msg("%s: value %s, want %s", nc->text, got, nc->json);
    char a[160], c[160];
    num_norm(nc->text, a, sizeof a);
    num_norm(got, c, sizeof c);
    if ((strcmp(a, c) != 0) != nc->lossy)
        fail_msg("%s: read back as %s (%s vs %s), %s", nc->text, got, a, c,
                 nc->lossy ? "expected a loss" : "the value changed");
    if (p.type == VR_DOUBLE && p.d != strtod(nc->text, NULL))
        fail_msg("%s: double %.17g is not strtod's", nc->text, p.d);
    free(got);
    vr_builder_free(&b);
}

static void test_variant_json_number_type_per_number(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof number_cases / sizeof number_cases[0]; i++)
        check_number_case(&number_cases[i]);
}

/* Doubles shredded into exact typed_values count by their shortest form:
 * 0.1 is 1 at scale 1, never 0.1000000000000000055511151231257827. */
static void test_variant_double_decimal_is_the_shortest_form(void **state)
{
    (void)state;
    const struct {
        double x;
        uint32_t scale;
        bool ok;
        vr_i128 want;
    } cases[] = {
        {0.1, 1, true, 1},           {0.1, 2, true, 10},       {0.1, 0, false, 0},
        {19.99, 2, true, 1999},      {-19.99, 3, true, -19990}, {19.99, 1, false, 0},
        {3.0, 0, true, 3},           {0.0, 0, true, 0},         {-0.0, 0, false, 0},       {1e20, 0, true, (vr_i128)100000000000000000LL * 1000},
        {0.30000000000000004, 17, true, 30000000000000004LL},
        {0.30000000000000004, 16, false, 0},
        {5e-324, 38, false, 0},      {1e38, 0, false, 0},
        {0.0023250579833984375, 19, true, 23250579833984375LL},
        {0x1p89, 0, true, (vr_i128)6189700196426902LL * 100000000000LL},   /* 2^89 */
        {0.0023250579833984375, 18, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vr_i128 u = -1;
        bool ok = vr_double_decimal(cases[i].x, cases[i].scale, &u);
        if (ok != cases[i].ok)
            fail_msg("case %zu (%.17g at scale %u): %d", i, cases[i].x, cases[i].scale, ok);
        if (ok && u != cases[i].want)
            fail_msg("case %zu: unscaled %lld", i, (long long)u);
    }
    vr_i128 u, e37 = 1;
    for (int k = 0; k < 37; k++)
        e37 *= 10;
    assert_true(vr_double_decimal(1e37, 0, &u) && u == e37);   /* 38 digits */
    assert_false(vr_double_decimal(NAN, 2, &(vr_i128){0}));
    assert_false(vr_double_decimal(INFINITY, 0, &(vr_i128){0}));
}

static void test_variant_json_number_refuses_bad_text_and_infinity(void **state)
{
    (void)state;
    static const char *bad[] = {"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1x", "0x10",
                                "NaN", "1.5.2", " 1"};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(vr_json_number(&b, bad[i], strlen(bad[i])), PQ_EINVAL);
    assert_int_equal(vr_json_number(&b, "1e400", 5), PQ_ETYPE);
    assert_int_equal(vr_json_number(&b, "-1e99999999999", 14), PQ_ETYPE);
    OK(vr_string(&b, "1e400", 5));                 /* the caller keeps the text */
    finish(&b, &v);
    assert_json(&v, "\"1e400\"");
    vr_builder_free(&b);
}

/* The parts interface a streaming parser uses (schema/json/json.h numbers). */
static void test_variant_number_from_json_parts(void **state)
{
    (void)state;
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    vr_json_num n = {.negative = true, .int_digits = "123", .int_len = 3,
                     .frac_digits = "4500", .frac_len = 4, .exp10 = 1, .d = -1234.5};
    OK(vr_number_from_json(&b, &n));                /* -123.4500e1 = -1234.5 */
    finish(&b, &v);
    assert_json(&v, "-1234.5");
    assert_int_equal(v.value[0], VR_DOUBLE << 2);
    /* "1e0": exponent syntax, so a double, although exp10 is 0 */
    vr_json_num e0 = {.int_digits = "1", .int_len = 1, .has_exp = true, .d = 1.0};
    vr_json_num i1 = {.int_digits = "1", .int_len = 1, .d = 1.0};
    vr_builder_reset(&b);
    OK(vr_number_from_json(&b, &e0));
    finish(&b, &v);
    assert_int_equal(v.value[0], VR_DOUBLE << 2);
    vr_builder_reset(&b);
    OK(vr_number_from_json(&b, &i1));
    finish(&b, &v);
    assert_int_equal(v.value[0], VR_INT8 << 2);
    vr_builder_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_json_number_type_per_number),
        cmocka_unit_test(test_variant_double_decimal_is_the_shortest_form),
        cmocka_unit_test(test_variant_json_number_refuses_bad_text_and_infinity),
        cmocka_unit_test(test_variant_number_from_json_parts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
