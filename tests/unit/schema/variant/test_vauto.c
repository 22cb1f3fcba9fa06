/* test_vauto.c - the `shred: auto` decision (schema/variant/vauto.c), the schema
 * syntax for it (colspec: `shred: auto`, `{auto: {...}}`, `none`, the
 * default for top-level Variant columns), per-file schemas
 * (sc_schema_derive), the row-group leaf exchange the pipeline converts
 * with (pq_rowgroup_swap_leaf), and the conversion's reuse of an object's
 * plan (vshred.c: only for the same field ids under the same metadata). Records are JSON lines turned into Variants
 * by the real parser (schema/json/json.c) and builder (schema/variant/). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "colspec.h"
#include "column.h"
#include "json.h"
#include "json_variant.h"
#include "rowgroup.h"
#include "variant.h"
#include "vauto.h"
#include "vshred.h"

/* ---- JSON -> Variant ---------------------------------------------------------- */

typedef struct fixture {
    json_parser jp;
    vr_builder b;
    va_stats st;
} fixture;

static void setup(fixture *f, const sc_auto *lim)
{
    assert_int_equal(json_parser_init(&f->jp, 0), 0);
    assert_int_equal(vr_builder_init(&f->b, NULL), 0);
    assert_int_equal(va_stats_init(&f->st, lim), 0);
}

static void teardown(fixture *f)
{
    json_parser_free(&f->jp);
    vr_builder_free(&f->b);
    va_stats_free(&f->st);
}

static void observe(fixture *f, const char *json)
{
    pq_err err = {0};
    vr_variant v;
    vr_builder_reset(&f->b);
    assert_int_equal(json_parse_line(&f->jp, json, strlen(json), &pqt_json_variant, &f->b, &err), 0);
    assert_int_equal(vr_finish(&f->b, &v), 0);
    assert_int_equal(va_observe(&f->st, &v, &err), 0);
}

/* The chosen tree as JSON ("" when nothing is shredded). */
static char *choose(fixture *f)
{
    pq_err err = {0};
    sc_shred *sh = NULL;
    assert_int_equal(va_choose(&f->st, &sh, &err), 0);
    pq_buf out;
    pq_buf_init(&out);
    if (sh != NULL)
        assert_int_equal(sc_shred_format_json(sh, &out), 0);
    assert_int_equal(pq_buf_push(&out, 0), 0);
    char *s = strdup((const char *)out.data);
    pq_buf_free(&out);
    sc_shred_free(sh);
    return s;
}

static const sc_auto DEF = {true, SC_AUTO_MAX_COLUMNS, SC_AUTO_MAX_DEPTH, SC_AUTO_MIN_PRESENCE};

/* ---- the decision ------------------------------------------------------------- */

static void test_vauto_stable_fields_get_their_types(void **state)
{
    (void)state;
    fixture f;
    setup(&f, &DEF);
    char line[256];
    for (int i = 0; i < 100; i++) {
        snprintf(line, sizeof line,
                 "{\"s\":\"x%d\",\"i\":%d,\"d\":%d.5,\"b\":%s,\"o\":{\"k\":%d},\"a\":[\"t\",\"u\"]}",
                 i, i * 1000, i, i % 2 ? "true" : "false", i);
        observe(&f, line);
    }
    char *t = choose(&f);
    /* fields in name order; i reaches 99000: int32; o.k reaches 99: int8 */
    assert_string_equal(t, "{\"a\":[\"string\"],\"b\":\"bool\",\"d\":\"double\",\"i\":\"int32\","
                           "\"o\":{\"k\":\"int8\"},\"s\":\"string\"}");
    free(t);
    teardown(&f);
}

