/* test_vshred_spec.c - Variant shredding (schema/variant/vshred.c) on the
 * spec's examples in the writer's column buffers (VariantShredding.md),
 * type matching, through the record shredder, errors and seeded random
 * round trips; every file read back by vshred_rebuild.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "column.h"
#include "colspec.h"
#include "decode.h"
#include "pqfile.h"
#include "shred.h"
#include "variant_read.h"
#include "vshred.h"

#include "vshred_rebuild.h"
#include "memsink.h"

/* ---- tests: the spec's examples, in the writer's column buffers ---------------- */

typedef struct rig {
    sc_schema *spec;
    pq_schema *ps;
    pq_writer *w;
    pq_buf out;
    vs_state st;
    vr_builder b;
    pq_err err;
} rig;

static void rig_open(rig *r, const char *yaml)
{
    memset(r, 0, sizeof *r);
    pq_buf_init(&r->out);
    vs_state_init(&r->st);
    assert_int_equal(vr_builder_init(&r->b, NULL), 0);
    fail_if(sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &r->spec, &r->err), &r->err,
            "schema");
    fail_if(sc_build_parquet_schema(r->spec, &r->ps, &r->err), &r->err, "build");
    pq_sink sink = pqt_mem_sink(&r->out);
    fail_if(pq_writer_open(&r->w, r->ps, NULL, sink, &r->err), &r->err, "open");
}

static void rig_close(rig *r)
{
    vr_builder_free(&r->b);
    vs_state_free(&r->st);
    pq_writer_destroy(r->w);
    pq_schema_destroy(r->ps);
    sc_schema_free(r->spec);
    pq_buf_free(&r->out);
}

/* Finishes the record in r->b and writes it as column 0's value. */
static void rig_put(rig *r)
{
    vr_variant v;
    fail_if(vr_finish(&r->b, &v), &r->b.err, "finish");
    fail_if(vs_write(&r->st, pq_writer_rowgroup(r->w), r->spec->columns[0].type, &v, 0, &r->err),
            &r->err, "vs_write");
    fail_if(pq_writer_end_row(r->w, &r->err), &r->err, "end_row");
    vr_builder_reset(&r->b);
}

static const pq_column *rig_leaf(rig *r, const char *path)
{
    for (size_t i = 0; i < pq_schema_num_leaves(r->ps); i++)
        if (strcmp(pq_schema_leaf_path(r->ps, i), path) == 0)
            return pq_writer_column(r->w, i);
    fail_msg("no leaf %s", path);
    return NULL;
}

/* A leaf's entries as "def[/rep][:value]": binaries (value, metadata) in
 * hex, strings as text, numbers in decimal. */
static void expect_leaf(rig *r, const char *path, const char *want)
{
    const pq_column *c = rig_leaf(r, path);
    char got[1024] = "";
    size_t n = 0, v = 0;
    bool hex = ends_with(path, "value") && !ends_with(path, "typed_value");
    hex |= ends_with(path, "metadata");
    for (size_t i = 0; i < c->n_levels && n < sizeof got - 64; i++) {
        uint16_t def = c->max_def ? pq_column_def(c)[i] : 0;
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%u", i ? " " : "", def);
        if (c->max_rep)
            n += (size_t)snprintf(got + n, sizeof got - n, "/%u", pq_column_rep(c)[i]);
        if (def != c->max_def)
            continue;
        got[n++] = ':';
        if (c->node->type == PQ_BYTE_ARRAY || c->node->type == PQ_FIXED_LEN_BYTE_ARRAY) {
            const uint8_t *p;
            size_t len;
            if (c->node->type == PQ_BYTE_ARRAY) {
                const uint32_t *off = pq_column_offsets(c);
                p = c->heap.data + off[v];
                len = off[v + 1] - off[v];
            } else {
                p = c->values.data + v * c->width;
                len = c->width;
            }
            for (size_t k = 0; k < len && n < sizeof got - 8; k++)
                n += (size_t)(hex || c->node->type == PQ_FIXED_LEN_BYTE_ARRAY
                                  ? snprintf(got + n, sizeof got - n, "%02x", p[k])
                                  : snprintf(got + n, sizeof got - n, "%c", p[k]));
        } else if (c->node->type == PQ_DOUBLE) {
            double d;
            memcpy(&d, c->values.data + 8 * v, 8);
            n += (size_t)snprintf(got + n, sizeof got - n, "%g", d);
        } else {
            int64_t x = c->width == 8 ? le_int(c->values.data + 8 * v, 8)
                                      : le_int(c->values.data + c->width * v, c->width);
            n += (size_t)snprintf(got + n, sizeof got - n, "%" PRId64, x);
        }
        got[n] = 0;
        v++;
    }
    if (strcmp(got, want) != 0)
        fail_msg("%s:\n   got %s\n  want %s", path, got, want);
}

/* VariantShredding.md "Value Shredding": measurements 34, null, "n/a", 100
 * shredded as int64. The Variant ints are int8 (34, 100): Exact Numeric,
 * so they widen into the int64 column. The spec's table prints "n/a" as
 * 13 6E 2F 61; a 3-byte short string's header is (3 << 2) | 1 = 0x0D
 * (0x13 would be basic type 3, an array), so 0D is what must come out. */
