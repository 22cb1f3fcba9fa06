/* test_defaults.c - a column's `default:` (schema/colspec/defaults.c):
 * values parsed per type, Variant defaults' kinds, values that do not fit,
 * and where a default is refused. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static sc_default one_default(const char *type, const char *value)
{
    char yaml[256];
    snprintf(yaml, sizeof yaml, "columns:\n  - {name: a, type: \"%s\", default: %s}\n", type,
             value);
    sc_schema *s = load(yaml);
    sc_default d = s->columns[0].def;
    d.text = NULL;
    sc_schema_free(s);
    return d;
}

static void test_default_values_parsed(void **state)
{
    (void)state;
    assert_true(one_default("bool", "true").b);
    assert_int_equal(one_default("int8", "-128").i, -128);
    assert_int_equal(one_default("uint64", "18446744073709551615").u, UINT64_MAX);
    assert_true(one_default("double", "2.5").d == 2.5);
    assert_true(one_default("float16", "65504").d == 65504.0);
    assert_int_equal(one_default("decimal(9,2)", "\"-12.5\"").i, -1250);
    assert_int_equal(one_default("date", "1970-01-02").i, 1);
    assert_int_equal(one_default("date", "2024-02-29").i, 19782);
    assert_int_equal(one_default("time(ms)", "\"01:00:00.250\"").i, 3600250);
    assert_int_equal(one_default("timestamp", "\"1970-01-01T00:00:01.5Z\"").i, 1500000);
    assert_int_equal(one_default("timestamp(ms)", "\"1970-01-01T01:00:00+01:00\"").i, 0);
    assert_int_equal(one_default("timestamp(ns)", "42").i, 42);
    sc_default u = one_default("uuid", "123e4567-e89b-12d3-a456-426614174000");
    assert_int_equal(u.uuid[0], 0x12);
    assert_int_equal(u.uuid[15], 0x00);
    assert_int_equal(u.uuid[14], 0x40);
    assert_true(one_default("string", "hello").set);
}

static void test_default_variant_kinds(void **state)
{
    (void)state;
    assert_int_equal(one_default("variant", "7").variant_kind, SC_DEF_INT);
    assert_int_equal(one_default("variant", "7.5").variant_kind, SC_DEF_DOUBLE);
    assert_int_equal(one_default("variant", "false").variant_kind, SC_DEF_BOOL);
    assert_int_equal(one_default("variant", "\"7\"").variant_kind, SC_DEF_STRING);
}

static void test_default_must_fit_type(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int8, default: 128}\n",
                 "t.yaml:2:36: column 'a': default: '128' does not fit type 'int8' (expected a "
                 "whole number in the type's range)");
    assert_error("columns:\n  - {name: a, type: \"decimal(4,1)\", default: 123.45}\n",
                 "t.yaml:2:46: column 'a': default: '123.45' does not fit type 'decimal(4,1)' "
                 "(expected a decimal number within the precision and scale)");
    assert_error("columns:\n  - {name: a, type: date, default: 2023-02-29}\n",
                 "t.yaml:2:36: column 'a': default: '2023-02-29' does not fit type 'date' "
                 "(expected a date YYYY-MM-DD)");
    assert_error("columns:\n  - {name: a, type: \"time(ms)\", default: \"00:00:00.0001\"}\n",
                 "t.yaml:2:42: column 'a': default: '00:00:00.0001' does not fit type "
                 "'time(ms,local)' (expected a time HH:MM:SS[.fraction] within the unit)");
    assert_error("columns:\n  - {name: a, type: \"list<int32>\", default: 1}\n",
                 "t.yaml:2:45: column 'a': default: not supported for type 'list<int32>' (only "
                 "scalar types take a default)");
    assert_error("columns:\n  - {name: a, type: string, default: [1]}\n",
                 "t.yaml:2:38: column 'a': default: expected a single value, found a list");
}

static void test_default_conflicts_with_required(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32, required: true, default: 5}\n",
                 "t.yaml:2:53: column 'a': default: conflicts with required: true (a default "
                 "fills missing values, so none would be rejected); drop one");
}

static void test_error_default_on_unsupported_scalar(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: g, type: geometry, default: x}\n",
                 "t.yaml:2:40: column 'g': default: not supported for type 'geometry' (only "
                 "scalar types take a default)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_values_parsed),
        cmocka_unit_test(test_default_variant_kinds),
        cmocka_unit_test(test_default_must_fit_type),
        cmocka_unit_test(test_default_conflicts_with_required),
        cmocka_unit_test(test_error_default_on_unsupported_scalar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