static void test_vauto_presence_and_type_consistency(void **state)
{
    (void)state;
    fixture f;
    setup(&f, &DEF);
    for (int i = 0; i < 100; i++) {
        char line[256];
        /* rare: in 30% of rows; mixed: an int in 40%, a string in 60%;
         * half: exactly 50% (kept: the ratio is "at least") */
        snprintf(line, sizeof line, "{\"keep\":1%s%s%s}", i % 10 < 3 ? ",\"rare\":1" : "",
                 i % 10 < 4 ? ",\"mixed\":1" : ",\"mixed\":\"s\"", i % 2 ? ",\"half\":true" : "");
        observe(&f, line);
    }
    char *t = choose(&f);
    assert_string_equal(t, "{\"half\":\"bool\",\"keep\":\"int8\",\"mixed\":\"string\"}");
    free(t);
    teardown(&f);
}

static void test_vauto_numbers_widen_or_stay(void **state)
{
    (void)state;
    fixture f;
    setup(&f, &DEF);
    observe(&f, "{\"w\":1,\"big\":12345678901234567.8,\"mix\":1.5,\"id\":5}");
    observe(&f, "{\"w\":300,\"big\":1234567890123456.78,\"mix\":2,\"id\":9223372036854775807}");
    observe(&f, "{\"w\":70000,\"big\":1.5e300,\"mix\":2.5,\"id\":-1}");
    char *t = choose(&f);
    /* big: decimals dominate but a double is there too -> not shredded
     * (only a pure decimal field is); mix: doubles dominate -> double,
     * the int stays in value; w widens to int32, id to int64 */
    assert_string_equal(t, "{\"id\":\"int64\",\"mix\":\"double\",\"w\":\"int32\"}");
    free(t);
    teardown(&f);
    setup(&f, &DEF);
    observe(&f, "{\"dec\":12345678901234567.8}");
    observe(&f, "{\"dec\":123456789012345678.25}");
    t = choose(&f);
    assert_string_equal(t, "{\"dec\":\"decimal(20,2)\"}");
    free(t);
    teardown(&f);
}

static void test_vauto_case_twins(void **state)
{
    (void)state;
    fixture f;
    setup(&f, &DEF);
    for (int i = 0; i < 10; i++)
        observe(&f, i < 6 ? "{\"a\":1,\"A\":\"x\",\"o\":{\"Key\":1,\"KEY\":2,\"key\":3}}"
                          : "{\"a\":1,\"o\":{\"Key\":1,\"key\":3}}");
    /* readers fold case: one field per folded name, the most frequent
     * (a: 10 rows over A: 6), ties in byte order (Key before key) */
    char *t = choose(&f);
    assert_string_equal(t, "{\"a\":\"int8\",\"o\":{\"Key\":\"int8\"}}");
    free(t);
    teardown(&f);
}

static void test_vauto_limits(void **state)
{
    (void)state;
    sc_auto lim = {true, 2, 1, 0.5};
    fixture f;
    setup(&f, &lim);
    for (int i = 0; i < 10; i++)
        observe(&f, i < 8 ? "{\"a\":1,\"b\":2,\"c\":3,\"o\":{\"x\":1},\"l\":[1]}"
                          : "{\"a\":1,\"c\":3,\"o\":{\"x\":1},\"l\":[1]}");
    /* max_depth 1: no nested fields; max_columns 2: a and c (every row)
     * win over b (8 of 10) */
    char *t = choose(&f);
    assert_string_equal(t, "{\"a\":\"int8\",\"c\":\"int8\"}");
    free(t);
    teardown(&f);
}

static void test_vauto_nothing_stable(void **state)
{
    (void)state;
    fixture f;
    setup(&f, &DEF);
    observe(&f, "[1,2]");
    observe(&f, "\"text\"");
    observe(&f, "{\"a\":1}");
    char *t = choose(&f);                 /* the root is not mostly an object */
    assert_string_equal(t, "");
    free(t);
    teardown(&f);
    setup(&f, &DEF);
    observe(&f, "{\"value\":1,\"typed_value\":2,\"\":3,\"e\":{}}");
    observe(&f, "{\"value\":1,\"typed_value\":2,\"\":3,\"e\":{}}");
    t = choose(&f);                       /* unshreddable names, an empty object */
    assert_string_equal(t, "");
    free(t);
    teardown(&f);
    setup(&f, &DEF);
    va_observe_null(&f.st);
    va_observe_null(&f.st);
    observe(&f, "{\"a\":1}");
    t = choose(&f);                       /* the column is null in 2 of 3 rows */
    assert_string_equal(t, "");
    free(t);
    teardown(&f);
}

