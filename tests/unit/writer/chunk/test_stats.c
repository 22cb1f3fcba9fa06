/* test_stats.c - sort orders, min/max per order with the spec's edge cases
 * (parquet.thrift ColumnOrder/Statistics, LogicalTypes.md), byte-array
 * truncation, and merge equivalence over seeded random data. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "decode.h"
#include "err.h"
#include "stats.h"

/* ---- helpers ------------------------------------------------------------- */

typedef struct bounds {
    pq_buf min, max;
    bool min_exact, max_exact;
} bounds;

static void bounds_get(const pq_stats *s, size_t truncate, bounds *b)
{
    pq_buf_init(&b->min);
    pq_buf_init(&b->max);
    assert_int_equal(pq_stats_min_max(s, truncate, &b->min, &b->min_exact, &b->max,
                                      &b->max_exact), 0);
}

static void bounds_free(bounds *b)
{
    pq_buf_free(&b->min);
    pq_buf_free(&b->max);
}

static void expect_bytes(const pq_buf *got, const void *want, size_t len)
{
    assert_int_equal(got->len, len);
    if (len > 0)
        assert_memory_equal(got->data, want, len);
}

/* Heap/offset batch from C strings with explicit lengths. */
typedef struct strs {
    uint8_t heap[512];
    uint32_t off[65];
    size_t n;
} strs;

static void strs_add(strs *v, const void *p, size_t len)
{
    uint32_t at = v->n ? v->off[v->n] : 0;
    v->off[v->n] = at;
    memcpy(v->heap + at, p, len);
    v->off[++v->n] = at + (uint32_t)len;
}

#define STR(v, lit) strs_add((v), (lit), sizeof(lit) - 1)

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    return pqt_xorshift64(&rng_state);
}

/* ---- sort orders --------------------------------------------------------- */

static void test_sort_order_for_physical_and_logical_types(void **state)
{
    (void)state;
    pq_logical lt = {0};
    assert_int_equal(pq_sort_order_for(PQ_INT32, NULL), PQ_ORDER_SIGNED);
    assert_int_equal(pq_sort_order_for(PQ_INT64, &lt), PQ_ORDER_SIGNED);
    assert_int_equal(pq_sort_order_for(PQ_BOOLEAN, NULL), PQ_ORDER_BOOLEAN);
    assert_int_equal(pq_sort_order_for(PQ_FLOAT, NULL), PQ_ORDER_FLOAT);
    assert_int_equal(pq_sort_order_for(PQ_DOUBLE, NULL), PQ_ORDER_DOUBLE);
    assert_int_equal(pq_sort_order_for(PQ_BYTE_ARRAY, NULL), PQ_ORDER_BYTES);
    assert_int_equal(pq_sort_order_for(PQ_FIXED_LEN_BYTE_ARRAY, NULL), PQ_ORDER_BYTES);
    assert_int_equal(pq_sort_order_for(PQ_INT96, NULL), PQ_ORDER_INT96);
    assert_int_equal(pq_stats_column_order(PQ_ORDER_INT96), 3);
    assert_int_equal(pq_stats_column_order(PQ_ORDER_FLOAT), 1);

    lt.kind = PQ_LT_INTEGER;
    lt.bit_width = 64;
    lt.is_signed = false;
    assert_int_equal(pq_sort_order_for(PQ_INT64, &lt), PQ_ORDER_UNSIGNED);
    lt.is_signed = true;
    assert_int_equal(pq_sort_order_for(PQ_INT32, &lt), PQ_ORDER_SIGNED);

    const pq_logical_kind bytes_kinds[] = {PQ_LT_STRING, PQ_LT_ENUM, PQ_LT_JSON, PQ_LT_BSON};
    for (size_t i = 0; i < 4; i++) {
        lt.kind = bytes_kinds[i];
        assert_int_equal(pq_sort_order_for(PQ_BYTE_ARRAY, &lt), PQ_ORDER_BYTES);
    }
    lt.kind = PQ_LT_UUID;
    assert_int_equal(pq_sort_order_for(PQ_FIXED_LEN_BYTE_ARRAY, &lt), PQ_ORDER_BYTES);
    lt.kind = PQ_LT_DECIMAL;
    assert_int_equal(pq_sort_order_for(PQ_INT32, &lt), PQ_ORDER_SIGNED);
    assert_int_equal(pq_sort_order_for(PQ_BYTE_ARRAY, &lt), PQ_ORDER_DECIMAL_BE);
    assert_int_equal(pq_sort_order_for(PQ_FIXED_LEN_BYTE_ARRAY, &lt), PQ_ORDER_DECIMAL_BE);
    lt.kind = PQ_LT_FLOAT16;
    assert_int_equal(pq_sort_order_for(PQ_FIXED_LEN_BYTE_ARRAY, &lt), PQ_ORDER_FLOAT16);
    const pq_logical_kind signed_kinds[] = {PQ_LT_DATE, PQ_LT_TIME, PQ_LT_TIMESTAMP};
    for (size_t i = 0; i < 3; i++) {
        lt.kind = signed_kinds[i];
        assert_int_equal(pq_sort_order_for(PQ_INT64, &lt), PQ_ORDER_SIGNED);
    }
    const pq_logical_kind none_kinds[] = {PQ_LT_INTERVAL, PQ_LT_GEOMETRY, PQ_LT_GEOGRAPHY,
                                          PQ_LT_VARIANT, PQ_LT_UNKNOWN, PQ_LT_MAP};
    for (size_t i = 0; i < 6; i++) {
        lt.kind = none_kinds[i];
        assert_int_equal(pq_sort_order_for(PQ_BYTE_ARRAY, &lt), PQ_ORDER_NONE);
        assert_int_equal(pq_sort_order_for(PQ_FIXED_LEN_BYTE_ARRAY, &lt), PQ_ORDER_NONE);
    }
    lt.kind = PQ_LT_STRING; /* an annotation the physical type does not allow */
    assert_int_equal(pq_sort_order_for(PQ_INT32, &lt), PQ_ORDER_NONE);
}

