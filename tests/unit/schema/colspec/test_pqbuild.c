/* test_pqbuild.c - the pq_schema built from a column-spec tree
 * (schema/colspec/pqbuild.c), as `parqd check` prints it: field ids,
 * Variant groups, DESIGN.md's example, and leaf options reaching the
 * writer's schema. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void test_type_field_id_printed(void **state)
{
    (void)state;
    assert_printed("columns:\n"
                   "  - {name: a, type: int64, field_id: 7}\n"
                   "  - {name: l, type: \"list<string>\", field_id: 8}\n",
                   M("  optional int64 a = 7;\n"
                     "  optional group l (LIST) = 8 {\n"
                     "    repeated group list {\n"
                     "      optional binary element (STRING);\n"
                     "    }\n"
                     "  }\n"));
}

static void test_variant_unshredded_value_is_required(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: v, type: variant}\n",
                   M("  optional group v (VARIANT(1)) {\n"
                     "    required binary metadata;\n"
                     "    required binary value;\n"
                     "  }\n"));
}

static void test_variant_inside_list(void **state)
{
    (void)state;
    assert_printed("columns:\n  - {name: l, type: \"list<variant>\", shred: string}\n",
                   M("  optional group l (LIST) {\n"
                     "    repeated group list {\n"
                     "      optional group element (VARIANT(1)) {\n"
                     "        required binary metadata;\n"
                     "        optional binary value;\n"
                     "        optional binary typed_value (STRING);\n"
                     "      }\n"
                     "    }\n"
                     "  }\n"));
}

/* DESIGN.md's schema example, as `parqd check` prints it. */
static void test_design_example_printed_form(void **state)
{
    (void)state;
    assert_printed(
        "columns:\n"
        "  - {name: ts, type: timestamp, unit: us, utc: true, from: time, required: true}\n"
        "  - {name: level, type: string, bloom: true}\n"
        "  - {name: status, type: int32, from: http.status}\n"
        "  - {name: tags, type: \"list<string>\"}\n"
        "  - {name: attrs, type: variant, from: attributes,\n"
        "     shred: {user_id: string, latency_ms: double, tags: [string]}}\n"
        "  - {name: rest, type: variant, from: \"*\"}   # every field not taken above\n",
        M("  required int64 ts (TIMESTAMP(MICROS,true));\n"
          "  optional binary level (STRING);\n"
          "  optional int32 status;\n"
          "  optional group tags (LIST) {\n"
          "    repeated group list {\n"
          "      optional binary element (STRING);\n"
          "    }\n"
          "  }\n"
          "  optional group attrs (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    optional binary value;\n"
          "    optional group typed_value {\n"
          "      required group user_id {\n"
          "        optional binary value;\n"
          "        optional binary typed_value (STRING);\n"
          "      }\n"
          "      required group latency_ms {\n"
          "        optional binary value;\n"
          "        optional double typed_value;\n"
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
          "  }\n"
          "  optional group rest (VARIANT(1)) {\n"
          "    required binary metadata;\n"
          "    required binary value;\n"
          "  }\n"));
}

static void test_option_leaf_opts_reach_pq_schema(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: string, bloom: {fpp: 0.05}, key: k, compression: gzip,\n"
                        "     compression_level: 2, statistics: {truncate: 8}}\n");
    pq_schema *ps;
    pq_err err;
    assert_int_equal(sc_build_parquet_schema(s, &ps, &err), 0);
    assert_int_equal(pq_schema_num_leaves(ps), 1);
    const pq_node *n = pq_schema_leaf_node(ps, 0);
    assert_int_equal(n->opts.bloom, 1);
    assert_true(n->opts.bloom_fpp == 0.05);
    assert_string_equal(n->opts.key_id, "k");
    assert_int_equal(n->opts.codec, PQ_CODEC_GZIP);
    assert_int_equal(n->opts.codec_level, 2);
    assert_int_equal(n->opts.statistics, 1);
    assert_int_equal(n->opts.stats_truncate, 8);
    pq_schema_destroy(ps);
    sc_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_field_id_printed),
        cmocka_unit_test(test_variant_unshredded_value_is_required),
        cmocka_unit_test(test_variant_inside_list),
        cmocka_unit_test(test_design_example_printed_form),
        cmocka_unit_test(test_option_leaf_opts_reach_pq_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
