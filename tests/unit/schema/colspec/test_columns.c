/* test_columns.c - one column of the schema language
 * (schema/colspec/columns.c): `from` paths (dotted, JSON Pointer, "*"),
 * ingest_time, and the errors of names, keys and duplicate columns. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void assert_path(const sc_column *c, size_t n, const char *const *parts)
{
    assert_int_equal(c->path_len, n);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(c->path[i], parts[i]);
}

static void test_from_defaults_to_name(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: level, type: string}\n");
    assert_null(s->columns[0].from);
    assert_int_equal(s->columns[0].source, SC_SRC_PATH);
    assert_path(&s->columns[0], 1, (const char *[]){"level"});
    sc_schema_free(s);
}

static void test_from_dotted_path(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: status, type: int32, from: http.response.status}\n");
    assert_string_equal(s->columns[0].from, "http.response.status");
    assert_path(&s->columns[0], 3, (const char *[]){"http", "response", "status"});
    sc_schema_free(s);
}

static void test_from_pointer_unescaping(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, from: /id.orig_h}\n"
                        "  - {name: b, type: string, from: /a~1b}\n"
                        "  - {name: c, type: string, from: /m~0n}\n"
                        "  - {name: d, type: string, from: \"/x/~01/\"}\n");
    assert_path(&s->columns[0], 1, (const char *[]){"id.orig_h"});
    assert_path(&s->columns[1], 1, (const char *[]){"a/b"});
    assert_path(&s->columns[2], 1, (const char *[]){"m~n"});
    assert_path(&s->columns[3], 3, (const char *[]){"x", "~1", ""});
    sc_schema_free(s);
}

static void test_from_star_is_rest(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string}\n"
                        "  - {name: rest, type: variant, from: \"*\"}\n");
    assert_int_equal(s->rest, 1);
    assert_int_equal(s->columns[1].source, SC_SRC_REST);
    assert_int_equal(s->columns[1].path_len, 0);
    sc_schema_free(s);
}

static void test_ingest_time_column(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: t, type: timestamp, ingest_time: true}\n");
    assert_int_equal(s->columns[0].source, SC_SRC_INGEST_TIME);
    sc_schema_free(s);
}

static void test_error_unknown_key(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32, requird: true}\n",
                 "t.yaml:2:28: column 'a': unknown key 'requird' (did you mean 'required'?)");
    assert_error_prefix("columns:\n  - {name: a, type: int32, colour: red}\n",
                        "t.yaml:2:28: column 'a': unknown key 'colour' (expected name, type, ");
    assert_error("colums:\n  - {name: a, type: int32}\n",
                 "t.yaml:1:1: schema: unknown key 'colums' (did you mean 'columns'?)");
}

static void test_error_duplicate_column(void **state)
{
    (void)state;
    assert_error("columns:\n"
                 "  - {name: a, type: int32}\n"
                 "  - {name: b, type: int32}\n"
                 "  - {name: a, type: string}\n",
                 "t.yaml:4:5: column 'a': duplicate name");
    assert_error("columns:\n"
                 "  - {name: s, type: struct, fields: [{name: x, type: int32},\n"
                 "                                     {name: x, type: int32}]}\n",
                 "t.yaml:3:38: column 'x': duplicate name");
}

static void test_error_names_and_paths(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a.b, type: int32}\n",
                 "t.yaml:2:12: column 'a.b': a column name may not contain '.' (it separates "
                 "Parquet path parts); use from: to read dotted keys");
    assert_error("columns:\n  - {name: a, type: int32, from: x..y}\n",
                 "t.yaml:2:36: column 'a': from: empty key in dotted path 'x..y' (for keys "
                 "containing dots use a JSON Pointer like /id.orig_h)");
    assert_error("columns:\n  - {name: a, type: int32, from: /a~2}\n",
                 "t.yaml:2:36: column 'a': from: '~' must be followed by 0 or 1 in a JSON "
                 "Pointer (~0 is '~', ~1 is '/')");
    assert_error("columns:\n  - {type: int32}\n", "t.yaml:2:5: column #1: missing key 'name'");
    assert_error_prefix("columns:\n  - {name: a}\n",
                        "t.yaml:2:5: column 'a': missing key 'type' (expected bool, ");
    assert_error("columns:\n  - {name: a, type: struct}\n",
                 "t.yaml:2:21: column 'a': a struct needs fields: (a list of columns)");
}

static void test_error_ingest_time_misuse(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: t, type: int64, ingest_time: true}\n",
                 "t.yaml:2:41: column 't': ingest_time needs type timestamp");
    assert_error("columns:\n  - {name: t, type: timestamp, from: x, ingest_time: true}\n",
                 "t.yaml:2:38: column 't': from: conflicts with ingest_time: true");
    assert_error("columns:\n  - {name: t, type: timestamp, ingest_time: true, default: 0}\n",
                 "t.yaml:2:60: column 't': default: an ingest_time column is never missing");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_from_defaults_to_name),
        cmocka_unit_test(test_from_dotted_path),
        cmocka_unit_test(test_from_pointer_unescaping),
        cmocka_unit_test(test_from_star_is_rest),
        cmocka_unit_test(test_ingest_time_column),
        cmocka_unit_test(test_error_unknown_key),
        cmocka_unit_test(test_error_duplicate_column),
        cmocka_unit_test(test_error_names_and_paths),
        cmocka_unit_test(test_error_ingest_time_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