static void test_vauto_rejects_malformed_variants(void **state)
{
    (void)state;
    fixture f;
    setup(&f, &DEF);
    pq_err err = {0};
    static const uint8_t meta[] = {0x01, 0x00, 0x00};
    static const uint8_t bad[] = {0x02, 0x05}; /* an object header claiming 5 fields */
    vr_variant v = {meta, sizeof meta, bad, sizeof bad};
    assert_int_equal(va_observe(&f.st, &v, &err), PQ_EPARSE);
    teardown(&f);
}

/* Rows share their metadata mostly, and the walk then finds a field's
 * node by its id (vauto.c, kid_of): rows whose metadata numbers the same
 * keys the other way round (a,b then b,a: unsorted dictionaries) must
 * still count each key's values under that key, alternating or in runs. */
static void test_vauto_field_ids_follow_metadata(void **state)
{
    (void)state;
    static const uint8_t meta_ab[] = {0x01, 0x02, 0x00, 0x01, 0x02, 'a', 'b'};
    static const uint8_t meta_ba[] = {0x01, 0x02, 0x00, 0x01, 0x02, 'b', 'a'};
    /* {"a": int8 7, "b": "x"}: field ids in key-name order, then offsets */
    static const uint8_t val_ab[] = {0x02, 0x02, 0x00, 0x01, 0x00, 0x02, 0x04, 0x0C, 0x07, 0x05, 'x'};
    static const uint8_t val_ba[] = {0x02, 0x02, 0x01, 0x00, 0x00, 0x02, 0x04, 0x0C, 0x07, 0x05, 'x'};
    const vr_variant ab = {meta_ab, sizeof meta_ab, val_ab, sizeof val_ab};
    const vr_variant ba = {meta_ba, sizeof meta_ba, val_ba, sizeof val_ba};
    for (int runs = 1; runs <= 10; runs *= 10) {
        fixture f;
        setup(&f, &DEF);
        pq_err err = {0};
        for (int i = 0; i < 100; i++)
            assert_int_equal(va_observe(&f.st, (i / runs) % 2 ? &ba : &ab, &err), 0);
        char *t = choose(&f);
        assert_string_equal(t, "{\"a\":\"int8\",\"b\":\"string\"}");
        free(t);
        teardown(&f);
    }
}

/* ---- the schema language ------------------------------------------------------ */

static sc_schema *load(const char *yaml, int want_rc)
{
    sc_schema *s = NULL;
    pq_err err = {0};
    int rc = sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &s, &err);
    if (rc != want_rc)
        fail_msg("load: rc %d (want %d): %s", rc, want_rc, err.msg);
    return s;
}

