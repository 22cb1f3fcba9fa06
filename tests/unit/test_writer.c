/* test_writer.c - the writer's API contract: type and level checks on put,
 * row bookkeeping, abort_row, option validation, file framing, and the
 * encryption guards (unknown columns, key invocation budget). File
 * contents are checked by the page walker and the interop readers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pq_writer.h"

static int mem_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    (void)err;
    return pq_buf_append(ctx, data, n);
}

/* schema: required int64 id; optional group tags (LIST) of optional string */
static pq_schema *make_schema(void)
{
    pq_err err = {0};
    pq_schema *s = pq_schema_new(NULL);
    pq_node_spec id = {.name = "id", .repetition = PQ_REQUIRED, .type = PQ_INT64, .field_id = -1};
    assert_true(pq_schema_add_leaf(s, 0, &id, &err) > 0);
    int list = pq_schema_add_list(s, 0, "tags", PQ_OPTIONAL, -1, &err);
    pq_node_spec el = {.name = "element", .repetition = PQ_OPTIONAL, .type = PQ_BYTE_ARRAY,
                       .logical = {.kind = PQ_LT_STRING}, .field_id = -1};
    assert_true(pq_schema_add_leaf(s, list, &el, &err) > 0);
    return s;
}

typedef struct fixture {
    pq_schema *schema;
    pq_writer *w;
    pq_buf out;
} fixture;

static void open_fixture(fixture *f, const pq_writer_opts *opts)
{
    pq_err err = {0};
    f->schema = make_schema();
    pq_buf_init(&f->out);
    pq_sink sink = {.ctx = &f->out, .write = mem_write};
    if (pq_writer_open(&f->w, f->schema, opts, sink, &err) != 0)
        fail_msg("open: %s", err.msg);
}

static void close_fixture(fixture *f)
{
    pq_writer_destroy(f->w);
    pq_schema_destroy(f->schema);
    pq_buf_free(&f->out);
}

static void put_row(pq_writer *w, int64_t id, const char *tag)
{
    pq_err err = {0};
    assert_int_equal(pq_column_put_i64(pq_writer_column(w, 0), 0, id), 0);
    if (tag == NULL)
        assert_int_equal(pq_column_put_null(pq_writer_column(w, 1), 0, 0), 0);
    else
        assert_int_equal(pq_column_put_bytes(pq_writer_column(w, 1), 0, tag, strlen(tag)), 0);
    assert_int_equal(pq_writer_end_row(w, &err), 0);
}

static void test_writer_put_rejects_wrong_physical_type(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, NULL);
    assert_int_equal(pq_column_put_i32(pq_writer_column(f.w, 0), 0, 1), PQ_ETYPE);
    assert_int_equal(pq_column_put_double(pq_writer_column(f.w, 0), 0, 1.0), PQ_ETYPE);
    assert_int_equal(pq_column_put_i64(pq_writer_column(f.w, 1), 0, 1), PQ_ETYPE);
    assert_null(pq_writer_column(f.w, 2));
    close_fixture(&f);
}

static void test_writer_put_rejects_bad_levels(void **state)
{
    (void)state;
    fixture f;
    open_fixture(&f, NULL);
    pq_column *tags = pq_writer_column(f.w, 1);
    assert_int_equal(pq_column_put_bytes(tags, 1, "a", 1), PQ_EINVAL); /* no row started */
    assert_int_equal(pq_column_put_bytes(tags, 2, "a", 1), PQ_EINVAL); /* rep > max 1 */
    assert_int_equal(pq_column_put_null(tags, 0, 3), PQ_EINVAL);       /* def == max 3 */
    assert_int_equal(pq_column_put_null(pq_writer_column(f.w, 0), 0, 0), PQ_EINVAL); /* required */
    close_fixture(&f);
}

static void test_writer_flush_names_column_with_missing_rows(void **state)
{
    (void)state;
    fixture f;
    pq_err err = {0};
    open_fixture(&f, NULL);
    assert_int_equal(pq_column_put_i64(pq_writer_column(f.w, 0), 0, 7), 0);
    assert_int_equal(pq_writer_end_row(f.w, &err), 0);
    assert_int_equal(pq_writer_flush_row_group(f.w, &err), PQ_ESTATE);
    assert_non_null(strstr(err.msg, "tags.list.element"));
    close_fixture(&f);
}

/* A row abandoned halfway must leave no trace: the file is byte-identical
 * to one written without it. */
