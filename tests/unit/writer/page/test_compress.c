/* test_compress.c - pq_compress / pq_compressor round trips through the
 * test decompressor for every codec and level class, plus level checks,
 * codec names and the GZIP (RFC 1952) framing Compression.md requires. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "compress.h"
#include "decode.h"
#include "decompress.h"
#include "err.h"

static const pq_codec all_codecs[] = {
    PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP,
    PQ_CODEC_BROTLI, PQ_CODEC_ZSTD, PQ_CODEC_LZ4_RAW,
};
#define NCODECS (sizeof all_codecs / sizeof all_codecs[0])

/* Default, lowest, a middle one and the highest valid level per codec. */
static size_t levels_for(pq_codec c, int *lv)
{
    switch (c) {
    case PQ_CODEC_GZIP: lv[0] = 0; lv[1] = 1; lv[2] = 6; lv[3] = 9; return 4;
    case PQ_CODEC_BROTLI: lv[0] = 0; lv[1] = 1; lv[2] = 9; lv[3] = 11; return 4;
    case PQ_CODEC_ZSTD: lv[0] = 0; lv[1] = -5; lv[2] = 1; lv[3] = 19; return 4;
    case PQ_CODEC_LZ4_RAW: lv[0] = 0; lv[1] = 1; lv[2] = 3; lv[3] = 12; return 4;
    default: lv[0] = 0; return 1;
    }
}

static uint64_t rng_state;
static uint64_t rng_next(void)
{
    return pqt_xorshift64(&rng_state);
}

enum { IN_EMPTY, IN_ONE, IN_RANDOM, IN_TEXT, IN_KINDS };

static size_t make_input(int kind, uint8_t *p, size_t cap)
{
    switch (kind) {
    case IN_EMPTY: return 0;
    case IN_ONE: p[0] = 0x5A; return 1;
    case IN_RANDOM:
        for (size_t i = 0; i < cap; i++)
            p[i] = (uint8_t)rng_next();
        return cap;
    default: {
        static const char words[] = "parquet page dictionary column chunk ";
        for (size_t i = 0; i < cap; i++)
            p[i] = (uint8_t)words[(i + i / 97) % (sizeof words - 1)];
        return cap;
    }
    }
}

static void roundtrip(pq_compressor *cx, pq_codec codec, int level,
                      const uint8_t *in, size_t n, uint64_t seed)
{
    pq_buf out;
    pq_buf_init(&out);
    /* pq_compress appends: a prefix already in the buffer must survive. */
    assert_int_equal(pq_buf_append(&out, "HDR", 3), 0);
    pq_err err;
    pq_err_clear(&err);
    int rc = cx ? pq_compressor_run(cx, codec, level, in, n, &out, &err)
                : pq_compress(codec, level, in, n, &out, &err);
    if (rc != 0)
        fail_msg("seed %llu: %s level %d n %zu: %s", (unsigned long long)seed,
                 pq_codec_name(codec), level, n, err.msg);
    assert_memory_equal(out.data, "HDR", 3);
    uint8_t *back = malloc(n + 1);
    assert_non_null(back);
    rc = pqt_decompress(codec, out.data + 3, out.len - 3, back, n, &err);
    if (rc != 0)
        fail_msg("seed %llu: %s level %d n %zu: decompress: %s",
                 (unsigned long long)seed, pq_codec_name(codec), level, n, err.msg);
    if (n > 0)
        assert_memory_equal(back, in, n);
    free(back);
    pq_buf_free(&out);
}

