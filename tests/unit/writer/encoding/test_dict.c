/* test_dict.c - writer/encoding/dict.c: the dictionary builder (Encodings.md,
 * "Dictionary Encoding"): dense stable indices, bitwise float identity,
 * PLAIN page body and its size accounting, reset, and scale. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "decode.h"
#include "dict.h"
#include "err.h"

static void test_dict_indices_are_dense_and_stable(void **state)
{
    (void)state;
    const int32_t v[6] = {10, 20, 10, 30, 20, 10};
    const uint32_t want[6] = {0, 1, 0, 2, 1, 0};
    pq_dict d;
    assert_int_equal(pq_dict_init(&d, PQ_INT32, 4), 0);
    for (size_t i = 0; i < 6; i++) {
        uint32_t idx = 99;
        assert_int_equal(pq_dict_insert_fixed(&d, &v[i], &idx), 0);
        assert_int_equal(idx, want[i]);
    }
    assert_int_equal(pq_dict_count(&d), 3);
    uint32_t len = 0;
    int32_t e;
    memcpy(&e, pq_dict_entry(&d, 2, &len), 4);
    assert_int_equal(len, 4);
    assert_int_equal(e, 30);
    assert_null(pq_dict_entry(&d, 3, &len));
    pq_dict_free(&d);
}

/* -0.0 differs from 0.0, and NaNs with different payloads differ from
 * each other, because entries are compared as bits; the same NaN twice is
 * one entry. */
static void test_dict_floats_compare_by_bit_pattern(void **state)
{
    (void)state;
    const uint64_t bits[5] = {0x0000000000000000u, 0x8000000000000000u, 0x7FF8000000000000u,
                              0x7FF8000000000001u, 0x7FF8000000000000u};
    const uint32_t want[5] = {0, 1, 2, 3, 2};
    pq_dict d;
    assert_int_equal(pq_dict_init(&d, PQ_DOUBLE, 8), 0);
    for (size_t i = 0; i < 5; i++) {
        double x;
        memcpy(&x, &bits[i], 8);
        uint32_t idx;
        assert_int_equal(pq_dict_insert_fixed(&d, &x, &idx), 0);
        assert_int_equal(idx, want[i]);
    }
    pq_dict_free(&d);
}

static void test_dict_rejects_boolean_and_wrong_widths(void **state)
{
    (void)state;
    pq_dict d;
    uint32_t idx;
    assert_int_equal(pq_dict_init(&d, PQ_BOOLEAN, 1), PQ_EINVAL);
    assert_int_equal(pq_dict_init(&d, PQ_INT32, 8), PQ_EINVAL);
    assert_int_equal(pq_dict_init(&d, PQ_INT96, 8), PQ_EINVAL);
    assert_int_equal(pq_dict_init(&d, PQ_BYTE_ARRAY, 4), PQ_EINVAL);
    assert_int_equal(pq_dict_init(&d, PQ_FIXED_LEN_BYTE_ARRAY, 0), PQ_EINVAL);
    assert_int_equal(pq_dict_init(&d, PQ_BYTE_ARRAY, 0), 0);
    assert_int_equal(pq_dict_insert_fixed(&d, "abcd", &idx), PQ_EINVAL);
    pq_dict_free(&d);
    /* FLBA takes insert_bytes too, at exactly its width. */
    assert_int_equal(pq_dict_init(&d, PQ_FIXED_LEN_BYTE_ARRAY, 3), 0);
    assert_int_equal(pq_dict_insert_bytes(&d, (const uint8_t *)"abcd", 4, &idx), PQ_EINVAL);
    assert_int_equal(pq_dict_insert_fixed(&d, "abc", &idx), 0);
    assert_int_equal(pq_dict_insert_bytes(&d, (const uint8_t *)"abc", 3, &idx), 0);
    assert_int_equal(idx, 0);
    assert_int_equal(pq_dict_count(&d), 1);
    pq_dict_free(&d);
}

