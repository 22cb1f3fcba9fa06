/* test_variant.c - Variant encoding (schema/variant.c, VariantEncoding.md)
 * against the 19 parquet-testing vectors, the spec's boundaries (is_large,
 * offset/id widths, short strings, decimal precision), last-wins duplicate
 * keys, the JSON number mapping, the shredder helpers, and seeded random
 * round-trips through the test decoder (tests/support/variant_read.c).
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

#define VEC_DIR PQ_TESTDATA "/parquet-testing/variant/"

/* ---- helpers ---------------------------------------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *p = malloc((size_t)n + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    p[n] = 0;
    *len = (size_t)n;
    return p;
}

typedef struct vec {
    uint8_t *meta, *val;
    size_t mlen, vlen;
} vec;

static vec load_vec(const char *name)
{
    char path[512];
    vec v;
    snprintf(path, sizeof path, VEC_DIR "%s.metadata", name);
    v.meta = slurp(path, &v.mlen);
    snprintf(path, sizeof path, VEC_DIR "%s.value", name);
    v.val = slurp(path, &v.vlen);
    return v;
}

static void free_vec(vec *v)
{
    free(v->meta);
    free(v->val);
}

static void hexdump(const char *what, const uint8_t *p, size_t n)
{
    printf("%s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 256; i++)
        printf(" %02x", p[i]);
    printf("\n");
}

static void assert_bytes(const uint8_t *got, size_t glen, const uint8_t *want, size_t wlen)
{
    if (glen != wlen || memcmp(got, want, glen) != 0) {
        hexdump("got ", got, glen);
        hexdump("want", want, wlen);
        fail_msg("byte mismatch");
    }
}

/* Canonical JSON (malloc'd, NUL-terminated) of a valid variant. */
static char *json_of(const uint8_t *m, size_t ml, const uint8_t *v, size_t vl)
{
    pq_buf out;
    pq_err err = {0};
    pq_buf_init(&out);
    int rc = vread_to_json(&out, m, ml, v, vl, &err);
    if (rc != 0)
        fail_msg("decode failed: %s", err.msg);
    pq_buf_push(&out, 0);
    return (char *)out.data;
}

static void assert_json(const vr_variant *v, const char *want)
{
    char *got = json_of(v->metadata, v->metadata_len, v->value, v->value_len);
    assert_string_equal(got, want);
    free(got);
}

static void assert_canonical(const vr_variant *v)
{
    pq_err err = {0};
    if (vread_validate(v->metadata, v->metadata_len, v->value, v->value_len,
                       VREAD_CANONICAL, &err) != 0)
        fail_msg("not canonical: %s", err.msg);
}

static void finish(vr_builder *b, vr_variant *v)
{
    int rc = vr_finish(b, v);
    if (rc != 0)
        fail_msg("vr_finish: %s", b->err.msg);
    assert_canonical(v);
}

#define OK(call) assert_int_equal((call), 0)

/* ---- the 19 vectors ----------------------------------------------------- */

typedef void (*build_fn)(vr_builder *b);

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

static void build_null(vr_builder *b) { OK(vr_null(b)); }
static void build_true(vr_builder *b) { OK(vr_bool(b, true)); }
static void build_int8(vr_builder *b) { OK(vr_int(b, 42)); }
static void build_int32(vr_builder *b) { OK(vr_int(b, 123456)); }
static void build_int64(vr_builder *b) { OK(vr_int(b, 1234567890123456789LL)); }
static void build_double(vr_builder *b) { OK(vr_double(b, 1234567890.1234)); }
static void build_decimal4(vr_builder *b) { OK(vr_decimal(b, 1234, 2)); }
static void build_date(vr_builder *b) { OK(vr_date(b, 20194)); }   /* 2025-04-16 */
static void build_ts(vr_builder *b) { OK(vr_timestamp(b, 1744821296780000LL, VR_MICROS, true)); }
static void build_ntz(vr_builder *b) { OK(vr_timestamp(b, 1744806896780000LL, VR_MICROS, false)); }
static void build_ntz_nanos(vr_builder *b)
{
    OK(vr_timestamp(b, 1730982834123456789LL, VR_NANOS, false));
}

static void build_binary(vr_builder *b)
{
    static const uint8_t bin[] = {0x03, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef, 0xca, 0xfe};
    OK(vr_binary(b, bin, sizeof bin));
}

static const char long_text[] =
    "This string is longer than 64 bytes and therefore does not fit in a short_string "
    "and it also includes several non ascii characters such as \xf0\x9f\x90\xa2, "
    "\xf0\x9f\x92\x96, \xe2\x99\xa5\xef\xb8\x8f, \xf0\x9f\x8e\xa3 and \xf0\x9f\xa4\xa6!!";
static const char short_text[] = "Less than 64 bytes (\xe2\x9d\xa4\xef\xb8\x8f with utf8)";

static void build_string(vr_builder *b) { OK(vr_string(b, long_text, strlen(long_text))); }
static void build_short(vr_builder *b) { OK(vr_string(b, short_text, strlen(short_text))); }

static void build_object_empty(vr_builder *b)
{
    OK(vr_begin_object(b));
    OK(vr_end_object(b));
}

static void build_array_empty(vr_builder *b)
{
    OK(vr_begin_array(b));
    OK(vr_end_array(b));
}

static void build_array_primitive(vr_builder *b)
{
    OK(vr_begin_array(b));
    for (int i = 0; i < 4; i++)
        OK(vr_int(b, (int[]){2, 1, 5, 9}[i]));
    OK(vr_end_array(b));
}

static void key(vr_builder *b, const char *k) { OK(vr_key(b, k, strlen(k))); }
static void str(vr_builder *b, const char *s) { OK(vr_string(b, s, strlen(s))); }

/* Spark's key order (its dictionary is first-seen); 1.23456789 is a
 * decimal4 with scale 8 in the file, as our JSON mapping also makes it. */
static void build_object_primitive(vr_builder *b)
{
    OK(vr_begin_object(b));
    key(b, "int_field"), OK(vr_int(b, 1));
    key(b, "double_field"), OK(vr_decimal(b, 123456789, 8));
    key(b, "boolean_true_field"), OK(vr_bool(b, true));
    key(b, "boolean_false_field"), OK(vr_bool(b, false));
    key(b, "string_field"), str(b, "Apache Parquet");
    key(b, "null_field"), OK(vr_null(b));
    key(b, "timestamp_field"), str(b, "2025-04-16T12:34:56.78");
    OK(vr_end_object(b));
}