/* ---- integers and booleans ----------------------------------------------- */

static void test_stats_int32_signed_extremes(void **state)
{
    (void)state;
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_SIGNED, PQ_INT32, 0);
    const int32_t v[] = {5, INT32_MAX, -1, INT32_MIN, 0};
    pq_stats_add_fixed(&s, v, 5);
    pq_stats_add_nulls(&s, 3);
    bounds b;
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, "\x00\x00\x00\x80", 4);
    expect_bytes(&b.max, "\xff\xff\xff\x7f", 4);
    assert_true(b.min_exact && b.max_exact);
    assert_int_equal(pq_stats_null_count(&s), 3);
    assert_int_equal(pq_stats_value_count(&s), 5);
    bounds_free(&b);
    pq_stats_free(&s);
}

static void test_stats_int64_signed_extremes_unaligned_input(void **state)
{
    (void)state;
    const int64_t v[] = {-7, INT64_MIN, INT64_MAX, 0};
    uint8_t raw[1 + sizeof v];
    memcpy(raw + 1, v, sizeof v); /* values need not be aligned */
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_SIGNED, PQ_INT64, 0);
    pq_stats_add_fixed(&s, raw + 1, 4);
    bounds b;
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, "\x00\x00\x00\x00\x00\x00\x00\x80", 8);
    expect_bytes(&b.max, "\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
    bounds_free(&b);
    pq_stats_free(&s);
}

/* INTEGER(64, false): 2^63 + 1 is larger than 5, though negative as i64. */
static void test_stats_unsigned_above_2_63(void **state)
{
    (void)state;
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_UNSIGNED, PQ_INT64, 0);
    const uint64_t v[] = {5, (1ull << 63) + 1, UINT64_MAX - 1, 2};
    pq_stats_add_fixed(&s, v, 4);
    bounds b;
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, "\x02\0\0\0\0\0\0\0", 8);
    expect_bytes(&b.max, "\xfe\xff\xff\xff\xff\xff\xff\xff", 8);
    bounds_free(&b);
    pq_stats_free(&s);

    pq_stats_init(&s, PQ_ORDER_UNSIGNED, PQ_INT32, 0);
    const uint32_t w[] = {0x80000000u, 7, UINT32_MAX};
    pq_stats_add_fixed(&s, w, 3);
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, "\x07\0\0\0", 4);
    expect_bytes(&b.max, "\xff\xff\xff\xff", 4);
    bounds_free(&b);
    pq_stats_free(&s);
}

static void test_stats_boolean_false_before_true(void **state)
{
    (void)state;
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_BOOLEAN, PQ_BOOLEAN, 0);
    const uint8_t f[] = {0, 0};
    pq_stats_add_fixed(&s, f, 2);
    bounds b;
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, "\x00", 1);
    expect_bytes(&b.max, "\x00", 1);
    bounds_free(&b);
    const uint8_t t[] = {1, 2}; /* any non-zero byte is true */
    pq_stats_add_fixed(&s, t, 2);
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, "\x00", 1);
    expect_bytes(&b.max, "\x01", 1);
    bounds_free(&b);
    pq_stats_free(&s);
}

/* ---- floating point ------------------------------------------------------ */

static void float_bounds(const float *v, size_t n, float *min, float *max)
{
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_FLOAT, PQ_FLOAT, 0);
    pq_stats_add_fixed(&s, v, n);
    bounds b;
    bounds_get(&s, 0, &b);
    assert_int_equal(b.min.len, 4);
    assert_int_equal(b.max.len, 4);
    memcpy(min, b.min.data, 4);
    memcpy(max, b.max.data, 4);
    bounds_free(&b);
    pq_stats_free(&s);
}

/* parquet.thrift ColumnOrder: a zero min is written as -0.0, a zero max as
 * +0.0, whichever zeros the page held. */
static void test_stats_float_zero_min_is_negative_zero_max_positive(void **state)
{
    (void)state;
    float min, max;
    const float only_pos[] = {0.0f, 0.0f};
    float_bounds(only_pos, 2, &min, &max);
    assert_true(min == 0.0f && signbit(min));
    assert_true(max == 0.0f && !signbit(max));
    const float neg_zero_one[] = {-0.0f, 1.0f};
    float_bounds(neg_zero_one, 2, &min, &max);
    assert_true(min == 0.0f && signbit(min));
    assert_true(max == 1.0f);
    const float minus_one_zero[] = {-1.0f, 0.0f, -0.0f};
    float_bounds(minus_one_zero, 3, &min, &max);
    assert_true(min == -1.0f);
    assert_true(max == 0.0f && !signbit(max));
}