/* The page body of fixed-width entries is the values back to back. */
static void test_dict_write_plain_fixed_is_values_in_index_order(void **state)
{
    (void)state;
    const uint8_t v[4][12] = {"int96-aaaaa", "int96-bbbbb", "int96-aaaaa", "int96-ccccc"};
    pq_dict d;
    pq_buf b;
    pq_buf_init(&b);
    assert_int_equal(pq_dict_init(&d, PQ_INT96, 12), 0);
    for (size_t i = 0; i < 4; i++) {
        uint32_t idx;
        assert_int_equal(pq_dict_insert_fixed(&d, v[i], &idx), 0);
    }
    assert_int_equal(pq_dict_plain_bytes(&d), 36);
    assert_int_equal(pq_dict_write_plain(&d, &b), 0);
    assert_int_equal(b.len, 36);
    assert_memory_equal(b.data, v[0], 12);
    assert_memory_equal(b.data + 12, v[1], 12);
    assert_memory_equal(b.data + 24, v[3], 12);
    pq_dict_free(&d);
    pq_buf_free(&b);
}

/* Inserts every value of `in`, checking first-seen order gives the next
 * index and a value seen before gives its earlier index. */
static void insert_all(pq_dict *d, const pqt_bytes *in, uint32_t *idx, uint64_t seed)
{
    for (size_t i = 0; i < in->n; i++) {
        uint32_t len = in->off[i + 1] - in->off[i];
        size_t before = pq_dict_count(d);
        PQT_CHECK(pq_dict_insert_bytes(d, in->heap + in->off[i], len, &idx[i]) == 0, seed);
        PQT_CHECK(idx[i] < pq_dict_count(d), seed);
        if (pq_dict_count(d) != before)
            PQT_CHECK(idx[i] == before, seed);
        uint32_t elen = 0;
        const uint8_t *e = pq_dict_entry(d, idx[i], &elen);
        PQT_CHECK(e != NULL && elen == len, seed);
        PQT_CHECK(len == 0 || memcmp(e, in->heap + in->off[i], len) == 0, seed);
    }
}

/* The page body decodes as PLAIN byte arrays to the entries in index
 * order, and its size is what pq_dict_plain_bytes promised. */
static void check_plain_page(const pq_dict *d, uint64_t seed)
{
    pq_buf b;
    pq_buf_init(&b);
    PQT_CHECK(pq_buf_push(&b, 0x55) == 0, seed); /* appends, keeps what is there */
    PQT_CHECK(pq_dict_write_plain(d, &b) == 0, seed);
    PQT_CHECK(b.len - 1 == pq_dict_plain_bytes(d), seed);
    pqt_bytes got;
    size_t used = 0;
    PQT_CHECK(pqt_plain_decode_bytes(b.data + 1, b.len - 1, pq_dict_count(d), &got, &used) == 0,
              seed);
    PQT_CHECK(used == b.len - 1 && got.n == pq_dict_count(d), seed);
    for (uint32_t i = 0; i < got.n; i++) {
        uint32_t len;
        const uint8_t *e = pq_dict_entry(d, i, &len);
        PQT_CHECK(len == got.off[i + 1] - got.off[i], seed);
        PQT_CHECK(len == 0 || memcmp(e, got.heap + got.off[i], len) == 0, seed);
    }
    pqt_bytes_free(&got);
    pq_buf_free(&b);
}