static void build_array_nested(vr_builder *b)
{
    OK(vr_begin_array(b));
    OK(vr_begin_object(b));
    key(b, "id"), OK(vr_int(b, 1));
    key(b, "thing"), OK(vr_begin_object(b));
    key(b, "names"), OK(vr_begin_array(b));
    str(b, "Contrarian"), str(b, "Spider");
    OK(vr_end_array(b)), OK(vr_end_object(b)), OK(vr_end_object(b));
    OK(vr_null(b));
    OK(vr_begin_object(b));
    key(b, "id"), OK(vr_int(b, 2));
    key(b, "type"), str(b, "if");
    key(b, "names"), OK(vr_begin_array(b));
    str(b, "Apple"), str(b, "Ray"), OK(vr_null(b));
    OK(vr_end_array(b)), OK(vr_end_object(b));
    OK(vr_end_array(b));
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
 * schema/json.c, which this test does not depend on. */
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
    char *text = (char *)slurp(VEC_DIR "data_dictionary.json", &n);
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

/* ---- objects, keys and the dictionary ----------------------------------- */

/* {"a":1,"b":2,"a":3}: the first "a" is cut out; values stay in
 * insertion order ("b" then "a"), ids/offsets in key order. */
static void test_variant_duplicate_keys_last_wins(void **state)
{
    (void)state;
    static const uint8_t meta[] = {0x11, 0x02, 0x00, 0x01, 0x02, 'a', 'b'};
    static const uint8_t val[] = {0x02, 0x02, 0x00, 0x01, 0x02, 0x00, 0x04,
                                  0x0c, 0x02, 0x0c, 0x03};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    OK(vr_begin_object(&b));
    key(&b, "a"), OK(vr_int(&b, 1));
    key(&b, "b"), OK(vr_int(&b, 2));
    key(&b, "a"), OK(vr_int(&b, 3));
    OK(vr_end_object(&b));
    finish(&b, &v);
    assert_bytes(v.metadata, v.metadata_len, meta, sizeof meta);
    assert_bytes(v.value, v.value_len, val, sizeof val);
    vr_builder_free(&b);
}

/* A losing duplicate that is itself a big nested value, three times over,
 * with the same key used inside it (the nested one must survive). */
static void test_variant_duplicate_keys_last_wins_over_nested_values(void **state)
{
    (void)state;
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    OK(vr_begin_object(&b));
    key(&b, "x"), OK(vr_begin_object(&b));
    key(&b, "x"), OK(vr_begin_array(&b));
    for (int i = 0; i < 300; i++)
        OK(vr_int(&b, i));
    OK(vr_end_array(&b));
    OK(vr_end_object(&b));
    key(&b, "y"), str(&b, "keep");
    key(&b, "x"), OK(vr_begin_object(&b));
    key(&b, "x"), OK(vr_int(&b, 7));
    key(&b, "x"), OK(vr_int(&b, 8));
    OK(vr_end_object(&b));
    key(&b, "z"), OK(vr_null(&b));
    key(&b, "x"), OK(vr_begin_array(&b)), str(&b, "last"), OK(vr_end_array(&b));
    OK(vr_end_object(&b));
    finish(&b, &v);
    assert_json(&v, "{\"x\":[\"last\"],\"y\":\"keep\",\"z\":null}");
    vr_builder_free(&b);
}

/* Keys arrive unsorted and repeated across nested objects; the dictionary
 * comes out sorted, unique, sorted_strings set, and field ids follow. */
static void test_variant_metadata_sorted_unique_with_renumbered_ids(void **state)
{
    (void)state;
    static const uint8_t meta[] = {0x11, 0x04, 0x00, 0x05, 0x09, 0x0c, 0x10,
                                   'a', 'l', 'p', 'h', 'a', 'b', 'e', 't', 'a',
                                   'm', 'i', 'd', 'z', 'e', 't', 'a'};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    OK(vr_begin_object(&b));
    key(&b, "zeta"), OK(vr_int(&b, 1));
    key(&b, "mid"), OK(vr_begin_object(&b));
    key(&b, "beta"), OK(vr_int(&b, 2));
    key(&b, "zeta"), OK(vr_int(&b, 3));
    OK(vr_end_object(&b));
    key(&b, "alpha"), OK(vr_int(&b, 4));
    OK(vr_end_object(&b));
    finish(&b, &v);
    assert_bytes(v.metadata, v.metadata_len, meta, sizeof meta);
    assert_json(&v, "{\"alpha\":4,\"mid\":{\"beta\":2,\"zeta\":3},\"zeta\":1}");
    vr_builder_free(&b);
}

/* An object of n distinct keys k0000.. (sorted order = numeric order). */
static void build_wide_object(vr_builder *b, size_t n)
{
    char k[32];
    OK(vr_begin_object(b));
    for (size_t i = n; i-- > 0;) {            /* reverse: forces sorting */
        snprintf(k, sizeof k, "k%07zu", i);
        key(b, k);
        OK(vr_int(b, (int64_t)i));
    }
    OK(vr_end_object(b));
}

static void check_wide_object(size_t n, uint8_t want_header)
{
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    build_wide_object(&b, n);
    finish(&b, &v);
    assert_int_equal(v.value[0], want_header);
    vr_container c;
    vr_meta m;
    vr_str k;
    uint32_t id;
    const uint8_t *fv;
    size_t fl;
    OK(vr_meta_open(&m, v.metadata, v.metadata_len, NULL));
    OK(vr_container_open(&c, v.value, v.value_len, NULL));
    assert_int_equal(c.n, n);
    OK(vr_container_get(&c, (uint32_t)n - 1, &id, &fv, &fl, NULL));
    OK(vr_meta_key(&m, id, &k, NULL));
    char want[32];
    snprintf(want, sizeof want, "k%07zu", n - 1);
    assert_int_equal(k.len, strlen(want));
    assert_memory_equal(k.s, want, k.len);
    vr_builder_free(&b);
}

/* Header bits: is_large (bit 6), field_id_size-1 (bits 4-5),
 * field_offset_size-1 (bits 2-3), basic type 2. */
static void test_variant_object_255_fields_is_not_large(void **state)
{
    (void)state;
    check_wide_object(255, 0x02 | 1 << 2);          /* 510 bytes: 2-byte offsets */
}

static void test_variant_object_256_fields_is_large(void **state)
{
    (void)state;
    check_wide_object(256, 0x02 | 1 << 6 | 1 << 2);  /* ids 0..255: 1 byte */
}

static void test_variant_object_257_keys_need_2_byte_field_ids(void **state)
{
    (void)state;
    check_wide_object(257, 0x02 | 1 << 6 | 1 << 4 | 1 << 2);
}

static void test_variant_object_65537_keys_need_3_byte_field_ids(void **state)
{
    (void)state;
    check_wide_object(65537, 0x02 | 1 << 6 | 2 << 4 | 2 << 2);
}

static void test_variant_array_255_vs_256_elements_is_large(void **state)
{
    (void)state;
    for (int n = 255; n <= 256; n++) {
        vr_builder b;
        vr_variant v;
        OK(vr_builder_init(&b, NULL));
        OK(vr_begin_array(&b));
        for (int i = 0; i < n; i++)
            OK(vr_null(&b));
        OK(vr_end_array(&b));
        finish(&b, &v);
        /* 255/256 one-byte nulls: 1-byte offsets up to 255, 2 bytes for 256. */
        assert_int_equal(v.value[0], n == 255 ? 0x03 : (0x03 | 1 << 4 | 1 << 2));
        vr_builder_free(&b);
    }
}

/* One binary of len bytes in an array / object: data = 5 + len bytes. */
static void test_variant_offset_widths_1_2_3_4_bytes(void **state)
{
    (void)state;
    static const size_t lens[4] = {250, 65530, 16777210, 16777211};
    uint8_t *blob = calloc(1, lens[3]);
    assert_non_null(blob);
    for (unsigned w = 1; w <= 4; w++) {
        for (int obj = 0; obj <= 1; obj++) {
            vr_builder b;
            vr_variant v;
            OK(vr_builder_init(&b, NULL));
            OK(obj ? vr_begin_object(&b) : vr_begin_array(&b));
            if (obj)
                key(&b, "k");
            OK(vr_binary(&b, blob, lens[w - 1]));
            OK(obj ? vr_end_object(&b) : vr_end_array(&b));
            finish(&b, &v);
            assert_int_equal(v.value[0] & 3, obj ? 2 : 3);
            assert_int_equal((v.value[0] >> 2) & 3, w - 1);
            vr_builder_free(&b);
        }
    }
    free(blob);
}

/* Metadata offset_size (bits 6-7) follows the dictionary's byte size. */
static void test_variant_metadata_offset_widths_1_2_3_4_bytes(void **state)
{
    (void)state;
    static const size_t lens[4] = {255, 65535, 16777215, 16777216};
    char *k = malloc(lens[3]);
    assert_non_null(k);
    memset(k, 'k', lens[3]);
    for (unsigned w = 1; w <= 4; w++) {
        vr_builder b;
        vr_variant v;
        OK(vr_builder_init(&b, NULL));
        OK(vr_begin_object(&b));
        OK(vr_key(&b, k, lens[w - 1]));
        OK(vr_null(&b));
        OK(vr_end_object(&b));
        finish(&b, &v);
        assert_int_equal(v.metadata[0], 0x11 | (w - 1) << 6);
        assert_int_equal(v.metadata_len, 1 + w + 2 * w + lens[w - 1]);
        vr_builder_free(&b);
    }
    free(k);
}

static void test_variant_empty_object_and_array_bytes(void **state)
{
    (void)state;
    static const uint8_t meta[] = {0x01, 0x00, 0x00};
    /* [{}, []]: array, 2 elements, offsets 0 3 6, then 02 00 00, 03 00 00 */
    static const uint8_t val[] = {0x03, 0x02, 0x00, 0x03, 0x06,
                                  0x02, 0x00, 0x00, 0x03, 0x00, 0x00};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    OK(vr_begin_array(&b));
    build_object_empty(&b);
    build_array_empty(&b);
    OK(vr_end_array(&b));
    finish(&b, &v);
    assert_bytes(v.metadata, v.metadata_len, meta, sizeof meta);
    assert_bytes(v.value, v.value_len, val, sizeof val);
    assert_json(&v, "[{},[]]");
    vr_builder_free(&b);
}

/* ---- primitives ------------------------------------------------------------ */

/* Encodes one scalar as the whole record and returns its value bytes. */
#define SCALAR(call, out, outlen)                                          \
    do {                                                                   \
        vr_builder b_;                                                     \
        vr_variant v_;                                                     \
        OK(vr_builder_init(&b_, NULL));                                    \
        vr_builder *b = &b_;                                               \
        OK(call);                                                          \
        finish(&b_, &v_);                                                  \
        assert_true(v_.value_len <= sizeof(out));                          \
        memcpy(out, v_.value, v_.value_len);                               \
        *(outlen) = v_.value_len;                                          \
        vr_builder_free(&b_);                                              \
    } while (0)

static void test_variant_string_63_bytes_short_64_bytes_long(void **state)
{
    (void)state;
    char s[64];
    uint8_t out[80];
    size_t n;
    memset(s, 'x', sizeof s);
    SCALAR(vr_string(b, s, 63), out, &n);
    assert_int_equal(n, 64);
    assert_int_equal(out[0], 63 << 2 | 1);               /* short string, len 63 */
    SCALAR(vr_string(b, s, 64), out, &n);
    assert_int_equal(n, 69);
    static const uint8_t head[] = {16 << 2, 64, 0, 0, 0};  /* long string, 4-byte len */
    assert_memory_equal(out, head, sizeof head);
    SCALAR(vr_string(b, "", 0), out, &n);
    assert_int_equal(n, 1);
    assert_int_equal(out[0], 0x01);
}

static void test_variant_int_takes_smallest_width(void **state)
{
    (void)state;
    static const struct {
        int64_t v;
        uint8_t type;
        size_t len;
    } cases[] = {
        {0, VR_INT8, 2}, {127, VR_INT8, 2}, {-128, VR_INT8, 2}, {128, VR_INT16, 3},
        {-129, VR_INT16, 3}, {32767, VR_INT16, 3}, {32768, VR_INT32, 5},
        {-32769, VR_INT32, 5}, {INT32_MAX, VR_INT32, 5}, {(int64_t)INT32_MAX + 1, VR_INT64, 9},
        {INT32_MIN, VR_INT32, 5}, {INT64_MIN, VR_INT64, 9}, {INT64_MAX, VR_INT64, 9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t out[16];
        size_t n;
        SCALAR(vr_int(b, cases[i].v), out, &n);
        assert_int_equal(out[0], cases[i].type << 2);
        assert_int_equal(n, cases[i].len);
    }
}

/* Precision 9 / 10 / 18 / 19 / 38 switch decimal4 / 8 / 16 (Decimal table). */
static void test_variant_decimal_precision_boundaries_9_18_38(void **state)
{
    (void)state;
    vr_i128 e18 = (vr_i128)1000000000000000000LL;
    vr_i128 max38 = e18 * e18 * 100 - 1;            /* 10^38 - 1 */
    static const uint8_t d4[] = {VR_DECIMAL4 << 2, 3, 0xff, 0xc9, 0x9a, 0x3b}; /* 999999999 */
    const struct {
        vr_i128 v;
        uint8_t type;
    } cases[] = {
        {999999999, VR_DECIMAL4}, {-999999999, VR_DECIMAL4}, {1000000000, VR_DECIMAL8},
        {e18 - 1, VR_DECIMAL8}, {-(e18 - 1), VR_DECIMAL8}, {e18, VR_DECIMAL16},
        {max38, VR_DECIMAL16}, {-max38, VR_DECIMAL16}, {0, VR_DECIMAL4},
    };
    uint8_t out[32];
    size_t n;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        SCALAR(vr_decimal(b, cases[i].v, 0), out, &n);
        assert_int_equal(out[0], cases[i].type << 2);
        assert_int_equal(out[1], 0);
        vr_prim p;
        OK(vr_value_read(out, n, &p, NULL));
        assert_true(p.unscaled == cases[i].v);
    }
    SCALAR(vr_decimal(b, 999999999, 3), out, &n);
    assert_bytes(out, n, d4, sizeof d4);
    vr_builder b;
    OK(vr_builder_init(&b, NULL));
    assert_int_equal(vr_decimal(&b, max38 + 1, 0), PQ_EINVAL);   /* precision 39 */
    assert_int_equal(vr_decimal(&b, -max38 - 1, 0), PQ_EINVAL);
    assert_int_equal(vr_decimal(&b, 1, 39), PQ_EINVAL);          /* scale 39 */
    OK(vr_decimal(&b, 1, 0));                                     /* still usable */
    vr_builder_free(&b);
}

/* Readers derive a decimal's precision from its unscaled digits; DuckDB
 * 1.5.6 crashes on a scale above it and prints one equal to it as ".5":
 * the builder refuses both, so no such decimal is ever written. */
static void test_variant_decimal_scale_must_stay_below_implied_precision(void **state)
{
    (void)state;
    vr_i128 e18 = (vr_i128)1000000000000000000LL;
    vr_i128 max38 = e18 * e18 * 100 - 1;            /* 10^38 - 1 */
    const struct {
        vr_i128 v;
        uint32_t scale;
        int rc;
    } cases[] = {
        {15, 1, 0},            {-15, 1, 0},           {5, 1, PQ_EINVAL},  /* 0.5 */
        {-5, 1, PQ_EINVAL},    {5, 2, PQ_EINVAL},     {99, 2, PQ_EINVAL}, /* 0.99 */
        {100, 2, 0},           {0, 0, 0},             {0, 1, PQ_EINVAL},  /* 0.0 */
        {max38, 37, 0},        {max38, 38, PQ_EINVAL}, {-max38, 37, 0},
        {e18, 18, 0},          {e18 - 1, 18, PQ_EINVAL}, {1, 0, 0},
    };
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vr_builder_reset(&b);
        int rc = vr_decimal(&b, cases[i].v, cases[i].scale);
        if (rc != cases[i].rc)
            fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, b.err.msg);
        if (rc == 0)
            continue;
        assert_non_null(strstr(b.err.msg, "scale"));
        OK(vr_int(&b, 7));                          /* the builder is unchanged */
        finish(&b, &v);
        assert_json(&v, "7");
    }
    vr_builder_free(&b);
}

