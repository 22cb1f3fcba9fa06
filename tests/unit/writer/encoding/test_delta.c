/* test_delta.c - writer/encoding/delta.c: DELTA_BINARY_PACKED,
 * DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY (Encodings.md, "Delta
 * Encoding", "Delta-length byte array", "Delta Strings"), checked against
 * the spec's examples written out as bytes, and round-tripped through
 * tests/support/decode.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "decode.h"
#include "delta.h"
#include "err.h"

static void assert_bytes(const pq_buf *b, const uint8_t *want, size_t n)
{
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

/* Example 1: 1..5 with the spec's illustrative block of 8 in 1 miniblock.
 * Header 8, 1, 5, zigzag(1) = 2; block: zigzag(min delta 1) = 2, width 0
 * and no miniblock body. */
static void test_delta_spec_example_1(void **state)
{
    (void)state;
    const int64_t v[5] = {1, 2, 3, 4, 5};
    const uint8_t want[] = {0x08, 0x01, 0x05, 0x02, 0x02, 0x00};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_encode_i64_layout(&b, v, 5, 8, 1), 0);
    assert_bytes(&b, want, sizeof want);
    int64_t got[5];
    size_t n = 0, used = 0;
    assert_int_equal(pqt_delta_decode_i64(b.data, b.len, got, 5, &n, &used), 0);
    assert_int_equal(n, 5);
    assert_int_equal(used, b.len);
    assert_memory_equal(got, v, sizeof v);
    pq_buf_free(&b);
}

/* Example 2: 7,5,3,1,2,3,4,5. Header 8, 1, 8, zigzag(7) = 14; block:
 * zigzag(-2) = 3, width 2, then 0,0,0,3,3,3,3 and one zero of padding
 * packed LSB-first: 0b11000000 (0,0,0,3), 0b00111111 (3,3,3,pad). */
static void test_delta_spec_example_2(void **state)
{
    (void)state;
    const int64_t v[8] = {7, 5, 3, 1, 2, 3, 4, 5};
    const uint8_t want[] = {0x08, 0x01, 0x08, 0x0E, 0x03, 0x02, 0xC0, 0x3F};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_encode_i64_layout(&b, v, 8, 8, 1), 0);
    assert_bytes(&b, want, sizeof want);
    int64_t got[8];
    size_t n = 0;
    assert_int_equal(pqt_delta_decode_i64(b.data, b.len, got, 8, &n, NULL), 0);
    assert_int_equal(n, 8);
    assert_memory_equal(got, v, sizeof v);
    pq_buf_free(&b);
}

/* No values: the header alone (128 = 80 01, 4 miniblocks, count 0, first
 * value 0). One value: the header alone, as there are no deltas. */
static void test_delta_zero_and_one_value_are_header_only(void **state)
{
    (void)state;
    const int32_t seven = 7;
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_encode_i32(&b, NULL, 0), 0);
    assert_bytes(&b, (const uint8_t[]){0x80, 0x01, 0x04, 0x00, 0x00}, 5);
    pq_buf_reset(&b);
    assert_int_equal(pq_delta_encode_i32(&b, &seven, 1), 0);
    assert_bytes(&b, (const uint8_t[]){0x80, 0x01, 0x04, 0x01, 0x0E}, 5);
    pq_buf_free(&b);
}

/* 34 values climbing by 1,0,1,0...: 33 deltas, min 0, width 1. Miniblock
 * 0 holds 32 of them (1,0,1,0.. = 0x55 x4), miniblock 1 the last one
 * padded to 32 (01 00 00 00); miniblocks 2 and 3 are unused: width bytes
 * of 0 and, as the spec says, no body at all. */
static void test_delta_unused_miniblocks_have_zero_width_and_no_body(void **state)
{
    (void)state;
    int32_t v[34] = {0};
    for (size_t i = 1; i < 34; i++)
        v[i] = v[i - 1] + (int32_t)(i % 2);
    const uint8_t want[] = {0x80, 0x01, 0x04, 0x22, 0x00,      /* header */
                            0x00, 0x01, 0x01, 0x00, 0x00,      /* min, widths */
                            0x55, 0x55, 0x55, 0x55, 0x01, 0x00, 0x00, 0x00};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_encode_i32(&b, v, 34), 0);
    assert_bytes(&b, want, sizeof want);
    pq_buf_free(&b);
}

/* INT32_MIN, INT32_MAX, INT32_MIN: the deltas wrap at 32 bits to -1 and
 * +1, so min delta -1 (zigzag 1) and relative deltas 0, 2 at width 2;
 * zigzag(INT32_MIN) = 0xFFFFFFFF = FF FF FF FF 0F. An int64 writer would
 * need 33 bits here, which the spec forbids for INT32. */
