/* test_schema.c - schema tree: textual form, levels, leaf paths, logical
 * type validation against physical types (LogicalTypes.md). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>

#include "buf.h"
#include "schema.h"
#include "schema_tree.h"

static int leaf(pq_schema *s, int parent, const char *name, pq_repetition rep,
                pq_physical_type type, int32_t len, pq_logical lt)
{
    pq_node_spec spec = {.name = name, .repetition = rep, .type = type, .type_length = len,
                         .logical = lt, .field_id = -1};
    pq_err err = {0};
    int id = pq_schema_add_leaf(s, parent, &spec, &err);
    if (id < 0)
        fail_msg("add_leaf %s: %s", name, err.msg);
    return id;
}

static const pq_logical no_lt = {.kind = PQ_LT_NONE};

static void test_schema_print_matches_spec_text_form(void **state)
{
    (void)state;
    pq_schema *s = pq_schema_new("schema");
    pq_err err = {0};
    leaf(s, 0, "ts", PQ_OPTIONAL, PQ_INT64, 0,
         (pq_logical){.kind = PQ_LT_TIMESTAMP, .unit = PQ_UNIT_MICROS, .utc = true});
    leaf(s, 0, "level", PQ_REQUIRED, PQ_BYTE_ARRAY, 0, (pq_logical){.kind = PQ_LT_STRING});
    leaf(s, 0, "amount", PQ_OPTIONAL, PQ_FIXED_LEN_BYTE_ARRAY, 9,
         (pq_logical){.kind = PQ_LT_DECIMAL, .precision = 20, .scale = 2});
    int list = pq_schema_add_list(s, 0, "tags", PQ_OPTIONAL, -1, &err);
    leaf(s, list, "element", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, (pq_logical){.kind = PQ_LT_STRING});
    assert_int_equal(pq_schema_finish(s, &err), 0);
    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(pq_schema_print(s, &out), 0);
    assert_int_equal(pq_buf_push(&out, 0), 0);
    assert_string_equal((char *)out.data,
                        "message schema {\n"
                        "  optional int64 ts (TIMESTAMP(MICROS,true));\n"
                        "  required binary level (STRING);\n"
                        "  optional fixed_len_byte_array(9) amount (DECIMAL(20,2));\n"
                        "  optional group tags (LIST) {\n"
                        "    repeated group list {\n"
                        "      optional binary element (STRING);\n"
                        "    }\n"
                        "  }\n"
                        "}\n");
    pq_buf_free(&out);
    pq_schema_destroy(s);
}

/* Each optional/repeated ancestor adds a definition level, each repeated
 * one a repetition level (the Dremel encoding). */
static void test_schema_levels_and_paths_of_nested_map(void **state)
{
    (void)state;
    pq_schema *s = pq_schema_new(NULL);
    pq_err err = {0};
    leaf(s, 0, "id", PQ_REQUIRED, PQ_INT64, 0, no_lt);
    int kv = pq_schema_add_map(s, 0, "attrs", PQ_OPTIONAL, -1, &err);
    leaf(s, kv, "key", PQ_REQUIRED, PQ_BYTE_ARRAY, 0, (pq_logical){.kind = PQ_LT_STRING});
    int vl = pq_schema_add_list(s, kv, "value", PQ_OPTIONAL, -1, &err);
    leaf(s, vl, "element", PQ_OPTIONAL, PQ_INT32, 0, no_lt);
    assert_int_equal(pq_schema_finish(s, &err), 0);
    assert_int_equal(pq_schema_num_leaves(s), 3);
    assert_string_equal(pq_schema_leaf_path(s, 1), "attrs.key_value.key");
    assert_string_equal(pq_schema_leaf_path(s, 2), "attrs.key_value.value.list.element");
    assert_int_equal(pq_schema_max_def(s, 0), 0);
    assert_int_equal(pq_schema_max_rep(s, 0), 0);
    assert_int_equal(pq_schema_max_def(s, 1), 2);
    assert_int_equal(pq_schema_max_rep(s, 1), 1);
    assert_int_equal(pq_schema_max_def(s, 2), 5);
    assert_int_equal(pq_schema_max_rep(s, 2), 2);
    pq_schema_destroy(s);
}

static void test_schema_converted_types_follow_logical_types(void **state)
{
    (void)state;
    pq_schema *s = pq_schema_new(NULL);
    pq_err err = {0};
    int a = leaf(s, 0, "u16", PQ_OPTIONAL, PQ_INT32, 0,
                 (pq_logical){.kind = PQ_LT_INTEGER, .bit_width = 16, .is_signed = false});
    int b = leaf(s, 0, "t_local", PQ_OPTIONAL, PQ_INT64, 0,
                 (pq_logical){.kind = PQ_LT_TIMESTAMP, .unit = PQ_UNIT_MILLIS, .utc = false});
    int c = leaf(s, 0, "t_ns", PQ_OPTIONAL, PQ_INT64, 0,
                 (pq_logical){.kind = PQ_LT_TIMESTAMP, .unit = PQ_UNIT_NANOS, .utc = true});
    int d = leaf(s, 0, "uuid", PQ_OPTIONAL, PQ_FIXED_LEN_BYTE_ARRAY, 16,
                 (pq_logical){.kind = PQ_LT_UUID});
    int e = leaf(s, 0, "iv", PQ_OPTIONAL, PQ_FIXED_LEN_BYTE_ARRAY, 12,
                 (pq_logical){.kind = PQ_LT_INTERVAL});
    assert_int_equal(pq_schema_finish(s, &err), 0);
    assert_int_equal(s->nodes[a].converted, PQ_CT_UINT_16);
    assert_int_equal(s->nodes[b].converted, PQ_CT_TIMESTAMP_MILLIS); /* required for local too */
    assert_int_equal(s->nodes[c].converted, PQ_CT_NONE);
    assert_int_equal(s->nodes[d].converted, PQ_CT_NONE);
    assert_int_equal(s->nodes[e].converted, PQ_CT_INTERVAL);
    pq_schema_destroy(s);
}

