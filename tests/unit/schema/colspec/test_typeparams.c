/* test_typeparams.c - type parameters given as keys beside `type`
 * (schema/colspec/typeparams.c): `fields:` and `unit:` reaching the one
 * node of their kind inside a list, and keys that apply to no node. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void test_type_struct_with_fields(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - name: http\n"
                   "    type: struct\n"
                   "    required: true\n"
                   "    fields:\n"
                   "      - {name: status, type: int32, required: true}\n"
                   "      - {name: path, type: string}\n"
                   "      - name: tls\n"
                   "        type: struct\n"
                   "        fields: [{name: version, type: string}]\n",
                   M("  required group http {\n"
                     "    required int32 status;\n"
                     "    optional binary path (STRING);\n"
                     "    optional group tls {\n"
                     "      optional binary version (STRING);\n"
                     "    }\n"
                     "  }\n"));
}

static void test_type_list_of_struct_takes_fields(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: hops, type: \"list<struct>\",\n"
                   "     fields: [{name: ip, type: string}, {name: ms, type: double}]}\n",
                   M("  optional group hops (LIST) {\n"
                     "    repeated group list {\n"
                     "      optional group element {\n"
                     "        optional binary ip (STRING);\n"
                     "        optional double ms;\n"
                     "      }\n"
                     "    }\n"
                     "  }\n"));
}

static void test_type_keys_apply_to_nested_timestamp(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: t, type: \"list<timestamp>\", unit: ms, utc: false}\n",
                   M("  optional group t (LIST) {\n"
                     "    repeated group list {\n"
                     "      optional int64 element (TIMESTAMP(MILLIS,false));\n"
                     "    }\n"
                     "  }\n"));
}

static void test_error_shred_on_non_variant(void **state)
{
    (void)state;
    assert_error("columns:\n  - {name: a, type: string, shred: {x: int64}}\n",
                 "t.yaml:2:29: column 'a': key 'shred' does not apply to type 'string' (only to "
                 "variant)");
    assert_error("columns:\n  - {name: a, type: int32, fields: [{name: x, type: int64}]}\n",
                 "t.yaml:2:28: column 'a': key 'fields' does not apply to type 'int32' (only to "
                 "struct)");
    assert_error("columns:\n  - {name: a, type: string, unit: ms}\n",
                 "t.yaml:2:29: column 'a': key 'unit' does not apply to type 'string' (only to "
                 "time/timestamp)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_struct_with_fields),
        cmocka_unit_test(test_type_list_of_struct_takes_fields),
        cmocka_unit_test(test_type_keys_apply_to_nested_timestamp),
        cmocka_unit_test(test_error_shred_on_non_variant),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