static void test_delta_i32_deltas_wrap_at_32_bits(void **state)
{
    (void)state;
    const int32_t v[3] = {INT32_MIN, INT32_MAX, INT32_MIN};
    const uint8_t want[] = {0x80, 0x01, 0x04, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F,
                            0x01, 0x02, 0x00, 0x00, 0x00,
                            0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_encode_i32(&b, v, 3), 0);
    assert_bytes(&b, want, sizeof want);
    int32_t got[3];
    size_t n = 0;
    assert_int_equal(pqt_delta_decode_i32(b.data, b.len, got, 3, &n, NULL), 0);
    assert_memory_equal(got, v, sizeof v);
    pq_buf_free(&b);
}

static void test_delta_layout_rejects_invalid_layouts(void **state)
{
    (void)state;
    const int64_t v[2] = {1, 2};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_encode_i64_layout(&b, v, 2, 0, 1), PQ_EINVAL);
    assert_int_equal(pq_delta_encode_i64_layout(&b, v, 2, 128, 0), PQ_EINVAL);
    assert_int_equal(pq_delta_encode_i64_layout(&b, v, 2, 128, 3), PQ_EINVAL);
    assert_int_equal(pq_delta_encode_i64_layout(&b, v, 2, 100, 4), PQ_EINVAL);
    assert_int_equal(pq_delta_encode_i64_layout(&b, v, 2, 2048, 4), PQ_EINVAL);
    assert_int_equal(b.len, 0);
    pq_buf_free(&b);
}

/* Builds heap/offsets from C strings, the shape the encoders take. */
static void strings_to_bytes(const char *const *s, size_t n, uint8_t *heap, uint32_t *off)
{
    off[0] = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(s[i]);
        memcpy(heap + off[i], s[i], len);
        off[i + 1] = off[i] + (uint32_t)len;
    }
}

static void check_decodes_to(const pq_buf *b, const char *const *s, size_t n, int front_coded)
{
    pqt_bytes got;
    size_t used = 0;
    int rc = front_coded ? pqt_delta_bytes_decode(b->data, b->len, &got, &used)
                         : pqt_delta_length_decode(b->data, b->len, &got, &used);
    assert_int_equal(rc, 0);
    assert_int_equal(used, b->len);
    assert_int_equal(got.n, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(got.off[i + 1] - got.off[i], strlen(s[i]));
        assert_memory_equal(got.heap + got.off[i], s[i], strlen(s[i]));
    }
    pqt_bytes_free(&got);
}

/* The spec's example: lengths 5,5,6,6 as DELTA_BINARY_PACKED (header
 * 128, 4, 4, zigzag(5) = 10; deltas 0,1,0: min 0, width 1, miniblock 0 is
 * 0,1,0 padded to 32 bits = 02 00 00 00), then the bytes back to back. */
static void test_delta_length_spec_example(void **state)
{
    (void)state;
    const char *const s[4] = {"Hello", "World", "Foobar", "ABCDEF"};
    uint8_t heap[32];
    uint32_t off[5];
    strings_to_bytes(s, 4, heap, off);
    const uint8_t head[] = {0x80, 0x01, 0x04, 0x04, 0x0A, 0x00, 0x01, 0x00, 0x00, 0x00,
                            0x02, 0x00, 0x00, 0x00};
    uint8_t want[sizeof head + 22];
    memcpy(want, head, sizeof head);
    memcpy(want + sizeof head, "HelloWorldFoobarABCDEF", 22);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_length_encode(&b, heap, off, 4), 0);
    assert_bytes(&b, want, sizeof want);
    check_decodes_to(&b, s, 4, 0);
    pq_buf_free(&b);
}

/* The same with "ABCDEFGH" (lengths 5,5,6,8): deltas 0,1,2, width 2, and
 * 0,1,2 packed two bits apiece = 0b00100100 = 24, then 7 zero bytes. */
static void test_delta_length_example_with_8_byte_last_value(void **state)
{
    (void)state;
    const char *const s[4] = {"Hello", "World", "Foobar", "ABCDEFGH"};
    uint8_t heap[32];
    uint32_t off[5];
    strings_to_bytes(s, 4, heap, off);
    const uint8_t head[] = {0x80, 0x01, 0x04, 0x04, 0x0A, 0x00, 0x02, 0x00, 0x00, 0x00,
                            0x24, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    uint8_t want[sizeof head + 24];
    memcpy(want, head, sizeof head);
    memcpy(want + sizeof head, "HelloWorldFoobarABCDEFGH", 24);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_length_encode(&b, heap, off, 4), 0);
    assert_bytes(&b, want, sizeof want);
    check_decodes_to(&b, s, 4, 0);
    pq_buf_free(&b);
}

