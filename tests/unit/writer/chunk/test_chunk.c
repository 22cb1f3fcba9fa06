/* test_chunk.c - choices a column chunk makes by measuring
 * (writer/chunk/chunk.c): the encoding of doubles. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>

#include "column.h"
#include "memsink.h"
#include "pq_writer.h"

/* One required double column with the given encoding, n values from gen;
 * returns the file's size. */
static size_t double_file_size(pq_encoding enc, size_t n, double (*gen)(uint64_t *))
{
    pq_err err = {0};
    pq_column_opts co;
    pq_column_opts_default(&co);
    co.encoding = enc;
    co.dictionary = 0;
    pq_schema *s = pq_schema_new(NULL);
    pq_node_spec leaf = {.name = "x", .repetition = PQ_REQUIRED, .type = PQ_DOUBLE,
                         .field_id = -1, .opts = &co};
    assert_true(pq_schema_add_leaf(s, 0, &leaf, &err) >= 0);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    pq_buf out;
    pq_buf_init(&out);
    pq_writer *w = NULL;
    if (pq_writer_open(&w, s, &o, pqt_mem_sink(&out), &err) != 0)
        fail_msg("open: %s", err.msg);
    uint64_t state = 12345;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(pq_column_put_double(pq_writer_column(w, 0), 0, gen(&state)), 0);
        assert_int_equal(pq_writer_end_row(w, &err), 0);
    }
    if (pq_writer_close(w, &err) != 0)
        fail_msg("close: %s", err.msg);
    pq_writer_destroy(w);
    size_t size = out.len;
    pq_buf_free(&out);
    pq_schema_destroy(s);
    return size;
}

static uint64_t next_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return *s >> 11;
}

/* Latencies as logs print them: three decimals, a few hundred ms. */
static double gen_latency(uint64_t *s)
{
    return (double)(next_rand(s) % 400000) / 1000.0;
}

/* Sensor-like noise: one magnitude, random low mantissa bits. */
static double gen_noise(uint64_t *s)
{
    return 1000.0 + (double)(next_rand(s) % 1000000) * 1e-9 * 1000.0;
}

/* Auto mode measures a sample both ways: the file is as small as the
 * better of the two explicit encodings (the sample is the whole chunk
 * here), whichever that is for the data. */
static void test_writer_auto_double_encoding_is_the_smaller_measured(void **state)
{
    (void)state;
    double (*gens[2])(uint64_t *) = {gen_latency, gen_noise};
    for (int g = 0; g < 2; g++) {
        size_t plain = double_file_size(PQ_ENC_PLAIN, 12000, gens[g]);
        size_t split = double_file_size(PQ_ENC_BYTE_STREAM_SPLIT, 12000, gens[g]);
        size_t chosen = double_file_size(PQ_ENC_AUTO, 12000, gens[g]);
        print_message("doubles %d: plain %zu, byte_stream_split %zu, auto %zu bytes\n", g, plain,
                      split, chosen);
        assert_int_equal(chosen, plain < split ? plain : split);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_auto_double_encoding_is_the_smaller_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