static void test_vshred_spec_measurement_example(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: m, type: variant, required: true, shred: int64}\n");
    vr_int(&r.b, 34);
    rig_put(&r);
    vr_null(&r.b);
    rig_put(&r);
    vr_string(&r.b, "n/a", 3);
    rig_put(&r);
    vr_int(&r.b, 100);
    rig_put(&r);
    /* metadata 01 00 00: the empty dictionary as Spark and Iceberg write it */
    expect_leaf(&r, "m.metadata", "0:010000 0:010000 0:010000 0:010000");
    expect_leaf(&r, "m.value", "0 1:00 1:0d6e2f61 0");
    expect_leaf(&r, "m.typed_value", "1:34 0 0 1:100");
    rig_close(&r);
}

/* "Arrays": tags ["comedy","drama"], ["horror",null],
 * ["comedy","drama","romance"], null; then [] (present, empty list). */
static void test_vshred_spec_tags_array_example(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: tags, type: variant, shred: [string]}\n");
    const char *rows[][3] = {{"comedy", "drama", NULL}, {"horror", NULL, NULL},
                             {"comedy", "drama", "romance"}};
    int counts[] = {2, 2, 3};
    for (int i = 0; i < 3; i++) {
        vr_begin_array(&r.b);
        for (int k = 0; k < counts[i]; k++)
            rows[i][k] ? vr_string(&r.b, rows[i][k], strlen(rows[i][k])) : vr_null(&r.b);
        vr_end_array(&r.b);
        rig_put(&r);
    }
    vr_null(&r.b);
    rig_put(&r);
    vr_begin_array(&r.b);
    vr_end_array(&r.b);
    rig_put(&r);
    expect_leaf(&r, "tags.value", "1 1 1 2:00 1");
    expect_leaf(&r, "tags.typed_value.list.element.value",
                "3/0 3/1 3/0 4/1:00 3/0 3/1 3/1 1/0 2/0");
    expect_leaf(&r, "tags.typed_value.list.element.typed_value",
                "4/0:comedy 4/1:drama 4/0:horror 3/1 4/0:comedy 4/1:drama 4/1:romance 1/0 2/0");
    rig_close(&r);
}

static void event(rig *r, const char *type, bool null_type, int64_t ts, const char *ts_text,
                  const char *extra_key, const char *extra)
{
    vr_begin_object(&r->b);
    if (type || null_type) {
        vr_key(&r->b, "event_type", 10);
        type ? vr_string(&r->b, type, strlen(type)) : vr_null(&r->b);
    }
    if (ts || ts_text) {
        vr_key(&r->b, "event_ts", 8);
        ts_text ? vr_string(&r->b, ts_text, strlen(ts_text))
                : vr_timestamp(&r->b, ts, VR_MICROS, true);
    }
    if (extra_key) {
        vr_key(&r->b, extra_key, strlen(extra_key));
        vr_string(&r->b, extra, strlen(extra));
    }
    vr_end_object(&r->b);
    rig_put(r);
}

/* "Objects": the event table, row by row (the valid rows; "missing" is a
 * null column, not a Variant). */
static void test_vshred_spec_event_object_example(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - name: event\n    type: variant\n    shred:\n"
                 "      event_type: string\n      event_ts: \"timestamp(us,utc)\"\n");
    event(&r, "noop", false, 1729794114937, NULL, NULL, NULL);
    event(&r, "login", false, 1729794146402, NULL, "email", "user@example.com");
    event(&r, NULL, false, 0, NULL, "error_msg", "malformed: ...");
    vr_string(&r.b, "malformed: not an object", 24);
    rig_put(&r);
    event(&r, NULL, false, 1729794240241, NULL, "click", "_button");
    event(&r, NULL, true, 1729794954163, NULL, NULL, NULL);
    event(&r, "noop", false, 0, "2024-10-24", NULL, NULL);
    event(&r, NULL, false, 0, NULL, NULL, NULL); /* {} */
    vr_null(&r.b);
    rig_put(&r);
    /* partial objects: header 02, 1 field, id, offsets 0 and end, then the
     * kept value copied as it was (short strings 0x41 = len 16, 0x39 = 14,
     * 0x1d = 7). Ids follow the record's sorted dictionary. */
    expect_leaf(&r, "event.value",
                "1 2:02010000114175736572406578616d706c652e636f6d "
                "2:020100000f396d616c666f726d65643a202e2e2e "
                "2:616d616c666f726d65643a206e6f7420616e206f626a656374 "
                "2:02010000081d5f627574746f6e 1 1 1 2:00");
    expect_leaf(&r, "event.typed_value.event_type.value", "2 2 2 1 2 3:00 2 2 1");
    expect_leaf(&r, "event.typed_value.event_type.typed_value",
                "3:noop 3:login 2 1 2 2 3:noop 2 1");
    expect_leaf(&r, "event.typed_value.event_ts.value",
                "2 2 2 1 2 2 3:29323032342d31302d3234 2 1");
    expect_leaf(&r, "event.typed_value.event_ts.typed_value",
                "3:1729794114937 3:1729794146402 2 1 3:1729794240241 3:1729794954163 2 2 1");
    rig_close(&r);
}

/* "Nesting": an object field shredded as an object, another as an array of
 * objects, and a Variant inside a LIST column (rep from the caller). */