static void test_compress_roundtrip_every_codec_level_and_input(void **state)
{
    (void)state;
    const uint64_t seed = 0x9E3779B97F4A7C15ull;
    rng_state = seed;
    const size_t cap = 70000; /* > 64 KiB: crosses snappy/lz4 block sizes */
    uint8_t *in = malloc(cap);
    assert_non_null(in);
    pq_compressor cx;
    pq_compressor_init(&cx);
    for (size_t c = 0; c < NCODECS; c++) {
        int lv[4];
        size_t nlv = levels_for(all_codecs[c], lv);
        for (size_t l = 0; l < nlv; l++) {
            for (int k = 0; k < IN_KINDS; k++) {
                size_t n = make_input(k, in, cap);
                roundtrip(NULL, all_codecs[c], lv[l], in, n, seed);
                roundtrip(&cx, all_codecs[c], lv[l], in, n, seed);
            }
        }
    }
    pq_compressor_free(&cx);
    free(in);
}

/* The cached contexts must not leak state between pages: alternate codecs
 * and levels on one compressor and check every page independently. */
static void test_compressor_reuse_across_codecs_and_levels(void **state)
{
    (void)state;
    const uint64_t seed = 42;
    rng_state = seed;
    uint8_t in[5000];
    pq_compressor cx;
    pq_compressor_init(&cx);
    for (int round = 0; round < 30; round++) {
        size_t n = make_input(round % 2 ? IN_RANDOM : IN_TEXT, in,
                              (size_t)(rng_next() % sizeof in));
        pq_codec codec = all_codecs[rng_next() % NCODECS];
        int lv[4];
        size_t nlv = levels_for(codec, lv);
        roundtrip(&cx, codec, lv[rng_next() % nlv], in, n, seed);
    }
    pq_compressor_free(&cx);
}

static void test_compress_text_actually_shrinks(void **state)
{
    (void)state;
    uint8_t in[20000];
    size_t n = make_input(IN_TEXT, in, sizeof in);
    for (size_t c = 1; c < NCODECS; c++) {
        pq_buf out;
        pq_buf_init(&out);
        assert_int_equal(pq_compress(all_codecs[c], 0, in, n, &out, NULL), 0);
        assert_true(out.len < n / 4);
        pq_buf_free(&out);
    }
}

/* RFC 1952: ID1 ID2 = 1f 8b, CM = 8 (deflate). Not a zlib header (78 xx). */
static void test_compress_gzip_is_rfc1952_member(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    const uint8_t in[] = "hello hello hello hello";
    assert_int_equal(pq_compress(PQ_CODEC_GZIP, 0, in, sizeof in, &out, NULL), 0);
    assert_true(out.len > 18);
    assert_int_equal(out.data[0], 0x1f);
    assert_int_equal(out.data[1], 0x8b);
    assert_int_equal(out.data[2], 8);
    /* ISIZE trailer: input length mod 2^32, little-endian. */
    assert_int_equal(out.data[out.len - 4], sizeof in);
    pq_buf_free(&out);
}

/* A page holding two gzip members must decode (Compression.md, readers). */
static void test_decompress_gzip_accepts_two_members(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(pq_compress(PQ_CODEC_GZIP, 1, (const uint8_t *)"abc", 3, &out, NULL), 0);
    assert_int_equal(pq_compress(PQ_CODEC_GZIP, 9, (const uint8_t *)"defg", 4, &out, NULL), 0);
    uint8_t back[7];
    assert_int_equal(pqt_decompress(PQ_CODEC_GZIP, out.data, out.len, back, 7, NULL), 0);
    assert_memory_equal(back, "abcdefg", 7);
    pq_buf_free(&out);
}

static void test_decompress_rejects_wrong_size_and_garbage(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    const uint8_t in[] = "0123456789012345678901234567890123456789";
    uint8_t back[sizeof in + 8];
    for (size_t c = 0; c < NCODECS; c++) {
        pq_buf_reset(&out);
        assert_int_equal(pq_compress(all_codecs[c], 0, in, sizeof in, &out, NULL), 0);
        pq_err err;
        assert_int_not_equal(pqt_decompress(all_codecs[c], out.data, out.len, back,
                                            sizeof in + 1, &err), 0);
        assert_int_not_equal(pqt_decompress(all_codecs[c], out.data, out.len, back,
                                            sizeof in - 1, &err), 0);
        if (all_codecs[c] == PQ_CODEC_UNCOMPRESSED)
            continue;
        static const uint8_t junk[] = {0xff, 0xfe, 0xfd, 0x00, 0x13, 0x37, 0xee, 0x01};
        assert_int_not_equal(pqt_decompress(all_codecs[c], junk, sizeof junk, back,
                                            sizeof in, &err), 0);
        assert_int_equal(err.code, PQ_ECODEC);
    }
    pq_buf_free(&out);
}