/* Variant has no unsigned type: above INT64_MAX is decimal16, scale 0. */
static void test_variant_uint64_max_is_decimal16_scale_0(void **state)
{
    (void)state;
    static const uint8_t want[] = {VR_DECIMAL16 << 2, 0,
                                   0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                   0, 0, 0, 0, 0, 0, 0, 0};
    uint8_t out[32];
    size_t n;
    SCALAR(vr_uint64(b, UINT64_MAX), out, &n);
    assert_bytes(out, n, want, sizeof want);
    SCALAR(vr_uint64(b, (uint64_t)INT64_MAX), out, &n);
    assert_int_equal(out[0], VR_INT64 << 2);
    SCALAR(vr_uint64(b, (uint64_t)INT64_MAX + 1), out, &n);
    assert_int_equal(out[0], VR_DECIMAL16 << 2);
    SCALAR(vr_uint64(b, 200), out, &n);
    assert_int_equal(out[0], VR_INT16 << 2);
}

/* Every other primitive type's header byte and payload. */
static void test_variant_primitive_headers_and_payloads(void **state)
{
    (void)state;
    static const uint8_t uuid[16] = {0xf2, 0x4f, 0x9b, 0x64, 0x81, 0xfa, 0x49, 0xd1,
                                     0xb7, 0x4e, 0x8c, 0x09, 0xa6, 0xe3, 0x1c, 0x56};
    uint8_t out[32];
    size_t n;
    SCALAR(vr_float(b, 1.5f), out, &n);
    assert_bytes(out, n, (const uint8_t[]){VR_FLOAT << 2, 0, 0, 0xc0, 0x3f}, 5);
    SCALAR(vr_time(b, 45296000001LL), out, &n);          /* 12:34:56.000001 */
    assert_bytes(out, n, (const uint8_t[]){VR_TIME_NTZ_MICROS << 2, 0x01, 0x1c, 0xda, 0x8b,
                                           0x0a, 0, 0, 0}, 9);
    SCALAR(vr_timestamp(b, -1, VR_NANOS, true), out, &n);
    assert_bytes(out, n, (const uint8_t[]){VR_TIMESTAMP_NANOS << 2, 0xff, 0xff, 0xff, 0xff,
                                           0xff, 0xff, 0xff, 0xff}, 9);
    SCALAR(vr_uuid(b, uuid), out, &n);
    assert_int_equal(out[0], VR_UUID << 2);
    assert_memory_equal(out + 1, uuid, 16);
    SCALAR(vr_bool(b, false), out, &n);
    assert_bytes(out, n, (const uint8_t[]){0x08}, 1);

    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    OK(vr_begin_array(&b));
    OK(vr_float(&b, 1.5f)), OK(vr_time(&b, 45296000001LL));
    OK(vr_timestamp(&b, -1, VR_NANOS, true)), OK(vr_uuid(&b, uuid));
    OK(vr_date(&b, -1)), OK(vr_timestamp(&b, 0, VR_MICROS, false));
    OK(vr_double(&b, 0.1)), OK(vr_binary(&b, "\xff\x00", 2));
    OK(vr_double(&b, NAN)), OK(vr_double(&b, -INFINITY)), OK(vr_float(&b, INFINITY));
    OK(vr_end_array(&b));
    finish(&b, &v);
    assert_json(&v, "[1.5,\"12:34:56.000001\",\"1969-12-31T23:59:59.999999999+00:00\","
                    "\"f24f9b64-81fa-49d1-b74e-8c09a6e31c56\",\"1969-12-31\","
                    "\"1970-01-01T00:00:00.000000\",0.1,\"/wA=\",\"NaN\",\"-Infinity\","
                    "\"Infinity\"]");
    vr_builder_free(&b);
}

