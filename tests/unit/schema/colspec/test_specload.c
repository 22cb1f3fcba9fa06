/* test_specload.c - loading a schema document (schema/colspec/specload.c
 * over schema/yaml/yamlpos.c): the built-in default schema, a missing
 * file, and errors at the YAML level (syntax, aliases, duplicate keys,
 * several documents). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void test_default_schema(void **state)
{
    (void)state;
    sc_schema *s = NULL;
    pq_err err = {0};
    assert_int_equal(sc_schema_default(&s, &err), 0);
    assert_int_equal(s->n_columns, 2);
    assert_string_equal(s->columns[0].name, "event");
    assert_int_equal(s->columns[0].source, SC_SRC_REST);
    assert_int_equal(s->rest, 0);
    assert_string_equal(s->columns[1].name, "_ingest_ts");
    assert_int_equal(s->columns[1].source, SC_SRC_INGEST_TIME);
    assert_true(s->columns[1].required);
    pq_schema *ps;
    assert_int_equal(sc_build_parquet_schema(s, &ps, &err), 0);
    pq_buf b;
    pq_buf_init(&b);
    pq_schema_print(ps, &b);
    pq_buf_push(&b, '\0');
    assert_string_equal((const char *)b.data,
                        M("  optional group event (VARIANT(1)) {\n"
                          "    required binary metadata;\n"
                          "    required binary value;\n"
                          "  }\n"
                          "  required int64 _ingest_ts (TIMESTAMP(MICROS,true));\n"));
    pq_buf_free(&b);
    pq_schema_destroy(ps);
    sc_schema_free(s);
}

static void test_error_duplicate_key(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32, type: int64}\n",
                 "t.yaml:2:28: column 'a': duplicate key 'type' (first at line 2)");
}

static void test_error_yaml_level(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: int32\n",
                 "t.yaml:3:1: YAML syntax error: did not find expected ',' or '}' while "
                 "parsing a flow mapping (line 2)");
    assert_error("&a [*a]\n", "t.yaml:1:1: recursive alias: a node may not contain itself");
    assert_error("", "t.yaml:1:1: schema: empty document (expected columns: [...])");
    assert_error("columns: []\n", "t.yaml:1:10: columns: needs at least one column");
    assert_error("columns: {a: 1}\n", "t.yaml:1:10: columns: expected a list, found a mapping");
    assert_error("columns:\n  - {name: a, type: int32}\n---\nx: 1\n",
                 "t.yaml:4:1: only one YAML document is allowed per file");
}

static void test_error_alias_expansion_bounded(void **state)
{
    (void)state;
    /* "Billion laughs": 10 levels of 10 aliases. */
    char yaml[2048] = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 10; i++) {
        char line[128];
        snprintf(line, sizeof line, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, "
                 "*a%d, *a%d]\n", i, i, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1,
                 i - 1, i - 1);
        strcat(yaml, line);
    }
    assert_error_prefix(yaml, "t.yaml:");
    sc_schema *s = NULL;
    pq_err err = {0};
    sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, &err);
    assert_non_null(strstr(err.msg, "document too large"));
}

static void test_load_file_missing(void **state)
{
    (void)state;
    sc_schema *s = NULL;
    pq_err err = {0};
    assert_int_equal(sc_schema_load_file("/nonexistent/s.yaml", &s, &err), PQ_EIO);
    assert_string_equal(err.msg, "/nonexistent/s.yaml: cannot open: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_schema),
        cmocka_unit_test(test_error_duplicate_key),
        cmocka_unit_test(test_error_yaml_level),
        cmocka_unit_test(test_error_alias_expansion_bounded),
        cmocka_unit_test(test_load_file_missing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