static void test_stats_float_nan_never_min_or_max_and_counted(void **state)
{
    (void)state;
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_FLOAT, PQ_FLOAT, 0);
    const float v[] = {NAN, 3.0f, -NAN, -2.0f, NAN};
    pq_stats_add_fixed(&s, v, 5);
    assert_int_equal(pq_stats_nan_count(&s), 3);
    bounds b;
    bounds_get(&s, 0, &b);
    float min, max;
    memcpy(&min, b.min.data, 4);
    memcpy(&max, b.max.data, 4);
    assert_true(min == -2.0f && max == 3.0f);
    bounds_free(&b);
    pq_stats_free(&s);
}

static void test_stats_all_nan_has_no_min_max(void **state)
{
    (void)state;
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_DOUBLE, PQ_DOUBLE, 0);
    const double v[] = {NAN, NAN};
    pq_stats_add_fixed(&s, v, 2);
    pq_stats_add_nulls(&s, 1);
    assert_false(pq_stats_has_min_max(&s));
    assert_int_equal(pq_stats_nan_count(&s), 2);
    assert_int_equal(pq_stats_value_count(&s), 2);
    pq_buf mn, mx;
    pq_buf_init(&mn);
    pq_buf_init(&mx);
    bool e1, e2;
    assert_int_equal(pq_stats_min_max(&s, 0, &mn, &e1, &mx, &e2), PQ_ESTATE);
    assert_int_equal(mn.len + mx.len, 0);
    /* A later real value brings min/max back; NaNs still counted. */
    const double one = -INFINITY;
    pq_stats_add_fixed(&s, &one, 1);
    assert_true(pq_stats_has_min_max(&s));
    assert_int_equal(pq_stats_min_max(&s, 0, &mn, &e1, &mx, &e2), 0);
    double d;
    memcpy(&d, mx.data, 8);
    assert_true(isinf(d) && d < 0);
    pq_buf_free(&mn);
    pq_buf_free(&mx);
    pq_stats_free(&s);
}

static void test_stats_double_infinities_and_zeros(void **state)
{
    (void)state;
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_DOUBLE, PQ_DOUBLE, 0);
    const double v[] = {0.0, INFINITY, -INFINITY, NAN, -0.0};
    pq_stats_add_fixed(&s, v, 5);
    bounds b;
    bounds_get(&s, 0, &b);
    double min, max;
    memcpy(&min, b.min.data, 8);
    memcpy(&max, b.max.data, 8);
    assert_true(isinf(min) && min < 0 && isinf(max) && max > 0);
    assert_int_equal(pq_stats_nan_count(&s), 1);
    bounds_free(&b);
    pq_stats_free(&s);
}

/* FLOAT16 is FLBA(2), little-endian IEEE half: 3C00 = 1, BC00 = -1,
 * 7C00 = +inf, FC00 = -inf, 7E00/FE00 = NaN, 0001 = smallest subnormal. */
static void f16_stats(const uint16_t *h, size_t n, pq_stats *s)
{
    uint8_t raw[32];
    for (size_t i = 0; i < n; i++) {
        raw[2 * i] = (uint8_t)h[i];
        raw[2 * i + 1] = (uint8_t)(h[i] >> 8);
    }
    pq_stats_init(s, PQ_ORDER_FLOAT16, PQ_FIXED_LEN_BYTE_ARRAY, 2);
    pq_stats_add_fixed(s, raw, n);
}

static uint16_t le16(const pq_buf *b)
{
    assert_int_equal(b->len, 2);
    return (uint16_t)(b->data[0] | b->data[1] << 8);
}

static void test_stats_float16_order_nan_inf_zero(void **state)
{
    (void)state;
    pq_stats s;
    bounds b;
    const uint16_t mix[] = {0x3C00, 0x7E00, 0xBC00, 0x0001, 0xFE00};
    f16_stats(mix, 5, &s);
    bounds_get(&s, 0, &b);
    assert_int_equal(le16(&b.min), 0xBC00);
    assert_int_equal(le16(&b.max), 0x3C00);
    assert_int_equal(pq_stats_nan_count(&s), 2);
    bounds_free(&b);
    pq_stats_free(&s);

    const uint16_t inf[] = {0x7C00, 0x3C00, 0xFC00, 0xC000};
    f16_stats(inf, 4, &s);
    bounds_get(&s, 0, &b);
    assert_int_equal(le16(&b.min), 0xFC00);
    assert_int_equal(le16(&b.max), 0x7C00);
    bounds_free(&b);
    pq_stats_free(&s);

    const uint16_t zeros[] = {0x0000, 0x8001, 0x8000}; /* +0, -subnormal, -0 */
    f16_stats(zeros, 3, &s);
    bounds_get(&s, 0, &b);
    assert_int_equal(le16(&b.min), 0x8001);
    assert_int_equal(le16(&b.max), 0x0000);
    bounds_free(&b);
    pq_stats_free(&s);

    const uint16_t pos_zero[] = {0x0000};
    f16_stats(pos_zero, 1, &s);
    bounds_get(&s, 0, &b);
    assert_int_equal(le16(&b.min), 0x8000);
    assert_int_equal(le16(&b.max), 0x0000);
    bounds_free(&b);
    pq_stats_free(&s);

    const uint16_t nans[] = {0x7E00, 0x7C01, 0xFFFF};
    f16_stats(nans, 3, &s);
    assert_false(pq_stats_has_min_max(&s));
    assert_int_equal(pq_stats_nan_count(&s), 3);
    pq_stats_free(&s);
}

