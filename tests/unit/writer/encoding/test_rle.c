/* test_rle.c - writer/encoding/rle.c: the RLE/bit-packing hybrid and deprecated
 * BIT_PACKED encoders (Encodings.md, "RLE = 3", "BIT_PACKED = 4"), checked
 * against the spec's bytes and round-tripped through tests/support/decode.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "decode.h"
#include "err.h"
#include "rle.h"

static void assert_bytes(const pq_buf *b, const uint8_t *want, size_t n)
{
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

/* Encodings.md, RLE note 1: 0..7 at width 3 pack to 10001000 11000110
 * 11111010; the bit-packed header for one group of 8 is (1 << 1) | 1. */
static void test_rle_spec_example_bit_width_3(void **state)
{
    (void)state;
    const uint32_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const uint8_t want[] = {0x03, 0x88, 0xC6, 0xFA};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u32(&b, v, 8, 3), 0);
    assert_bytes(&b, want, sizeof want);
    uint32_t got[8];
    size_t used;
    assert_int_equal(pqt_rle_decode(b.data, b.len, 3, got, 8, &used), 0);
    assert_int_equal(used, b.len);
    assert_memory_equal(got, v, sizeof v);
    pq_buf_free(&b);
}

/* Encodings.md, BIT_PACKED: 0..7 at width 3 are 00000101 00111001 01110111. */
static void test_bitpacked_spec_example_bit_width_3(void **state)
{
    (void)state;
    const uint16_t v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const uint8_t want[] = {0x05, 0x39, 0x77};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_bitpacked_encode_u16(&b, v, 8, 3), 0);
    assert_bytes(&b, want, sizeof want);
    uint16_t got[8];
    assert_int_equal(pqt_bitpacked_decode(b.data, b.len, 3, got, 8, NULL), 0);
    assert_memory_equal(got, v, sizeof v);
    pq_buf_free(&b);
}

/* Spec: 30 values of 2 bits take 60 bits = 8 bytes, last one zero-padded. */
static void test_bitpacked_pads_last_byte_with_zeros(void **state)
{
    (void)state;
    uint16_t v[30];
    for (size_t i = 0; i < 30; i++)
        v[i] = 3;
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_bitpacked_encode_u16(&b, v, 30, 2), 0);
    assert_int_equal(b.len, 8);
    assert_int_equal(b.data[7], 0xF0);
    pq_buf_free(&b);
}

static void test_rle_bit_width_of_max_value(void **state)
{
    (void)state;
    assert_int_equal(pq_rle_bit_width(0), 0);
    assert_int_equal(pq_rle_bit_width(1), 1);
    assert_int_equal(pq_rle_bit_width(2), 2);
    assert_int_equal(pq_rle_bit_width(3), 2);
    assert_int_equal(pq_rle_bit_width(255), 8);
    assert_int_equal(pq_rle_bit_width(256), 9);
    assert_int_equal(pq_rle_bit_width(UINT32_MAX), 32);
    assert_int_equal(pq_rle_bit_width(UINT64_MAX), 64);
}

/* 1000 copies of 5 at width 3: header varint(1000 << 1) = D0 0F, then the
 * value in one byte. */
static void test_rle_long_run_is_one_rle_run(void **state)
{
    (void)state;
    uint32_t v[1000];
    for (size_t i = 0; i < 1000; i++)
        v[i] = 5;
    const uint8_t want[] = {0xD0, 0x0F, 0x05};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u32(&b, v, 1000, 3), 0);
    assert_bytes(&b, want, sizeof want);
    pq_buf_free(&b);
}

/* Width 0: the repeated value takes round-up(0 / 8) = 0 bytes, so a run
 * is its header alone, whatever its length. */
static void test_rle_bit_width_0_is_header_only_rle_run(void **state)
{
    (void)state;
    const uint16_t zeros[10] = {0};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u16(&b, zeros, 10, 0), 0);
    assert_bytes(&b, (const uint8_t[]){0x14}, 1);
    pq_buf_reset(&b);
    assert_int_equal(pq_rle_encode_u16(&b, zeros, 1, 0), 0);
    assert_bytes(&b, (const uint8_t[]){0x02}, 1);
    pq_buf_reset(&b);
    assert_int_equal(pq_rle_encode_u16(&b, zeros, 0, 0), 0);
    assert_int_equal(b.len, 0);
    pq_buf_free(&b);
}

/* 1,2,3 then 13 sevens at width 3: the pending bit-packed run has 3
 * values, so 5 sevens close its group and the other 8 are an RLE run.
 * Group 1,2,3,7,7,7,7,7 packs LSB-first to bits 0,4,6,7 | 9..15 | 16..23. */
