/* test_variant.c - Variant encoding (schema/variant/, VariantEncoding.md)
 * against the 19 parquet-testing vectors and data_dictionary.json.
 *
 * Vectors: 17 are reproduced byte for byte with the default (sorted
 * dictionary) builder. object_primitive and array_nested were written by
 * Spark with its dictionary in first-seen key order and sorted_strings 0;
 * the spec allows both, and parqd sorts (sorted_strings 1, binary search
 * for readers), which changes the metadata and every field id. Those two
 * are compared by value in sorted mode and byte for byte with
 * vr_opts.unsorted_dict, which mimics Spark's dictionary. Spark's other
 * choices (minimal int widths, minimal offsets, values in insertion
 * order) are the same as ours. */
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
#include "testdata.h"

/* ---- the 19 vectors ----------------------------------------------------- */


static void check_vector_bytes(const char *name, build_fn build, bool unsorted)
{
    vr_builder b;
    vr_opts o = {.unsorted_dict = unsorted};
    vr_variant got;
    vec want = load_vec(name);
    OK(vr_builder_init(&b, &o));
    build(&b);
    OK(vr_finish(&b, &got));
    assert_bytes(got.metadata, got.metadata_len, want.meta, want.mlen);
    assert_bytes(got.value, got.value_len, want.val, want.vlen);
    vr_builder_free(&b);
    free_vec(&want);
}


#define VECTOR_TEST(fn, name, build)                                       \
    static void fn(void **state)                                           \
    {                                                                      \
        (void)state;                                                       \
        check_vector_bytes(name, build, false);                            \
    }

VECTOR_TEST(test_variant_vector_primitive_null_bytes, "primitive_null", build_null)
VECTOR_TEST(test_variant_vector_primitive_boolean_true_bytes, "primitive_boolean_true", build_true)
VECTOR_TEST(test_variant_vector_primitive_int8_bytes, "primitive_int8", build_int8)
VECTOR_TEST(test_variant_vector_primitive_int32_bytes, "primitive_int32", build_int32)
VECTOR_TEST(test_variant_vector_primitive_int64_bytes, "primitive_int64", build_int64)
VECTOR_TEST(test_variant_vector_primitive_double_bytes, "primitive_double", build_double)
VECTOR_TEST(test_variant_vector_primitive_decimal4_bytes, "primitive_decimal4", build_decimal4)
VECTOR_TEST(test_variant_vector_primitive_date_bytes, "primitive_date", build_date)
VECTOR_TEST(test_variant_vector_primitive_timestamp_bytes, "primitive_timestamp", build_ts)
VECTOR_TEST(test_variant_vector_primitive_timestampntz_bytes, "primitive_timestampntz", build_ntz)
VECTOR_TEST(test_variant_vector_primitive_timestampntz_nanos_bytes,
            "primitive_timestampntz_nanos", build_ntz_nanos)
VECTOR_TEST(test_variant_vector_primitive_binary_bytes, "primitive_binary", build_binary)
VECTOR_TEST(test_variant_vector_primitive_string_bytes, "primitive_string", build_string)
VECTOR_TEST(test_variant_vector_short_string_bytes, "short_string", build_short)
VECTOR_TEST(test_variant_vector_object_empty_bytes, "object_empty", build_object_empty)
VECTOR_TEST(test_variant_vector_array_empty_bytes, "array_empty", build_array_empty)
VECTOR_TEST(test_variant_vector_array_primitive_bytes, "array_primitive", build_array_primitive)

/* Sorted mode: same value, different (sorted) dictionary and field ids. */
static void check_vector_by_value(const char *name, build_fn build)
{
    vr_builder b;
    vr_variant got;
    pq_err err = {0};
    vec want = load_vec(name);
    OK(vr_builder_init(&b, NULL));
    build(&b);
    finish(&b, &got);
    assert_int_equal(got.metadata[0], 0x11);       /* sorted_strings set */
    assert_int_equal(want.meta[0], 0x01);          /* Spark: first-seen order */
    assert_int_equal(vread_equal(got.metadata, got.metadata_len, got.value, got.value_len,
                                 want.meta, want.mlen, want.val, want.vlen, &err), 1);
    char *a = json_of(got.metadata, got.metadata_len, got.value, got.value_len);
    char *w = json_of(want.meta, want.mlen, want.val, want.vlen);
    assert_string_equal(a, w);
    free(a);
    free(w);
    vr_builder_free(&b);
    free_vec(&want);
}

static void test_variant_vector_object_primitive_sorted_equals_by_value(void **state)
{
    (void)state;
    check_vector_by_value("object_primitive", build_object_primitive);
}

static void test_variant_vector_object_primitive_unsorted_dict_bytes(void **state)
{
    (void)state;
    check_vector_bytes("object_primitive", build_object_primitive, true);
}

static void test_variant_vector_array_nested_sorted_equals_by_value(void **state)
{
    (void)state;
    check_vector_by_value("array_nested", build_array_nested);
}

static void test_variant_vector_array_nested_unsorted_dict_bytes(void **state)
{
    (void)state;
    check_vector_bytes("array_nested", build_array_nested, true);
}