/* ---- DECIMAL, INT96 ------------------------------------------------------ */

/* Big-endian two's complement of different lengths: 00FF = 255, FF = -1,
 * 80 = -128, FF7F = -129, 01 = 1, 7F = 127, FFFFFF80 = -128 again. */
static void test_stats_decimal_mixed_lengths_and_signs(void **state)
{
    (void)state;
    strs v = {0};
    strs_add(&v, "\x00\xff", 2);
    strs_add(&v, "\xff", 1);
    strs_add(&v, "\x80", 1);
    strs_add(&v, "\xff\x7f", 2);
    strs_add(&v, "\x01", 1);
    strs_add(&v, "\x7f", 1);
    strs_add(&v, "\xff\xff\xff\x80", 4);
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_DECIMAL_BE, PQ_BYTE_ARRAY, 0);
    pq_stats_add_bytes(&s, v.heap, v.off, v.n);
    bounds b;
    bounds_get(&s, 2, &b); /* decimals are never truncated */
    expect_bytes(&b.min, "\xff\x7f", 2);
    expect_bytes(&b.max, "\x00\xff", 2);
    assert_true(b.min_exact && b.max_exact);
    bounds_free(&b);
    pq_stats_free(&s);

    /* FLBA(3) decimals: -1 < 0 < 65536. */
    const uint8_t fixed[] = {0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x01, 0x00, 0x00};
    pq_stats_init(&s, PQ_ORDER_DECIMAL_BE, PQ_FIXED_LEN_BYTE_ARRAY, 3);
    pq_stats_add_fixed(&s, fixed, 3);
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, "\xff\xff\xff", 3);
    expect_bytes(&b.max, "\x01\x00\x00", 3);
    bounds_free(&b);
    pq_stats_free(&s);
}

static __int128 decimal_value(const uint8_t *p, size_t len)
{
    __int128 v = (len > 0 && (p[0] & 0x80)) ? -1 : 0;
    for (size_t i = 0; i < len; i++)
        v = (__int128)((unsigned __int128)v << 8) | p[i];
    return v;
}

static void test_stats_decimal_random_matches_int128(void **state)
{
    (void)state;
    const uint64_t seed = 20240611;
    rng_state = seed;
    for (int round = 0; round < 200; round++) {
        strs v = {0};
        size_t n = 1 + rng_next() % 30;
        for (size_t i = 0; i < n; i++) {
            uint8_t tmp[16];
            size_t len = 1 + rng_next() % 15;
            for (size_t j = 0; j < len; j++)
                tmp[j] = (uint8_t)rng_next();
            strs_add(&v, tmp, len);
        }
        __int128 lo = 0, hi = 0;
        for (size_t i = 0; i < n; i++) {
            __int128 x = decimal_value(v.heap + v.off[i], v.off[i + 1] - v.off[i]);
            lo = i == 0 || x < lo ? x : lo;
            hi = i == 0 || x > hi ? x : hi;
        }
        pq_stats s;
        pq_stats_init(&s, PQ_ORDER_DECIMAL_BE, PQ_BYTE_ARRAY, 0);
        pq_stats_add_bytes(&s, v.heap, v.off, n);
        bounds b;
        bounds_get(&s, 0, &b);
        if (decimal_value(b.min.data, b.min.len) != lo ||
            decimal_value(b.max.data, b.max.len) != hi)
            fail_msg("seed %llu round %d: decimal min/max wrong",
                     (unsigned long long)seed, round);
        bounds_free(&b);
        pq_stats_free(&s);
    }
}

static void int96(uint8_t *p, int64_t nanos, int32_t days)
{
    for (size_t i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)nanos >> (8 * i));
    for (size_t i = 0; i < 4; i++)
        p[8 + i] = (uint8_t)((uint32_t)days >> (8 * i));
}

/* INT96_TIMESTAMP_ORDER: days first (signed), then nanos (signed). */
static void test_stats_int96_days_then_nanos(void **state)
{
    (void)state;
    uint8_t v[4 * 12];
    int96(v, 5, 2440588);
    int96(v + 12, 86399999999999ll, 2440587);
    int96(v + 24, 0, 2440588);
    int96(v + 36, 1, -1);
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_INT96, PQ_INT96, 0);
    pq_stats_add_fixed(&s, v, 4);
    bounds b;
    bounds_get(&s, 0, &b);
    expect_bytes(&b.min, v + 36, 12);
    expect_bytes(&b.max, v, 12);
    bounds_free(&b);
    pq_stats_free(&s);
}