/* axis, axle, babble, babyhood. Prefix lengths 0,2,0,3: header with first
 * value 0, deltas 2,-2,3, min -2 (zigzag 3), relative 4,0,5 at width 3 =
 * bits 2 | 6,8 = 44 01 and 10 zero bytes of padding. Suffix lengths
 * 4,2,6,5: first value zigzag(4) = 8, deltas -2,4,-1, min -2, relative
 * 0,6,1 at width 3 = bits 4,5 | 6 = 70 00 and 10 zeros. Then the
 * suffixes "axis" "le" "babble" "yhood". */
static void test_delta_bytes_spec_example(void **state)
{
    (void)state;
    const char *const s[4] = {"axis", "axle", "babble", "babyhood"};
    uint8_t heap[32];
    uint32_t off[5];
    strings_to_bytes(s, 4, heap, off);
    uint8_t want[2 * 22 + 17] = {0x80, 0x01, 0x04, 0x04, 0x00, 0x03, 0x03, 0, 0, 0, 0x44, 0x01};
    const uint8_t suffix_lengths[] = {0x80, 0x01, 0x04, 0x04, 0x08, 0x03, 0x03, 0, 0, 0, 0x70};
    memcpy(want + 22, suffix_lengths, sizeof suffix_lengths);
    memcpy(want + 44, "axislebabbleyhood", 17);
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_delta_bytes_encode(&b, heap, off, 4), 0);
    assert_bytes(&b, want, sizeof want);
    check_decodes_to(&b, s, 4, 1);
    pq_buf_free(&b);
}

static void test_delta_bytes_rejects_decreasing_offsets(void **state)
{
    (void)state;
    const uint8_t heap[8] = "abcdefg";
    const uint32_t off[3] = {0, 5, 3};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_buf_push(&b, 1), 0);
    assert_int_equal(pq_delta_length_encode(&b, heap, off, 2), PQ_EINVAL);
    assert_int_equal(pq_delta_bytes_encode(&b, heap, off, 2), PQ_EINVAL);
    assert_int_equal(pq_delta_bytes_encode_fixed(&b, heap, 2, 0), PQ_EINVAL);
    assert_int_equal(b.len, 1);
    pq_buf_free(&b);
}

enum { INT_WALK, INT_RANDOM, INT_CONSTANT, INT_RISING, INT_EXTREMES, INT_KINDS };

/* Random walks, full-range noise, constants, sorted data, and mixes of
 * MIN/MAX/0/-1/1 whose deltas overflow both ways. `bits` is 32 or 64. */
static int64_t gen_int(pqt_rng *rng, int kind, int bits, size_t i, int64_t prev)
{
    const int64_t lo = bits == 32 ? INT32_MIN : INT64_MIN;
    const int64_t hi = bits == 32 ? INT32_MAX : INT64_MAX;
    uint64_t r = pqt_rng_next(rng);
    switch (kind) {
    case INT_WALK:
        return i == 0 ? (int64_t)(r >> 40) : prev + (int64_t)pqt_rng_below(rng, 201) - 100;
    case INT_RANDOM:
        return bits == 32 ? (int64_t)(int32_t)(uint32_t)r : (int64_t)r;
    case INT_CONSTANT:
        return i == 0 ? lo + 5 : prev;
    case INT_RISING:
        return i == 0 ? lo : prev + (int64_t)pqt_rng_below(rng, 1000);
    default: {
        const int64_t pick[5] = {lo, hi, 0, -1, 1};
        return pick[r % 5];
    }
    }
}

/* Around miniblock (32) and block (128) boundaries. */
static const size_t int_sizes[] = {0,   1,   2,   3,   31,  32,   33,  127,
                                   128, 129, 255, 256, 257, 1000, 4097};

static void test_delta_i32_roundtrip(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    int32_t v[4097], got[4097];
    pq_buf b;
    pq_buf_init(&b);
    for (int kind = 0; kind < INT_KINDS; kind++)
        for (size_t s = 0; s < sizeof int_sizes / sizeof *int_sizes; s++) {
            size_t n = int_sizes[s], dn = 0, used = 0;
            for (size_t i = 0; i < n; i++)
                v[i] = (int32_t)gen_int(&rng, kind, 32, i, i ? v[i - 1] : 0);
            pq_buf_reset(&b);
            PQT_CHECK(pq_delta_encode_i32(&b, v, n) == 0, seed);
            /* The decoder rejects miniblocks wider than 32 bits. */
            PQT_CHECK(pqt_delta_decode_i32(b.data, b.len, got, n, &dn, &used) == 0, seed);
            PQT_CHECK(dn == n && used == b.len, seed);
            PQT_CHECK(n == 0 || memcmp(got, v, n * sizeof *v) == 0, seed);
        }
    pq_buf_free(&b);
}

