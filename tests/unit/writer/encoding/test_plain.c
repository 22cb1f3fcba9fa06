/* test_plain.c - writer/encoding/plain.c: the PLAIN encoder (Encodings.md, "Plain:
 * (PLAIN = 0)"), checked byte for byte and round-tripped through
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
#include "err.h"
#include "plain.h"

static void assert_bytes(const pq_buf *b, const uint8_t *want, size_t n)
{
    assert_int_equal(b->len, n);
    assert_memory_equal(b->data, want, n);
}

/* 1,0,1,1,0,0,0,1 | 1: value i is bit i of its byte, so 0b10001101, then
 * 0b00000001 with the padding bits zero. */
static void test_plain_bool_packs_lsb_first(void **state)
{
    (void)state;
    const uint8_t v[9] = {1, 0, 1, 1, 0, 0, 0, 1, 1};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_plain_encode_bool(&b, v, 9), 0);
    assert_bytes(&b, (const uint8_t[]){0x8D, 0x01}, 2);
    pq_buf_free(&b);
}

static void test_plain_bool_treats_nonzero_as_true(void **state)
{
    (void)state;
    const uint8_t v[3] = {0, 2, 255};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_plain_encode_bool(&b, v, 3), 0);
    assert_bytes(&b, (const uint8_t[]){0x06}, 1);
    pq_buf_free(&b);
}

static void test_plain_fixed_is_little_endian(void **state)
{
    (void)state;
    const int32_t i32 = 0x01020304;
    const double one = 1.0; /* IEEE 754: 0x3FF0000000000000 */
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_plain_encode_fixed(&b, &i32, 1, 4), 0);
    assert_int_equal(pq_plain_encode_fixed(&b, &one, 1, 8), 0);
    const uint8_t want[] = {0x04, 0x03, 0x02, 0x01, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F};
    assert_bytes(&b, want, sizeof want);
    assert_int_equal(pq_plain_encode_fixed(&b, &one, 1, 0), PQ_EINVAL);
    pq_buf_free(&b);
}

/* "ab", "", "xyz": each a 4-byte little-endian length, then its bytes. The
 * offsets start at 2 to show they index the heap absolutely. */
static void test_plain_bytes_are_length_prefixed(void **state)
{
    (void)state;
    const uint8_t heap[] = "--abxyz";
    const uint32_t off[4] = {2, 4, 4, 7};
    const uint8_t want[] = {2, 0, 0, 0, 'a', 'b', 0, 0, 0, 0, 3, 0, 0, 0, 'x', 'y', 'z'};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_plain_encode_bytes(&b, heap, off, 3), 0);
    assert_bytes(&b, want, sizeof want);
    pq_buf_free(&b);
}

/* Offsets that go back (or past the last one) would read the wrong bytes
 * or overrun the reservation; nothing is written. */
static void test_plain_bytes_rejects_decreasing_offsets(void **state)
{
    (void)state;
    const uint8_t heap[200] = {0};
    const uint32_t back[3] = {0, 100, 50};
    const uint32_t past[3] = {0, 150, 100};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_buf_push(&b, 9), 0);
    assert_int_equal(pq_plain_encode_bytes(&b, heap, back, 2), PQ_EINVAL);
    assert_int_equal(pq_plain_encode_bytes(&b, heap, past, 2), PQ_EINVAL);
    assert_int_equal(b.len, 1);
    pq_buf_free(&b);
}

static void test_plain_bool_roundtrip(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    uint8_t v[1030], got[1030];
    pq_buf b;
    pq_buf_init(&b);
    for (size_t n = 0; n <= 1030; n += 1 + pqt_rng_below(&rng, 40)) {
        for (size_t i = 0; i < n; i++)
            v[i] = (uint8_t)pqt_rng_below(&rng, 2);
        pq_buf_reset(&b);
        size_t used = 0;
        PQT_CHECK(pq_plain_encode_bool(&b, v, n) == 0, seed);
        PQT_CHECK(pqt_plain_decode_bool(b.data, b.len, got, n, &used) == 0, seed);
        PQT_CHECK(used == b.len && b.len == (n + 7) / 8, seed);
        PQT_CHECK(n == 0 || memcmp(v, got, n) == 0, seed);
    }
    pq_buf_free(&b);
}

/* Widths of INT32/FLOAT, INT64/DOUBLE, INT96 and a spread of FLBA lengths. */
static void test_plain_fixed_roundtrip_all_widths(void **state)
{
    (void)state;
    const size_t widths[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 33, 255};
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    pq_buf b;
    pq_buf_init(&b);
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++) {
        size_t w = widths[k], n = pqt_rng_below(&rng, 500);
        uint8_t *v = malloc(n * w + 1), *got = malloc(n * w + 1);
        for (size_t i = 0; i < n * w; i++)
            v[i] = (uint8_t)pqt_rng_next(&rng);
        pq_buf_reset(&b);
        size_t used = 0;
        PQT_CHECK(pq_plain_encode_fixed(&b, v, n, w) == 0, seed);
        PQT_CHECK(pqt_plain_decode_fixed(b.data, b.len, got, n, w, &used) == 0, seed);
        PQT_CHECK(used == n * w && b.len == n * w, seed);
        PQT_CHECK(n == 0 || memcmp(v, got, n * w) == 0, seed);
        free(v);
        free(got);
    }
    pq_buf_free(&b);
}

/* Random, empty, shared-prefix and long (up to 70000-byte) values. */
static void test_plain_bytes_roundtrip(void **state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 100, 1000};
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    pq_buf b;
    pq_buf_init(&b);
    for (int kind = 0; kind < PQT_GEN_KINDS; kind++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            pqt_bytes in, got;
            size_t used = 0;
            PQT_CHECK(pqt_gen_bytes(&rng, (pqt_gen_kind)kind, sizes[s], &in) == 0, seed);
            pq_buf_reset(&b);
            PQT_CHECK(pq_plain_encode_bytes(&b, in.heap, in.off, in.n) == 0, seed);
            PQT_CHECK(b.len == 4 * in.n + in.off[in.n], seed);
            PQT_CHECK(pqt_plain_decode_bytes(b.data, b.len, in.n, &got, &used) == 0, seed);
            PQT_CHECK(used == b.len && pqt_bytes_equal(&in, &got), seed);
            pqt_bytes_free(&in);
            pqt_bytes_free(&got);
        }
    pq_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_bool_packs_lsb_first),
        cmocka_unit_test(test_plain_bool_treats_nonzero_as_true),
        cmocka_unit_test(test_plain_fixed_is_little_endian),
        cmocka_unit_test(test_plain_bytes_are_length_prefixed),
        cmocka_unit_test(test_plain_bytes_rejects_decreasing_offsets),
        cmocka_unit_test(test_plain_bool_roundtrip),
        cmocka_unit_test(test_plain_fixed_roundtrip_all_widths),
        cmocka_unit_test(test_plain_bytes_roundtrip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