static void test_rle_run_after_partial_group_lends_values(void **state)
{
    (void)state;
    uint32_t v[16] = {1, 2, 3};
    for (size_t i = 3; i < 16; i++)
        v[i] = 7;
    const uint8_t want[] = {0x03, 0xD1, 0xFE, 0xFF, 0x10, 0x07};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u32(&b, v, 16, 3), 0);
    assert_bytes(&b, want, sizeof want);
    /* One seven fewer leaves 7 after lending: all of it is bit-packed,
     * 15 values in 2 groups of 3 bytes. */
    pq_buf_reset(&b);
    assert_int_equal(pq_rle_encode_u32(&b, v, 15, 3), 0);
    assert_int_equal(b.len, 7);
    assert_int_equal(b.data[0], 0x05);
    pq_buf_free(&b);
}

/* A short run with nothing pending before it is cheaper as RLE than as a
 * zero-padded group: 4,4,4 at width 3 is varint(3 << 1), 04. */
static void test_rle_short_trailing_run_is_rle(void **state)
{
    (void)state;
    const uint32_t v[3] = {4, 4, 4};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u32(&b, v, 3, 3), 0);
    assert_bytes(&b, (const uint8_t[]){0x06, 0x04}, 2);
    pq_buf_free(&b);
}

/* 1000 alternating bits: one bit-packed run of 125 groups, header
 * varint(125 << 1 | 1) = FB 01, then 125 bytes of 0b10101010. */
static void test_rle_alternating_values_are_one_bitpacked_run(void **state)
{
    (void)state;
    uint16_t v[1000];
    for (size_t i = 0; i < 1000; i++)
        v[i] = (uint16_t)(i % 2);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u16(&b, v, 1000, 1), 0);
    assert_int_equal(b.len, 127);
    assert_int_equal(b.data[0], 0xFB);
    assert_int_equal(b.data[1], 0x01);
    for (size_t i = 2; i < 127; i++)
        assert_int_equal(b.data[i], 0xAA);
    pq_buf_free(&b);
}

static void test_rle_rejects_value_wider_than_bit_width(void **state)
{
    (void)state;
    const uint32_t v[12] = {1, 2, 3, 4, 5, 6, 7, 7, 7, 8, 1, 1};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_buf_append(&b, "xy", 2), 0);
    assert_int_equal(pq_rle_encode_u32(&b, v, 12, 3), PQ_EINVAL);
    assert_int_equal(b.len, 2); /* out unchanged on error */
    /* a wide value among unlike neighbours is found after the runs that
     * follow it were written: out is still unchanged */
    const uint32_t late[13] = {1, 9, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
    assert_int_equal(pq_rle_encode_u32(&b, late, 13, 3), PQ_EINVAL);
    assert_int_equal(b.len, 2);
    const uint16_t w[2] = {1, 8};
    assert_int_equal(pq_bitpacked_encode_u16(&b, w, 2, 3), PQ_EINVAL);
    assert_int_equal(b.len, 2);
    const uint16_t zeros[3] = {0, 0, 1};
    assert_int_equal(pq_rle_encode_u16(&b, zeros, 3, 0), PQ_EINVAL);
    assert_int_equal(b.len, 2);
    pq_buf_free(&b);
}

static void test_rle_rejects_bit_width_out_of_range(void **state)
{
    (void)state;
    const uint32_t v[1] = {0};
    const uint16_t h[1] = {0};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u32(&b, v, 1, -1), PQ_EINVAL);
    assert_int_equal(pq_rle_encode_u32(&b, v, 1, 33), PQ_EINVAL);
    assert_int_equal(pq_bitpacked_encode_u16(&b, h, 1, 17), PQ_EINVAL);
    assert_int_equal(b.len, 0);
    pq_buf_free(&b);
}

enum { PAT_RANDOM, PAT_RUNS, PAT_ALTERNATING, PAT_RUN_THEN_RANDOM, PAT_ALL_MAX, PAT_COUNT };

static void fill_levels(uint32_t *v, size_t n, int w, int pattern, pqt_rng *rng)
{
    uint32_t mask = w == 32 ? UINT32_MAX : (uint32_t)((1u << w) - 1);
    for (size_t i = 0; i < n;) {
        uint32_t x = (uint32_t)pqt_rng_next(rng) & mask;
        size_t run = 1;
        if (pattern == PAT_RUNS)
            run = 1 + pqt_rng_below(rng, pqt_rng_below(rng, 4) == 0 ? 300 : 12);
        else if (pattern == PAT_ALTERNATING)
            x = i % 2 ? mask : 0;
        else if (pattern == PAT_RUN_THEN_RANDOM && i == 0)
            run = n / 2 + 1;
        else if (pattern == PAT_ALL_MAX)
            x = mask;
        for (size_t k = 0; k < run && i < n; k++)
            v[i++] = x;
    }
}

/* Every width 0..32, every pattern, lengths around group boundaries; u16
 * must give the same bytes as u32 wherever the values fit. */