/* ---- data_dictionary.json ------------------------------------------------ */

/* A minimal JSON reader that drives the builder (numbers through
 * vr_json_number), enough for data_dictionary.json; the real parser is
 * schema/json/json.c, which this test does not depend on. */
typedef struct jp {
    const char *s;
    size_t i, n;
    vr_builder *b;
} jp;

static void jp_ws(jp *p)
{
    while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\n' || p->s[p->i] == '\t' ||
                           p->s[p->i] == '\r'))
        p->i++;
}

static void jp_utf8(pq_buf *o, uint32_t cp)
{
    if (cp < 0x80) {
        pq_buf_push(o, (uint8_t)cp);
    } else if (cp < 0x800) {
        pq_buf_push(o, (uint8_t)(0xC0 | cp >> 6));
        pq_buf_push(o, (uint8_t)(0x80 | (cp & 63)));
    } else if (cp < 0x10000) {
        pq_buf_push(o, (uint8_t)(0xE0 | cp >> 12));
        pq_buf_push(o, (uint8_t)(0x80 | ((cp >> 6) & 63)));
        pq_buf_push(o, (uint8_t)(0x80 | (cp & 63)));
    } else {
        pq_buf_push(o, (uint8_t)(0xF0 | cp >> 18));
        pq_buf_push(o, (uint8_t)(0x80 | ((cp >> 12) & 63)));
        pq_buf_push(o, (uint8_t)(0x80 | ((cp >> 6) & 63)));
        pq_buf_push(o, (uint8_t)(0x80 | (cp & 63)));
    }
}