static void test_vshred_nested_levels(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: v, type: variant, shred: "
                 "{loc: {lat: double}, hits: [{id: int32}]}}\n");
    /* {"hits": [{"id": 1}, {"id": "x", "z": true}, 7], "loc": {"lat": 1.5}} */
    vr_begin_object(&r.b);
    vr_key(&r.b, "hits", 4);
    vr_begin_array(&r.b);
    vr_begin_object(&r.b);
    vr_key(&r.b, "id", 2);
    vr_int(&r.b, 1);
    vr_end_object(&r.b);
    vr_begin_object(&r.b);
    vr_key(&r.b, "id", 2);
    vr_string(&r.b, "x", 1);
    vr_key(&r.b, "z", 1);
    vr_bool(&r.b, true);
    vr_end_object(&r.b);
    vr_int(&r.b, 7);
    vr_end_array(&r.b);
    vr_key(&r.b, "loc", 3);
    vr_begin_object(&r.b);
    vr_key(&r.b, "lat", 3);
    vr_double(&r.b, 1.5);
    vr_end_object(&r.b);
    vr_end_object(&r.b);
    rig_put(&r);
    /* {"loc": "here"}: hits missing, loc not an object */
    vr_begin_object(&r.b);
    vr_key(&r.b, "loc", 3);
    vr_string(&r.b, "here", 4);
    vr_end_object(&r.b);
    rig_put(&r);
    expect_leaf(&r, "v.value", "1 1");
    expect_leaf(&r, "v.typed_value.loc.value", "2 3:1168657265");
    expect_leaf(&r, "v.typed_value.loc.typed_value.lat.value", "3 2");
    expect_leaf(&r, "v.typed_value.loc.typed_value.lat.typed_value", "4:1.5 2");
    expect_leaf(&r, "v.typed_value.hits.value", "2 2");
    /* levels: v 1, v.typed_value 2, hits.typed_value 3, list/element 4,
     * element.typed_value 5, id.value / id.typed_value 6. Element 1 keeps
     * {"z": true} (02 01 04 00 01 04: z is key 4 of hits,id,lat,loc,z) in
     * element.value while id goes to id.value ("x" = 05 78); element 2 (7)
     * is not an object, so its typed_value group is null (def 4). */
    expect_leaf(&r, "v.typed_value.hits.typed_value.list.element.value",
                "4/0 5/1:020104000104 5/1:0c07 2/0");
    expect_leaf(&r, "v.typed_value.hits.typed_value.list.element.typed_value.id.value",
                "5/0 6/1:0578 4/1 2/0");
    expect_leaf(&r, "v.typed_value.hits.typed_value.list.element.typed_value.id.typed_value",
                "6/0:1 5/1 4/1 2/0");
    rig_close(&r);

    /* list<variant>: element Variants at rep 0 then 1 */
    rig_open(&r, "columns:\n  - {name: l, type: \"list<variant>\", shred: string}\n");
    const sc_type *t = r.spec->columns[0].type->elem;
    const char *words[] = {"a", NULL};
    for (int i = 0; i < 2; i++) {
        words[i] ? vr_string(&r.b, words[i], 1) : vr_int(&r.b, 5);
        vr_variant v;
        fail_if(vr_finish(&r.b, &v), &r.b.err, "finish");
        fail_if(vs_write(&r.st, pq_writer_rowgroup(r.w), t, &v, (uint16_t)i, &r.err), &r.err,
                "vs_write");
        vr_builder_reset(&r.b);
    }
    expect_leaf(&r, "l.list.element.metadata", "3/0:010000 3/1:010000");
    expect_leaf(&r, "l.list.element.value", "3/0 4/1:0c05");
    expect_leaf(&r, "l.list.element.typed_value", "4/0:a 3/1");
    rig_close(&r);
}

/* ---- tests: type matching --------------------------------------------------------- */

static const sc_type *shred_type(const sc_schema *spec, const char *field)
{
    const sc_shred *root = spec->columns[0].type->shred;
    for (size_t i = 0; i < root->n_fields; i++)
        if (strcmp(root->fields[i].name, field) == 0)
            return root->fields[i].shred->type;
    fail_msg("no shred field %s", field);
    return NULL;
}

static vr_prim P(vr_type t, int64_t i)
{
    return (vr_prim){.type = t, .i = i};
}

static vr_prim DEC(vr_type t, vr_i128 unscaled, uint32_t scale)
{
    return (vr_prim){.type = t, .unscaled = unscaled, .scale = scale};
}

/* VariantEncoding.md equivalence classes: a value goes to typed_value when
 * the column's type is in its class and the conversion is exact. */
