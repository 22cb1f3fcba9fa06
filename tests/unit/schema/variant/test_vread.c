/* test_vread.c - the Variant readers and the shredder's helpers
 * (schema/variant/vread.c, vreencode.c) on good and corrupt bytes, and the
 * test decoder itself (tests/support/variant_read.c). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "variant.h"
#include "variant_read.h"

#include "variant_fixture.h"

/* ---- readers and shredder helpers ----------------------------------------- */

static void test_variant_reader_iterates_and_finds_fields(void **state)
{
    PQT_NEED_TESTDATA(VEC_DIR);
    (void)state;
    static const char *sorted[] = {"boolean_false_field", "boolean_true_field",
                                   "double_field", "int_field", "null_field",
                                   "string_field", "timestamp_field"};
    vec v = load_vec("object_primitive");
    vr_meta m;
    vr_container c;
    vr_str k;
    vr_prim p;
    uint32_t id;
    const uint8_t *fv;
    size_t fl;
    OK(vr_meta_open(&m, v.meta, v.mlen, NULL));
    assert_int_equal(m.size, 7);
    assert_false(m.sorted);
    OK(vr_container_open(&c, v.val, v.vlen, NULL));
    assert_int_equal(c.n, 7);
    for (uint32_t i = 0; i < c.n; i++) {
        OK(vr_container_get(&c, i, &id, &fv, &fl, NULL));
        OK(vr_meta_key(&m, id, &k, NULL));
        assert_int_equal(k.len, strlen(sorted[i]));
        assert_memory_equal(k.s, sorted[i], k.len);
    }
    assert_int_equal(vr_object_find(&c, &m, "string_field", 12, &fv, &fl, NULL), 1);
    OK(vr_value_read(fv, fl, &p, NULL));
    assert_int_equal(p.type, VR_STRING);
    assert_int_equal(p.len, 14);
    assert_memory_equal(p.bytes, "Apache Parquet", 14);
    assert_int_equal(vr_object_find(&c, &m, "double_field", 12, &fv, &fl, NULL), 1);
    OK(vr_value_read(fv, fl, &p, NULL));
    assert_int_equal(p.type, VR_DECIMAL4);
    assert_true(p.unscaled == 123456789 && p.scale == 8);
    assert_int_equal(vr_object_find(&c, &m, "nope", 4, &fv, &fl, NULL), 0);
    assert_int_equal(vr_object_find(&c, &m, "", 0, &fv, &fl, NULL), 0);
    free_vec(&v);
}

/* A sub-value paired with the record's metadata is itself a variant. */
static void test_variant_sub_value_reemits_with_same_metadata(void **state)
{
    PQT_NEED_TESTDATA(VEC_DIR);
    (void)state;
    vec v = load_vec("array_nested");
    vr_container c;
    const uint8_t *ev;
    size_t el;
    OK(vr_container_open(&c, v.val, v.vlen, NULL));
    OK(vr_container_get(&c, 2, NULL, &ev, &el, NULL));
    char *j = json_of(v.meta, v.mlen, ev, el);
    assert_string_equal(j, "{\"id\":2,\"names\":[\"Apple\",\"Ray\",null],\"type\":\"if\"}");
    free(j);
    assert_int_equal(vr_value_type(ev, el), VR_OBJECT);
    free_vec(&v);
}

static char *without_json(const vec *v, const vr_str *drop, size_t ndrop, size_t want_kept)
{
    vr_meta m;
    pq_buf out;
    size_t kept;
    pq_err err = {0};
    pq_buf_init(&out);
    OK(vr_meta_open(&m, v->meta, v->mlen, NULL));
    OK(vr_object_append_without(&out, &m, v->val, v->vlen, drop, ndrop, &kept, &err));
    assert_int_equal(kept, want_kept);
    if (vread_validate(v->meta, v->mlen, out.data, out.len, VREAD_CANONICAL, &err) != 0)
        fail_msg("%s", err.msg);
    char *j = json_of(v->meta, v->mlen, out.data, out.len);
    pq_buf_free(&out);
    return j;
}

