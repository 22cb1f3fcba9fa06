/* test_writer_tail.c - the file's tail (bloom filters, page indexes,
 * footer) reaches the sink gathered into few writes (pq_out's spill in
 * writer/chunk/chunk.c), and a tail past the spill size in pieces that
 * still frame the file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>

#include "buf.h"
#include "pq_writer.h"

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A sink that counts its writes, appending to a buffer. */
typedef struct counting_sink {
    pq_buf *out;
    int writes;
} counting_sink;

static int counting_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    (void)err;
    counting_sink *c = ctx;
    c->writes++;
    return pq_buf_append(c->out, data, n) == 0 ? PQ_OK : PQ_ENOMEM;
}

/* 40 leaves with bloom filters and page indexes: the file's tail is ~120
 * modules, handed to the sink in writes of up to 256 KiB each (gathered),
 * not one write each; a tail past 256 KiB (40 bloom filters of 32 KiB) is spilled
 * in pieces and still frames the file. */
static int close_and_count_tail_writes(uint64_t bloom_ndv, pq_buf *out)
{
    pq_err err = {0};
    pq_schema *s = pq_schema_new(NULL);
    pq_column_opts co;
    pq_column_opts_default(&co);
    co.bloom = 1;
    co.bloom_ndv = bloom_ndv;
    char name[16];
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof name, "c%d", i);
        pq_node_spec leaf = {.name = name, .repetition = PQ_REQUIRED, .type = PQ_INT64,
                             .field_id = -1, .opts = &co};
        assert_true(pq_schema_add_leaf(s, 0, &leaf, &err) > 0);
    }
    counting_sink c = {.out = out};
    pq_writer *w = NULL;
    assert_int_equal(pq_writer_open(&w, s, NULL, (pq_sink){.ctx = &c, .write = counting_write},
                                    &err), 0);
    for (int64_t r = 0; r < 50; r++) {
        for (size_t i = 0; i < 40; i++)
            assert_int_equal(pq_column_put_i64(pq_writer_column(w, i), 0, r * 40 + (int64_t)i), 0);
        assert_int_equal(pq_writer_end_row(w, &err), 0);
    }
    assert_int_equal(pq_writer_flush_row_group(w, &err), 0);
    int before = c.writes;
    size_t len_before = out->len;
    assert_int_equal(pq_writer_close(w, &err), 0);
    assert_int_equal(pq_writer_bytes_written(w), out->len);
    assert_memory_equal(out->data + out->len - 4, "PAR1", 4);
    uint32_t footer = le32(out->data + out->len - 8);
    assert_true(footer > 0 && footer < out->len - len_before);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
    return c.writes - before;
}

static void test_writer_file_tail_is_gathered_into_few_writes(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    assert_int_equal(close_and_count_tail_writes(0, &out), 1);
    pq_buf_reset(&out);
    int writes = close_and_count_tail_writes(20000, &out);
    assert_true(writes > 1);
    assert_true(writes <= (int)(out.len / (256 * 1024)) + 2);
    pq_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_file_tail_is_gathered_into_few_writes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