static void test_vshred_type_matching_rules(void **state)
{
    (void)state;
    const char *yaml =
        "columns:\n  - name: v\n    type: variant\n    shred: {i8: int8, i64: int64, "
        "d92: \"decimal(9,2)\", d38: \"decimal(38,9)\", f: float, d: double, b: bool, "
        "tu: \"timestamp(us,utc)\", tn: \"timestamp(ns,utc)\", tl: \"timestamp(us,local)\", "
        "t: time, dt: date, s: string, bin: binary, u: uuid}\n";
    sc_schema *spec;
    pq_err err = {0};
    fail_if(sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &spec, &err), &err, "load");
    const sc_type *i8 = shred_type(spec, "i8"), *i64 = shred_type(spec, "i64"),
                  *d92 = shred_type(spec, "d92"), *d38 = shred_type(spec, "d38"),
                  *f = shred_type(spec, "f"), *d = shred_type(spec, "d"),
                  *b = shred_type(spec, "b"), *tu = shred_type(spec, "tu"),
                  *tn = shred_type(spec, "tn"), *tl = shred_type(spec, "tl"),
                  *t = shred_type(spec, "t"), *dt = shred_type(spec, "dt"),
                  *str = shred_type(spec, "s"), *bin = shred_type(spec, "bin"),
                  *u = shred_type(spec, "u");
    vs_typed o;
    vr_prim p;
    /* Exact Numeric into intN: any width that holds the value */
    assert_true(vs_prim_match(i8, (p = P(VR_INT16, -128), &p), &o) && o.i == -128);
    assert_false(vs_prim_match(i8, (p = P(VR_INT16, 128), &p), &o));
    assert_true(vs_prim_match(i64, (p = P(VR_INT8, -34), &p), &o) && o.i == -34);
    assert_true(vs_prim_match(i8, (p = DEC(VR_DECIMAL4, 1200, 2), &p), &o) && o.i == 12);
    assert_false(vs_prim_match(i8, (p = DEC(VR_DECIMAL4, 15, 1), &p), &o));
    assert_false(vs_prim_match(i64, (p = DEC(VR_DECIMAL16, (vr_i128)INT64_MAX + 1, 0), &p), &o));
    /* into decimal(9,2): rescaled exactly, at most 9 digits */
    assert_true(vs_prim_match(d92, (p = P(VR_INT8, 5), &p), &o) && o.i == 500);
    assert_true(vs_prim_match(d92, (p = DEC(VR_DECIMAL4, 15, 1), &p), &o) && o.i == 150);
    assert_true(vs_prim_match(d92, (p = DEC(VR_DECIMAL4, 1230, 3), &p), &o) && o.i == 123);
    assert_false(vs_prim_match(d92, (p = DEC(VR_DECIMAL4, 1234, 3), &p), &o));
    assert_true(vs_prim_match(d92, (p = DEC(VR_DECIMAL8, 999999999, 2), &p), &o));
    assert_false(vs_prim_match(d92, (p = DEC(VR_DECIMAL8, 1000000000, 2), &p), &o));
    assert_false(vs_prim_match(d92, (p = P(VR_INT32, 10000000), &p), &o));
    /* a double by its shortest form (vnumber.c makes JSON 1.5 a double) */
    assert_true(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 1.5}, &p), &o) &&
                o.i == 150);
    assert_true(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 0.1}, &p), &o) &&
                o.i == 10);
    assert_true(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = -19.99}, &p), &o) &&
                o.i == -1999);
    assert_false(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 0.125}, &p), &o));
    assert_false(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = 1e7}, &p), &o));
    assert_false(vs_prim_match(d92, (p = (vr_prim){.type = VR_DOUBLE, .d = NAN}, &p), &o));
    assert_true(vs_prim_match(i8, (p = (vr_prim){.type = VR_DOUBLE, .d = -3.0}, &p), &o) &&
                o.i == -3);
    assert_false(vs_prim_match(i8, (p = (vr_prim){.type = VR_DOUBLE, .d = 3.5}, &p), &o));
    assert_false(vs_prim_match(i8, (p = (vr_prim){.type = VR_DOUBLE, .d = 128.0}, &p), &o));
    assert_false(vs_prim_match(i64, (p = (vr_prim){.type = VR_DOUBLE, .d = 1e19}, &p), &o));
    /* decimal(38,9) is FIXED_LEN_BYTE_ARRAY(16), big-endian */
    assert_true(vs_prim_match(d38, (p = DEC(VR_DECIMAL16, -1, 9), &p), &o));
    assert_int_equal(o.len, 16);
    for (size_t k = 0; k < 16; k++)
        assert_int_equal(o.bytes[k], 0xff);
    assert_true(vs_prim_match(d38, (p = DEC(VR_DECIMAL4, 258, 9), &p), &o));
    assert_int_equal(o.bytes[14], 1);
    assert_int_equal(o.bytes[15], 2);
    /* float and double are classes of their own */
    assert_true(vs_prim_match(f, (p = (vr_prim){.type = VR_FLOAT, .f = 1.5f}, &p), &o));
    assert_false(vs_prim_match(f, (p = (vr_prim){.type = VR_DOUBLE, .d = 1.5}, &p), &o));
    assert_true(vs_prim_match(d, (p = (vr_prim){.type = VR_DOUBLE, .d = 1.5}, &p), &o));
    assert_false(vs_prim_match(d, (p = (vr_prim){.type = VR_FLOAT, .f = 1.5f}, &p), &o));
    assert_false(vs_prim_match(d, (p = P(VR_INT8, 1), &p), &o));
    assert_true(vs_prim_match(b, (p = P(VR_FALSE, 0), &p), &o) && o.i == 0);
    assert_true(vs_prim_match(b, (p = P(VR_TRUE, 0), &p), &o) && o.i == 1);
    assert_false(vs_prim_match(b, (p = P(VR_INT8, 1), &p), &o));
    assert_false(vs_prim_match(b, (p = P(VR_NULL, 0), &p), &o));
    /* timestamps: same utc flag; us <-> ns only when exact */
    assert_true(vs_prim_match(tu, (p = P(VR_TIMESTAMP_MICROS, 7), &p), &o) && o.i == 7);
    assert_false(vs_prim_match(tu, (p = P(VR_TIMESTAMP_NTZ_MICROS, 7), &p), &o));
    assert_true(vs_prim_match(tu, (p = P(VR_TIMESTAMP_NANOS, 7000), &p), &o) && o.i == 7);
    assert_false(vs_prim_match(tu, (p = P(VR_TIMESTAMP_NANOS, 7001), &p), &o));
    assert_true(vs_prim_match(tn, (p = P(VR_TIMESTAMP_MICROS, -7), &p), &o) && o.i == -7000);
    assert_false(vs_prim_match(tn, (p = P(VR_TIMESTAMP_MICROS, INT64_MAX / 100), &p), &o));
    assert_true(vs_prim_match(tl, (p = P(VR_TIMESTAMP_NTZ_NANOS, 5000), &p), &o) && o.i == 5);
    assert_false(vs_prim_match(tl, (p = P(VR_TIMESTAMP_MICROS, 5), &p), &o));
    assert_true(vs_prim_match(t, (p = P(VR_TIME_NTZ_MICROS, 45234123456), &p), &o));
    assert_true(vs_prim_match(dt, (p = P(VR_DATE, -4438), &p), &o) && o.i == -4438);
    assert_false(vs_prim_match(dt, (p = P(VR_TIMESTAMP_MICROS, 0), &p), &o));
    assert_false(vs_prim_match(tu, (p = P(VR_DATE, 0), &p), &o));
    /* strings, binaries, uuids: their own types only */
    p = (vr_prim){.type = VR_STRING, .bytes = (const uint8_t *)"x", .len = 1};
    assert_true(vs_prim_match(str, &p, &o) && o.len == 1 && o.bytes[0] == 'x');
    assert_false(vs_prim_match(bin, &p, &o));
    p.type = VR_BINARY;
    assert_true(vs_prim_match(bin, &p, &o));
    assert_false(vs_prim_match(str, &p, &o));
    p = (vr_prim){.type = VR_UUID, .bytes = (const uint8_t *)"0123456789abcdef", .len = 16};
    assert_true(vs_prim_match(u, &p, &o) && o.len == 16);
    assert_false(vs_prim_match(str, &p, &o));
    sc_schema_free(spec);
}