static void jp_string(jp *p, pq_buf *o)
{
    pq_buf_reset(o);
    assert_int_equal(p->s[p->i++], '"');
    while (p->s[p->i] != '"') {
        char c = p->s[p->i++];
        if (c != '\\') {
            pq_buf_push(o, (uint8_t)c);
            continue;
        }
        c = p->s[p->i++];
        if (c != 'u') {
            pq_buf_push(o, (uint8_t)(c == 'n' ? '\n' : c == 't' ? '\t' : c));
            continue;
        }
        uint32_t cp = (uint32_t)strtoul((char[5]){p->s[p->i], p->s[p->i + 1], p->s[p->i + 2],
                                                  p->s[p->i + 3], 0}, NULL, 16);
        p->i += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {            /* surrogate pair */
            uint32_t lo = (uint32_t)strtoul((char[5]){p->s[p->i + 2], p->s[p->i + 3],
                                                      p->s[p->i + 4], p->s[p->i + 5], 0},
                                            NULL, 16);
            p->i += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        jp_utf8(o, cp);
    }
    p->i++;
}

static void jp_value(jp *p)
{
    pq_buf s;
    pq_buf_init(&s);
    jp_ws(p);
    char c = p->s[p->i];
    if (c == '{' || c == '[') {
        p->i++;
        OK(c == '{' ? vr_begin_object(p->b) : vr_begin_array(p->b));
        for (jp_ws(p); p->s[p->i] != (c == '{' ? '}' : ']'); jp_ws(p)) {
            if (c == '{') {
                jp_string(p, &s);
                OK(vr_key(p->b, (const char *)s.data, s.len));
                jp_ws(p);
                assert_int_equal(p->s[p->i++], ':');
            }
            jp_value(p);
            jp_ws(p);
            if (p->s[p->i] == ',')
                p->i++;
        }
        p->i++;
        OK(c == '{' ? vr_end_object(p->b) : vr_end_array(p->b));
    } else if (c == '"') {
        jp_string(p, &s);
        OK(vr_string(p->b, s.len ? (const char *)s.data : "", s.len));
    } else if (strncmp(p->s + p->i, "true", 4) == 0 || strncmp(p->s + p->i, "false", 5) == 0) {
        OK(vr_bool(p->b, c == 't'));
        p->i += c == 't' ? 4 : 5;
    } else if (strncmp(p->s + p->i, "null", 4) == 0) {
        OK(vr_null(p->b));
        p->i += 4;
    } else {
        size_t start = p->i;
        while (p->i < p->n && strchr("+-.eE0123456789", p->s[p->i]) && p->s[p->i])
            p->i++;
        OK(vr_json_number(p->b, p->s + start, p->i - start));
    }
    pq_buf_free(&s);
}

/* Entries whose JSON form is lossy: the JSON text cannot carry the
 * vector's type, so the vector is checked through its canonical JSON.
 * same_number: the vector holds a decimal where vnumber.c's rule makes the
 * JSON number a double of the same value (Spark wrote 12.34 as decimal4);
 * the canonical JSON shows values, not types, so both must render alike. */
static const struct {
    const char *name, *canonical;
    bool same_text;               /* canonical == the dictionary's text */
    bool same_number;             /* only a number's type differs */
} lossy[] = {
    {"primitive_binary", "\"AxM33q2+78r+\"", true, false},   /* base64 string */
    {"primitive_date", "\"2025-04-16\"", true, false},
    {"primitive_decimal4", "12.34", true, true},             /* JSON -> double */
    {"object_primitive",
     "{\"boolean_false_field\":false,\"boolean_true_field\":true,\"double_field\":1.23456789,"
     "\"int_field\":1,\"null_field\":null,\"string_field\":\"Apache Parquet\","
     "\"timestamp_field\":\"2025-04-16T12:34:56.78\"}", false, true},  /* decimal(9,8) */
    {"primitive_timestamp", "\"2025-04-16T16:34:56.780000+00:00\"", false, false}, /* Spark: -04:00 */
    {"primitive_timestampntz", "\"2025-04-16T12:34:56.780000\"", false, false},
    {"primitive_timestampntz_nanos", "\"2024-11-07T12:33:54.123456789\"", true, false},
};

static void check_dictionary_entry(const char *name, vr_builder *b, const char *text,
                                   size_t tlen)
{
    vr_variant got;
    pq_err err = {0};
    vec v = load_vec(name);
    finish(b, &got);
    int eq = vread_equal(got.metadata, got.metadata_len, got.value, got.value_len, v.meta,
                         v.mlen, v.val, v.vlen, &err);
    size_t k = 0;
    while (k < sizeof lossy / sizeof lossy[0] && strcmp(lossy[k].name, name) != 0)
        k++;
    if (k == sizeof lossy / sizeof lossy[0]) {
        if (eq != 1)
            fail_msg("%s: JSON-built variant differs from the vector (%d %s)", name, eq, err.msg);
    } else {
        assert_int_equal(eq, 0);
        char *j = json_of(v.meta, v.mlen, v.val, v.vlen);
        assert_string_equal(j, lossy[k].canonical);
        if (lossy[k].same_text)
            assert_true(strlen(j) == tlen && memcmp(j, text, tlen) == 0);
        if (lossy[k].same_number) {
            char *g = json_of(got.metadata, got.metadata_len, got.value, got.value_len);
            assert_string_equal(g, j);
            free(g);
        }
        free(j);
    }
    free_vec(&v);
}

static void test_variant_data_dictionary_json_matches_every_vector(void **state)
{
    (void)state;
    size_t n, count = 0;
    char *text = (char *)slurp(pqt_testdata_path(VEC_DIR, "data_dictionary.json"), &n);
    vr_builder b;
    pq_buf name;
    pq_buf_init(&name);
    OK(vr_builder_init(&b, NULL));
    jp p = {text, 0, n, &b};
    jp_ws(&p);
    assert_int_equal(text[p.i++], '{');
    for (jp_ws(&p); text[p.i] != '}'; jp_ws(&p), count++) {
        jp_string(&p, &name);
        pq_buf_push(&name, 0);
        jp_ws(&p);
        assert_int_equal(text[p.i++], ':');
        jp_ws(&p);
        size_t start = p.i;
        vr_builder_reset(&b);
        jp_value(&p);
        check_dictionary_entry((const char *)name.data, &b, text + start, p.i - start);
        jp_ws(&p);
        if (text[p.i] == ',')       /* upstream ends with a trailing comma */
            p.i++;
    }
    assert_int_equal(count, 19);
    pq_buf_free(&name);
    vr_builder_free(&b);
    free(text);
}

int main(void)
{
    pqt_testdata_require("test_variant", "parquet-testing/variant");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_vector_primitive_null_bytes),
        cmocka_unit_test(test_variant_vector_primitive_boolean_true_bytes),
        cmocka_unit_test(test_variant_vector_primitive_int8_bytes),
        cmocka_unit_test(test_variant_vector_primitive_int32_bytes),
        cmocka_unit_test(test_variant_vector_primitive_int64_bytes),
        cmocka_unit_test(test_variant_vector_primitive_double_bytes),
        cmocka_unit_test(test_variant_vector_primitive_decimal4_bytes),
        cmocka_unit_test(test_variant_vector_primitive_date_bytes),
        cmocka_unit_test(test_variant_vector_primitive_timestamp_bytes),
        cmocka_unit_test(test_variant_vector_primitive_timestampntz_bytes),
        cmocka_unit_test(test_variant_vector_primitive_timestampntz_nanos_bytes),
        cmocka_unit_test(test_variant_vector_primitive_binary_bytes),
        cmocka_unit_test(test_variant_vector_primitive_string_bytes),
        cmocka_unit_test(test_variant_vector_short_string_bytes),
        cmocka_unit_test(test_variant_vector_object_empty_bytes),
        cmocka_unit_test(test_variant_vector_array_empty_bytes),
        cmocka_unit_test(test_variant_vector_array_primitive_bytes),
        cmocka_unit_test(test_variant_vector_object_primitive_sorted_equals_by_value),
        cmocka_unit_test(test_variant_vector_object_primitive_unsorted_dict_bytes),
        cmocka_unit_test(test_variant_vector_array_nested_sorted_equals_by_value),
        cmocka_unit_test(test_variant_vector_array_nested_unsorted_dict_bytes),
        cmocka_unit_test(test_variant_data_dictionary_json_matches_every_vector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