static void test_delta_i64_roundtrip(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    int64_t v[4097], got[4097];
    pq_buf b;
    pq_buf_init(&b);
    for (int kind = 0; kind < INT_KINDS; kind++)
        for (size_t s = 0; s < sizeof int_sizes / sizeof *int_sizes; s++) {
            size_t n = int_sizes[s], dn = 0, used = 0;
            for (size_t i = 0; i < n; i++)
                v[i] = gen_int(&rng, kind, 64, i, i ? v[i - 1] : 0);
            pq_buf_reset(&b);
            PQT_CHECK(pq_delta_encode_i64(&b, v, n) == 0, seed);
            PQT_CHECK(pqt_delta_decode_i64(b.data, b.len, got, n, &dn, &used) == 0, seed);
            PQT_CHECK(dn == n && used == b.len, seed);
            PQT_CHECK(n == 0 || memcmp(got, v, n * sizeof *v) == 0, seed);
        }
    pq_buf_free(&b);
}

/* Other legal layouts decode the same, including the largest block. */
static void test_delta_layouts_roundtrip(void **state)
{
    (void)state;
    const uint32_t layouts[][2] = {{8, 1}, {128, 1}, {128, 4}, {256, 8}, {1024, 4}, {1024, 32}};
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    int64_t v[3001], got[3001];
    pq_buf b;
    pq_buf_init(&b);
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++)
        for (int kind = 0; kind < INT_KINDS; kind++) {
            size_t n = pqt_rng_below(&rng, 3002), dn = 0;
            for (size_t i = 0; i < n; i++)
                v[i] = gen_int(&rng, kind, 64, i, i ? v[i - 1] : 0);
            pq_buf_reset(&b);
            PQT_CHECK(pq_delta_encode_i64_layout(&b, v, n, layouts[l][0], layouts[l][1]) == 0,
                      seed);
            PQT_CHECK(pqt_delta_decode_i64(b.data, b.len, got, n, &dn, NULL) == 0, seed);
            PQT_CHECK(dn == n && (n == 0 || memcmp(got, v, n * sizeof *v) == 0), seed);
        }
    pq_buf_free(&b);
}

/* Random, empty, shared-prefix and long values through both byte-array
 * encodings. */
static void test_delta_byte_arrays_roundtrip(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 129, 1000};
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    pq_buf b;
    pq_buf_init(&b);
    for (int kind = 0; kind < PQT_GEN_KINDS; kind++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
            for (int front = 0; front < 2; front++) {
                pqt_bytes in, got;
                size_t used = 0;
                PQT_CHECK(pqt_gen_bytes(&rng, (pqt_gen_kind)kind, sizes[s], &in) == 0, seed);
                pq_buf_reset(&b);
                int rc = front ? pq_delta_bytes_encode(&b, in.heap, in.off, in.n)
                               : pq_delta_length_encode(&b, in.heap, in.off, in.n);
                PQT_CHECK(rc == 0, seed);
                rc = front ? pqt_delta_bytes_decode(b.data, b.len, &got, &used)
                           : pqt_delta_length_decode(b.data, b.len, &got, &used);
                PQT_CHECK(rc == 0 && used == b.len, seed);
                PQT_CHECK(pqt_bytes_equal(&in, &got), seed);
                pqt_bytes_free(&in);
                pqt_bytes_free(&got);
            }
    pq_buf_free(&b);
}

/* FIXED_LEN_BYTE_ARRAY of every width a schema is likely to use; bytes
 * from {0, 1} so neighbours share prefixes of every length. */
static void test_delta_bytes_fixed_roundtrip_all_widths(void **state)
{
    (void)state;
    const size_t widths[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 32, 100};
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    pq_buf b;
    pq_buf_init(&b);
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
        size_t w = widths[k], n = pqt_rng_below(&rng, 600);
        uint8_t *v = malloc(n * w + 1);
        for (size_t i = 0; i < n * w; i++)
            v[i] = (uint8_t)pqt_rng_below(&rng, 2);
        pq_buf_reset(&b);
        pqt_bytes got;
        PQT_CHECK(pq_delta_bytes_encode_fixed(&b, v, n, w) == 0, seed);
        PQT_CHECK(pqt_delta_bytes_decode(b.data, b.len, &got, NULL) == 0, seed);
        PQT_CHECK(got.n == n && got.off[n] == n * w, seed);
        for (size_t i = 0; i < n; i++)
            PQT_CHECK(got.off[i] == i * w, seed);
        PQT_CHECK(n == 0 || memcmp(got.heap, v, n * w) == 0, seed);
        pqt_bytes_free(&got);
        free(v);
    }
    pq_buf_free(&b);
}