/* Partial shredding: shredded fields leave, the rest stays in value. */
static void test_variant_object_without_drops_shredded_fields(void **state)
{
    PQT_NEED_TESTDATA(VEC_DIR);
    (void)state;
    vec v = load_vec("object_primitive");
    const vr_str two[] = {{"aaa", 3}, {"int_field", 9}, {"string_field", 12}, {"zzz", 3}};
    char *j = without_json(&v, two, 4, 5);
    assert_string_equal(j, "{\"boolean_false_field\":false,\"boolean_true_field\":true,"
                           "\"double_field\":1.23456789,\"null_field\":null,"
                           "\"timestamp_field\":\"2025-04-16T12:34:56.78\"}");
    free(j);
    const vr_str all[] = {{"boolean_false_field", 19}, {"boolean_true_field", 18},
                          {"double_field", 12}, {"int_field", 9}, {"null_field", 10},
                          {"string_field", 12}, {"timestamp_field", 15}};
    j = without_json(&v, all, 7, 0);
    assert_string_equal(j, "{}");
    free(j);
    j = without_json(&v, NULL, 0, 7);
    char *orig = json_of(v.meta, v.mlen, v.val, v.vlen);
    assert_string_equal(j, orig);
    free(j);
    free(orig);
    vr_meta m;
    pq_buf out;
    size_t kept;
    pq_buf_init(&out);
    OK(vr_meta_open(&m, v.meta, v.mlen, NULL));
    const vr_str unsorted[] = {{"b", 1}, {"a", 1}};
    assert_int_equal(vr_object_append_without(&out, &m, v.val, v.vlen, unsorted, 2, &kept,
                                              NULL), PQ_EINVAL);
    pq_buf_free(&out);
    free_vec(&v);
}

static void test_variant_append_object_and_array_from_slices(void **state)
{
    PQT_NEED_TESTDATA(VEC_DIR);
    (void)state;
    vec v = load_vec("object_primitive");
    vr_meta m;
    vr_container c;
    vr_field f[2];
    pq_buf out;
    pq_err err = {0};
    pq_buf_init(&out);
    OK(vr_meta_open(&m, v.meta, v.mlen, NULL));
    OK(vr_container_open(&c, v.val, v.vlen, NULL));
    OK(vr_container_get(&c, 1, &f[0].id, &f[0].value, &f[0].len, NULL)); /* boolean_true */
    OK(vr_container_get(&c, 4, &f[1].id, &f[1].value, &f[1].len, NULL)); /* null_field */
    OK(vr_value_append_object(&out, &m, f, 2, &err));
    char *j = json_of(v.meta, v.mlen, out.data, out.len);
    assert_string_equal(j, "{\"boolean_true_field\":true,\"null_field\":null}");
    free(j);
    vr_field swapped[2] = {f[1], f[0]};
    assert_int_equal(vr_value_append_object(&out, &m, swapped, 2, &err), PQ_EINVAL);
    pq_buf_reset(&out);
    vr_slice s[3] = {{f[0].value, f[0].len}, {f[1].value, f[1].len}, {v.val, v.vlen}};
    OK(vr_value_append_array(&out, s, 3, &err));
    OK(vread_validate(v.meta, v.mlen, out.data, out.len, VREAD_CANONICAL, &err));
    j = json_of(v.meta, v.mlen, out.data, out.len);
    assert_non_null(strstr(j, "[true,null,{\"boolean_false_field\":false,"));
    free(j);
    pq_buf_free(&out);
    free_vec(&v);
}

/* ---- the test decoder itself ---------------------------------------------- */

static const uint8_t meta0[] = {0x01, 0x00, 0x00};
static const uint8_t meta_ab[] = {0x11, 0x02, 0x00, 0x01, 0x02, 'a', 'b'};