static void test_vauto_schema_syntax(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: a, type: variant}\n"
                        "  - {name: b, type: variant, shred: auto}\n"
                        "  - {name: c, type: variant, shred: none}\n"
                        "  - {name: d, type: variant, shred: {auto: {max_columns: 7, max_depth: 2,"
                        " min_presence: 0.25}}}\n"
                        "  - {name: e, type: variant, shred: {auto: string}}\n"
                        "  - {name: f, type: struct, fields: [{name: v, type: variant}]}\n", 0);
    const sc_type *a = s->columns[0].type, *b = s->columns[1].type, *c = s->columns[2].type;
    const sc_type *d = s->columns[3].type, *e = s->columns[4].type;
    assert_true(a->autoshred.on);
    assert_int_equal(a->autoshred.max_columns, SC_AUTO_MAX_COLUMNS);
    assert_true(b->autoshred.on);
    assert_false(c->autoshred.on);
    assert_int_equal(c->shred->kind, SC_SHRED_NONE);
    assert_true(d->autoshred.on);
    assert_int_equal(d->autoshred.max_columns, 7);
    assert_int_equal(d->autoshred.max_depth, 2);
    assert_true(d->autoshred.min_presence == 0.25);
    /* an object shred of one field named auto stays an object shred */
    assert_false(e->autoshred.on);
    assert_int_equal(e->shred->kind, SC_SHRED_OBJECT);
    /* a Variant inside a struct is not a column: no automatic shredding */
    assert_false(s->columns[5].type->fields[0].type->autoshred.on);
    sc_schema_free(s);

    load("columns:\n  - {name: f, type: struct, fields: [{name: v, type: variant, shred: auto}]}\n",
         PQ_EINVAL);
    load("columns:\n  - {name: l, type: \"list<variant>\", shred: auto}\n", PQ_EINVAL);
    load("columns:\n  - {name: d, type: variant, shred: {auto: {max_columns: 0}}}\n", PQ_EINVAL);
    load("columns:\n  - {name: d, type: variant, shred: {auto: {min_presence: 1.5}}}\n",
         PQ_EINVAL);
    load("columns:\n  - {name: d, type: variant, shred: {auto: {depth: 2}}}\n", PQ_EINVAL);
}

/* ---- per-file schemas and the leaf exchange ---------------------------------- */

static void test_vauto_derive_and_swap(void **state)
{
    (void)state;
    sc_schema *base = load("columns:\n"
                           "  - {name: n, type: int64}\n"
                           "  - {name: event, type: variant, from: \"*\"}\n"
                           "  - {name: tail, type: \"list<string>\"}\n", 0);
    pq_err err = {0};
    assert_int_equal(sc_schema_set_key(base, "event.value", "k1", &err), 0);
    sc_shred *roots[3] = {NULL, sc_shred_new(), NULL};
    sc_shred *root = roots[1];
    root->kind = SC_SHRED_OBJECT;
    root->fields = calloc(1, sizeof *root->fields);
    root->fields[0].name = strdup("status");
    root->fields[0].shred = sc_shred_new();
    root->fields[0].shred->kind = SC_SHRED_PRIMITIVE;
    root->fields[0].shred->type = sc_type_new_shred_prim(SC_INT, 16, 0, 0);
    root->n_fields = 1;
    sc_schema *fs = NULL;
    assert_int_equal(sc_schema_derive(base, roots, &fs, &err), 0);
    assert_null(roots[1]);
    /* base: n, event.metadata, event.value, tail...element (4 leaves);
     * derived: + typed_value.status.value / .typed_value (6 leaves) */
    assert_int_equal(base->n_leaves, 4);
    assert_int_equal(fs->n_leaves, 6);
    assert_string_equal(fs->leaves[3].path, "event.typed_value.status.value");
    assert_string_equal(fs->leaves[4].path, "event.typed_value.status.typed_value");
    assert_string_equal(fs->leaves[4].opts.key_id, "k1");  /* the value leaf's key */
    assert_int_equal(fs->columns[2].type->leaf, 5);          /* tail moved */
    assert_int_equal(base->columns[2].type->leaf, 3);        /* base untouched */
    pq_schema *bps, *fps;
    assert_int_equal(sc_build_parquet_schema(base, &bps, &err), 0);
    assert_int_equal(sc_build_parquet_schema(fs, &fps, &err), 0);

    /* the list leaf changes row group without a copy, rows and all */
    pq_rowgroup *src, *dst;
    assert_int_equal(pq_rowgroup_new(&src, bps, &err), 0);
    assert_int_equal(pq_rowgroup_new(&dst, fps, &err), 0);
    pq_column *l = pq_rowgroup_column(src, 3);
    assert_int_equal(pq_column_put_bytes(l, 0, "ab", 2), 0);
    assert_int_equal(pq_column_put_bytes(l, 1, "c", 1), 0);
    assert_int_equal(pq_rowgroup_swap_leaf(dst, 5, src, 3, &err), 0);
    pq_leaf_view v;
    assert_int_equal(pq_rowgroup_leaf_view(dst, 5, &v, &err), 0);
    assert_int_equal(v.n_levels, 2);
    assert_int_equal(v.n_values, 2);
    assert_memory_equal(v.heap + v.offsets[1], "c", 1);
    assert_int_equal(pq_rowgroup_leaf_view(src, 3, &v, &err), 0);
    assert_int_equal(v.n_levels, 0);
    /* a leaf of another type or with other levels is refused */
    assert_int_equal(pq_rowgroup_swap_leaf(dst, 0, src, 3, &err), PQ_EINVAL);
    assert_int_equal(pq_rowgroup_swap_leaf(dst, 4, src, 0, &err), PQ_EINVAL);
    /* a row count the leaves do not hold is refused */
    assert_int_equal(pq_rowgroup_set_rows(dst, 1, &err), PQ_ESTATE);
    pq_rowgroup_destroy(src);
    pq_rowgroup_destroy(dst);
    pq_schema_destroy(bps);
    pq_schema_destroy(fps);
    sc_schema_free(fs);
    sc_schema_free(base);
}