/* ---- JSON numbers (the rule at the top of schema/vnumber.c) ------------ */

/* A decimal text as "[-]digits e exp" with no leading/trailing zero digit
 * ("0" for zero, sign dropped), so that 19.990, 1.999e1 and 19.99 agree. */
static void num_norm(const char *t, char *out, size_t cap)
{
    char dig[128];
    size_t nd = 0, i = 0;
    long long frac = 0, e = 0;
    bool neg = t[0] == '-', in_frac = false, eneg = false;
    i += neg;
    for (; t[i] && t[i] != 'e' && t[i] != 'E'; i++) {
        if (t[i] == '.') {
            in_frac = true;
            continue;
        }
        frac += in_frac;
        if ((nd > 0 || t[i] != '0') && nd < sizeof dig - 1)
            dig[nd++] = t[i];
    }
    if (t[i] && (t[i + 1] == '+' || t[i + 1] == '-'))
        eneg = t[++i] == '-';
    if (t[i])
        e = strtoll(t + i + 1, NULL, 10);
    while (nd > 0 && dig[nd - 1] == '0')
        nd--, frac--;
    dig[nd] = 0;
    if (nd == 0)
        snprintf(out, cap, "0");
    else
        snprintf(out, cap, "%s%se%lld", neg ? "-" : "", dig, (eneg ? -e : e) - frac);
}

/* The type rule, number by number: the Variant type, the value as the
 * test decoder prints it (decimals exactly, doubles in shortest form), and
 * whether that value differs from the text's (rule 4, the only lossy
 * case; every other row is also checked to be the text's exact value). */