/* ---- byte arrays and truncation ------------------------------------------ */

static void test_stats_bytes_unsigned_and_empty_string(void **state)
{
    (void)state;
    strs v = {0};
    STR(&v, "b");
    STR(&v, "");
    STR(&v, "\x80");
    STR(&v, "\x7f\xff");
    STR(&v, "a");
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_BYTES, PQ_BYTE_ARRAY, 0);
    pq_stats_add_bytes(&s, v.heap, v.off, v.n);
    bounds b;
    bounds_get(&s, 0, &b);
    assert_int_equal(b.min.len, 0);
    assert_true(b.min_exact);
    expect_bytes(&b.max, "\x80", 1);
    assert_int_equal(pq_stats_byte_array_bytes(&s), 5);
    bounds_free(&b);
    pq_stats_free(&s);

    /* Only empty strings: min = max = "" (a real bound, not "no stats"). */
    uint32_t off[3] = {0, 0, 0};
    pq_stats_init(&s, PQ_ORDER_BYTES, PQ_BYTE_ARRAY, 0);
    pq_stats_add_bytes(&s, NULL, off, 2);
    assert_true(pq_stats_has_min_max(&s));
    bounds_get(&s, 4, &b);
    assert_int_equal(b.min.len + b.max.len, 0);
    bounds_free(&b);
    pq_stats_free(&s);
}

static void check_truncation(const char *value, size_t len, size_t truncate,
                             const char *want_min, size_t min_len, bool min_exact,
                             const char *want_max, size_t max_len, bool max_exact)
{
    strs v = {0};
    strs_add(&v, value, len);
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_BYTES, PQ_BYTE_ARRAY, 0);
    pq_stats_add_bytes(&s, v.heap, v.off, 1);
    bounds b;
    bounds_get(&s, truncate, &b);
    expect_bytes(&b.min, want_min, min_len);
    expect_bytes(&b.max, want_max, max_len);
    assert_int_equal(b.min_exact, min_exact);
    assert_int_equal(b.max_exact, max_exact);
    bounds_free(&b);
    pq_stats_free(&s);
}

#define TRUNC(val, t, mn, mne, mx, mxe) \
    check_truncation(val, sizeof(val) - 1, t, mn, sizeof(mn) - 1, mne, mx, sizeof(mx) - 1, mxe)

static void test_stats_truncate_ascii_and_short_values(void **state)
{
    (void)state;
    TRUNC("abcdefgh", 4, "abcd", false, "abce", false);
    TRUNC("abcd", 4, "abcd", true, "abcd", true);   /* fits: untouched */
    TRUNC("abcdefgh", 0, "abcdefgh", true, "abcdefgh", true);
    TRUNC("ab~\x7f" "zz", 4, "ab~\x7f", false, "ab\x7f", false); /* 7F->80 won't fit */
}

/* 0xFF cannot be bumped: carry into the byte before; all 0xFF keeps the
 * max whole (and exact). */
static void test_stats_truncate_ff_carry(void **state)
{
    (void)state;
    TRUNC("ab\xff\xff\xff", 4, "ab\xff\xff", false, "ac", false);
    TRUNC("\x01\xff\xff\xff\x00", 4, "\x01\xff\xff\xff", false, "\x02", false);
    TRUNC("\xff\xff\xff\xff\xff", 4, "\xff\xff\xff\xff", false,
          "\xff\xff\xff\xff\xff", true);
}

/* "a é € 😀 x" = 61 | C3 A9 | E2 82 AC | F0 9F 98 80 | 78. Cuts land on
 * character boundaries and the max's last character is bumped, so both
 * bounds stay valid UTF-8. */
static void test_stats_truncate_multibyte_utf8(void **state)
{
    (void)state;
    const char s[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80x";
    TRUNC(s, 5, "a\xc3\xa9", false, "a\xc3\xaa", false);            /* é -> ê */
    TRUNC(s, 7, "a\xc3\xa9\xe2\x82\xac", false, "a\xc3\xa9\xe2\x82\xad", false);
    TRUNC(s, 10, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", false,
          "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x81", false);
    /* U+10FFFF cannot grow: drop it and bump the 'a'. */
    TRUNC("a\xf4\x8f\xbf\xbfzz", 5, "a\xf4\x8f\xbf\xbf", false, "b", false);
    /* U+D7FF + 1 would be a surrogate: jump to U+E000. */
    TRUNC("\xed\x9f\xbfxyz", 3, "\xed\x9f\xbf", false, "\xee\x80\x80", false);
    /* First character longer than the limit: min is "", max bumps nothing
     * that fits, so it stays whole. */
    TRUNC("\xe2\x82\xac\xe2\x82\xac", 2, "", false, "\xe2\x82\xac\xe2\x82\xac", true);
}

/* A fixed-length value cut short would not be a value of the type. */
static void test_stats_flba_bytes_never_truncated(void **state)
{
    (void)state;
    const uint8_t uuids[32] = {0x10, [16] = 0x20, [31] = 0xff};
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_BYTES, PQ_FIXED_LEN_BYTE_ARRAY, 16);
    pq_stats_add_fixed(&s, uuids, 2);
    bounds b;
    bounds_get(&s, 4, &b);
    expect_bytes(&b.min, uuids, 16);
    expect_bytes(&b.max, uuids + 16, 16);
    assert_true(b.min_exact && b.max_exact);
    bounds_free(&b);
    pq_stats_free(&s);
}