/* Shared-prefix data repeats values often; empty strings are entries too. */
static void test_dict_duplicates_map_to_same_index(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    for (int kind = 0; kind < PQT_GEN_KINDS; kind++) {
        pqt_bytes in;
        PQT_CHECK(pqt_gen_bytes(&rng, (pqt_gen_kind)kind, 3000, &in) == 0, seed);
        uint32_t *idx = malloc(in.n * sizeof *idx);
        pq_dict d;
        PQT_CHECK(pq_dict_init(&d, PQ_BYTE_ARRAY, 0) == 0, seed);
        insert_all(&d, &in, idx, seed);
        /* Equal values, and only equal values, share an index. */
        for (size_t t = 0; t < 3000; t++) {
            size_t i = pqt_rng_below(&rng, in.n), j = pqt_rng_below(&rng, in.n);
            uint32_t li = in.off[i + 1] - in.off[i], lj = in.off[j + 1] - in.off[j];
            int same = li == lj
                       && (li == 0 || memcmp(in.heap + in.off[i], in.heap + in.off[j], li) == 0);
            PQT_CHECK(same == (idx[i] == idx[j]), seed);
        }
        check_plain_page(&d, seed);
        pq_dict_free(&d);
        free(idx);
        pqt_bytes_free(&in);
    }
}

/* Reset drops entries (indices restart at 0, the old values are gone)
 * and keeps the table and arena for the next chunk. */
static void test_dict_reset_drops_entries_and_keeps_memory(void **state)
{
    (void)state;
    pq_dict d;
    assert_int_equal(pq_dict_init(&d, PQ_INT64, 8), 0);
    for (int64_t i = 0; i < 1000; i++) {
        uint32_t idx;
        assert_int_equal(pq_dict_insert_fixed(&d, &i, &idx), 0);
    }
    const uint32_t *slots = d.slots;
    size_t arena_cap = d.arena.cap;
    pq_dict_reset(&d);
    assert_int_equal(pq_dict_count(&d), 0);
    assert_int_equal(pq_dict_plain_bytes(&d), 0);
    assert_null(pq_dict_entry(&d, 0, NULL));
    int64_t v = 999;
    uint32_t idx = 7;
    assert_int_equal(pq_dict_insert_fixed(&d, &v, &idx), 0);
    assert_int_equal(idx, 0);
    assert_int_equal(pq_dict_count(&d), 1);
    assert_ptr_equal(d.slots, slots);
    assert_int_equal(d.arena.cap, arena_cap);
    pq_dict_free(&d);
}

/* 100k distinct strings: dense indices 0..99999, all found again, and a
 * page body that decodes back to them. */
static void test_dict_100k_distinct_strings(void **state)
{
    (void)state;
    enum { N = 100000 };
    uint64_t seed = pqt_seed();
    pqt_rng rng = {seed};
    pq_dict d;
    assert_int_equal(pq_dict_init(&d, PQ_BYTE_ARRAY, 0), 0);
    static const char tail[] = "abcdefghijklmnopqrstuvw";
    char s[64];
    size_t plain = 0;
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t i = 0; i < N; i++) {
            /* The suffix only varies length; the number keeps them distinct. */
            int len = snprintf(s, sizeof s, "value-%u-%.*s", i, (int)(i % 23), tail);
            uint32_t idx;
            PQT_CHECK(pq_dict_insert_bytes(&d, (const uint8_t *)s, (uint32_t)len, &idx) == 0, seed);
            PQT_CHECK(idx == i, seed);
            plain += pass == 0 ? 4 + (size_t)len : 0;
        }
    PQT_CHECK(pq_dict_count(&d) == N && pq_dict_plain_bytes(&d) == plain, seed);
    uint32_t probe = (uint32_t)pqt_rng_below(&rng, N), len;
    int want = snprintf(s, sizeof s, "value-%u-%.*s", probe, (int)(probe % 23), tail);
    const uint8_t *e = pq_dict_entry(&d, probe, &len);
    PQT_CHECK(len == (uint32_t)want && memcmp(e, s, len) == 0, seed);
    check_plain_page(&d, seed);
    pq_dict_free(&d);
}

/* A page's values in one call (pq_dict_insert_bytes_n) give the indices
 * one-by-one inserts give: repeats, empty strings, values that differ
 * only past 8 bytes or in length, across several table growths. */