static void test_variant_json_number_type_per_number(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int type;
        const char *json;
        bool lossy;
    } cases[] = {
        /* 1: integer syntax -> narrowest int; beyond int64 decimal scale 0 */
        {"0", VR_INT8, "0", false},
        {"-0", VR_INT8, "0", false},                        /* integers have no -0 */
        {"127", VR_INT8, "127", false},
        {"-129", VR_INT16, "-129", false},
        {"40000", VR_INT32, "40000", false},
        {"9007199254740993", VR_INT64, "9007199254740993", false},
        {"9223372036854775807", VR_INT64, "9223372036854775807", false},
        {"-9223372036854775808", VR_INT64, "-9223372036854775808", false},
        {"9223372036854775808", VR_DECIMAL16, "9223372036854775808", false},
        {"-9223372036854775809", VR_DECIMAL16, "-9223372036854775809", false},
        {"18446744073709551615", VR_DECIMAL16, "18446744073709551615", false},
        {"100000000000000000000", VR_DECIMAL16, "100000000000000000000", false},
        {"123456789012345678901234567890", VR_DECIMAL16,
         "123456789012345678901234567890", false},
        {"99999999999999999999999999999999999999", VR_DECIMAL16,
         "99999999999999999999999999999999999999", false},  /* 38 digits */
        {"999999999999999999999999999999999999999", VR_DOUBLE, "1e+39", true},  /* 39 */
        /* 2: fraction or exponent -> double when its shortest form is the text */
        {"0.0", VR_DOUBLE, "0", false},
        {"-0.0", VR_DOUBLE, "-0", false},                   /* the sign stays */
        {"0e-50", VR_DOUBLE, "0", false},
        {"1.0", VR_DOUBLE, "1", false},
        {"1e0", VR_DOUBLE, "1", false},
        {"1E+2", VR_DOUBLE, "1e+02", false},
        {"100.00", VR_DOUBLE, "1e+02", false},
        {"1.5", VR_DOUBLE, "1.5", false},
        {"1.50", VR_DOUBLE, "1.5", false},
        {"1.5E+3", VR_DOUBLE, "1.5e+03", false},
        {"-1.5e-3", VR_DOUBLE, "-0.0015", false},
        {"0.1", VR_DOUBLE, "0.1", false},
        {"1e-7", VR_DOUBLE, "1e-07", false},
        {"1e-20", VR_DOUBLE, "1e-20", false},
        {"25.122", VR_DOUBLE, "25.122", false},
        {"19.990", VR_DOUBLE, "19.99", false},
        {"1234567890.1234", VR_DOUBLE, "1234567890.1234", false},
        {"1519940000.123456", VR_DOUBLE, "1519940000.123456", false},   /* 16 digits */
        {"0.0023250579833984375", VR_DOUBLE, "0.0023250579833984375", false},  /* 17 */
        {"0.7531380753138075", VR_DOUBLE, "0.7531380753138075", false},
        {"0.30000000000000004", VR_DOUBLE, "0.30000000000000004", false},
        {"1e37", VR_DOUBLE, "1e+37", false},
        {"1e-38", VR_DOUBLE, "1e-38", false},
        {"1e308", VR_DOUBLE, "1e+308", false},
        {"1.7976931348623157e308", VR_DOUBLE, "1.7976931348623157e+308", false},
        {"-1.7976931348623157e308", VR_DOUBLE, "-1.7976931348623157e+308", false},
        {"2.2250738585072014e-308", VR_DOUBLE, "2.2250738585072014e-308", false},
        {"5e-324", VR_DOUBLE, "5e-324", false},              /* subnormal */
        /* 2^89 and 2^122: the nearest 16-digit decimal misses the narrower
         * lower half-gap, the shortest form is the one above */
        {"6.189700196426902e26", VR_DOUBLE, "6.189700196426902e+26", false},
        {"5.316911983139664e+36", VR_DOUBLE, "5.316911983139664e+36", false},
        {"2.5e-323", VR_DOUBLE, "2.5e-323", false},
        /* 3: digits no double keeps -> decimal with an integer digit */
        {"12345678901234567.8", VR_DECIMAL8, "12345678901234567.8", false},
        {"-12345678901234567.8", VR_DECIMAL8, "-12345678901234567.8", false},
        {"9007199254740993.0", VR_DECIMAL8, "9007199254740993", false},
        {"1.23456789012345678", VR_DECIMAL8, "1.23456789012345678", false},
        {"3.141592653589793238462643383279502884", VR_DECIMAL16,
         "3.141592653589793238462643383279502884", false},  /* 37 digits */
        {"1.8446744073709551615e19", VR_DECIMAL16, "18446744073709551615", false},
        {"123456789012345678901234567890e8", VR_DECIMAL16,
         "12345678901234567890123456789000000000", false},  /* 38 digits */
        /* 4: nothing exact that readers accept -> the correctly rounded double */
        {"0.031190872192382813", VR_DOUBLE, "0.031190872192382812", true},  /* Zeek */
        {"0.20579910278320313", VR_DOUBLE, "0.20579910278320312", true},
        {"0.12345678901234567890", VR_DOUBLE, "0.12345678901234568", true},
        {"0.00000000000000000000123456789012345678", VR_DOUBLE, "1.2345678901234568e-21",
         true},
        {"4.9e-324", VR_DOUBLE, "5e-324", true},
        {"1e-400", VR_DOUBLE, "0", true},
        {"-1e-400", VR_DOUBLE, "-0", true},
        {"123456789012345678901234567890e9", VR_DOUBLE, "1.2345678901234568e+38", true},
        {"1.00000000000000000000000000000000000001", VR_DOUBLE, "1", true},  /* 39 */
        {"3.141592653589793238462643383279502884197", VR_DOUBLE, "3.141592653589793", true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vr_builder b;
        vr_variant v;
        vr_prim p;
        OK(vr_builder_init(&b, NULL));
        if (vr_json_number(&b, cases[i].text, strlen(cases[i].text)) != 0)
            fail_msg("%s: %s", cases[i].text, b.err.msg);
        finish(&b, &v);
        OK(vr_value_read(v.value, v.value_len, &p, NULL));
        if ((int)p.type != cases[i].type)
            fail_msg("%s: type %d, want %d", cases[i].text, p.type, cases[i].type);
        char *got = json_of(v.metadata, v.metadata_len, v.value, v.value_len);
        if (strcmp(got, cases[i].json) != 0)
            fail_msg("%s: value %s, want %s", cases[i].text, got, cases[i].json);
        char a[160], c[160];
        num_norm(cases[i].text, a, sizeof a);
        num_norm(got, c, sizeof c);
        if ((strcmp(a, c) != 0) != cases[i].lossy)
            fail_msg("%s: read back as %s (%s vs %s), %s", cases[i].text, got, a, c,
                     cases[i].lossy ? "expected a loss" : "the value changed");
        if (p.type == VR_DOUBLE && p.d != strtod(cases[i].text, NULL))
            fail_msg("%s: double %.17g is not strtod's", cases[i].text, p.d);
        free(got);
        vr_builder_free(&b);
    }
}

/* Doubles shredded into exact typed_values count by their shortest form:
 * 0.1 is 1 at scale 1, never 0.1000000000000000055511151231257827. */