/* ---- counts, reset, merge ------------------------------------------------ */

static void test_stats_none_order_counts_only(void **state)
{
    (void)state;
    strs v = {0};
    STR(&v, "POINT");
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_NONE, PQ_BYTE_ARRAY, 0);
    pq_stats_add_bytes(&s, v.heap, v.off, 1);
    pq_stats_add_nulls(&s, 2);
    assert_false(pq_stats_has_min_max(&s));
    assert_int_equal(pq_stats_null_count(&s), 2);
    assert_int_equal(pq_stats_value_count(&s), 1);
    assert_int_equal(pq_stats_byte_array_bytes(&s), 5);
    pq_stats_free(&s);
}

static void test_stats_reset_forgets_values_keeps_buffers(void **state)
{
    (void)state;
    strs v = {0};
    STR(&v, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz");
    pq_stats s;
    pq_stats_init(&s, PQ_ORDER_BYTES, PQ_BYTE_ARRAY, 0);
    pq_stats_add_bytes(&s, v.heap, v.off, 1);
    pq_stats_add_nulls(&s, 1);
    size_t cap = s.max_bytes.cap;
    pq_stats_reset(&s);
    assert_false(pq_stats_has_min_max(&s));
    assert_int_equal(pq_stats_null_count(&s) + pq_stats_value_count(&s), 0);
    assert_int_equal(s.max_bytes.cap, cap);
    strs w = {0};
    STR(&w, "a");
    pq_stats_add_bytes(&s, w.heap, w.off, 1);
    bounds b;
    bounds_get(&s, 0, &b);
    expect_bytes(&b.max, "a", 1);
    bounds_free(&b);
    pq_stats_free(&s);
}

static void test_stats_merge_rejects_different_orders(void **state)
{
    (void)state;
    pq_stats a, b;
    pq_stats_init(&a, PQ_ORDER_SIGNED, PQ_INT32, 0);
    pq_stats_init(&b, PQ_ORDER_UNSIGNED, PQ_INT32, 0);
    assert_int_equal(pq_stats_merge(&a, &b), PQ_EINVAL);
    pq_stats_free(&a);
    pq_stats_free(&b);
}

typedef struct kind {
    pq_sort_order order;
    pq_physical_type type;
    size_t width; /* bytes per value; 0 = variable */
} kind;

static const kind kinds[] = {
    {PQ_ORDER_SIGNED, PQ_INT32, 4},      {PQ_ORDER_SIGNED, PQ_INT64, 8},
    {PQ_ORDER_UNSIGNED, PQ_INT32, 4},    {PQ_ORDER_UNSIGNED, PQ_INT64, 8},
    {PQ_ORDER_BOOLEAN, PQ_BOOLEAN, 1},   {PQ_ORDER_FLOAT, PQ_FLOAT, 4},
    {PQ_ORDER_DOUBLE, PQ_DOUBLE, 8},     {PQ_ORDER_FLOAT16, PQ_FIXED_LEN_BYTE_ARRAY, 2},
    {PQ_ORDER_INT96, PQ_INT96, 12},      {PQ_ORDER_BYTES, PQ_FIXED_LEN_BYTE_ARRAY, 3},
    {PQ_ORDER_DECIMAL_BE, PQ_FIXED_LEN_BYTE_ARRAY, 5},
    {PQ_ORDER_BYTES, PQ_BYTE_ARRAY, 0},  {PQ_ORDER_DECIMAL_BE, PQ_BYTE_ARRAY, 0},
};

/* Random bytes with many special values: small ranges make ties, zeros,
 * NaNs (float patterns with all-ones exponents) and 0xFF runs common. */
static uint8_t rand_byte(void)
{
    static const uint8_t special[] = {0x00, 0xff, 0x80, 0x7f, 0x7c, 0x7e, 0xfe, 0x01};
    uint64_t r = rng_next();
    return r % 3 == 0 ? special[(r >> 8) % 8] : (uint8_t)(r >> 16);
}

static void feed(pq_stats *s, const kind *k, size_t n, uint64_t *nulls)
{
    if (rng_next() % 4 == 0) {
        uint64_t z = rng_next() % 3;
        pq_stats_add_nulls(s, z);
        *nulls += z;
    }
    if (k->width > 0) {
        uint8_t buf[64 * 12];
        for (size_t i = 0; i < n * k->width; i++)
            buf[i] = rand_byte();
        if (k->type == PQ_BOOLEAN)
            for (size_t i = 0; i < n; i++)
                buf[i] &= 1;
        pq_stats_add_fixed(s, buf, n);
        return;
    }
    strs v = {0};
    for (size_t i = 0; i < n; i++) {
        uint8_t tmp[12];
        size_t len = rng_next() % 6;
        for (size_t j = 0; j < len; j++)
            tmp[j] = rand_byte();
        strs_add(&v, tmp, len);
    }
    pq_stats_add_bytes(s, v.heap, v.off, n);
}

static void expect_same_stats(const pq_stats *a, const pq_stats *b, uint64_t seed,
                              int round)
{
    if (pq_stats_null_count(a) != pq_stats_null_count(b) ||
        pq_stats_nan_count(a) != pq_stats_nan_count(b) ||
        pq_stats_value_count(a) != pq_stats_value_count(b) ||
        pq_stats_has_min_max(a) != pq_stats_has_min_max(b))
        fail_msg("seed %llu round %d order %d: counts differ",
                 (unsigned long long)seed, round, a->order);
    if (!pq_stats_has_min_max(a))
        return;
    bounds x, y;
    bounds_get(a, 3, &x);
    bounds_get(b, 3, &y);
    if (x.min.len != y.min.len || x.max.len != y.max.len ||
        (x.min.len && memcmp(x.min.data, y.min.data, x.min.len)) ||
        (x.max.len && memcmp(x.max.data, y.max.data, x.max.len)) ||
        x.min_exact != y.min_exact || x.max_exact != y.max_exact)
        fail_msg("seed %llu round %d order %d type %d: min/max differ",
                 (unsigned long long)seed, round, a->order, a->type);
    bounds_free(&x);
    bounds_free(&y);
}

/* stats(A then B) == merge(stats(A), stats(B)), for every order, with
 * the page stats reused through reset as the writer does. */
static void test_stats_merge_equals_sequential_random(void **state)
{
    (void)state;
    const uint64_t seed = 0xC0FFEE1234ull;
    rng_state = seed;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        const kind *kd = &kinds[k];
        pq_stats all, page, merged;
        pq_stats_init(&page, kd->order, kd->type, kd->width);
        for (int round = 0; round < 60; round++) {
            pq_stats_init(&all, kd->order, kd->type, kd->width);
            pq_stats_init(&merged, kd->order, kd->type, kd->width);
            size_t pages = 1 + rng_next() % 4;
            for (size_t p = 0; p < pages; p++) {
                pq_stats_reset(&page);
                size_t batches = rng_next() % 3;
                uint64_t nulls = 0;
                for (size_t bt = 0; bt < batches; bt++) {
                    size_t n = rng_next() % 40;
                    uint64_t save = rng_state;
                    feed(&page, kd, n, &nulls);
                    rng_state = save; /* replay the same values into `all` */
                    feed(&all, kd, n, &nulls);
                }
                assert_int_equal(pq_stats_merge(&merged, &page), 0);
            }
            expect_same_stats(&all, &merged, seed, round);
            pq_stats_free(&all);
            pq_stats_free(&merged);
        }
        pq_stats_free(&page);
    }
}

