/* test_shredtree.c - Variant shred trees (schema/colspec/shredtree.c):
 * the shapes of VariantShredding.md's examples, which primitive types a
 * Variant can hold, and the errors of malformed trees. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void test_variant_shred_primitive(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: m, type: variant, required: true, shred: int64}\n",
                   M("  required group m (VARIANT(1)) {\n"
                     "    required binary metadata;\n"
                     "    optional binary value;\n"
                     "    optional int64 typed_value;\n"
                     "  }\n"));
}

/* VariantShredding.md "Arrays": tags shredded as a list of strings. */
static void test_variant_shred_array_spec_example(void **state)
{
    (void)state;
    const char *expected = M("  optional group tags (VARIANT(1)) {\n"
                             "    required binary metadata;\n"
                             "    optional binary value;\n"
                             "    optional group typed_value (LIST) {\n"
                             "      repeated group list {\n"
                             "        required group element {\n"
                             "          optional binary value;\n"
                             "          optional binary typed_value (STRING);\n"
                             "        }\n"
                             "      }\n"
                             "    }\n"
                             "  }\n");
    assert_printed("columns:\n  - {name: tags, type: variant, shred: [string]}\n", expected);
    assert_printed("columns:\n  - {name: tags, type: variant, shred: \"list<string>\"}\n",
                   expected);
}

/* VariantShredding.md "Nesting": the event example, field by field. */
static void test_variant_shred_nesting_spec_example(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - name: event\n"
        "    type: variant\n"
        "    shred:\n"
        "      event_type: string\n"
        "      event_ts: timestamp\n"
        "      location: {latitude: double, longitude: double}\n"
        "      tags: [string]\n",
        M("  optional group event (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group event_type {\n"
          "        optional binary value;\n"
          "        optional binary typed_value (STRING);\n"
          "      }\n"
          "      required group event_ts {\n"
          "        optional binary value;\n"
          "        optional int64 typed_value (TIMESTAMP(MICROS,true));\n"
          "      }\n"
          "      required group location {\n"
          "        optional binary value;\n"
          "        optional group typed_value {\n"
          "          required group latitude {\n"
          "            optional binary value;\n"
          "            optional double typed_value;\n"
          "          }\n"
          "          required group longitude {\n"
          "            optional binary value;\n"
          "            optional double typed_value;\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "      required group tags {\n"
          "        optional binary value;\n"
          "        optional group typed_value (LIST) {\n"
          "          repeated group list {\n"
          "            required group element {\n"
          "              optional binary value;\n"
          "              optional binary typed_value (STRING);\n"
          "            }\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "    }\n"
          "  }\n"));
}

static void test_variant_shred_array_of_objects_and_untyped_field(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - {name: v, type: variant, shred: {hits: [{id: int32, raw: variant}]}}\n",
        M("  optional group v (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group hits {\n"
          "        optional binary value;\n"
          "        optional group typed_value (LIST) {\n"
          "          repeated group list {\n"
          "            required group element {\n"
          "              optional binary value;\n"
          "              optional group typed_value {\n"
          "                required group id {\n"
          "                  optional binary value;\n"
          "                  optional int32 typed_value;\n"
          "                }\n"
          "                required group raw {\n"
          "                  optional binary value;\n"
          "                }\n"
          "              }\n"
          "            }\n"
          "          }\n"
          "        }\n"
          "      }\n"
          "    }\n"
          "  }\n"));
}

static void test_variant_shred_variant_primitive_types(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - {name: v, type: variant, shred: {a: int8, b: \"decimal(20,2)\", c: date,\n"
        "     d: time, e: \"timestamp(ns,local)\", f: uuid, g: binary, h: bool}}\n",
        M("  optional group v (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group a {\n"
          "        optional binary value;\n"
          "        optional int32 typed_value (INTEGER(8,true));\n"
          "      }\n"
          "      required group b {\n"
          "        optional binary value;\n"
          "        optional fixed_len_byte_array(9) typed_value (DECIMAL(20,2));\n"
          "      }\n"
          "      required group c {\n"
          "        optional binary value;\n"
          "        optional int32 typed_value (DATE);\n"
          "      }\n"
          "      required group d {\n"
          "        optional binary value;\n"
          "        optional int64 typed_value (TIME(MICROS,false));\n"
          "      }\n"
          "      required group e {\n"
          "        optional binary value;\n"
          "        optional int64 typed_value (TIMESTAMP(NANOS,false));\n"
          "      }\n"
          "      required group f {\n"
          "        optional binary value;\n"
          "        optional fixed_len_byte_array(16) typed_value (UUID);\n"
          "      }\n"
          "      required group g {\n"
          "        optional binary value;\n"
          "        optional binary typed_value;\n"
          "      }\n"
          "      required group h {\n"
          "        optional binary value;\n"
          "        optional boolean typed_value;\n"
          "      }\n"
          "    }\n"
          "  }\n"));
}

static void test_error_shred_tree_shapes(void **state)
{
    (void)state;
    assert_error_prefix("columns:\n  - {name: v, type: variant, shred: {x: uint8}}\n",
                        "t.yaml:2:41: column 'v': shred.x: cannot shred as 'uint8': Variant "
                        "integers are signed (int8..int64)");
    assert_error_prefix("columns:\n  - {name: v, type: variant, shred: {t: \"timestamp(ms)\"}}\n",
                        "t.yaml:2:41: column 'v': shred.t: cannot shred as "
                        "'timestamp(ms,utc)': Variant timestamps are us or ns");
    /* DuckDB 1.5.6 prints a Variant decimal(2,2) as ".05": not JSON */
    assert_error_prefix("columns:\n  - {name: v, type: variant, shred: {d: \"decimal(2,2)\"}}\n",
                        "t.yaml:2:41: column 'v': shred.d: cannot shred as 'decimal(2,2)': "
                        "Variant decimals have at most 38 digits and a scale below the "
                        "precision (readers print decimal(p,p) values as \".5\", not JSON)");
    assert_error("columns:\n  - {name: v, type: variant, shred: [string, int64]}\n",
                 "t.yaml:2:37: column 'v': shred: an array shred is a one-element list [T]");
    assert_error("columns:\n  - {name: v, type: variant, shred: {}}\n",
                 "t.yaml:2:37: column 'v': shred: an object shred needs at least one field");
    assert_error("columns:\n  - {name: v, type: variant, shred: {a: {b: \"map<string,int32>\"}}}\n",
                 "t.yaml:2:45: column 'v': shred.a.b: shred objects are written as mappings "
                 "({field: type}), not 'map<string,int32>'");
    assert_error("columns:\n  - {name: v, type: variant, shred: {a: string, a: int64}}\n",
                 "t.yaml:2:49: column 'v': shred: field 'a' is shredded twice");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_shred_primitive),
        cmocka_unit_test(test_variant_shred_array_spec_example),
        cmocka_unit_test(test_variant_shred_nesting_spec_example),
        cmocka_unit_test(test_variant_shred_array_of_objects_and_untyped_field),
        cmocka_unit_test(test_variant_shred_variant_primitive_types),
        cmocka_unit_test(test_error_shred_tree_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