static void expect_corrupt(const uint8_t *m, size_t ml, const uint8_t *v, size_t vl,
                           const char *what)
{
    pq_err err = {0};
    pq_buf out;
    pq_buf_init(&out);
    int rc = vread_validate(m, ml, v, vl, 0, &err);
    if (rc != PQ_EPARSE)
        fail_msg("%s: validate returned %d", what, rc);
    assert_int_equal(vread_to_json(&out, m, ml, v, vl, &err), PQ_EPARSE);
    assert_int_equal(out.len, 0);                /* nothing rendered */
    pq_buf_free(&out);
}

#define CORRUPT_META(what, ...)                                            \
    do {                                                                   \
        static const uint8_t m_[] = {__VA_ARGS__};                         \
        expect_corrupt(m_, sizeof m_, (const uint8_t[]){0}, 1, what);      \
    } while (0)
#define CORRUPT_VALUE(meta, what, ...)                                     \
    do {                                                                   \
        static const uint8_t v_[] = {__VA_ARGS__};                         \
        expect_corrupt(meta, sizeof meta, v_, sizeof v_, what);            \
    } while (0)

static void test_variant_decoder_rejects_corrupt_input(void **state)
{
    (void)state;
    expect_corrupt(meta0, 0, (const uint8_t[]){0}, 1, "empty metadata");
    expect_corrupt(meta0, 3, meta0, 0, "empty value");
    CORRUPT_META("version 2", 0x02, 0x00, 0x00);
    CORRUPT_META("offset past bytes", 0x01, 0x01, 0x00, 0x05, 'a');
    CORRUPT_META("first offset not 0", 0x01, 0x01, 0x01, 0x01, 'a');
    CORRUPT_META("sorted flag, unsorted keys", 0x11, 0x02, 0x00, 0x01, 0x02, 'b', 'a');
    CORRUPT_META("sorted flag, duplicate keys", 0x11, 0x02, 0x00, 0x01, 0x02, 'a', 'a');
    CORRUPT_META("key not UTF-8", 0x01, 0x01, 0x00, 0x01, 0xff);
    CORRUPT_META("trailing byte", 0x01, 0x00, 0x00, 0x00);
    CORRUPT_META("huge dictionary_size", 0xc1, 0xff, 0xff, 0xff, 0xff, 0x00);
    CORRUPT_VALUE(meta0, "truncated int8", 0x0c);
    CORRUPT_VALUE(meta0, "unknown type 21", 21 << 2);
    CORRUPT_VALUE(meta0, "short string overrun", 0x09, 'a');
    CORRUPT_VALUE(meta0, "short string not UTF-8", 0x05, 0xff);
    CORRUPT_VALUE(meta0, "long string length overrun", 0x40, 0xff, 0xff, 0xff, 0xff, 'a');
    CORRUPT_VALUE(meta0, "decimal scale 39", 0x20, 39, 1, 0, 0, 0);
    CORRUPT_VALUE(meta0, "decimal16 precision 39", 0x28, 0, 0, 0, 0, 0, 0x40, 0x22, 0x8a,
                  0x09, 0x7a, 0xc4, 0x86, 0x5a, 0xa8, 0x4c, 0x3b, 0x4b);
    CORRUPT_VALUE(meta0, "trailing byte", 0x00, 0x00);
    CORRUPT_VALUE(meta0, "field id outside dictionary", 0x02, 0x01, 0x00, 0x00, 0x01, 0x00);
    CORRUPT_VALUE(meta_ab, "keys out of order", 0x02, 0x02, 0x01, 0x00, 0x00, 0x01, 0x02,
                  0x00, 0x00);
    CORRUPT_VALUE(meta_ab, "duplicate key", 0x02, 0x02, 0x00, 0x00, 0x00, 0x01, 0x02,
                  0x00, 0x00);
    CORRUPT_VALUE(meta0, "array offset outside data", 0x03, 0x01, 0x05, 0x01, 0x00);
    CORRUPT_VALUE(meta0, "array data overrun", 0x03, 0x01, 0x00, 0x09, 0x00);
    CORRUPT_VALUE(meta0, "large array count overrun", 0x13, 0xff, 0xff, 0xff, 0xff, 0x00);
    CORRUPT_VALUE(meta0, "nested value overruns parent", 0x03, 0x01, 0x00, 0x01, 0x0c, 0x2a);
}