static void test_level_histogram_counts_each_level(void **state)
{
    (void)state;
    uint64_t hist[3] = {1, 0, 0};
    const uint16_t levels[] = {0, 2, 2, 1, 2, 0};
    pq_level_histogram_add(hist, levels, 6);
    assert_int_equal(hist[0], 3);
    assert_int_equal(hist[1], 1);
    assert_int_equal(hist[2], 3);
    pq_level_histogram_add(hist, NULL, 0);
    assert_int_equal(hist[0], 3);
}

/* Byte-array min/max against a plain memcmp scan, over strings of 0 to 70
 * bytes from a two-letter alphabet (a/b, or 0x00/0xff) with long common
 * prefixes, so every branch of the comparison runs (first byte, 8-byte
 * keys, tail bytes, memcmp past 32 bytes, one string a prefix of the
 * other, zero bytes against a shorter value's key padding). */
static int naive_cmp(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
    size_t n = la < lb ? la : lb;
    int c = n ? memcmp(a, b, n) : 0;
    return c ? c : (la > lb) - (la < lb);
}

static void test_bytes_min_max_match_memcmp_order_random(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15u;
    enum { N = 400, MAXLEN = 70 };
    static uint8_t heap[N * MAXLEN];
    static uint32_t off[N + 1];
    for (int round = 0; round < 200; round++) {
        size_t at = 0;
        for (size_t i = 0; i < N; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            size_t len = (size_t)(seed >> 33) % (MAXLEN + 1);
            size_t prefix = (size_t)(seed >> 20) % (MAXLEN + 1);
            off[i] = (uint32_t)at;
            for (size_t k = 0; k < len; k++) {
                seed = seed * 6364136223846793005u + 1442695040888963407u;
                /* odd rounds: zero bytes (equal to a shorter value's key
                 * padding) and 0xff (unsigned order) */
                uint8_t one = round % 2 ? 0x00 : 'a', two = round % 2 ? 0xff : 'b';
                heap[at++] = k < prefix ? one : (seed >> 62 & 1) ? two : one;
            }
        }
        off[N] = (uint32_t)at;
        pq_stats s;
        pq_stats_init(&s, PQ_ORDER_BYTES, PQ_BYTE_ARRAY, 0);
        pq_stats_add_bytes(&s, heap, off, N);
        size_t lo = 0, hi = 0;
        for (size_t i = 1; i < N; i++) {
            if (naive_cmp(heap + off[i], off[i + 1] - off[i], heap + off[lo],
                          off[lo + 1] - off[lo]) < 0)
                lo = i;
            if (naive_cmp(heap + off[i], off[i + 1] - off[i], heap + off[hi],
                          off[hi + 1] - off[hi]) > 0)
                hi = i;
        }
        bounds b;
        bounds_get(&s, 0, &b);
        expect_bytes(&b.min, heap + off[lo], off[lo + 1] - off[lo]);
        expect_bytes(&b.max, heap + off[hi], off[hi + 1] - off[hi]);
        bounds_free(&b);
        pq_stats_free(&s);
    }
}

