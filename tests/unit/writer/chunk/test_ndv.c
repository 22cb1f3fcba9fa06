/* test_ndv.c - writer/chunk/ndv.c (HyperLogLog distinct counts) and the bloom
 * filter sizing that uses it (writer/chunk/chunk.c): a column whose dictionary
 * gave up gets a filter sized for its distinct values, not its value
 * count, and still holds every value. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "bloom.h"
#include "ndv.h"
#include "pq_writer.h"
#include "pqcrypt.h"
#include "pqfile.h"
#include "tmpdir.h"

static uint64_t estimate_of(uint64_t distinct, unsigned repeats)
{
    pq_ndv n;
    pq_ndv_init(&n);
    for (unsigned r = 0; r < repeats; r++)
        for (uint64_t i = 0; i < distinct; i++)
            pq_ndv_add(&n, XXH64(&i, sizeof i, 0));
    return pq_ndv_estimate(&n);
}

/* 1.6% standard error: 4% is 2.5 sigma; small counts (linear counting)
 * are nearly exact. Repeats must not count. */
static void test_ndv_estimates_distinct_counts(void **state)
{
    (void)state;
    assert_int_equal(estimate_of(0, 1), 0);
    const uint64_t ns[] = {1, 10, 100, 1000, 5000, 20000, 100000, 400000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        uint64_t e = estimate_of(ns[k], 3);
        double err = ((double)e - (double)ns[k]) / (double)ns[k];
        if (err > 0.04 || err < -0.04)
            fail_msg("%" PRIu64 " distinct values estimated as %" PRIu64, ns[k], e);
    }
}

#define ROWS 200000u
#define DISTINCT 20000u

static size_t value_of(uint64_t row, char *buf)
{
    return (size_t)snprintf(buf, 48, "/api/v1/items/%08" PRIx64 "/detail", (row * 7919u) % DISTINCT);
}

/* One string column, bloom on, dictionary capped at 1 KiB so it gives up:
 * the filter is sized for about DISTINCT values (the estimate plus 5%),
 * a tenth of what sizing by the ROWS values would give. */
static void test_bloom_without_dictionary_is_sized_by_estimated_ndv(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_ndv.XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/f.parquet", dir);
    pq_err err = {0};
    pq_column_opts o;
    pq_column_opts_default(&o);
    o.bloom = 1;
    o.dictionary_max_bytes = 1024;
    pq_schema *s = pq_schema_new(NULL);
    pq_logical str = {.kind = PQ_LT_STRING};
    assert_true(pq_schema_add_leaf(s, 0, &(pq_node_spec){.name = "p", .repetition = PQ_REQUIRED,
                .type = PQ_BYTE_ARRAY, .logical = str, .field_id = -1, .opts = &o}, &err) >= 0);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    int fd = fileno(fp);
    pq_writer_opts wo;
    pq_writer_opts_default(&wo);
    wo.row_group_max_rows = ROWS;
    pq_writer *w = NULL;
    assert_int_equal(pq_writer_open(&w, s, &wo, pq_sink_fd(&fd), &err), 0);
    char buf[48];
    for (uint64_t r = 0; r < ROWS; r++) {
        assert_int_equal(pq_column_put_bytes(pq_writer_column(w, 0), 0, buf, value_of(r, buf)), 0);
        assert_int_equal(pq_writer_end_row(w, &err), 0);
    }
    assert_int_equal(pq_writer_close(w, &err), 0);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
    fclose(fp);

    pqc_file f;
    memset(&f, 0, sizeof f);
    if (pqc_open(&f, path, &(pqc_opts){0}, &err) != 0)
        fail_msg("%s", err.msg);
    pqf_chunk c;
    assert_int_equal(pqf_chunk_get(&f.pf, 0, 0, &c, &err), 0);
    size_t low = pq_bloom_optimal_bytes(DISTINCT, 0.01);
    size_t high = pq_bloom_optimal_bytes(DISTINCT + DISTINCT / 10, 0.01) + 64; /* + header */
    if (c.bloom_filter_length < (int64_t)low || c.bloom_filter_length > (int64_t)high)
        fail_msg("bloom filter of %" PRId64 " bytes; %zu..%zu expected for %u distinct values "
                 "(%zu for %u values)", c.bloom_filter_length, low, high, DISTINCT,
                 pq_bloom_optimal_bytes(ROWS, 0.01), ROWS);
    const pqc_bloom *b = &f.cols[0].blooms[0];
    assert_non_null(b->bitset);
    for (uint64_t r = 0; r < DISTINCT; r++) {
        size_t len = value_of(r, buf);
        if (!pqc_bloom_check(b, XXH64(buf, len, 0)))
            fail_msg("value of row %" PRIu64 " is not in the filter", r);
    }
    pqc_close(&f);
    pqt_rm_rf(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ndv_estimates_distinct_counts),
        cmocka_unit_test(test_bloom_without_dictionary_is_sized_by_estimated_ndv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