/* The leaf named path in s. */
static size_t leaf_of(const sc_schema *s, const char *path)
{
    for (size_t i = 0; i < s->n_leaves; i++)
        if (strcmp(s->leaves[i].path, path) == 0)
            return i;
    fail_msg("no leaf %s", path);
    return 0;
}

/* lines written through t's shred tree by a fast vs_state (rg[0]: plans,
 * in-place reads) and a general one (rg[1], vs_state_set_fast(false));
 * every leaf the same in both. The caller destroys rg[0] and rg[1]. */
static void write_both(const sc_schema *s, pq_schema *ps, const char *const *lines, size_t n,
                       pq_rowgroup *rg[2])
{
    const sc_type *t = s->columns[0].type;
    pq_err err = {0};
    fixture f;
    setup(&f, &DEF);
    for (int k = 0; k < 2; k++) {
        vs_state st;
        vs_state_init(&st);
        vs_state_set_fast(&st, k == 0);
        assert_int_equal(pq_rowgroup_new(&rg[k], ps, &err), 0);
        for (size_t i = 0; i < n; i++) {
            vr_variant v;
            vr_builder_reset(&f.b);
            assert_int_equal(json_parse_line(&f.jp, lines[i], strlen(lines[i]),
                                             &pqt_json_variant, &f.b, &err), 0);
            assert_int_equal(vr_finish(&f.b, &v), 0);
            assert_int_equal(vs_write(&st, rg[k], t, &v, 0, &err), 0);
            pq_rowgroup_end_row(rg[k]);
        }
        vs_state_free(&st);
    }
    teardown(&f);
    for (size_t i = 0; i < s->n_leaves; i++) {
        const pq_column *x = pq_rowgroup_column(rg[0], i), *y = pq_rowgroup_column(rg[1], i);
        assert_int_equal(x->n_levels, y->n_levels);
        assert_int_equal(x->values.len, y->values.len);
        assert_int_equal(x->heap.len, y->heap.len);
        assert_int_equal(x->def.len, y->def.len);
        if (x->def.len > 0)
            assert_memory_equal(x->def.data, y->def.data, x->def.len);
        if (x->values.len > 0)
            assert_memory_equal(x->values.data, y->values.data, x->values.len);
        if (x->heap.len > 0)
            assert_memory_equal(x->heap.data, y->heap.data, x->heap.len);
    }
}

/* vs_write reuses an object's plan (which field each position is) only
 * for the same field ids under the same metadata: {"a","b"} and {"b","c"}
 * both have ids 0 and 1, and the second must not take b for a. */