/* pq_stats_add_bytes_picked, offered the first occurrence of each distinct
 * value of a page (as openpage.c does from its dictionary), gives the
 * bounds, counts and bytes that pq_stats_add_bytes gives from every
 * value: seeded random pages of short values over a small alphabet
 * (repeats, prefixes, empty values), in batches, for both byte-array
 * orders (DECIMAL_BE has distinct encodings of equal numbers: 0x0001 and
 * 0x01, so which one is kept depends on order, which must hold). */
static void test_bytes_picked_match_all_random(void **state)
{
    (void)state;
    static const pq_sort_order orders[] = {PQ_ORDER_BYTES, PQ_ORDER_DECIMAL_BE};
    rng_state = 0x5eed5eedu;
    for (int trial = 0; trial < 400; trial++) {
        const pq_sort_order order = orders[trial % 2];
        strs v = {0};
        const size_t n = 1 + rng_next() % 60;
        for (size_t i = 0; i < n; i++) {
            uint8_t b[6];
            const size_t len = (order == PQ_ORDER_DECIMAL_BE ? 1 : 0) + rng_next() % 4;
            for (size_t k = 0; k < len; k++)
                b[k] = (uint8_t)"\x00\x01\x7f\x80\xff"[rng_next() % 5];
            strs_add(&v, b, len);
        }
        pq_stats all, picked;
        pq_stats_init(&all, order, PQ_BYTE_ARRAY, 0);
        pq_stats_init(&picked, order, PQ_BYTE_ARRAY, 0);
        for (size_t at = 0; at < n;) { /* batches of 1 to 8 values */
            const size_t r = 1 + rng_next() % 8, m = r < n - at ? r : n - at;
            uint32_t pick[8];
            size_t np = 0;
            for (size_t i = at; i < at + m; i++) {
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                    seen = v.off[j + 1] - v.off[j] == v.off[i + 1] - v.off[i] &&
                           memcmp(v.heap + v.off[j], v.heap + v.off[i],
                                  v.off[i + 1] - v.off[i]) == 0;
                if (!seen)
                    pick[np++] = (uint32_t)(i - at);
            }
            pq_stats_add_bytes(&all, v.heap, v.off + at, m);
            pq_stats_add_bytes_picked(&picked, v.heap, v.off + at, m, pick, np);
            at += m;
        }
        bounds a, p;
        bounds_get(&all, 0, &a);
        bounds_get(&picked, 0, &p);
        expect_bytes(&p.min, a.min.data, a.min.len);
        expect_bytes(&p.max, a.max.data, a.max.len);
        assert_int_equal(pq_stats_value_count(&picked), pq_stats_value_count(&all));
        assert_int_equal(pq_stats_byte_array_bytes(&picked), pq_stats_byte_array_bytes(&all));
        bounds_free(&a);
        bounds_free(&p);
        pq_stats_free(&all);
        pq_stats_free(&picked);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_order_for_physical_and_logical_types),
        cmocka_unit_test(test_stats_int32_signed_extremes),
        cmocka_unit_test(test_stats_int64_signed_extremes_unaligned_input),
        cmocka_unit_test(test_stats_unsigned_above_2_63),
        cmocka_unit_test(test_stats_boolean_false_before_true),
        cmocka_unit_test(test_stats_float_zero_min_is_negative_zero_max_positive),
        cmocka_unit_test(test_stats_float_nan_never_min_or_max_and_counted),
        cmocka_unit_test(test_stats_all_nan_has_no_min_max),
        cmocka_unit_test(test_stats_double_infinities_and_zeros),
        cmocka_unit_test(test_stats_float16_order_nan_inf_zero),
        cmocka_unit_test(test_stats_decimal_mixed_lengths_and_signs),
        cmocka_unit_test(test_stats_decimal_random_matches_int128),
        cmocka_unit_test(test_stats_int96_days_then_nanos),
        cmocka_unit_test(test_stats_bytes_unsigned_and_empty_string),
        cmocka_unit_test(test_stats_truncate_ascii_and_short_values),
        cmocka_unit_test(test_stats_truncate_ff_carry),
        cmocka_unit_test(test_stats_truncate_multibyte_utf8),
        cmocka_unit_test(test_stats_flba_bytes_never_truncated),
        cmocka_unit_test(test_stats_none_order_counts_only),
        cmocka_unit_test(test_stats_reset_forgets_values_keeps_buffers),
        cmocka_unit_test(test_stats_merge_rejects_different_orders),
        cmocka_unit_test(test_stats_merge_equals_sequential_random),
        cmocka_unit_test(test_level_histogram_counts_each_level),
        cmocka_unit_test(test_bytes_min_max_match_memcmp_order_random),
        cmocka_unit_test(test_bytes_picked_match_all_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
