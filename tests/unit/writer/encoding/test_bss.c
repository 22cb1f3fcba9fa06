/* test_bss.c - writer/encoding/bss.c: BYTE_STREAM_SPLIT (Encodings.md, "Byte Stream
 * Split"), the spec's example byte for byte and round trips for every
 * width a column can have. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "bss.h"
#include "buf.h"
#include "decode.h"
#include "err.h"

/* Three 4-byte values AA BB CC DD, 00 11 22 33, A3 B4 C5 D6: stream k
 * holds byte k of each value. */
static void test_bss_spec_example(void **state)
{
    (void)state;
    const uint8_t in[12] = {0xAA, 0xBB, 0xCC, 0xDD, 0x00, 0x11, 0x22, 0x33,
                            0xA3, 0xB4, 0xC5, 0xD6};
    const uint8_t want[12] = {0xAA, 0x00, 0xA3, 0xBB, 0x11, 0xB4,
                              0xCC, 0x22, 0xC5, 0xDD, 0x33, 0xD6};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_bss_encode(&b, in, 3, 4), 0);
    assert_int_equal(b.len, 12);
    assert_memory_equal(b.data, want, 12);
    uint8_t got[12];
    assert_int_equal(pqt_bss_decode(b.data, b.len, got, 3, 4, NULL), 0);
    assert_memory_equal(got, in, 12);
    pq_buf_free(&b);
}

/* Appends after what is already in the buffer, and width 0 is refused
 * without touching it. */
static void test_bss_appends_and_rejects_width_0(void **state)
{
    (void)state;
    const uint16_t v[2] = {0x0102, 0x0304};
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_buf_push(&b, 0xEE), 0);
    assert_int_equal(pq_bss_encode(&b, v, 2, 0), PQ_EINVAL);
    assert_int_equal(b.len, 1);
    assert_int_equal(pq_bss_encode(&b, v, 2, 2), 0);
    assert_memory_equal(b.data, ((const uint8_t[]){0xEE, 0x02, 0x04, 0x01, 0x03}), 5);
    pq_buf_free(&b);
}

/* FLOAT16, FLOAT/INT32, DOUBLE/INT64, 12- and 16-byte FLBA and odd FLBA
 * widths; 10000 values cross the encoder's internal chunks. */
static void test_bss_roundtrip_all_widths(void **state)
{
    (void)state;
    const size_t widths[] = {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 33, 1000};
    const size_t sizes[] = {0, 1, 17, 10000};
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    pq_buf b;
    pq_buf_init(&b);
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
            size_t w = widths[k], n = sizes[s], used = 0;
            uint8_t *v = malloc(n * w + 1), *got = malloc(n * w + 1);
            for (size_t i = 0; i < n * w; i++)
                v[i] = (uint8_t)pqt_rng_next(&rng);
            pq_buf_reset(&b);
            PQT_CHECK(pq_bss_encode(&b, v, n, w) == 0 && b.len == n * w, seed);
            PQT_CHECK(pqt_bss_decode(b.data, b.len, got, n, w, &used) == 0, seed);
            PQT_CHECK(used == n * w && (n == 0 || memcmp(got, v, n * w) == 0), seed);
            /* Spot-check the layout itself, not only the round trip. */
            if (n > 0) {
                size_t i = pqt_rng_below(&rng, n), j = pqt_rng_below(&rng, w);
                PQT_CHECK(b.data[j * n + i] == v[i * w + j], seed);
            }
            free(v);
            free(got);
        }
    pq_buf_free(&b);
}

static void test_bss_decoder_rejects_short_input(void **state)
{
    (void)state;
    const uint8_t in[7] = {0};
    uint8_t out[8];
    assert_int_equal(pqt_bss_decode(in, 7, out, 2, 4, NULL), PQ_EPARSE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bss_spec_example),
        cmocka_unit_test(test_bss_appends_and_rejects_width_0),
        cmocka_unit_test(test_bss_roundtrip_all_widths),
        cmocka_unit_test(test_bss_decoder_rejects_short_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
