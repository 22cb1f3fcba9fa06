/* test_schemacheck.c - checks across the whole schema
 * (schema/colspec/schemacheck.c, columns.c): one rest column, at the top
 * level, of type variant. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void test_error_rest_columns(void **state)
{
    (void)state;
    assert_error("columns:\n"
                 "  - {name: a, type: variant, from: \"*\"}\n"
                 "  - {name: b, type: variant, from: \"*\"}\n",
                 "t.yaml:3:5: column 'b': a second rest column (from: \"*\"); 'a' already takes "
                 "every other field");
    assert_error("columns:\n  - {name: a, type: string, from: \"*\"}\n",
                 "t.yaml:2:35: column 'a': the rest column (from: \"*\") must have type variant");
    assert_error("columns:\n  - {name: s, type: struct, fields: [{name: r, type: variant, "
                 "from: \"*\"}]}\n",
                 "t.yaml:2:69: column 's.r': from: \"*\" is only for top-level columns");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_rest_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
