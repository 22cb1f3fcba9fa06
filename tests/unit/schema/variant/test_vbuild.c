/* test_vbuild.c - the Variant record builder (schema/variant/vbuild.c,
 * vdict.c, vfinish.c, vappend.c): objects, keys and the dictionary, the
 * spec's boundaries (is_large, offset/id widths, short strings, decimal
 * precision), last-wins duplicate keys, primitives, nesting, misuse,
 * reuse and the shared dictionary. */
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

#include "json.h"
#include "json_variant.h"
#include "variant.h"
#include "variant_read.h"

#include "variant_fixture.h"

/* ---- objects, keys and the dictionary ----------------------------------- */

/* Keys are first compared with a guess (the key after the previous one
 * last time; an object's first key, the one the object under the same
 * parent key began with last time), which is only a hint: records whose
 * objects change their first key, key order and optional keys, objects
 * under different parents at one depth, in arrays, an object key that
 * turns scalar, give the bytes a builder without any hints (a fresh one
 * per record) gives, with and without a shared dictionary. */
static void test_variant_key_guesses_never_change_bytes(void **state)
{
    (void)state;
    static const char *recs[] = {
        "{\"ts\":\"t\",\"req\":{\"m\":\"GET\",\"h\":{\"host\":\"a\",\"acc\":\"b\"}},"
        "\"resp\":{\"s\":200,\"b\":2},\"cli\":{\"ip\":\"x\",\"geo\":{\"c\":\"de\"}}}",
        "{\"ts\":\"t\",\"req\":{\"m\":\"PUT\",\"h\":{\"host\":\"a\",\"ct\":\"j\","
        "\"acc\":\"b\"}},\"resp\":{\"s\":201,\"b\":2},\"cli\":{\"ip\":\"y\",\"geo\":{\"c\":\"fr\"}},"
        "\"err\":\"e\"}",
        "{\"resp\":{\"b\":1,\"s\":500},\"ts\":\"u\",\"req\":{\"h\":{\"acc\":\"b\"},\"m\":\"GET\"},"
        "\"cli\":{\"geo\":{\"c\":\"it\",\"city\":\"r\"},\"ip\":\"z\"}}",
        "{\"ts\":\"t\",\"req\":\"flat\",\"resp\":{\"s\":200},\"cli\":{\"ip\":\"x\"},"
        "\"tags\":[{\"k\":\"a\",\"v\":1},{\"v\":2,\"k\":\"b\"},{\"k\":\"c\"}]}",
        "{\"ts\":\"t\",\"req\":{\"m\":\"GET\",\"h\":{\"host\":\"a\",\"acc\":\"b\"}},"
        "\"resp\":{\"s\":200,\"b\":2},\"cli\":{\"ip\":\"x\",\"geo\":{\"c\":\"de\"}},"
        "\"tags\":[{\"v\":3,\"k\":\"d\"}]}",
    };
    const size_t n = sizeof recs / sizeof recs[0];
    json_parser jp;
    OK(json_parser_init(&jp, 0));
    for (int shared = 0; shared < 2; shared++) {
        vr_opts o = {.shared_dict = shared == 1};
        vr_builder warm;
        OK(vr_builder_init(&warm, &o));
        for (size_t round = 0; round < 3 * n; round++) {
            const char *js = recs[(round * 3) % n]; /* 0 3 1 4 2 0 ...: orders change */
            pq_err err = {0};
            vr_variant w, f;
            vr_builder fresh;
            OK(vr_builder_init(&fresh, &o));
            vr_builder_reset(&warm);
            OK(json_parse_line(&jp, js, strlen(js), &pqt_json_variant, &warm, &err));
            finish(&warm, &w);
            OK(json_parse_line(&jp, js, strlen(js), &pqt_json_variant, &fresh, &err));
            finish(&fresh, &f);
            if (!shared)
                assert_bytes(w.metadata, w.metadata_len, f.metadata, f.metadata_len);
            char *wj = json_of(w.metadata, w.metadata_len, w.value, w.value_len);
            char *fj = json_of(f.metadata, f.metadata_len, f.value, f.value_len);
            assert_string_equal(wj, fj);
            if (!shared)
                assert_bytes(w.value, w.value_len, f.value, f.value_len);
            free(wj);
            free(fj);
            vr_builder_free(&fresh);
        }
        vr_builder_free(&warm);
    }
    json_parser_free(&jp);
}

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