static void test_writer_abort_row_leaves_no_trace(void **state)
{
    (void)state;
    fixture a, b;
    pq_err err = {0};
    open_fixture(&a, NULL);
    open_fixture(&b, NULL);
    put_row(a.w, 1, "x");
    put_row(a.w, 3, NULL);
    put_row(b.w, 1, "x");
    assert_int_equal(pq_column_put_i64(pq_writer_column(b.w, 0), 0, 2), 0);
    assert_int_equal(pq_column_put_bytes(pq_writer_column(b.w, 1), 0, "partial", 7), 0);
    assert_int_equal(pq_column_put_bytes(pq_writer_column(b.w, 1), 1, "more", 4), 0);
    pq_writer_abort_row(b.w);
    put_row(b.w, 3, NULL);
    assert_int_equal(pq_writer_close(a.w, &err), 0);
    assert_int_equal(pq_writer_close(b.w, &err), 0);
    assert_int_equal(a.out.len, b.out.len);
    assert_memory_equal(a.out.data, b.out.data, a.out.len);
    close_fixture(&a);
    close_fixture(&b);
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void test_writer_file_is_framed_by_par1_and_footer_length(void **state)
{
    (void)state;
    fixture f;
    pq_err err = {0};
    open_fixture(&f, NULL);
    for (int i = 0; i < 100; i++)
        put_row(f.w, i, i % 3 ? "t" : NULL);
    assert_int_equal(pq_writer_rows_buffered(f.w), 100);
    assert_int_equal(pq_writer_close(f.w, &err), 0);
    assert_int_equal(pq_writer_rows_written(f.w), 100);
    assert_int_equal(pq_writer_bytes_written(f.w), f.out.len);
    assert_memory_equal(f.out.data, "PAR1", 4);
    assert_memory_equal(f.out.data + f.out.len - 4, "PAR1", 4);
    uint32_t footer = le32(f.out.data + f.out.len - 8);
    assert_true(footer > 0 && footer < f.out.len - 12);
    close_fixture(&f);
}

static void test_writer_auto_flushes_row_groups_by_rows(void **state)
{
    (void)state;
    fixture f;
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.row_group_max_rows = 10;
    open_fixture(&f, &o);
    for (int i = 0; i < 25; i++)
        put_row(f.w, i, "t");
    assert_int_equal(pq_writer_rows_written(f.w), 20);
    assert_int_equal(pq_writer_rows_buffered(f.w), 5);
    close_fixture(&f);
}

static void test_writer_open_rejects_encoding_not_valid_for_type(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = pq_schema_new(NULL);
    pq_column_opts co;
    pq_column_opts_default(&co);
    co.encoding = PQ_ENC_DELTA_BINARY_PACKED;
    pq_node_spec n = {.name = "s", .repetition = PQ_OPTIONAL, .type = PQ_BYTE_ARRAY,
                      .field_id = -1, .opts = &co};
    assert_true(pq_schema_add_leaf(s, 0, &n, &err) > 0);
    pq_buf out;
    pq_buf_init(&out);
    pq_writer *w = NULL;
    pq_sink sink = {.ctx = &out, .write = mem_write};
    assert_int_equal(pq_writer_open(&w, s, NULL, sink, &err), PQ_EINVAL);
    assert_null(w);
    assert_non_null(strstr(err.msg, "column 's'"));
    pq_schema_destroy(s);
    pq_buf_free(&out);
}

static void test_writer_encryption_rejects_unknown_column(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_crypto_key key;
    assert_int_equal(pq_crypto_key_init(&key, "0123456789012345", 16, "k", &err), 0);
    pq_column_key ck = {.column = "nope", .key = &key, .key_id = "k1"};
    pq_encryption_opts e = {.algorithm = PQ_AES_GCM_V1, .footer_key = &key,
                            .columns = &ck, .n_columns = 1};
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.encryption = &e;
    pq_schema *s = make_schema();
    pq_buf out;
    pq_buf_init(&out);
    pq_writer *w = NULL;
    pq_sink sink = {.ctx = &out, .write = mem_write};
    assert_int_equal(pq_writer_open(&w, s, &o, sink, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "'nope' is not in the schema"));
    pq_schema_destroy(s);
    pq_buf_free(&out);
    pq_crypto_key_free(&key);
}

/* A key past its invocation budget must stop the write with PQ_ELIMIT so
 * the caller rotates to a new key, never reuse it silently. */
static void test_writer_encryption_stops_when_key_budget_is_spent(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_crypto_key key;
    assert_int_equal(pq_crypto_key_init(&key, "0123456789012345", 16, "k", &err), 0);
    pq_crypto_key_set_limit(&key, 3);
    pq_encryption_opts e = {.algorithm = PQ_AES_GCM_V1, .footer_key = &key};
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.encryption = &e;
    fixture f;
    open_fixture(&f, &o);
    put_row(f.w, 1, "x");
    int rc = pq_writer_close(f.w, &err);
    assert_int_equal(rc, PQ_ELIMIT);
    assert_non_null(strstr(err.msg, "k"));
    close_fixture(&f);
    pq_crypto_key_free(&key);
}

static void test_writer_encrypted_footer_file_starts_and_ends_with_pare(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_crypto_key key;
    assert_int_equal(pq_crypto_key_init(&key, "0123456789012345", 16, "k", &err), 0);
    pq_encryption_opts e = {.algorithm = PQ_AES_GCM_V1, .footer_key = &key, .footer_key_id = "kf"};
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.encryption = &e;
    fixture f;
    open_fixture(&f, &o);
    put_row(f.w, 1, "x");
    assert_int_equal(pq_writer_close(f.w, &err), 0);
    assert_memory_equal(f.out.data, "PARE", 4);
    assert_memory_equal(f.out.data + f.out.len - 4, "PARE", 4);
    /* the plaintext "tags" name must not appear: the footer is encrypted */
    assert_null(memmem(f.out.data, f.out.len, "tags", 4));
    close_fixture(&f);
    pq_crypto_key_free(&key);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writer_put_rejects_wrong_physical_type),
        cmocka_unit_test(test_writer_put_rejects_bad_levels),
        cmocka_unit_test(test_writer_flush_names_column_with_missing_rows),
        cmocka_unit_test(test_writer_abort_row_leaves_no_trace),
        cmocka_unit_test(test_writer_file_is_framed_by_par1_and_footer_length),
        cmocka_unit_test(test_writer_auto_flushes_row_groups_by_rows),
        cmocka_unit_test(test_writer_open_rejects_encoding_not_valid_for_type),
        cmocka_unit_test(test_writer_encryption_rejects_unknown_column),
        cmocka_unit_test(test_writer_encryption_stops_when_key_budget_is_spent),
        cmocka_unit_test(test_writer_encrypted_footer_file_starts_and_ends_with_pare),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