/* ---- tests: through the record shredder -------------------------------------------- */

/* NDJSON into a shredded Variant column: sh_shred_line builds the Variant
 * and shv_write_variant hands it to vs_write. JSON integers arrive as the
 * smallest Variant int and still land in the int64 column. */
static void test_vshred_json_records_through_the_shredder(void **state)
{
    (void)state;
    const char *yaml = "columns:\n  - {name: e, type: variant, shred: {kind: string, n: int64, "
                       "tags: [string]}}\n";
    sc_schema *spec;
    pq_schema *ps;
    pq_writer *w;
    sh_shredder *sh;
    pq_buf out;
    pq_err err = {0};
    pq_buf_init(&out);
    fail_if(sc_schema_load_buffer("t.yaml", yaml, strlen(yaml), &spec, &err), &err, "load");
    fail_if(sc_build_parquet_schema(spec, &ps, &err), &err, "build");
    pq_sink sink = pqt_mem_sink(&out);
    fail_if(pq_writer_open(&w, ps, NULL, sink, &err), &err, "open");
    fail_if(sh_shredder_new(&sh, spec, &err), &err, "shredder");
    const char *lines[] = {
        "{\"e\": {\"kind\": \"login\", \"n\": 5, \"ip\": \"10.0.0.1\", \"tags\": [\"a\", 1]}}",
        "{\"e\": {\"n\": 12.5}}",
        "{\"e\": \"plain\"}",
        "{\"other\": 1}",
    };
    for (size_t i = 0; i < 4; i++)
        fail_if(sh_shred_line(sh, pq_writer_rowgroup(w), lines[i], strlen(lines[i]), 0, &err),
                &err, lines[i]);
    rig r = {.spec = spec, .ps = ps, .w = w};
    /* {"ip": "10.0.0.1"} stays in value (ip is key 0 of ip, kind, n, tags);
     * 12.5 is a double (1c 0000000000002940), not an int64: n.value;
     * the row without "e" is a null column (def 0 everywhere). */
    expect_leaf(&r, "e.value", "2:02010000092131302e302e302e31 1 2:15706c61696e 0");
    expect_leaf(&r, "e.typed_value.kind.value", "2 2 1 0");
    expect_leaf(&r, "e.typed_value.kind.typed_value", "3:login 2 1 0");
    expect_leaf(&r, "e.typed_value.n.value", "2 3:1c0000000000002940 1 0");
    expect_leaf(&r, "e.typed_value.n.typed_value", "3:5 2 1 0");
    expect_leaf(&r, "e.typed_value.tags.value", "2 2 1 0");
    expect_leaf(&r, "e.typed_value.tags.typed_value.list.element.value", "4/0 5/1:0c01 2/0 1/0 0/0");
    expect_leaf(&r, "e.typed_value.tags.typed_value.list.element.typed_value", "5/0:a 4/1 2/0 1/0 0/0");
    sh_shredder_destroy(sh);
    rig_close(&r);
    pq_buf_free(&out);
}

/* ---- tests: errors and random round trips ------------------------------------------ */