static void test_variant_double_decimal_is_the_shortest_form(void **state)
{
    (void)state;
    const struct {
        double x;
        uint32_t scale;
        bool ok;
        vr_i128 want;
    } cases[] = {
        {0.1, 1, true, 1},           {0.1, 2, true, 10},       {0.1, 0, false, 0},
        {19.99, 2, true, 1999},      {-19.99, 3, true, -19990}, {19.99, 1, false, 0},
        {3.0, 0, true, 3},           {0.0, 0, true, 0},         {-0.0, 0, false, 0},       {1e20, 0, true, (vr_i128)100000000000000000LL * 1000},
        {0.30000000000000004, 17, true, 30000000000000004LL},
        {0.30000000000000004, 16, false, 0},
        {5e-324, 38, false, 0},      {1e38, 0, false, 0},
        {0.0023250579833984375, 19, true, 23250579833984375LL},
        {0x1p89, 0, true, (vr_i128)6189700196426902LL * 100000000000LL},   /* 2^89 */
        {0.0023250579833984375, 18, false, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vr_i128 u = -1;
        bool ok = vr_double_decimal(cases[i].x, cases[i].scale, &u);
        if (ok != cases[i].ok)
            fail_msg("case %zu (%.17g at scale %u): %d", i, cases[i].x, cases[i].scale, ok);
        if (ok && u != cases[i].want)
            fail_msg("case %zu: unscaled %lld", i, (long long)u);
    }
    vr_i128 u, e37 = 1;
    for (int k = 0; k < 37; k++)
        e37 *= 10;
    assert_true(vr_double_decimal(1e37, 0, &u) && u == e37);   /* 38 digits */
    assert_false(vr_double_decimal(NAN, 2, &(vr_i128){0}));
    assert_false(vr_double_decimal(INFINITY, 0, &(vr_i128){0}));
}

static void test_variant_json_number_refuses_bad_text_and_infinity(void **state)
{
    (void)state;
    static const char *bad[] = {"", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1x", "0x10",
                                "NaN", "1.5.2", " 1"};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(vr_json_number(&b, bad[i], strlen(bad[i])), PQ_EINVAL);
    assert_int_equal(vr_json_number(&b, "1e400", 5), PQ_ETYPE);
    assert_int_equal(vr_json_number(&b, "-1e99999999999", 14), PQ_ETYPE);
    OK(vr_string(&b, "1e400", 5));                 /* the caller keeps the text */
    finish(&b, &v);
    assert_json(&v, "\"1e400\"");
    vr_builder_free(&b);
}

/* The parts interface a streaming parser uses (schema/json.h numbers). */
static void test_variant_number_from_json_parts(void **state)
{
    (void)state;
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    vr_json_num n = {.negative = true, .int_digits = "123", .int_len = 3,
                     .frac_digits = "4500", .frac_len = 4, .exp10 = 1, .d = -1234.5};
    OK(vr_number_from_json(&b, &n));                /* -123.4500e1 = -1234.5 */
    finish(&b, &v);
    assert_json(&v, "-1234.5");
    assert_int_equal(v.value[0], VR_DOUBLE << 2);
    /* "1e0": exponent syntax, so a double, although exp10 is 0 */
    vr_json_num e0 = {.int_digits = "1", .int_len = 1, .has_exp = true, .d = 1.0};
    vr_json_num i1 = {.int_digits = "1", .int_len = 1, .d = 1.0};
    vr_builder_reset(&b);
    OK(vr_number_from_json(&b, &e0));
    finish(&b, &v);
    assert_int_equal(v.value[0], VR_DOUBLE << 2);
    vr_builder_reset(&b);
    OK(vr_number_from_json(&b, &i1));
    finish(&b, &v);
    assert_int_equal(v.value[0], VR_INT8 << 2);
    vr_builder_free(&b);
}

/* ---- nesting, misuse, reuse -------------------------------------------- */

static void test_variant_deep_nesting_to_the_callers_bound(void **state)
{
    (void)state;
    const uint32_t depth = 1000;
    vr_opts o = {.max_depth = depth};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, &o));
    for (uint32_t i = 0; i < depth; i++) {
        OK(i % 2 ? vr_begin_array(&b) : vr_begin_object(&b));
        if (i % 2 == 0)
            key(&b, i % 4 ? "b" : "a");
    }
    assert_int_equal(vr_begin_array(&b), PQ_ELIMIT);  /* one past the bound */
    OK(vr_int(&b, 42));
    for (uint32_t i = depth; i-- > 0;)
        OK(i % 2 ? vr_end_array(&b) : vr_end_object(&b));
    finish(&b, &v);
    char *j = json_of(v.metadata, v.metadata_len, v.value, v.value_len);
    assert_int_equal(strlen(j), depth / 2 * strlen("{\"a\":[") + 2 + depth / 2 * 2);
    assert_non_null(strstr(j, "[42]}"));
    free(j);
    vr_builder_free(&b);

    OK(vr_builder_init(&b, NULL));                /* the default bound */
    for (uint32_t i = 0; i < VR_DEFAULT_MAX_DEPTH; i++)
        OK(vr_begin_array(&b));
    assert_int_equal(vr_begin_array(&b), PQ_ELIMIT);
    vr_builder_free(&b);
}

/* Misuse is refused with PQ_ESTATE and leaves the record as it was. */
static void test_variant_misuse_is_refused_without_damage(void **state)
{
    (void)state;
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    assert_int_equal(vr_finish(&b, &v), PQ_ESTATE);      /* no value */
    assert_int_equal(vr_key(&b, "a", 1), PQ_ESTATE);     /* key outside object */
    assert_int_equal(vr_end_object(&b), PQ_ESTATE);
    OK(vr_begin_object(&b));
    assert_int_equal(vr_int(&b, 1), PQ_ESTATE);          /* value without key */
    assert_int_equal(vr_end_array(&b), PQ_ESTATE);
    key(&b, "a");
    assert_int_equal(vr_key(&b, "b", 1), PQ_ESTATE);     /* key after key */
    assert_int_equal(vr_end_object(&b), PQ_ESTATE);      /* key without value */
    OK(vr_begin_array(&b));
    assert_int_equal(vr_key(&b, "c", 1), PQ_ESTATE);     /* key in array */
    assert_int_equal(vr_end_object(&b), PQ_ESTATE);
    assert_int_equal(vr_string(&b, "\xc0\xaf", 2), PQ_EINVAL);   /* overlong */
    assert_int_equal(vr_string(&b, "\xed\xa0\x80", 3), PQ_EINVAL); /* surrogate */
    OK(vr_int(&b, 1));
    assert_int_equal(vr_finish(&b, &v), PQ_ESTATE);      /* still open */
    OK(vr_end_array(&b));
    assert_int_equal(vr_key(&b, "\xff", 1), PQ_EINVAL);   /* key not UTF-8 */
    OK(vr_end_object(&b));
    assert_int_equal(vr_null(&b), PQ_ESTATE);            /* second root value */
    finish(&b, &v);
    assert_json(&v, "{\"a\":[1]}");
    vr_builder_free(&b);
}

/* Buffers are reset, not freed: a second record of the same shape costs
 * no allocation (the capacities and data pointers do not move). */
static void test_variant_reset_reuses_buffers(void **state)
{
    (void)state;
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, NULL));
    for (int round = 0; round < 3; round++) {
        vr_builder_reset(&b);
        const uint8_t *stack = b.stack.data, *meta = b.meta.data;
        size_t caps[4] = {b.stack.cap, b.ents_cap, b.keys_cap, b.nslots};
        build_array_nested(&b);
        finish(&b, &v);
        assert_json(&v, "[{\"id\":1,\"thing\":{\"names\":[\"Contrarian\",\"Spider\"]}},null,"
                        "{\"id\":2,\"names\":[\"Apple\",\"Ray\",null],\"type\":\"if\"}]");
        if (round == 2) {
            assert_ptr_equal(b.stack.data, stack);
            assert_ptr_equal(b.meta.data, meta);
            assert_int_equal(b.stack.cap, caps[0]);
            assert_int_equal(b.ents_cap, caps[1]);
            assert_int_equal(b.keys_cap, caps[2]);
            assert_int_equal(b.nslots, caps[3]);
        }
    }
    vr_builder_free(&b);
}