/* Closing an object reuses the key order found for the same key ids
 * (vdict.c) only while the ids name the same keys: r1's first-seen ids
 * c=0 a=1 b=2 are renumbered at its finish to a=0 b=1 c=2, so r2's ids
 * are r1's sequence 0 1 2 in another meaning, and must be sorted anew.
 * Repeats (r3, the duplicate-key r4 twice) take the remembered order. */
static void test_variant_shared_dict_key_orders_follow_renumbering(void **state)
{
    (void)state;
    vr_opts o = {.shared_dict = true};
    vr_builder b;
    vr_variant v;
    OK(vr_builder_init(&b, &o));
    const char *r1[] = {"c", "a", "b"}, *r2[] = {"a", "b", "c"}, *r4[] = {"b", "a", "b"};
    build_keys(&b, r1, 3, &v);
    assert_json(&v, "{\"a\":1,\"b\":2,\"c\":0}");
    build_keys(&b, r2, 3, &v);
    assert_json(&v, "{\"a\":0,\"b\":1,\"c\":2}");
    build_keys(&b, r1, 3, &v);
    assert_json(&v, "{\"a\":1,\"b\":2,\"c\":0}");
    for (int i = 0; i < 2; i++) {
        build_keys(&b, r4, 3, &v);
        assert_json(&v, "{\"a\":1,\"b\":2}");
    }
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

/* vr_finish_empty_object gives what vr_begin_object, vr_end_object and
 * vr_finish give, and leaves the builder as they do: two builders take the
 * same records, one finishing the empty ones with each, through the
 * shared dictionary's states (fresh, kept after a keyed record, dropped). */
static void test_variant_finish_empty_object_matches_general(void **state)
{
    (void)state;
    for (int shared = 0; shared < 2; shared++) {
        vr_opts o = {.shared_dict = shared == 1};
        vr_builder a, g;
        OK(vr_builder_init(&a, &o));
        OK(vr_builder_init(&g, &o));
        const char *keys[] = {"host", "a"};
        const int plan[] = {0, 0, 2, 0, 0, 0, 1, 0, 2, 2, 0};
        for (size_t r = 0; r < sizeof plan / sizeof plan[0]; r++) {
            vr_variant va, vg;
            if (plan[r] > 0) {
                build_keys(&a, keys, (size_t)plan[r], &va);
                build_keys(&g, keys, (size_t)plan[r], &vg);
            } else {
                vr_builder_reset(&a);
                vr_builder_reset(&g);
                OK(vr_finish_empty_object(&a, &va));
                OK(vr_begin_object(&g));
                OK(vr_end_object(&g));
                finish(&g, &vg);
                assert_json(&va, "{}");
            }
            assert_bytes(va.metadata, va.metadata_len, vg.metadata, vg.metadata_len);
            assert_bytes(va.value, va.value_len, vg.value, vg.value_len);
        }
        vr_builder_free(&a);
        vr_builder_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variant_duplicate_keys_last_wins),
        cmocka_unit_test(test_variant_key_guesses_never_change_bytes),
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
        cmocka_unit_test(test_variant_deep_nesting_to_the_callers_bound),
        cmocka_unit_test(test_variant_misuse_is_refused_without_damage),
        cmocka_unit_test(test_variant_reset_reuses_buffers),
        cmocka_unit_test(test_variant_shared_dict_reuses_metadata_across_records),
        cmocka_unit_test(test_variant_shared_dict_key_orders_follow_renumbering),
        cmocka_unit_test(test_variant_shared_dict_starts_afresh),
        cmocka_unit_test(test_variant_shared_dict_is_bounded),
        cmocka_unit_test(test_variant_finish_empty_object_matches_general),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
