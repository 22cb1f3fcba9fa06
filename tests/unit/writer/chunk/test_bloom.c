/* test_bloom.c - writer/chunk/bloom.c against BloomFilter.md: the reference
 * bloom_filter.xxhash.bin byte for byte, the block/salt arithmetic written
 * out from the spec, the spec's sizing table, and seeded-PRNG checks for
 * false negatives and the false-positive rate. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "bloom.h"
#include "buf.h"
#include "decode.h"
#include "err.h"
#include "testdata.h"
#include "tmpdir.h"

#define REF_DIR "parquet-testing/data"

/* ---- helpers ------------------------------------------------------------- */

/* splitmix64: tiny, seedable, good enough to spread test values. */
static uint8_t *read_file(const char *path, size_t *len)
{
    uint8_t *p = pqt_read_file(path, len);
    assert_non_null(p);
    assert_true(*len > 0);
    return p;
}

static void insert_str(pq_bloom *b, const char *s)
{
    pq_bloom_insert_hash(b, pq_bloom_hash_bytes(s, strlen(s)));
}

/* ---- reference file ------------------------------------------------------ */

/* bloom_filter.xxhash.bin = BloomFilterHeader{numBytes 1024, BLOCK, XXHASH,
 * UNCOMPRESSED} + a 1024-byte bitset holding four strings. */
static void test_bloom_reproduces_reference_xxhash_bin(void **state)
{
    (void)state;
    PQT_NEED_TESTDATA(REF_DIR);
    size_t ref_len;
    uint8_t *ref = read_file(pqt_testdata_path(REF_DIR, "bloom_filter.xxhash.bin"), &ref_len);
    static const uint8_t hdr[] = {
        0x15, 0x80, 0x10,       /* 1: i32 numBytes = 1024 (zigzag 2048) */
        0x1c, 0x1c, 0x00, 0x00, /* 2: algorithm { 1: BLOCK {} } */
        0x1c, 0x1c, 0x00, 0x00, /* 3: hash { 1: XXHASH {} } */
        0x1c, 0x1c, 0x00, 0x00, /* 4: compression { 1: UNCOMPRESSED {} } */
        0x00                    /* stop */
    };
    assert_int_equal(ref_len, sizeof hdr + 1024);
    assert_memory_equal(ref, hdr, sizeof hdr);

    pq_bloom b;
    assert_int_equal(pq_bloom_init(&b, 1024, NULL), 0);
    const char *words[] = { "hello", "parquet", "bloom", "filter" };
    for (size_t i = 0; i < 4; i++)
        insert_str(&b, words[i]);
    for (size_t i = 0; i < 4; i++)
        assert_true(pq_bloom_check_hash(&b, pq_bloom_hash_bytes(words[i], strlen(words[i]))));

    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(pq_bloom_write(&b, &out), 0);
    assert_int_equal(out.len, ref_len);
    assert_memory_equal(out.data, ref, ref_len);

    pq_buf h, bits;
    pq_buf_init(&h);
    pq_buf_init(&bits);
    assert_int_equal(pq_bloom_write_split(&b, &h, &bits), 0);
    assert_int_equal(h.len, sizeof hdr);
    assert_memory_equal(h.data, hdr, sizeof hdr);
    assert_int_equal(bits.len, 1024);
    assert_memory_equal(bits.data, ref + sizeof hdr, 1024);

    pq_buf_free(&h);
    pq_buf_free(&bits);
    pq_buf_free(&out);
    pq_bloom_free(&b);
    free(ref);
}

/* Hashing "hello" with PLAIN's 4-byte length prefix gives a different
 * filter: the reference proves the prefix is not hashed. */