static void test_vshred_rejects_malformed_input(void **state)
{
    (void)state;
    rig r;
    rig_open(&r, "columns:\n  - {name: v, type: variant, shred: {a: int32}}\n"
                 "  - {name: s, type: string}\n");
    static const uint8_t meta[] = {0x01, 0x00, 0x00};
    static const uint8_t truncated_object[] = {0x02, 0x05};
    vr_variant v = {meta, sizeof meta, truncated_object, sizeof truncated_object};
    assert_int_equal(vs_write(&r.st, pq_writer_rowgroup(r.w), r.spec->columns[0].type, &v, 0,
                              &r.err), PQ_EPARSE);
    assert_int_equal(vs_write(&r.st, pq_writer_rowgroup(r.w), r.spec->columns[1].type, &v, 0,
                              &r.err), PQ_EINVAL);
    assert_non_null(strstr(r.err.msg, "not a variant column"));
    static const uint8_t bad_meta[] = {0x02, 0x00};
    v = (vr_variant){bad_meta, sizeof bad_meta, truncated_object, 1};
    assert_int_equal(vs_write(&r.st, pq_writer_rowgroup(r.w), r.spec->columns[0].type, &v, 0,
                              &r.err), PQ_EPARSE);
    pq_writer_abort_row(r.w); /* what a caller does after a failure */
    rig_close(&r);
}

typedef struct gen {
    pqt_rng rng;
    vr_builder *b;
} gen;

static uint64_t below(gen *g, uint64_t n)
{
    return pqt_rng_below(&g->rng, n);
}

static void gen_any(gen *g, int depth);

/* A decimal of scale <= max_scale that readers handle: the scale stays
 * below the digits of the unscaled value (vr_decimal refuses the rest). */
static void gen_decimal(gen *g, vr_i128 u, unsigned max_scale)
{
    unsigned digits = 1;
    for (vr_i128 m = u < 0 ? -u : u; m >= 10; m /= 10)
        digits++;
    unsigned scale = (unsigned)below(g, max_scale + 1);
    vr_decimal(g->b, u, scale < digits ? scale : digits - 1);
}

static void gen_prim(gen *g)
{
    static const char *words[] = {"", "a", "comedy", "drama",
                                  ("a string that is longer than sixty-three bytes, so it is "
                                   "encoded as a long string")};  /* (): one element, for clang */
    uint8_t u[16];
    for (int i = 0; i < 16; i++)
        u[i] = (uint8_t)below(g, 256);
    int64_t big = (int64_t)pqt_rng_next(&g->rng);
    switch (below(g, 16)) {
    case 0: vr_null(g->b); break;
    case 1: vr_bool(g->b, below(g, 2)); break;
    case 2: vr_int(g->b, (int64_t)below(g, 300) - 150); break;
    case 3: vr_int(g->b, big >> below(g, 63)); break;
    case 4: vr_double(g->b, (double)big / 1e9); break;
    case 5: vr_float(g->b, (float)((double)big / 1e12)); break;
    case 6: gen_decimal(g, (vr_i128)(big >> below(g, 63)) * (vr_i128)below(g, 1000), 7); break;
    case 8: vr_binary(g->b, u, below(g, 17)); break;
    case 9: vr_date(g->b, (int32_t)below(g, 40000) - 20000); break;
    case 10: vr_timestamp(g->b, big >> 12, below(g, 2) ? VR_NANOS : VR_MICROS, below(g, 2));
             break;
    case 11: vr_time(g->b, (int64_t)below(g, 86400000000ull)); break;
    case 12: vr_uuid(g->b, u); break;
    case 13: gen_decimal(g, (vr_i128)below(g, 100000) * (below(g, 2) ? 1 : -1), 3); break;
    case 14: vr_timestamp(g->b, big >> 12, VR_MICROS, true); break;
    default: { const char *w = words[below(g, 5)]; vr_string(g->b, w, strlen(w)); break; }
    }
}

static void gen_object_keys(gen *g, const char *const *keys, size_t nkeys, int depth)
{
    vr_begin_object(g->b);
    for (size_t i = 0; i < nkeys; i++)
        if (below(g, 3)) {
            vr_key(g->b, keys[i], strlen(keys[i]));
            gen_any(g, depth + 1);
        }
    vr_end_object(g->b);
}

static void gen_any(gen *g, int depth)
{
    static const char *keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "x", "y", "zz"};
    uint64_t k = depth > 3 ? 9 : below(g, 10);
    if (k == 0) {
        gen_object_keys(g, keys, 11, depth);
    } else if (k == 1) {
        vr_begin_array(g->b);
        for (uint64_t i = below(g, 4); i > 0; i--)
            gen_any(g, depth + 1);
        vr_end_array(g->b);
    } else {
        gen_prim(g);
    }
}

/* A value that matches sh more often than chance: objects with its fields
 * (and others), arrays of its element, its primitive type. */
static void gen_for(gen *g, const sc_shred *sh, int depth)
{
    if (below(g, 4) == 0 || depth > 4) {
        gen_any(g, depth);
        return;
    }
    switch (sh->kind) {
    case SC_SHRED_OBJECT:
        vr_begin_object(g->b);
        for (size_t i = 0; i < sh->n_fields; i++)
            if (below(g, 4)) {
                vr_key(g->b, sh->fields[i].name, strlen(sh->fields[i].name));
                gen_for(g, sh->fields[i].shred, depth + 1);
            }
        if (below(g, 2)) {
            vr_key(g->b, "zz", 2);
            gen_any(g, depth + 1);
        }
        vr_end_object(g->b);
        break;
    case SC_SHRED_ARRAY:
        vr_begin_array(g->b);
        for (uint64_t i = below(g, 5); i > 0; i--)
            gen_for(g, sh->elem, depth + 1);
        vr_end_array(g->b);
        break;
    case SC_SHRED_PRIMITIVE:
        switch (sh->type->kind) {
        case SC_INT: vr_int(g->b, (int64_t)below(g, 100000) - 50000); break;
        case SC_STRING: vr_string(g->b, "shredded", 8); break;
        case SC_DOUBLE: vr_double(g->b, (double)below(g, 1000) / 8); break;
        case SC_DECIMAL: gen_decimal(g, (vr_i128)below(g, 1000000), 3); break;
        case SC_TIMESTAMP: vr_timestamp(g->b, (int64_t)below(g, 1u << 30) << 20, VR_MICROS,
                                        true); break;
        default: gen_prim(g); break;
        }
        break;
    default:
        gen_any(g, depth);
        break;
    }
}