/* ---- shared dictionary (vr_opts.shared_dict) ----------------------------- */

/* {keys[0]: 0, keys[1]: 1, ...} as one record. */
static void build_keys(vr_builder *b, const char *const *keys, size_t n, vr_variant *v)
{
    vr_builder_reset(b);
    OK(vr_begin_object(b));
    for (size_t i = 0; i < n; i++) {
        OK(vr_key(b, keys[i], strlen(keys[i])));
        OK(vr_int(b, (int64_t)i));
    }
    OK(vr_end_object(b));
    finish(b, v);
}

static uint32_t dict_size(const vr_variant *v)
{
    vr_meta m;
    pq_err err = {0};
    OK(vr_meta_open(&m, v->metadata, v->metadata_len, &err));
    assert_true(m.sorted);
    return m.size;
}

/* Records of one shape share byte-identical metadata whatever their key
 * order; a new key grows the dictionary, which stays sorted; each record
 * still decodes to exactly its own fields. */
static void test_variant_shared_dict_reuses_metadata_across_records(void **state)
{
    (void)state;
    vr_opts o = {.shared_dict = true};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, &o));
    const char *r1[] = {"host", "a", "zeta"}, *r2[] = {"zeta", "host", "a"};
    build_keys(&b, r1, 3, &v);
    assert_json(&v, "{\"a\":1,\"host\":0,\"zeta\":2}");
    size_t mlen = v.metadata_len;
    uint8_t *m1 = malloc(mlen);
    assert_non_null(m1);
    memcpy(m1, v.metadata, mlen);
    build_keys(&b, r2, 3, &v);
    assert_json(&v, "{\"a\":2,\"host\":1,\"zeta\":0}");
    assert_bytes(v.metadata, v.metadata_len, m1, mlen);
    const char *r3[] = {"b", "zeta", "a", "host"};
    build_keys(&b, r3, 4, &v);
    assert_json(&v, "{\"a\":2,\"b\":0,\"host\":3,\"zeta\":1}");
    assert_int_equal(dict_size(&v), 4);
    /* a record of fewer keys still sees only its own fields */
    const char *r4[] = {"host", "b"};
    build_keys(&b, r4, 2, &v);
    assert_json(&v, "{\"b\":1,\"host\":0}");
    assert_int_equal(dict_size(&v), 4);
    free(m1);
    vr_builder_free(&b);
}

/* The dictionary starts afresh after a record that used under half of it,
 * after vr_builder_forget_dict, and after a record that failed; without
 * shared_dict every record has its own. */
static void test_variant_shared_dict_starts_afresh(void **state)
{
    (void)state;
    vr_opts o = {.shared_dict = true};
    vr_builder b, plain;
    vr_variant v;
    OK(vr_builder_init(&b, &o));
    OK(vr_builder_init(&plain, NULL));
    const char *wide[] = {"a", "b", "c", "d", "e", "f"}, *one[] = {"c"};
    build_keys(&b, wide, 6, &v);
    build_keys(&b, one, 1, &v);          /* kept: the last record used 6 of 6 */
    assert_int_equal(dict_size(&v), 6);
    assert_json(&v, "{\"c\":0}");
    build_keys(&b, one, 1, &v);          /* afresh: the last used 1 of 6 */
    assert_int_equal(dict_size(&v), 1);
    build_keys(&b, wide, 6, &v);
    vr_builder_forget_dict(&b);
    build_keys(&b, one, 1, &v);
    assert_int_equal(dict_size(&v), 1);
    build_keys(&b, wide, 6, &v);
    vr_builder_reset(&b);                /* a record that fails half-way */
    OK(vr_begin_object(&b));
    OK(vr_key(&b, "new", 3));
    assert_int_not_equal(vr_key(&b, "again", 5), 0);
    build_keys(&b, one, 1, &v);
    assert_int_equal(dict_size(&v), 1);
    build_keys(&plain, wide, 6, &v);
    build_keys(&plain, one, 1, &v);
    assert_int_equal(dict_size(&v), 1);
    vr_builder_free(&b);
    vr_builder_free(&plain);
}

/* Past VR_SHARED_MAX_KEYS keys the dictionary is not kept. */
static void test_variant_shared_dict_is_bounded(void **state)
{
    (void)state;
    vr_opts o = {.shared_dict = true};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, &o));
    size_t n = VR_SHARED_MAX_KEYS + 1;
    char (*names)[16] = calloc(n, sizeof *names);
    const char **keys = calloc(n, sizeof *keys);
    assert_non_null(names);
    assert_non_null(keys);
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "k%05zu", i);
        keys[i] = names[i];
    }
    build_keys(&b, keys, n, &v);
    assert_int_equal(dict_size(&v), n);
    build_keys(&b, keys, 1, &v);
    assert_int_equal(dict_size(&v), 1);
    free(keys);
    free(names);
    vr_builder_free(&b);
}

/* ---- readers and shredder helpers ----------------------------------------- */