/* VREAD_CANONICAL rejects valid but wasteful encodings. */
static void test_variant_decoder_canonical_flags_waste(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        uint8_t v[12];
        size_t n;
    } cases[] = {
        {"int16 holding 1", {0x10, 0x01, 0x00}, 3},
        {"long string of 1 byte", {0x40, 0x01, 0, 0, 0, 'a'}, 6},
        {"2-byte offsets for 1 byte", {0x07, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00}, 7},
        {"is_large with 1 element", {0x13, 0x01, 0, 0, 0, 0x00, 0x01, 0x00}, 8},
        {"gap between values", {0x03, 0x01, 0x00, 0x02, 0x00, 0x00}, 6},
        {"two elements sharing bytes", {0x03, 0x02, 0x00, 0x00, 0x01, 0x00}, 6},
        {"decimal8 of precision 1", {0x24, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 10},
        /* what readers mishandle: 0.05 (DuckDB 1.5.6: SIGFPE), 0.5 and 0.0
         * (".5", ".0": not JSON); parqd writes neither */
        {"decimal scale above precision", {0x20, 2, 5, 0, 0, 0}, 6},
        {"decimal scale equal to precision", {0x20, 1, 5, 0, 0, 0}, 6},
        {"decimal zero with a scale", {0x20, 1, 0, 0, 0, 0}, 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pq_err err = {0};
        if (vread_validate(meta0, 3, cases[i].v, cases[i].n, 0, &err) != 0)
            fail_msg("%s: should be valid: %s", cases[i].what, err.msg);
        assert_int_equal(vread_validate(meta0, 3, cases[i].v, cases[i].n, VREAD_CANONICAL,
                                        &err), PQ_EPARSE);
    }
    static const uint8_t id16[] = {0x12, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00}; /* 2-byte id 0 */
    assert_int_equal(vread_validate(meta_ab, 7, id16, 7, 0, NULL), 0);
    assert_int_equal(vread_validate(meta_ab, 7, id16, 7, VREAD_CANONICAL, NULL), PQ_EPARSE);
    static const uint8_t wide_meta[] = {0x41, 0x00, 0x00, 0x00, 0x00};  /* 2-byte, empty */
    assert_int_equal(vread_validate(wide_meta, 5, meta0, 1, 0, NULL), 0);
    assert_int_equal(vread_validate(wide_meta, 5, meta0, 1, VREAD_CANONICAL, NULL), PQ_EPARSE);
}

/* Walks a value with the library readers, ignoring errors: under ASan this
 * proves they stay in bounds on hostile bytes. */
static void walk_with_readers(const vr_meta *m, const uint8_t *v, size_t len, int depth)
{
    vr_container c;
    vr_prim p;
    vr_str k;
    if (depth > 64 || vr_container_open(&c, v, len, NULL) != 0) {
        (void)vr_value_read(v, len, &p, NULL);
        return;
    }
    for (uint32_t i = 0; i < c.n && i < 1000; i++) {
        uint32_t id = 0;
        const uint8_t *cv;
        size_t cl;
        if (vr_container_get(&c, i, &id, &cv, &cl, NULL) != 0)
            continue;
        if (m != NULL && c.basic == VR_BASIC_OBJECT)
            (void)vr_meta_key(m, id, &k, NULL);
        walk_with_readers(m, cv, cl, depth + 1);
    }
}

/* Every vector with each byte flipped (8 masks) and every truncation:
 * the decoder returns 0 or PQ_EPARSE and never reads out of bounds. */
static void test_variant_decoder_survives_mutated_vectors(void **state)
{
    PQT_NEED_TESTDATA(VEC_DIR);
    (void)state;
    static const char *names[] = {"array_nested", "object_primitive", "primitive_string",
                                  "primitive_decimal4", "array_primitive", "short_string"};
    for (size_t t = 0; t < sizeof names / sizeof names[0]; t++) {
        vec v = load_vec(names[t]);
        for (int part = 0; part < 2; part++) {
            uint8_t *buf = part ? v.val : v.meta;
            size_t n = part ? v.vlen : v.mlen;
            for (size_t i = 0; i < n; i++) {
                for (int bit = 0; bit < 8; bit++) {
                    buf[i] ^= (uint8_t)(1 << bit);
                    pq_buf out;
                    pq_buf_init(&out);
                    int rc = vread_to_json(&out, v.meta, v.mlen, v.val, v.vlen, NULL);
                    assert_true(rc == 0 || rc == PQ_EPARSE);
                    vr_meta m;
                    bool mok = vr_meta_open(&m, v.meta, v.mlen, NULL) == 0;
                    walk_with_readers(mok ? &m : NULL, v.val, v.vlen, 0);
                    pq_buf_free(&out);
                    buf[i] ^= (uint8_t)(1 << bit);
                }
            }
            for (size_t cut = 0; cut < n; cut++) {
                int rc = part ? vread_validate(v.meta, v.mlen, v.val, cut, 0, NULL)
                              : vread_validate(v.meta, cut, v.val, v.vlen, 0, NULL);
                assert_int_equal(rc, PQ_EPARSE);
            }
        }
        free_vec(&v);
    }
}

/* Equality follows the spec's equivalence classes, not the bytes. */
static void test_variant_equal_by_equivalence_class(void **state)
{
    (void)state;
    static const uint8_t int1[] = {0x0c, 0x01}, dec100s2[] = {0x20, 2, 100, 0, 0, 0};
    static const uint8_t dbl1[] = {0x1c, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f};
    static const uint8_t short_abc[] = {0x0d, 'a', 'b', 'c'};
    static const uint8_t long_abc[] = {0x40, 3, 0, 0, 0, 'a', 'b', 'c'};
    static const uint8_t int2[] = {0x0c, 0x02};
    assert_int_equal(vread_equal(meta0, 3, int1, 2, meta0, 3, dec100s2, 6, NULL), 1);
    assert_int_equal(vread_equal(meta0, 3, int1, 2, meta0, 3, dbl1, 9, NULL), 0);
    assert_int_equal(vread_equal(meta0, 3, short_abc, 4, meta0, 3, long_abc, 8, NULL), 1);
    assert_int_equal(vread_equal(meta0, 3, int1, 2, meta0, 3, int2, 2, NULL), 0);
    assert_int_equal(vread_equal(meta0, 3, int1, 2, meta0, 3, short_abc, 2, NULL), PQ_EPARSE);
    /* {"a":1} under two dictionaries: ["a","b"] (id 0) and ["b","a"] (id 1). */
    static const uint8_t meta_ba[] = {0x01, 0x02, 0x00, 0x01, 0x02, 'b', 'a'};
    static const uint8_t obj_id0[] = {0x02, 0x01, 0x00, 0x00, 0x02, 0x0c, 0x01};
    static const uint8_t obj_id1[] = {0x02, 0x01, 0x01, 0x00, 0x02, 0x0c, 0x01};
    assert_int_equal(vread_equal(meta_ab, 7, obj_id0, 7, meta_ba, 7, obj_id1, 7, NULL), 1);
    assert_int_equal(vread_equal(meta_ab, 7, obj_id0, 7, meta_ab, 7, obj_id1, 7, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_reader_iterates_and_finds_fields),
        cmocka_unit_test(test_variant_sub_value_reemits_with_same_metadata),
        cmocka_unit_test(test_variant_object_without_drops_shredded_fields),
        cmocka_unit_test(test_variant_append_object_and_array_from_slices),
        cmocka_unit_test(test_variant_decoder_rejects_corrupt_input),
        cmocka_unit_test(test_variant_decoder_canonical_flags_waste),
        cmocka_unit_test(test_variant_decoder_survives_mutated_vectors),
        cmocka_unit_test(test_variant_equal_by_equivalence_class),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