static void test_bloom_byte_array_hash_excludes_length_prefix(void **state)
{
    (void)state;
    const uint8_t plain[] = { 5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o' };
    assert_int_equal(pq_bloom_hash_bytes("hello", 5), XXH64("hello", 5, 0));
    assert_true(pq_bloom_hash_bytes("hello", 5) != XXH64(plain, sizeof plain, 0));
}

/* ---- spec arithmetic ----------------------------------------------------- */

/* mask(1): word i gets bit salt[i] >> 27 = {8,8,17,20,14,5,19,11}; with
 * the upper 32 bits zero, block 0 is selected. */
static void test_bloom_spec_mask_of_one_sets_salt_top_bits(void **state)
{
    (void)state;
    pq_bloom b;
    assert_int_equal(pq_bloom_init(&b, 32 * 4, NULL), 0);
    pq_bloom_insert_hash(&b, 1);
    static const int bit[8] = { 8, 8, 17, 20, 14, 5, 19, 11 };
    for (int i = 0; i < 8; i++)
        assert_int_equal(b.words[i], UINT32_C(1) << bit[i]);
    for (int i = 8; i < 32; i++)
        assert_int_equal(b.words[i], 0);
    pq_bloom_free(&b);
}

/* i = ((h >> 32) * z) >> 32: with z = 4, top word 0xFFFFFFFF -> block 3,
 * 0x80000000 -> block 2, 0x3FFFFFFF -> block 0. Low word 0xdeadbeef sets
 * bits {29,15,12,14,13,25,24,21}. */
static void test_bloom_spec_block_index_uses_upper_32_bits(void **state)
{
    (void)state;
    static const struct { uint64_t top; int block; } cases[] = {
        { 0xFFFFFFFFu, 3 }, { 0x80000000u, 2 }, { 0x3FFFFFFFu, 0 }, { 0x40000000u, 1 }
    };
    static const int bit[8] = { 29, 15, 12, 14, 13, 25, 24, 21 };
    for (size_t c = 0; c < 4; c++) {
        pq_bloom b;
        assert_int_equal(pq_bloom_init(&b, 32 * 4, NULL), 0);
        pq_bloom_insert_hash(&b, (cases[c].top << 32) | 0xdeadbeefu);
        for (int blk = 0; blk < 4; blk++)
            for (int i = 0; i < 8; i++)
                assert_int_equal(b.words[blk * 8 + i],
                                 blk == cases[c].block ? UINT32_C(1) << bit[i] : 0);
        pq_bloom_free(&b);
    }
}

/* The bitset is little-endian words: bit 8 of word 0 is byte 1, bit 0. */
static void test_bloom_bitset_words_are_little_endian(void **state)
{
    (void)state;
    pq_bloom b;
    assert_int_equal(pq_bloom_init(&b, 32, NULL), 0);
    pq_bloom_insert_hash(&b, 1);
    pq_buf h, bits;
    pq_buf_init(&h);
    pq_buf_init(&bits);
    assert_int_equal(pq_bloom_write_split(&b, &h, &bits), 0);
    assert_int_equal(bits.len, 32);
    static const uint8_t word0[4] = { 0x00, 0x01, 0x00, 0x00 }; /* 1 << 8 */
    static const uint8_t word2[4] = { 0x00, 0x00, 0x02, 0x00 }; /* 1 << 17 */
    assert_memory_equal(bits.data, word0, 4);
    assert_memory_equal(bits.data + 8, word2, 4);
    pq_buf_free(&h);
    pq_buf_free(&bits);
    pq_bloom_free(&b);
}

/* PLAIN encodings: INT32/FLOAT 4 LE bytes, INT64/DOUBLE 8 LE bytes. */
static void test_bloom_hash_helpers_hash_plain_bytes(void **state)
{
    (void)state;
    const uint8_t i32[] = { 0x04, 0x03, 0x02, 0x01 };
    const uint8_t i64[] = { 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 };
    const uint8_t f1[] = { 0x00, 0x00, 0x80, 0x3f };                        /* 1.0f */
    const uint8_t d1[] = { 0, 0, 0, 0, 0, 0, 0xf0, 0x3f };                  /* 1.0 */
    const uint8_t neg[] = { 0xff, 0xff, 0xff, 0xff };                       /* -1 */
    assert_int_equal(pq_bloom_hash_i32(0x01020304), XXH64(i32, 4, 0));
    assert_int_equal(pq_bloom_hash_i32(-1), XXH64(neg, 4, 0));
    assert_int_equal(pq_bloom_hash_i64(0x0102030405060708LL), XXH64(i64, 8, 0));
    assert_int_equal(pq_bloom_hash_float(1.0f), XXH64(f1, 4, 0));
    assert_int_equal(pq_bloom_hash_double(1.0), XXH64(d1, 8, 0));
    assert_int_equal(pq_bloom_hash_fixed(i64, 8), XXH64(i64, 8, 0));
    /* XXH64 of the empty input, seed 0 (xxHash specification). */
    assert_int_equal(pq_bloom_hash_bytes(NULL, 0), 0xEF46DB3751D8E999ULL);
}

/* ---- sizing -------------------------------------------------------------- */

/* BloomFilter.md: 1024 blocks with 26,214 / 52,428 / 13,107 inserts give
 * about 1.26 %, 18 % and 0.04 %; and the bits-per-insert table. */
static void test_bloom_expected_fpp_matches_spec_table(void **state)
{
    (void)state;
    const size_t bytes = 1024 * 32;
    assert_true(fabs(pq_bloom_expected_fpp(bytes, 26214) - 0.0126) < 0.0005);
    assert_true(fabs(pq_bloom_expected_fpp(bytes, 52428) - 0.18) < 0.005);
    assert_true(fabs(pq_bloom_expected_fpp(bytes, 13107) - 0.0004) < 0.00005);
    static const struct { double bits, fpp; } table[] = {
        { 6.0, 0.10 }, { 10.5, 0.01 }, { 16.9, 0.001 }, { 26.4, 0.0001 }, { 41, 0.00001 }
    };
    for (size_t i = 0; i < 5; i++) {
        uint64_t ndv = (uint64_t)(bytes * 8 / table[i].bits);
        double got = pq_bloom_expected_fpp(bytes, ndv);
        assert_true(got > table[i].fpp * 0.9 && got < table[i].fpp * 1.1);
    }
}

static void test_bloom_optimal_bytes_is_the_smallest_block_count(void **state)
{
    (void)state;
    assert_int_equal(pq_bloom_optimal_bytes(0, 0.01), PQ_BLOOM_MIN_BYTES);
    assert_int_equal(pq_bloom_optimal_bytes(1, 0.01), PQ_BLOOM_MIN_BYTES);
    assert_int_equal(pq_bloom_optimal_bytes(UINT64_MAX, 0.01), PQ_BLOOM_MAX_BYTES);
    assert_int_equal(pq_bloom_optimal_bytes(1000, 0.0), 0);
    assert_int_equal(pq_bloom_optimal_bytes(1000, 1.0), 0);
    assert_int_equal(pq_bloom_optimal_bytes(1000, NAN), 0);
    /* The spec's table: about 10.5 bits per value at 1 %, so 1M values
     * take about 1.31 MB (not the 2 MiB of the next power of two), and
     * 200,000 values about 262 KB (not 512 KiB). */
    size_t m = pq_bloom_optimal_bytes(1000000, 0.01);
    assert_true(m > 1250000 && m < 1400000);
    m = pq_bloom_optimal_bytes(200000, 0.01);
    assert_true(m > 250000 && m < 280000);
    const double fpps[] = {0.1, 0.01, 0.001};
    for (size_t f = 0; f < 3; f++) {
        for (uint64_t ndv = 1; ndv < 100000000; ndv *= 7) {
            size_t n = pq_bloom_optimal_bytes(ndv, fpps[f]);
            assert_true(n >= PQ_BLOOM_MIN_BYTES && n <= PQ_BLOOM_MAX_BYTES);
            assert_int_equal(n % PQ_BLOOM_BLOCK_BYTES, 0);
            assert_true(pq_bloom_expected_fpp(n, ndv) <= fpps[f]);
            if (n > PQ_BLOOM_MIN_BYTES) /* and it is the smallest such size */
                assert_true(pq_bloom_expected_fpp(n - PQ_BLOOM_BLOCK_BYTES, ndv) > fpps[f]);
        }
    }
}

static void test_bloom_init_rejects_bad_sizes(void **state)
{
    (void)state;
    pq_bloom b;
    pq_err err;
    assert_int_equal(pq_bloom_init(&b, 0, &err), PQ_EINVAL);
    assert_int_equal(pq_bloom_init(&b, 33, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "33"));
    assert_int_equal(pq_bloom_init(&b, PQ_BLOOM_MAX_BYTES * 2, &err), PQ_EINVAL);
    assert_null(b.words);
    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(pq_bloom_write(&b, &out), PQ_ESTATE);
    /* any multiple of 32 works, not only powers of two */
    assert_int_equal(pq_bloom_init(&b, 96, &err), 0);
    assert_int_equal(b.num_blocks, 3);
    pq_bloom_free(&b);
}

/* ---- behaviour ----------------------------------------------------------- */

static void test_bloom_no_false_negatives_100k_random(void **state)
{
    (void)state;
    uint64_t seed = pqt_test_seed(__func__, 0x5EED0B100Full), s = seed;
    pq_bloom b;
    assert_int_equal(pq_bloom_init(&b, pq_bloom_optimal_bytes(100000, 0.01), NULL), 0);
    uint64_t *h = malloc(100000 * sizeof *h);
    assert_non_null(h);
    for (size_t i = 0; i < 100000; i++) {
        uint64_t v = pqt_splitmix64(&s);
        h[i] = (i % 2) ? pq_bloom_hash_i64((int64_t)v) : pq_bloom_hash_bytes(&v, 5);
    }
    pq_bloom_insert_hashes(&b, h, 100000);
    for (size_t i = 0; i < 100000; i++)
        if (!pq_bloom_check_hash(&b, h[i]))
            fail_msg("false negative at %zu (seed 0x%llx)", i, (unsigned long long)seed);
    free(h);
    pq_bloom_free(&b);
}

/* 99,000 values at 1 % need 129,938 bytes -> 128 KiB, a tight fit, so the
 * measured rate should be close to 1 %. Inserted values are even, probes
 * odd, so no probe was inserted. */
static void test_bloom_measured_fpp_near_configured_1pct(void **state)
{
    (void)state;
    uint64_t seed = pqt_test_seed(__func__, 0x5EED0B100Full), s = seed;
    const uint64_t ndv = 99000, probes = 200000;
    size_t bytes = pq_bloom_optimal_bytes(ndv, 0.01);
    assert_true(bytes > 125000 && bytes <= 128 * 1024);   /* ~10.5 bits per value */
    pq_bloom b;
    assert_int_equal(pq_bloom_init(&b, bytes, NULL), 0);
    for (uint64_t i = 0; i < ndv; i++)
        pq_bloom_insert_hash(&b, pq_bloom_hash_i64((int64_t)(pqt_splitmix64(&s) & ~1ULL)));
    uint64_t fp = 0;
    for (uint64_t i = 0; i < probes; i++)
        fp += pq_bloom_check_hash(&b, pq_bloom_hash_i64((int64_t)(pqt_splitmix64(&s) | 1ULL)));
    double rate = (double)fp / (double)probes;
    printf("[ fpp      ] %llu/%llu = %.4f%% (configured 1%%, model %.4f%%)\n",
           (unsigned long long)fp, (unsigned long long)probes, rate * 100,
           pq_bloom_expected_fpp(bytes, ndv) * 100);
    if (rate > 0.015 || rate < 0.01 / 1.5)
        fail_msg("fpp %.4f not within 1.5x of 0.01 (seed 0x%llx)", rate,
                 (unsigned long long)seed);
    pq_bloom_free(&b);
}

static void test_bloom_reset_clears_bits_keeps_size(void **state)
{
    (void)state;
    pq_bloom b;
    assert_int_equal(pq_bloom_init(&b, 1024, NULL), 0);
    insert_str(&b, "hello");
    assert_true(pq_bloom_check_hash(&b, pq_bloom_hash_bytes("hello", 5)));
    pq_bloom_reset(&b);
    assert_int_equal(b.num_bytes, 1024);
    assert_false(pq_bloom_check_hash(&b, pq_bloom_hash_bytes("hello", 5)));
    for (size_t i = 0; i < 256; i++)
        assert_int_equal(b.words[i], 0);
    pq_bloom_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bloom_reproduces_reference_xxhash_bin),
        cmocka_unit_test(test_bloom_byte_array_hash_excludes_length_prefix),
        cmocka_unit_test(test_bloom_spec_mask_of_one_sets_salt_top_bits),
        cmocka_unit_test(test_bloom_spec_block_index_uses_upper_32_bits),
        cmocka_unit_test(test_bloom_bitset_words_are_little_endian),
        cmocka_unit_test(test_bloom_hash_helpers_hash_plain_bytes),
        cmocka_unit_test(test_bloom_expected_fpp_matches_spec_table),
        cmocka_unit_test(test_bloom_optimal_bytes_is_the_smallest_block_count),
        cmocka_unit_test(test_bloom_init_rejects_bad_sizes),
        cmocka_unit_test(test_bloom_no_false_negatives_100k_random),
        cmocka_unit_test(test_bloom_measured_fpp_near_configured_1pct),
        cmocka_unit_test(test_bloom_reset_clears_bits_keeps_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