static void test_dict_batch_insert_matches_single(void **state)
{
    (void)state;
    enum { N = 5000 };
    pq_buf heap;
    pq_buf_init(&heap);
    uint32_t *off = malloc((N + 1) * sizeof *off);
    uint32_t *got = malloc(N * sizeof *got);
    assert_non_null(off);
    assert_non_null(got);
    off[0] = 0;
    for (size_t i = 0; i < N; i++) {
        char s[48];
        int n = (i % 7 == 0) ? 0 /* empty */
                : snprintf(s, sizeof s, "value-%08zu%s", (i * 7919) % 1500,
                           i / 1500 % 2 ? "" : "-long-enough-to-pass-32-bytes");
        assert_int_equal(pq_buf_append(&heap, s, (size_t)n), 0);
        off[i + 1] = (uint32_t)heap.len;
    }
    pq_dict one, many;
    assert_int_equal(pq_dict_init(&one, PQ_BYTE_ARRAY, 0), 0);
    assert_int_equal(pq_dict_init(&many, PQ_BYTE_ARRAY, 0), 0);
    /* in uneven batches, as pages arrive */
    for (size_t at = 0, step = 1; at < N; at += step, step = step * 3 % 997 + 1) {
        size_t n = step < N - at ? step : N - at;
        assert_int_equal(pq_dict_insert_bytes_n(&many, heap.data, off + at, n, got + at), 0);
    }
    for (size_t i = 0; i < N; i++) {
        uint32_t idx;
        assert_int_equal(pq_dict_insert_bytes(&one, heap.data + off[i], off[i + 1] - off[i], &idx),
                         0);
        assert_int_equal(got[i], idx);
    }
    assert_int_equal(pq_dict_count(&many), pq_dict_count(&one));
    assert_true(pq_dict_count(&many) > 2500); /* 1500 short, most also long, "" */
    assert_int_equal(pq_dict_plain_bytes(&many), pq_dict_plain_bytes(&one));
    /* only empty values: no heap at all */
    const uint32_t zeros[4] = {0, 0, 0, 0};
    assert_int_equal(pq_dict_insert_bytes_n(&many, NULL, zeros, 3, got), 0);
    assert_int_equal(got[0], got[2]);
    assert_int_equal(pq_dict_count(&many), pq_dict_count(&one));
    assert_int_equal(pq_dict_insert_bytes_n(&many, NULL, off, 2, got), PQ_EINVAL);
    /* fixed-width values, and the type checks */
    pq_dict ints;
    const int64_t v[5] = {7, -1, 7, 0, -1};
    assert_int_equal(pq_dict_init(&ints, PQ_INT64, 8), 0);
    assert_int_equal(pq_dict_insert_fixed_n(&ints, (const uint8_t *)v, 5, got), 0);
    assert_int_equal(got[0], 0);
    assert_int_equal(got[1], 1);
    assert_int_equal(got[2], 0);
    assert_int_equal(got[3], 2);
    assert_int_equal(got[4], 1);
    assert_int_equal(pq_dict_insert_bytes_n(&ints, heap.data, off, 1, got), PQ_EINVAL);
    assert_int_equal(pq_dict_insert_fixed_n(&many, (const uint8_t *)v, 1, got), PQ_EINVAL);
    pq_dict_free(&ints);
    pq_dict_free(&one);
    pq_dict_free(&many);
    pq_buf_free(&heap);
    free(off);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dict_indices_are_dense_and_stable),
        cmocka_unit_test(test_dict_floats_compare_by_bit_pattern),
        cmocka_unit_test(test_dict_rejects_boolean_and_wrong_widths),
        cmocka_unit_test(test_dict_write_plain_fixed_is_values_in_index_order),
        cmocka_unit_test(test_dict_duplicates_map_to_same_index),
        cmocka_unit_test(test_dict_reset_drops_entries_and_keeps_memory),
        cmocka_unit_test(test_dict_100k_distinct_strings),
        cmocka_unit_test(test_dict_batch_insert_matches_single),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