static void test_vauto_plans_follow_metadata(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: event, type: variant, shred: {a: int64, c: int64}}\n", 0);
    pq_schema *ps;
    pq_err err = {0};
    assert_int_equal(sc_build_parquet_schema(s, &ps, &err), 0);
    static const char *const lines[] = {"{\"a\":1,\"b\":2}", "{\"b\":5,\"c\":3}",
                                        "{\"b\":8,\"a\":7}", "{\"a\":9,\"b\":2}"};
    pq_rowgroup *rg[2];
    write_both(s, ps, lines, sizeof lines / sizeof *lines, rg);
    size_t a = leaf_of(s, "event.typed_value.a.typed_value");
    size_t c = leaf_of(s, "event.typed_value.c.typed_value");
    const pq_column *ca = pq_rowgroup_column(rg[0], a), *cc = pq_rowgroup_column(rg[0], c);
    static const int64_t want_a[] = {1, 7, 9}, want_c[] = {3};
    assert_int_equal(ca->n_values, 3);
    assert_memory_equal(ca->values.data, want_a, sizeof want_a);
    assert_int_equal(cc->n_values, 1);
    assert_memory_equal(cc->values.data, want_c, sizeof want_c);
    pq_rowgroup_destroy(rg[0]);
    pq_rowgroup_destroy(rg[1]);
    pq_schema_destroy(ps);
    sc_schema_free(s);
}

/* The in-place reads of integers (each width, both signs, out of a
 * narrower node's range), doubles and booleans give the general
 * reading's leaves. */
static void test_vauto_quick_reads_match_general(void **state)
{
    (void)state;
    sc_schema *s = load("columns:\n"
                        "  - {name: event, type: variant, shred: {s: int16, i: int32, l: int64, "
                        "d: double, b: bool}}\n", 0);
    pq_schema *ps;
    pq_err err = {0};
    assert_int_equal(sc_build_parquet_schema(s, &ps, &err), 0);
    static const char *const lines[] = {
        "{\"s\":-7,\"i\":-128,\"l\":-1,\"d\":1.5,\"b\":true}",
        "{\"s\":32767,\"i\":2147483647,\"l\":9223372036854775807,\"d\":-0.0,\"b\":false}",
        "{\"s\":32768,\"i\":2147483648,\"l\":-9223372036854775808,\"d\":1e300,\"b\":1}",
        "{\"s\":-32769,\"i\":-2147483649,\"l\":300,\"d\":7,\"b\":null}",
        "{\"s\":-32768,\"i\":-2147483648,\"l\":-70000,\"d\":0.1,\"b\":\"t\"}",
        "{\"s\":1.0,\"i\":\"1\",\"l\":1e2,\"d\":true,\"b\":[true]}"};
    pq_rowgroup *rg[2];
    write_both(s, ps, lines, sizeof lines / sizeof *lines, rg);
    /* int16: -7, 32767, -32768 typed; 32768, -32769 and 1.0 (a double:
     * its shortest form 1 is an integer) as the general reading decides */
    const pq_column *cs = pq_rowgroup_column(rg[0], leaf_of(s, "event.typed_value.s.typed_value"));
    assert_true(cs->n_values >= 3);
    int32_t s0;
    memcpy(&s0, cs->values.data, sizeof s0);
    assert_int_equal(s0, -7);
    pq_rowgroup_destroy(rg[0]);
    pq_rowgroup_destroy(rg[1]);
    pq_schema_destroy(ps);
    sc_schema_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vauto_stable_fields_get_their_types),
        cmocka_unit_test(test_vauto_presence_and_type_consistency),
        cmocka_unit_test(test_vauto_numbers_widen_or_stay),
        cmocka_unit_test(test_vauto_case_twins),
        cmocka_unit_test(test_vauto_limits),
        cmocka_unit_test(test_vauto_nothing_stable),
        cmocka_unit_test(test_vauto_rejects_malformed_variants),
        cmocka_unit_test(test_vauto_field_ids_follow_metadata),
        cmocka_unit_test(test_vauto_schema_syntax),
        cmocka_unit_test(test_vauto_derive_and_swap),
        cmocka_unit_test(test_vauto_plans_follow_metadata),
        cmocka_unit_test(test_vauto_quick_reads_match_general),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