static void test_rle_roundtrip_every_bit_width(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 7, 8, 9, 15, 16, 17, 100, 1001, 4099};
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    uint32_t *v = malloc(4099 * sizeof *v), *got = malloc(4099 * sizeof *got);
    uint16_t *h = malloc(4099 * sizeof *h);
    pq_buf b, b16;
    pq_buf_init(&b);
    pq_buf_init(&b16);
    for (int w = 0; w <= 32; w++)
        for (int pat = 0; pat < PAT_COUNT; pat++)
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
                size_t n = sizes[s], used = 0;
                fill_levels(v, n, w, pat, &rng);
                pq_buf_reset(&b);
                PQT_CHECK(pq_rle_encode_u32(&b, v, n, w) == 0, seed);
                PQT_CHECK(pqt_rle_decode(b.data, b.len, w, got, n, &used) == 0, seed);
                PQT_CHECK(used == b.len, seed);
                PQT_CHECK(n == 0 || memcmp(got, v, n * sizeof *v) == 0, seed);
                if (w > 16)
                    continue;
                for (size_t i = 0; i < n; i++)
                    h[i] = (uint16_t)v[i];
                pq_buf_reset(&b16);
                PQT_CHECK(pq_rle_encode_u16(&b16, h, n, w) == 0, seed);
                PQT_CHECK(b16.len == b.len, seed);
                PQT_CHECK(n == 0 || memcmp(b16.data, b.data, b.len) == 0, seed);
            }
    pq_buf_free(&b);
    pq_buf_free(&b16);
    free(v);
    free(got);
    free(h);
}

static void test_bitpacked_roundtrip_every_bit_width(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    uint32_t v[1001];
    uint16_t h[1001], got[1001];
    pq_buf b;
    pq_buf_init(&b);
    for (int w = 0; w <= 16; w++)
        for (size_t n = 0; n <= 1001; n += 1 + pqt_rng_below(&rng, 90)) {
            fill_levels(v, n, w, PAT_RANDOM, &rng);
            for (size_t i = 0; i < n; i++)
                h[i] = (uint16_t)v[i];
            pq_buf_reset(&b);
            size_t used = 0;
            PQT_CHECK(pq_bitpacked_encode_u16(&b, h, n, w) == 0, seed);
            PQT_CHECK(b.len == (n * (size_t)w + 7) / 8, seed);
            PQT_CHECK(pqt_bitpacked_decode(b.data, b.len, w, got, n, &used) == 0, seed);
            PQT_CHECK(used == b.len, seed);
            PQT_CHECK(n == 0 || memcmp(got, h, n * sizeof *h) == 0, seed);
        }
    pq_buf_free(&b);
}

/* Every byte of a hybrid encoding is needed, so every proper prefix must be
 * rejected; random bytes must never read out of bounds (ASan watches). */
static void test_rle_decoder_rejects_truncated_and_garbage(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    uint32_t v[300], got[300];
    fill_levels(v, 300, 5, PAT_RUNS, &rng);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_rle_encode_u32(&b, v, 300, 5), 0);
    for (size_t cut = 0; cut < b.len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1); /* exact size, for ASan */
        memcpy(copy, b.data, cut);
        PQT_CHECK(pqt_rle_decode(copy, cut, 5, got, 300, NULL) == PQ_EPARSE, seed);
        free(copy);
    }
    for (int t = 0; t < 2000; t++) {
        uint8_t junk[40];
        size_t len = pqt_rng_below(&rng, sizeof junk + 1);
        for (size_t i = 0; i < len; i++)
            junk[i] = (uint8_t)pqt_rng_next(&rng);
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, junk, len);
        int w = (int)pqt_rng_below(&rng, 33);
        int rc = pqt_rle_decode(copy, len, w, got, 1 + pqt_rng_below(&rng, 300), NULL);
        PQT_CHECK(rc == 0 || rc == PQ_EPARSE, seed);
        free(copy);
    }
    pq_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rle_spec_example_bit_width_3),
        cmocka_unit_test(test_bitpacked_spec_example_bit_width_3),
        cmocka_unit_test(test_bitpacked_pads_last_byte_with_zeros),
        cmocka_unit_test(test_rle_bit_width_of_max_value),
        cmocka_unit_test(test_rle_long_run_is_one_rle_run),
        cmocka_unit_test(test_rle_bit_width_0_is_header_only_rle_run),
        cmocka_unit_test(test_rle_run_after_partial_group_lends_values),
        cmocka_unit_test(test_rle_short_trailing_run_is_rle),
        cmocka_unit_test(test_rle_alternating_values_are_one_bitpacked_run),
        cmocka_unit_test(test_rle_rejects_value_wider_than_bit_width),
        cmocka_unit_test(test_rle_rejects_bit_width_out_of_range),
        cmocka_unit_test(test_rle_roundtrip_every_bit_width),
        cmocka_unit_test(test_bitpacked_roundtrip_every_bit_width),
        cmocka_unit_test(test_rle_decoder_rejects_truncated_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