static int decode_any(int which, const uint8_t *p, size_t len)
{
    int64_t v64[300];
    int32_t v32[300];
    pqt_bytes bytes;
    size_t n;
    int rc;
    switch (which) {
    case 0: return pqt_delta_decode_i32(p, len, v32, 300, &n, NULL);
    case 1: return pqt_delta_decode_i64(p, len, v64, 300, &n, NULL);
    case 2: rc = pqt_delta_length_decode(p, len, &bytes, NULL); break;
    default: rc = pqt_delta_bytes_decode(p, len, &bytes, NULL); break;
    }
    if (rc == 0)
        pqt_bytes_free(&bytes);
    return rc;
}

/* Each decoder must reject every proper prefix of a valid encoding (every
 * byte is needed) and survive random bytes without reading out of bounds
 * (ASan watches; the copies are exactly sized). */
static void test_delta_decoders_reject_truncated_and_garbage(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    int64_t v[300];
    pqt_bytes s;
    PQT_CHECK(pqt_gen_bytes(&rng, PQT_GEN_PREFIXES, 300, &s) == 0, seed);
    for (size_t i = 0; i < 300; i++)
        v[i] = gen_int(&rng, INT_WALK, 32, i, i ? v[i - 1] : 0);
    int32_t v32[300];
    for (size_t i = 0; i < 300; i++)
        v32[i] = (int32_t)v[i];
    for (int which = 0; which < 4; which++) {
        pq_buf b;
        pq_buf_init(&b);
        int rc = which == 0 ? pq_delta_encode_i32(&b, v32, 300)
                 : which == 1 ? pq_delta_encode_i64(&b, v, 300)
                 : which == 2 ? pq_delta_length_encode(&b, s.heap, s.off, s.n)
                              : pq_delta_bytes_encode(&b, s.heap, s.off, s.n);
        PQT_CHECK(rc == 0 && decode_any(which, b.data, b.len) == 0, seed);
        for (size_t cut = 0; cut < b.len; cut++) {
            uint8_t *copy = malloc(cut ? cut : 1);
            memcpy(copy, b.data, cut);
            PQT_CHECK(decode_any(which, copy, cut) == PQ_EPARSE, seed);
            free(copy);
        }
        for (int t = 0; t < 3000; t++) {
            size_t len = pqt_rng_below(&rng, 48);
            uint8_t *junk = malloc(len ? len : 1);
            for (size_t i = 0; i < len; i++)
                junk[i] = (uint8_t)pqt_rng_next(&rng);
            if (len > 0 && t % 2) /* a plausible header, so blocks get parsed */
                memcpy(junk, (const uint8_t[]){0x80, 0x01, 0x04}, len < 3 ? len : 3);
            rc = decode_any(which, junk, len);
            PQT_CHECK(rc == 0 || rc == PQ_EPARSE || rc == PQ_ELIMIT, seed);
            free(junk);
        }
        pq_buf_free(&b);
    }
    pqt_bytes_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_delta_spec_example_1),
        cmocka_unit_test(test_delta_spec_example_2),
        cmocka_unit_test(test_delta_zero_and_one_value_are_header_only),
        cmocka_unit_test(test_delta_unused_miniblocks_have_zero_width_and_no_body),
        cmocka_unit_test(test_delta_i32_deltas_wrap_at_32_bits),
        cmocka_unit_test(test_delta_layout_rejects_invalid_layouts),
        cmocka_unit_test(test_delta_length_spec_example),
        cmocka_unit_test(test_delta_length_example_with_8_byte_last_value),
        cmocka_unit_test(test_delta_bytes_spec_example),
        cmocka_unit_test(test_delta_bytes_rejects_decreasing_offsets),
        cmocka_unit_test(test_delta_i32_roundtrip),
        cmocka_unit_test(test_delta_i64_roundtrip),
        cmocka_unit_test(test_delta_layouts_roundtrip),
        cmocka_unit_test(test_delta_byte_arrays_roundtrip),
        cmocka_unit_test(test_delta_bytes_fixed_roundtrip_all_widths),
        cmocka_unit_test(test_delta_decoders_reject_truncated_and_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