/* Random Variants (seeded; PQ_TEST_SEED replays) against a shred tree
 * with every node kind: written through vs_write over several pages and
 * row groups, read back, rebuilt: equal, and nothing INVALID. */
static void test_vshred_random_round_trip(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    gen g = {.rng = {seed}};
    caserun cr;
    memset(&cr, 0, sizeof cr);
    snprintf(cr.yaml, sizeof cr.yaml, "%s",
             "columns:\n  - {name: id, type: int32, required: true}\n"
             "  - name: var\n    type: variant\n    shred: {g: \"timestamp(us,utc)\", a: int64, "
             "d: {f: variant, e: [int32]}, b: string, c: [{y: \"decimal(18,3)\", x: double}], "
             "h: [[string]]}\n"); /* fields out of byte order on purpose */
    pq_err err = {0};
    fail_if(sc_schema_load_buffer("t.yaml", cr.yaml, strlen(cr.yaml), &cr.spec, &err), &err,
            "load");
    fail_if(sc_build_parquet_schema(cr.spec, &cr.ps, &err), &err, "build");
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.page_max_rows = 7;
    o.row_group_max_rows = 64;
    o.page_version = 1 + (int)(seed & 1);
    pq_writer *w;
    pq_buf file;
    pq_buf_init(&file);
    pq_sink sink = pqt_mem_sink(&file);
    fail_if(pq_writer_open(&w, cr.ps, &o, sink, &err), &err, "open");
    vr_builder b;
    assert_int_equal(vr_builder_init(&b, NULL), 0);
    g.b = &b;
    vs_state st;
    vs_state_init(&st);
    const sc_type *t = cr.spec->columns[1].type;
    enum { ROWS = 300 };
    pq_buf *in = calloc(ROWS, sizeof *in);
    size_t *mlen = calloc(ROWS, sizeof *mlen);
    for (size_t r = 0; r < ROWS; r++) {
        assert_int_equal(pq_column_put_i32(pq_writer_column(w, 0), 0, (int32_t)r), 0);
        pq_buf_init(&in[r]);
        if (below(&g, 20) == 0) { /* a null Variant */
            for (int l = t->leaf; l < t->leaf + t->n_leaves; l++)
                assert_int_equal(pq_column_put_null(pq_writer_column(w, (size_t)l), 0, 0), 0);
        } else {
            vr_builder_reset(&b);
            gen_for(&g, t->shred, 0);
            vr_variant v;
            if (vr_finish(&b, &v) != 0)
                fail_msg("seed %" PRIu64 " row %zu: %s", seed, r, b.err.msg);
            pq_buf_append(&in[r], v.metadata, v.metadata_len);
            pq_buf_append(&in[r], v.value, v.value_len);
            mlen[r] = v.metadata_len;
            if (vs_write(&st, pq_writer_rowgroup(w), t, &v, 0, &err) != 0)
                fail_msg("seed %" PRIu64 " row %zu: %s", seed, r, err.msg);
        }
        fail_if(pq_writer_end_row(w, &err), &err, "end_row");
    }
    fail_if(pq_writer_close(w, &err), &err, "close");
    pq_writer_destroy(w);
    fdata_open_mem(&cr.ours, &file, "random");
    assert_true(pqf_num_row_groups(&cr.ours.f) > 1);
    for (size_t j = 0; j < cr.ours.nleaves; j++) /* every path taken */
        if (cr.ours.leaves[j].nv == 0)
            fail_msg("seed %" PRIu64 ": no value in %s", seed, cr.ours.leaves[j].path);
    rebuilt *rows = calloc(ROWS, sizeof *rows);
    char viol[256];
    rebuild_file(&cr.ours, cr.spec, cr.ps, true, rows, viol, sizeof viol);
    if (viol[0])
        fail_msg("seed %" PRIu64 ": %s", seed, viol);
    for (size_t r = 0; r < ROWS; r++) {
        if (in[r].len == 0) {
            PQT_CHECK(rows[r].null, seed);
            continue;
        }
        int eq = vread_equal(in[r].data, mlen[r], in[r].data + mlen[r], in[r].len - mlen[r],
                             rows[r].meta, rows[r].mlen, rows[r].value.data, rows[r].value.len,
                             &err);
        if (eq != 1)
            fail_msg("seed %" PRIu64 " row %zu: rebuilt Variant differs (%s)", seed, r, err.msg);
        /* metadata is passed through unchanged */
        PQT_CHECK(rows[r].mlen == mlen[r] && memcmp(rows[r].meta, in[r].data, mlen[r]) == 0,
                  seed);
        pq_buf_free(&in[r]);
    }
    rebuilt_free(rows, ROWS);
    free(rows);
    free(in);
    free(mlen);
    vs_state_free(&st);
    vr_builder_free(&b);
    fdata_close(&cr.ours);
    pq_buf_free(&file);
    pq_schema_destroy(cr.ps);
    sc_schema_free(cr.spec);
}