static void test_variant_reader_iterates_and_finds_fields(void **state)
{
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

/* ---- seeded random round-trips ------------------------------------------ */

static uint64_t rnd(uint64_t *s)            /* splitmix64 */
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static const char *const key_pool[] = {"", "a", "b", "ab", "id", "user", "user.id", "\xc3\xa9",
                                       "\xf0\x9f\x90\xa2", "tags", "a\"b", "ZZ", "0"};

static vread_node *gen_string(uint64_t *s)
{
    static const char *const atoms[] = {"a", "Z", " ", "\"", "\\", "\n", "\x01",
                                        "\xc3\xa9", "\xe2\x99\xa5", "\xf0\x9f\xa4\xa6"};
    char buf[400];
    size_t n = 0, len = rnd(s) % 4 == 0 ? rnd(s) % 100 : rnd(s) % 70;
    while (n < len) {
        const char *a = atoms[rnd(s) % 10];
        memcpy(buf + n, a, strlen(a));
        n += strlen(a);
    }
    return vread_new_string(buf, n);
}

static vread_node *gen_number(uint64_t *s)
{
    unsigned bits = (unsigned)(rnd(s) % 64);
    /* a value of about `bits` bits, either sign, without signed overflow */
    int64_t i = (int64_t)((rnd(s) >> (63 - bits)) - (bits ? (1ULL << bits) / 2 : 0));
    switch (rnd(s) % 5) {
    case 0: return vread_new_int(i);
    case 1: {
        uint64_t raw = rnd(s);
        double d;
        memcpy(&d, &raw, 8);
        return vread_new_double(isfinite(d) ? d : (double)i / 7);
    }
    case 2: return vread_new_float((float)i / 3);
    default: {
        vr_i128 u = (vr_i128)i * (rnd(s) % 2 ? (vr_i128)rnd(s) % 1000000000000000000LL : 1);
        vr_i128 lim = (vr_i128)1000000000000000000LL * 1000000000000000000LL * 100;
        u %= lim;
        unsigned digits = 1;                /* the scale stays below them */
        for (vr_i128 m = u < 0 ? -u : u; m >= 10; m /= 10)
            digits++;
        return vread_new_decimal(u, (uint32_t)(rnd(s) % digits));
    }
    }
}

static vread_node *gen_scalar(uint64_t *s)
{
    static const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    int64_t t = (int64_t)rnd(s) >> (rnd(s) % 40);
    switch (rnd(s) % 12) {
    case 0: return vread_new(VR_NULL);
    case 1: return vread_new(rnd(s) % 2 ? VR_TRUE : VR_FALSE);
    case 2: case 3: case 4: return gen_string(s);
    case 5: return vread_new_binary(&t, rnd(s) % 9);
    case 6: return vread_new_uuid(uuid);
    case 7: return vread_new_temporal(VR_DATE, (int32_t)(t % 3000000));
    case 8: return vread_new_temporal(VR_TIME_NTZ_MICROS, (t < 0 ? -t : t) % 86400000000LL);
    case 9: return vread_new_temporal((vr_type)(VR_TIMESTAMP_NANOS + rnd(s) % 2), t);
    case 10: return vread_new_temporal((vr_type)(VR_TIMESTAMP_MICROS + rnd(s) % 2), t);
    default: return gen_number(s);
    }
}

/* Containers get rarer with depth; a few get wide (is_large, > 256 keys). */
static vread_node *gen_tree(uint64_t *s, int depth)
{
    uint64_t r = rnd(s) % 100;
    if (depth > 6 || r >= 40)
        return gen_scalar(s);
    bool obj = r < 22;
    vread_node *n = vread_new(obj ? VR_OBJECT : VR_ARRAY);
    size_t kids = rnd(s) % 50 == 0 ? 200 + rnd(s) % 200 : rnd(s) % 7;
    for (size_t i = 0; i < kids; i++) {
        char k[32];
        const char *key = key_pool[rnd(s) % 13];
        if (kids > 100) {
            snprintf(k, sizeof k, "w%llu", (unsigned long long)(rnd(s) % 500));
            key = k;
        }
        OK(vread_add(n, key, strlen(key), gen_tree(s, depth + (kids > 100 ? 4 : 1))));
    }
    return n;
}

static void round_trip_one(vr_builder *b, vr_builder *ub, const vread_node *t,
                           unsigned long long seed, int iter)
{
    vr_variant v, u;
    pq_buf want;
    pq_err err = {0};
    pq_buf_init(&want);
    vr_builder_reset(b);
    vr_builder_reset(ub);
    if (vread_node_feed(b, t) != 0 || vread_node_feed(ub, t) != 0)
        fail_msg("seed %llu iter %d: feed: %s", seed, iter, b->err.msg);
    OK(vr_finish(b, &v));
    OK(vr_finish(ub, &u));
    if (vread_validate(v.metadata, v.metadata_len, v.value, v.value_len, VREAD_CANONICAL,
                       &err) != 0)
        fail_msg("seed %llu iter %d: %s", seed, iter, err.msg);
    OK(vread_node_json(&want, t));
    pq_buf_push(&want, 0);
    char *got = json_of(v.metadata, v.metadata_len, v.value, v.value_len);
    if (strcmp(got, (char *)want.data) != 0)
        fail_msg("seed %llu iter %d:\n got  %s\n want %s", seed, iter, got, want.data);
    assert_int_equal(vread_equal(v.metadata, v.metadata_len, v.value, v.value_len,
                                 u.metadata, u.metadata_len, u.value, u.value_len, &err), 1);
    free(got);
    pq_buf_free(&want);
}

/* Random JSON-like trees: encoder -> decoder must give back the tree's
 * canonical JSON (sorted keys, last duplicate wins), in sorted and
 * unsorted dictionary modes. VARIANT_SEED=<n> replays a failure. */
static void test_variant_random_trees_round_trip(void **state)
{
    (void)state;
    const char *env = getenv("VARIANT_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 10) : (unsigned long long)time(NULL);
    printf("test_variant_random_trees_round_trip: seed %llu (VARIANT_SEED=%llu replays)\n",
           seed, seed);
    uint64_t s = seed;
    vr_builder b, ub;
    vr_opts uo = {.unsorted_dict = true};
    OK(vr_builder_init(&b, NULL));
    OK(vr_builder_init(&ub, &uo));
    for (int iter = 0; iter < 2000; iter++) {
        vread_node *t = gen_tree(&s, 0);
        round_trip_one(&b, &ub, t, seed, iter);
        vread_free(t);
    }
    vr_builder_free(&b);
    vr_builder_free(&ub);
}

int main(void)
{
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
        cmocka_unit_test(test_variant_duplicate_keys_last_wins),
        cmocka_unit_test(test_variant_duplicate_keys_last_wins_over_nested_values),
        cmocka_unit_test(test_variant_metadata_sorted_unique_with_renumbered_ids),
        cmocka_unit_test(test_variant_object_255_fields_is_not_large),
        cmocka_unit_test(test_variant_object_256_fields_is_large),
        cmocka_unit_test(test_variant_object_257_keys_need_2_byte_field_ids),
        cmocka_unit_test(test_variant_object_65537_keys_need_3_byte_field_ids),
        cmocka_unit_test(test_variant_array_255_vs_256_elements_is_large),
        cmocka_unit_test(test_variant_offset_widths_1_2_3_4_bytes),
        cmocka_unit_test(test_variant_metadata_offset_widths_1_2_3_4_bytes),
        cmocka_unit_test(test_variant_empty_object_and_array_bytes),
        cmocka_unit_test(test_variant_string_63_bytes_short_64_bytes_long),
        cmocka_unit_test(test_variant_int_takes_smallest_width),
        cmocka_unit_test(test_variant_decimal_precision_boundaries_9_18_38),
        cmocka_unit_test(test_variant_decimal_scale_must_stay_below_implied_precision),
        cmocka_unit_test(test_variant_uint64_max_is_decimal16_scale_0),
        cmocka_unit_test(test_variant_primitive_headers_and_payloads),
        cmocka_unit_test(test_variant_json_number_type_per_number),
        cmocka_unit_test(test_variant_double_decimal_is_the_shortest_form),
        cmocka_unit_test(test_variant_json_number_refuses_bad_text_and_infinity),
        cmocka_unit_test(test_variant_number_from_json_parts),
        cmocka_unit_test(test_variant_deep_nesting_to_the_callers_bound),
        cmocka_unit_test(test_variant_misuse_is_refused_without_damage),
        cmocka_unit_test(test_variant_reset_reuses_buffers),
        cmocka_unit_test(test_variant_shared_dict_reuses_metadata_across_records),
        cmocka_unit_test(test_variant_shared_dict_starts_afresh),
        cmocka_unit_test(test_variant_shared_dict_is_bounded),
        cmocka_unit_test(test_variant_reader_iterates_and_finds_fields),
        cmocka_unit_test(test_variant_sub_value_reemits_with_same_metadata),
        cmocka_unit_test(test_variant_object_without_drops_shredded_fields),
        cmocka_unit_test(test_variant_append_object_and_array_from_slices),
        cmocka_unit_test(test_variant_decoder_rejects_corrupt_input),
        cmocka_unit_test(test_variant_decoder_canonical_flags_waste),
        cmocka_unit_test(test_variant_decoder_survives_mutated_vectors),
        cmocka_unit_test(test_variant_equal_by_equivalence_class),
        cmocka_unit_test(test_variant_random_trees_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
