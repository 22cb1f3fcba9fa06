/* test_chooser.c - the encoding decisions a column keeps between the row
 * groups of one file (writer/chunk/chooser.c): a kept dictionary gives way
 * on the first row group whose values stop repeating, the fallback chosen
 * then is kept for the next row groups, and decide_each_row_group makes
 * every row group choose afresh. Every value reads back either way. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "memsink.h"
#include "pqcrypt.h"
#include "pqfile.h"
#include "pq_writer.h"

#define GROUP_ROWS 1200 /* at least the values a first page needs to be measured and kept */
#define GROUPS 3

/* Row group 0 repeats five values, row group 1 has no repeats, row group
 * 2 repeats five values again. */
static int value_of(size_t row, char *buf, size_t cap)
{
    if (row / GROUP_ROWS == 1)
        return snprintf(buf, cap, "unique-%zu-%zu", row, row * 2654435761u % 100003);
    return snprintf(buf, cap, "few-%zu", row % 5);
}

static void write_file(pq_buf *out, bool decide_each)
{
    pq_err err = {0};
    pq_column_opts co;
    pq_column_opts_default(&co);
    pq_schema *s = pq_schema_new(NULL);
    pq_node_spec leaf = {.name = "s", .repetition = PQ_REQUIRED, .type = PQ_BYTE_ARRAY,
                         .logical = {.kind = PQ_LT_STRING}, .field_id = -1, .opts = &co};
    assert_true(pq_schema_add_leaf(s, 0, &leaf, &err) >= 0);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.row_group_max_rows = GROUP_ROWS;
    o.decide_each_row_group = decide_each;
    pq_writer *w = NULL;
    if (pq_writer_open(&w, s, &o, pqt_mem_sink(out), &err) != 0)
        fail_msg("open: %s", err.msg);
    char buf[64];
    for (size_t r = 0; r < GROUPS * GROUP_ROWS; r++) {
        int n = value_of(r, buf, sizeof buf);
        assert_int_equal(pq_column_put_bytes(pq_writer_column(w, 0), 0, buf, (size_t)n), 0);
        assert_int_equal(pq_writer_end_row(w, &err), 0);
    }
    if (pq_writer_close(w, &err) != 0)
        fail_msg("close: %s", err.msg);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
}

/* Whether row group rg's chunk has a dictionary page. */
static bool has_dictionary(const pq_buf *file, int rg)
{
    pq_err err = {0};
    pqf_file f;
    if (pqf_open_mem(&f, file->data, file->len, "kept", &err) != 0)
        fail_msg("open: %s", err.msg);
    assert_int_equal(pqf_num_row_groups(&f), GROUPS);
    pqf_chunk ch;
    pqf_pages it;
    if (pqf_chunk_get(&f, rg, 0, &ch, &err) != 0 || pqf_pages_init(&it, &f, &ch, &err) != 0)
        fail_msg("chunk: %s", err.msg);
    bool dict = false;
    int more;
    while ((more = pqf_pages_next(&it, &err)) == 1)
        dict = dict || it.page.type == PQ_PAGE_DICTIONARY;
    assert_int_equal(more, 0);
    pqf_pages_free(&it);
    pqf_close(&f);
    return dict;
}

static void check_values(const pq_buf *file)
{
    pq_err err = {0};
    pqc_opts ro = {0};
    pqc_file f;
    if (pqc_open_mem(&f, file->data, file->len, "kept", &ro, &err) != 0)
        fail_msg("read: %s", err.msg);
    const pqc_column *c = &f.cols[0];
    assert_int_equal(c->n_levels, GROUPS * GROUP_ROWS);
    char want[64];
    for (size_t r = 0; r < GROUPS * GROUP_ROWS; r++) {
        int n = value_of(r, want, sizeof want);
        size_t len;
        const uint8_t *got = pqc_value(c, r, &len);
        assert_int_equal(len, (size_t)n);
        assert_memory_equal(got, want, len);
    }
    pqc_close(&f);
}

static void test_chooser_kept_dictionary_gives_way_and_fallback_is_kept(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    write_file(&out, false);
    assert_true(has_dictionary(&out, 0));
    assert_false(has_dictionary(&out, 1));  /* confirmed on the first page: no repeats */
    assert_false(has_dictionary(&out, 2));  /* the fallback decided then is kept */
    check_values(&out);
    pq_buf_free(&out);
}

static void test_chooser_decide_each_row_group_measures_every_chunk(void **state)
{
    (void)state;
    pq_buf out;
    pq_buf_init(&out);
    write_file(&out, true);
    assert_true(has_dictionary(&out, 0));
    assert_false(has_dictionary(&out, 1));
    assert_true(has_dictionary(&out, 2));
    check_values(&out);
    pq_buf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chooser_kept_dictionary_gives_way_and_fallback_is_kept),
        cmocka_unit_test(test_chooser_decide_each_row_group_measures_every_chunk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