static void expect_invalid(pq_physical_type type, int32_t len, pq_logical lt, const char *needle)
{
    pq_schema *s = pq_schema_new(NULL);
    pq_err err = {0};
    leaf(s, 0, "c", PQ_OPTIONAL, type, len, lt);
    assert_int_equal(pq_schema_finish(s, &err), PQ_EINVAL);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("message '%s' lacks '%s'", err.msg, needle);
    pq_schema_destroy(s);
}

static void test_schema_rejects_annotation_on_wrong_physical_type(void **state)
{
    (void)state;
    expect_invalid(PQ_INT32, 0, (pq_logical){.kind = PQ_LT_STRING}, "BYTE_ARRAY");
    expect_invalid(PQ_FIXED_LEN_BYTE_ARRAY, 8, (pq_logical){.kind = PQ_LT_UUID}, "(16)");
    expect_invalid(PQ_INT32, 0, (pq_logical){.kind = PQ_LT_TIMESTAMP, .unit = PQ_UNIT_MICROS},
                   "int64");
    expect_invalid(PQ_INT64, 0, (pq_logical){.kind = PQ_LT_TIME, .unit = PQ_UNIT_MILLIS},
                   "int32");
    expect_invalid(PQ_INT64, 0, (pq_logical){.kind = PQ_LT_INTEGER, .bit_width = 16}, "int32");
    expect_invalid(PQ_INT32, 0, (pq_logical){.kind = PQ_LT_INTEGER, .bit_width = 12}, "bit width");
}

/* FLBA(n) holds floor(log10(2^(8n-1) - 1)) digits: 4 bytes hold 9, 16 hold 38. */
static void test_schema_decimal_precision_bounds(void **state)
{
    (void)state;
    expect_invalid(PQ_INT32, 0, (pq_logical){.kind = PQ_LT_DECIMAL, .precision = 10}, "1..9");
    expect_invalid(PQ_INT64, 0, (pq_logical){.kind = PQ_LT_DECIMAL, .precision = 19}, "1..18");
    expect_invalid(PQ_FIXED_LEN_BYTE_ARRAY, 4,
                   (pq_logical){.kind = PQ_LT_DECIMAL, .precision = 10}, "1..9");
    expect_invalid(PQ_FIXED_LEN_BYTE_ARRAY, 16,
                   (pq_logical){.kind = PQ_LT_DECIMAL, .precision = 39}, "1..38");
    expect_invalid(PQ_INT64, 0, (pq_logical){.kind = PQ_LT_DECIMAL, .precision = 5, .scale = 6},
                   "scale");
}

static void test_schema_rejects_duplicate_names_and_empty_groups(void **state)
{
    (void)state;
    pq_schema *s = pq_schema_new(NULL);
    pq_err err = {0};
    leaf(s, 0, "a", PQ_OPTIONAL, PQ_INT32, 0, no_lt);
    pq_node_spec dup = {.name = "a", .repetition = PQ_OPTIONAL, .type = PQ_INT64, .field_id = -1};
    assert_int_equal(pq_schema_add_leaf(s, 0, &dup, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "duplicate field 'a'"));
    pq_node_spec g = {.name = "g", .repetition = PQ_OPTIONAL, .field_id = -1};
    assert_true(pq_schema_add_group(s, 0, &g, &err) > 0);
    assert_int_equal(pq_schema_finish(s, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "group 'g' has no fields"));
    pq_schema_destroy(s);
}

/* Finish encodes the footer's SchemaElement list entries and each leaf's
 * path_in_schema once, for every file's footer (metadata.c copies them):
 * compact protocol, field ids as in parquet.thrift. */
static void test_schema_finish_keeps_footer_elements(void **state)
{
    (void)state;
    pq_schema *s = pq_schema_new("schema");
    pq_err err = {0};
    leaf(s, 0, "id", PQ_REQUIRED, PQ_INT64, 0, no_lt);
    assert_int_equal(s->elements.len, 0);
    assert_int_equal(pq_schema_finish(s, &err), 0);
    static const uint8_t want[] = {
        0x48, 6, 's', 'c', 'h', 'e', 'm', 'a', /* 4: name */
        0x15, 2,                               /* 5: num_children 1 */
        0,                                     /* stop */
        0x15, 4,                               /* 1: type INT64 */
        0x25, 0,                               /* 3: repetition REQUIRED */
        0x18, 2, 'i', 'd',                     /* 4: name */
        0,                                     /* stop */
    };
    assert_int_equal(s->elements.len, sizeof want);
    assert_memory_equal(s->elements.data, want, sizeof want);
    assert_int_equal(pq_schema_finish(s, &err), 0); /* a second finish keeps them */
    assert_int_equal(s->elements.len, sizeof want);
    const pq_node *id = pq_schema_leaf_node(s, 0); /* path_in_schema: ["id"] */
    assert_int_equal(id->path_thrift.len, 3);
    assert_memory_equal(id->path_thrift.data, "\x02id", 3);
    pq_schema_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_schema_print_matches_spec_text_form),
        cmocka_unit_test(test_schema_levels_and_paths_of_nested_map),
        cmocka_unit_test(test_schema_converted_types_follow_logical_types),
        cmocka_unit_test(test_schema_rejects_annotation_on_wrong_physical_type),
        cmocka_unit_test(test_schema_decimal_precision_bounds),
        cmocka_unit_test(test_schema_rejects_duplicate_names_and_empty_groups),
        cmocka_unit_test(test_schema_finish_keeps_footer_elements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
