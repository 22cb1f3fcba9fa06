/* test_leaflayout.c - the leaf layout a shredder relies on
 * (schema/colspec/leaflayout.c): leaf indices and levels, effective
 * options per leaf (struct fields overriding, none on Variant binaries),
 * and keys given by path. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colspec_test.h"

static void test_layout_leaf_indices_and_levels(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: int64, required: true}\n"
                        "  - {name: l, type: \"list<string>\"}\n"
                        "  - {name: m, type: \"map<string,int32>\"}\n"
                        "  - {name: v, type: variant, shred: {x: [double], y: string}}\n");
    assert_int_equal(s->n_leaves, 11);
    const sc_type *a = s->columns[0].type, *l = s->columns[1].type, *m = s->columns[2].type;
    assert_int_equal(a->leaf, 0);
    assert_int_equal(a->def, 0);
    assert_int_equal(l->elem->leaf, 1);
    assert_int_equal(l->elem->def, 3);
    assert_int_equal(l->elem->rep, 1);
    assert_int_equal(m->leaf, 2);           /* key */
    assert_int_equal(s->leaves[2].max_def, 2);
    assert_int_equal(m->elem->leaf, 3);     /* value */
    assert_int_equal(m->elem->def, 3);
    const sc_type *v = s->columns[3].type;
    const sc_shred *root = v->shred;
    assert_int_equal(v->metadata_leaf, 4);
    assert_int_equal(root->value_leaf, 5);
    assert_int_equal(root->kind, SC_SHRED_OBJECT);
    assert_int_equal(root->typed_leaf, 6);
    const sc_shred *x = root->fields[0].shred, *y = root->fields[1].shred;
    assert_string_equal(root->fields[0].name, "x");
    assert_int_equal(x->value_leaf, 6);
    assert_int_equal(x->def, 2);            /* v, typed_value */
    assert_int_equal(x->elem->value_leaf, 7);
    assert_int_equal(x->elem->def, 4);      /* + typed_value(LIST), list */
    assert_int_equal(x->elem->rep, 1);
    assert_int_equal(x->elem->type->leaf, 8);
    assert_int_equal(x->elem->type->def, 5);
    assert_int_equal(y->value_leaf, 9);
    assert_int_equal(y->type->leaf, 10);
    assert_string_equal(s->leaves[8].path, "v.typed_value.x.typed_value.list.element.typed_value");
    assert_ptr_equal(s->leaves[8].column, &s->columns[3]);
    assert_int_equal(s->leaves[10].max_def, 3);
    sc_schema_free(s);
}

static void test_option_struct_field_overrides_column(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - name: s\n"
                        "    type: struct\n"
                        "    compression: snappy\n"
                        "    dictionary: true\n"
                        "    fields:\n"
                        "      - {name: a, type: string}\n"
                        "      - {name: b, type: int64, compression: zstd, encoding: delta_binary_packed}\n");
    assert_int_equal(s->leaves[0].opts.codec, PQ_CODEC_SNAPPY);
    assert_int_equal(s->leaves[0].opts.dictionary, 1);
    assert_int_equal(s->leaves[1].opts.codec, PQ_CODEC_ZSTD);
    assert_int_equal(s->leaves[1].opts.encoding, PQ_ENC_DELTA_BINARY_PACKED);
    assert_int_equal(s->leaves[1].opts.dictionary, -1); /* dropped: it would conflict */
    sc_schema_free(s);
}

static void test_option_bloom_skips_variant_binaries(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n  - {name: v, type: variant, bloom: true, shred: string}\n");
    assert_int_equal(s->n_leaves, 3);
    assert_int_equal(s->leaves[0].opts.bloom, 0); /* metadata */
    assert_int_equal(s->leaves[1].opts.bloom, 0); /* value */
    assert_int_equal(s->leaves[2].opts.bloom, 1); /* typed_value */
    sc_schema_free(s);
}

static void test_set_key_by_struct_path(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: user, type: struct, fields: [{name: email, type: string},\n"
                        "                                        {name: id, type: int64}]}\n"
                        "  - {name: u2, type: string, key: k9}\n");
    pq_err err = {0};
    assert_int_equal(sc_schema_set_key(s, "user.email", "k1", &err), 0);
    assert_string_equal(s->leaves[0].opts.key_id, "k1");
    assert_null(s->leaves[1].opts.key_id);
    assert_int_equal(sc_schema_set_key(s, "user", "k1", &err), 0);
    assert_string_equal(s->leaves[1].opts.key_id, "k1");
    assert_int_equal(sc_schema_set_key(s, "use", "k1", &err), PQ_EINVAL);
    assert_string_equal(err.msg, "no column 'use' in the schema");
    assert_int_equal(sc_schema_set_key(s, "u2", "k1", &err), PQ_EINVAL);
    assert_string_equal(err.msg, "column 'u2' already has key 'k9' from the schema");
    sc_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_leaf_indices_and_levels),
        cmocka_unit_test(test_option_struct_field_overrides_column),
        cmocka_unit_test(test_option_bloom_skips_variant_binaries),
        cmocka_unit_test(test_set_key_by_struct_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