/* vs_state learns which metadata id is which shred field once per
 * metadata (vs_fieldmap). Rows 1-2 share metadata [a, b]; row 3's
 * metadata lists the same keys as [b, a], so the ids swap; row 4 goes
 * back. Each must shred `a` and keep `b` in value: a map kept across the
 * change would put b's 7 in a's column. */
static void test_vshred_field_maps_follow_metadata_changes(void **state)
{
    (void)state;
    static const uint8_t meta_ab[] = {0x01, 2, 0, 1, 2, 'a', 'b'};
    static const uint8_t meta_ba[] = {0x01, 2, 0, 1, 2, 'b', 'a'};
    /* {a: int8 5, b: int8 7}: fields in name order, ids per metadata */
    static const uint8_t val_ab[] = {0x02, 2, 0, 1, 0, 2, 4, 0x0C, 5, 0x0C, 7};
    static const uint8_t val_ba[] = {0x02, 2, 1, 0, 0, 2, 4, 0x0C, 5, 0x0C, 7};
    const struct {
        const uint8_t *meta, *val;
    } rows[] = {{meta_ab, val_ab}, {meta_ab, val_ab}, {meta_ba, val_ba}, {meta_ab, val_ab}};
    enum { ROWS = sizeof rows / sizeof rows[0] };
    caserun cr;
    memset(&cr, 0, sizeof cr);
    snprintf(cr.yaml, sizeof cr.yaml, "%s",
             "columns:\n  - {name: id, type: int32, required: true}\n"
             "  - {name: var, type: variant, shred: {a: int64}}\n");
    pq_err err = {0};
    fail_if(sc_schema_load_buffer("t.yaml", cr.yaml, strlen(cr.yaml), &cr.spec, &err), &err,
            "load");
    fail_if(sc_build_parquet_schema(cr.spec, &cr.ps, &err), &err, "build");
    pq_writer *w;
    pq_buf file;
    pq_buf_init(&file);
    pq_sink sink = pqt_mem_sink(&file);
    fail_if(pq_writer_open(&w, cr.ps, NULL, sink, &err), &err, "open");
    vs_state st;
    vs_state_init(&st);
    for (size_t r = 0; r < ROWS; r++) {
        assert_int_equal(pq_column_put_i32(pq_writer_column(w, 0), 0, (int32_t)r), 0);
        vr_variant v = {rows[r].meta, sizeof meta_ab, rows[r].val, sizeof val_ab};
        fail_if(vs_write(&st, pq_writer_rowgroup(w), cr.spec->columns[1].type, &v, 0, &err),
                &err, "vs_write");
        fail_if(pq_writer_end_row(w, &err), &err, "end_row");
    }
    fail_if(pq_writer_close(w, &err), &err, "close");
    pq_writer_destroy(w);
    fdata_open_mem(&cr.ours, &file, "maps");
    const leafdata *a = leaf_by_path(&cr.ours, "var.typed_value.a.typed_value");
    assert_non_null(a);
    assert_int_equal(a->nv, ROWS);
    for (size_t r = 0; r < ROWS; r++) {
        size_t len;
        const uint8_t *p = val_at(a, r, &len);
        assert_int_equal(le_int(p, len), 5);
    }
    rebuilt out[ROWS];
    char viol[256];
    rebuild_file(&cr.ours, cr.spec, cr.ps, true, out, viol, sizeof viol);
    assert_string_equal(viol, "");
    for (size_t r = 0; r < ROWS; r++)
        assert_int_equal(vread_equal(rows[r].meta, sizeof meta_ab, rows[r].val, sizeof val_ab,
                                     out[r].meta, out[r].mlen, out[r].value.data,
                                     out[r].value.len, &err), 1);
    /* a key twice in one object is malformed: refused, not written twice */
    static const uint8_t val_aa[] = {0x02, 2, 0, 0, 0, 2, 4, 0x0C, 5, 0x0C, 7};
    vr_variant dup = {meta_ab, sizeof meta_ab, val_aa, sizeof val_aa};
    pq_rowgroup *rg;
    fail_if(pq_rowgroup_new(&rg, cr.ps, &err), &err, "rowgroup");
    assert_int_equal(vs_write(&st, rg, cr.spec->columns[1].type, &dup, 0, &err), PQ_EPARSE);
    assert_non_null(strstr(err.msg, "twice"));
    pq_rowgroup_destroy(rg);
    rebuilt_free(out, ROWS);
    vs_state_free(&st);
    fdata_close(&cr.ours);
    pq_buf_free(&file);
    pq_schema_destroy(cr.ps);
    sc_schema_free(cr.spec);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vshred_spec_measurement_example),
        cmocka_unit_test(test_vshred_spec_tags_array_example),
        cmocka_unit_test(test_vshred_spec_event_object_example),
        cmocka_unit_test(test_vshred_nested_levels),
        cmocka_unit_test(test_vshred_type_matching_rules),
        cmocka_unit_test(test_vshred_json_records_through_the_shredder),
        cmocka_unit_test(test_vshred_rejects_malformed_input),
        cmocka_unit_test(test_vshred_random_round_trip),
        cmocka_unit_test(test_vshred_field_maps_follow_metadata_changes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