static void test_codec_check_level_rejects_with_message(void **state)
{
    (void)state;
    pq_err err;
    assert_int_equal(pq_codec_check_level(PQ_CODEC_GZIP, 10, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "gzip"));
    assert_non_null(strstr(err.msg, "1..9"));
    assert_int_equal(pq_codec_check_level(PQ_CODEC_SNAPPY, 3, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "no levels"));
    assert_int_equal(pq_codec_check_level(PQ_CODEC_ZSTD, 23, &err), PQ_EINVAL);
    assert_int_equal(pq_codec_check_level(PQ_CODEC_BROTLI, 12, &err), PQ_EINVAL);
    assert_int_equal(pq_codec_check_level(PQ_CODEC_LZ4_RAW, -1, &err), PQ_EINVAL);
    assert_int_equal(pq_codec_check_level((pq_codec)3, 0, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "unknown"));
    assert_int_equal(pq_codec_check_level(PQ_CODEC_ZSTD, -3, &err), 0);
    assert_int_equal(pq_codec_check_level(PQ_CODEC_LZ4_RAW, 12, &err), 0);
    for (size_t c = 0; c < NCODECS; c++)
        assert_int_equal(pq_codec_check_level(all_codecs[c], 0, &err), 0);
}

static void test_compress_invalid_level_leaves_output_untouched(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(pq_buf_append(&out, "x", 1), 0);
    pq_err err;
    assert_int_equal(pq_compress(PQ_CODEC_GZIP, 99, (const uint8_t *)"a", 1, &out, &err),
                     PQ_EINVAL);
    assert_int_equal(out.len, 1);
    assert_non_null(strstr(err.msg, "99"));
    pq_buf_free(&out);
}

static void test_codec_names_round_trip(void **state)
{
    (void)state;
    pq_codec c;
    for (size_t i = 0; i < NCODECS; i++) {
        assert_int_equal(pq_codec_from_name(pq_codec_name(all_codecs[i]), &c), 0);
        assert_int_equal(c, all_codecs[i]);
    }
    assert_int_equal(pq_codec_from_name("none", &c), 0);
    assert_int_equal(c, PQ_CODEC_UNCOMPRESSED);
    assert_int_equal(pq_codec_from_name("ZSTD", &c), 0);
    assert_int_equal(c, PQ_CODEC_ZSTD);
    assert_int_equal(pq_codec_from_name("lz4", &c), PQ_EINVAL);
    assert_int_equal(pq_codec_from_name("lzo", &c), PQ_EINVAL);
    assert_int_equal(pq_codec_from_name("", &c), PQ_EINVAL);
    assert_int_equal(pq_codec_from_name(NULL, &c), PQ_EINVAL);
    assert_string_equal(pq_codec_name((pq_codec)5), "unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compress_roundtrip_every_codec_level_and_input),
        cmocka_unit_test(test_compressor_reuse_across_codecs_and_levels),
        cmocka_unit_test(test_compress_text_actually_shrinks),
        cmocka_unit_test(test_compress_gzip_is_rfc1952_member),
        cmocka_unit_test(test_decompress_gzip_accepts_two_members),
        cmocka_unit_test(test_decompress_rejects_wrong_size_and_garbage),
        cmocka_unit_test(test_codec_check_level_rejects_with_message),
        cmocka_unit_test(test_compress_invalid_level_leaves_output_untouched),
        cmocka_unit_test(test_codec_names_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
