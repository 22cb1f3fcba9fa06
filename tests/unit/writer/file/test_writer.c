/* test_writer.c - the writer's API contract: type and level checks on put,
 * row bookkeeping, abort_row, option validation, file framing, and the
 * encryption guards (unknown columns, key invocation budget); and the
 * parallel-encoding API: row groups encoded into memory and appended in
 * order give the same file as the classic put/end_row path (byte for byte
 * in plaintext, value for value and with the same key use when encrypted),
 * ordinal rules, empty row groups, limits on moved rows, and encodes on
 * four threads at once read back value by value (tests/support/pqcrypt).
 * File contents are further checked by the page walker and the interop
 * readers. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "column.h"
#include "decode.h"
#include "pq_writer.h"
#include "pqcrypt.h"
#include "rowgen.h"
#include "rowgroup.h"
#include "memsink.h"

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
    pq_sink sink = pqt_mem_sink(&f->out);
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
    pq_sink sink = pqt_mem_sink(&out);
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
    pq_sink sink = pqt_mem_sink(&out);
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

/* ---- parallel encoding: encode into memory, append in order --------------- */

static pq_rowgroup *rg_new(pq_schema *s)
{
    pq_err err = {0};
    pq_rowgroup *rg = NULL;
    if (pq_rowgroup_new(&rg, s, &err) != 0)
        fail_msg("pq_rowgroup_new: %s", err.msg);
    return rg;
}

static pq_encoded *enc_new(void)
{
    pq_encoded *e = pq_encoded_new();
    assert_non_null(e);
    return e;
}

static pq_writer *writer_open(pq_schema *s, const pq_writer_opts *o, pq_buf *out)
{
    pq_err err = {0};
    pq_writer *w = NULL;
    pq_buf_init(out);
    pq_sink sink = pqt_mem_sink(out);
    if (pq_writer_open(&w, s, o, sink, &err) != 0)
        fail_msg("open: %s", err.msg);
    return w;
}

static void encode_append(pq_writer *w, const pq_rowgroup *rg, pq_encoded *e)
{
    pq_err err = {0};
    if (pq_writer_encode(w, rg, pq_writer_row_groups(w), e, &err) != 0)
        fail_msg("encode: %s", err.msg);
    if (pq_writer_append_encoded(w, e, &err) != 0)
        fail_msg("append: %s", err.msg);
}

static void writer_close(pq_writer *w)
{
    pq_err err = {0};
    if (pq_writer_close(w, &err) != 0)
        fail_msg("close: %s", err.msg);
    pq_writer_destroy(w);
}

/* Writer options worth varying: page versions, codecs, page splits,
 * CRCs, statistics and page indexes on and off. Row groups are cut by the
 * caller (rows) only. */
static void variant_opts(pq_writer_opts *o, int variant, size_t rg_rows)
{
    pq_writer_opts_default(o);
    o->row_group_max_rows = rg_rows;
    o->row_group_max_bytes = 0;
    o->decide_each_row_group = true; /* as pq_writer_encode's row groups do */
    switch (variant % 4) {
    case 0: o->page_max_rows = 64; break;
    case 1: o->page_version = 1; o->codec = PQ_CODEC_SNAPPY; o->crc = false;
            o->page_max_rows = 50; break;
    case 2: o->codec = PQ_CODEC_UNCOMPRESSED; o->page_index = false; o->statistics = false; break;
    default: o->page_version = 1; o->codec = PQ_CODEC_GZIP; o->page_max_bytes = 512; break;
    }
}

/* The classic path: put/end_row, row groups flushed by row_group_max_rows. */
static void write_classic(pq_schema *s, const pq_writer_opts *o, uint64_t seed, uint64_t rows,
                          pq_buf *out)
{
    pq_err err = {0};
    pq_writer *w = writer_open(s, o, out);
    for (uint64_t r = 0; r < rows; r++)
        if (pqt_rowgen_writer(w, pq_schema_num_leaves(s), seed, r, &err) != 0)
            fail_msg("row %" PRIu64 ": %s", r, err.msg);
    writer_close(w);
}

/* The daemon's path: rows shredded into a worker's row group in batches of
 * random size, moved in order into the current row group (splitting a
 * batch where a row group fills up), each full row group encoded and
 * appended. */
static void write_moved(pq_schema *s, const pq_writer_opts *o, uint64_t seed, uint64_t rows,
                        pqt_rng *cuts, pq_buf *out)
{
    pq_err err = {0};
    pq_writer *w = writer_open(s, o, out);
    pq_rowgroup *worker = rg_new(s), *cur = rg_new(s);
    pq_encoded *e = enc_new();
    uint64_t next = 0, full = o->row_group_max_rows;
    while (next < rows) {
        uint64_t batch = pqt_rng_below(cuts, 50);
        for (; batch > 0 && next < rows; batch--, next++)
            assert_int_equal(pqt_rowgen_rg(worker, seed, next), 0);
        while (pq_rowgroup_rows(worker) > 0) {
            uint64_t n = full - pq_rowgroup_rows(cur);
            if (n > pq_rowgroup_rows(worker))
                n = pq_rowgroup_rows(worker);
            if (pq_rowgroup_move_rows(cur, worker, n, &err) != 0)
                fail_msg("move: %s", err.msg);
            if (pq_rowgroup_rows(cur) == full) {
                encode_append(w, cur, e);
                pq_rowgroup_reset(cur);
            }
        }
    }
    if (pq_rowgroup_rows(cur) > 0)
        encode_append(w, cur, e);
    writer_close(w);
    pq_encoded_destroy(e);
    pq_rowgroup_destroy(worker);
    pq_rowgroup_destroy(cur);
}

static void test_writer_moved_rows_give_the_classic_file_byte_for_byte(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    printf("[ seed     ] PQ_TEST_SEED=%" PRIu64 "\n", seed);
    pqt_rng r = {.state = seed};
    pq_schema *s = pqt_rowgen_schema(NULL);
    for (int variant = 0; variant < 8; variant++) {
        uint64_t rows = pqt_rng_below(&r, 1500), rg_rows = 1 + pqt_rng_below(&r, 400);
        pq_writer_opts o;
        variant_opts(&o, variant, (size_t)rg_rows);
        pq_buf classic, moved;
        write_classic(s, &o, seed + (uint64_t)variant, rows, &classic);
        write_moved(s, &o, seed + (uint64_t)variant, rows, &r, &moved);
        if (classic.len != moved.len || memcmp(classic.data, moved.data, classic.len) != 0)
            fail_msg("variant %d, %" PRIu64 " rows in groups of %" PRIu64 ": files differ "
                     "(%zu vs %zu bytes); replay with PQ_TEST_SEED=%" PRIu64, variant, rows,
                     rg_rows, classic.len, moved.len, seed);
        pq_buf_free(&classic);
        pq_buf_free(&moved);
    }
    pq_schema_destroy(s);
}

/* ---- encryption: keys, options, reading back ----------------------------------- */

typedef struct test_keys {
    pq_crypto_key footer, k1, k2;
    pq_column_key cols[2];
    pq_encryption_opts enc;
    pqc_key ids[3];
    pqc_opts read;
} test_keys;

typedef enum enc_mode { ENC_NONE, ENC_GCM_UNIFORM, ENC_CTR_COLUMNS } enc_mode;

/* GCM_UNIFORM: every column under the footer key, encrypted footer.
 * CTR_COLUMNS: "s" and "matrix" under their own keys, the rest plaintext,
 * signed plaintext footer, an AAD prefix. */
static void keys_init(test_keys *k, enc_mode mode)
{
    pq_err err = {0};
    memset(k, 0, sizeof *k);
    assert_int_equal(pq_crypto_key_init(&k->footer, "0123456789abcdef", 16, "kf", &err), 0);
    assert_int_equal(pq_crypto_key_init(&k->k1, "fedcba9876543210fedcba9876543210", 32, "k1",
                                        &err), 0);
    assert_int_equal(pq_crypto_key_init(&k->k2, "abcdefghijklmnopqrstuvwx", 24, "k2", &err), 0);
    k->cols[0] = (pq_column_key){.column = "s", .key = &k->k1, .key_id = "k1"};
    k->cols[1] = (pq_column_key){.column = "matrix", .key = &k->k2, .key_id = "k2"};
    k->enc = (pq_encryption_opts){.algorithm = PQ_AES_GCM_V1, .footer_key = &k->footer,
                                  .footer_key_id = "kf"};
    if (mode == ENC_CTR_COLUMNS) {
        k->enc.algorithm = PQ_AES_GCM_CTR_V1;
        k->enc.plaintext_footer = true;
        k->enc.columns = k->cols;
        k->enc.n_columns = 2;
        k->enc.aad_prefix = "table-x";
        k->enc.aad_prefix_len = 7;
        k->enc.store_aad_prefix = true;
    }
    k->ids[0] = (pqc_key){.id = "kf", .key = &k->footer};
    k->ids[1] = (pqc_key){.id = "k1", .key = &k->k1};
    k->ids[2] = (pqc_key){.id = "k2", .key = &k->k2};
    k->read = (pqc_opts){.keys = k->ids, .n_keys = 3};
}

static void keys_free(test_keys *k)
{
    pq_crypto_key_free(&k->footer);
    pq_crypto_key_free(&k->k1);
    pq_crypto_key_free(&k->k2);
}

static void open_read(pqc_file *f, const pq_buf *b, const pqc_opts *o, const char *name)
{
    pq_err err = {0};
    if (pqc_open_mem(f, b->data, b->len, name, o, &err) != 0)
        fail_msg("%s: %s (module %s)", name, err.msg, pqc_module_name(f->fail_module));
}

/* Every leaf of the file holds exactly the levels and values of the row
 * groups, in order: decoded by the test reader, not by the writer. */
static void assert_file_holds(const pqc_file *f, pq_rowgroup **rgs, size_t n_rgs)
{
    assert_int_equal(f->num_row_groups, n_rgs);
    assert_int_equal(f->ncols, pq_rowgroup_num_columns(rgs[0]));
    for (size_t g = 0; g < n_rgs; g++) { /* RowGroup: rows, ordinal, where it starts */
        const tr_node *rg = pqf_row_group(&f->pf, g);
        pqf_chunk first;
        pq_err err = {0};
        if (pqf_chunk_get(&f->pf, g, 0, &first, &err) != 0)
            fail_msg("row group %zu: %s", g, err.msg);
        assert_int_equal(tr_field_int(rg, 3, -1), pq_rowgroup_rows(rgs[g]));
        assert_int_equal(tr_field_int(rg, 5, -1), first.start);
        assert_int_equal(tr_field_int(rg, 7, -1), g);
    }
    for (size_t i = 0; i < f->ncols; i++) {
        const pqc_column *fc = &f->cols[i];
        size_t l = 0, v = 0;
        for (size_t g = 0; g < n_rgs; g++) {
            const pq_column *c = pq_rowgroup_column(rgs[g], i);
            assert_int_equal(fc->rg_first_value[g], v);
            for (size_t k = 0; k < c->n_levels; k++, l++) {
                if (l >= fc->n_levels)
                    fail_msg("'%s': %zu levels in the file, more expected", fc->path, l);
                uint16_t def = c->max_def ? pq_column_def(c)[k] : 0;
                uint16_t rep = c->max_rep ? pq_column_rep(c)[k] : 0;
                if (fc->def[l] != def || fc->rep[l] != rep)
                    fail_msg("'%s' level %zu: (%u, %u), expected (%u, %u)", fc->path, l,
                             fc->rep[l], fc->def[l], rep, def);
            }
            for (size_t k = 0; k < c->n_values; k++, v++) {
                size_t len;
                const uint8_t *got = pqc_value(fc, v, &len);
                const uint32_t *off = pq_column_offsets(c);
                const uint8_t *want = off ? c->heap.data + off[k] : c->values.data + k * c->width;
                size_t want_len = off ? off[k + 1] - off[k] : c->width;
                if (len != want_len || (len > 0 && memcmp(got, want, len) != 0))
                    fail_msg("'%s' value %zu of row group %zu differs", fc->path, k, g);
            }
        }
        assert_int_equal(fc->n_levels, l);
        assert_int_equal(fc->values.n, v);
    }
}

/* ---- four encoders, one appender ---------------------------------------------- *
 * Some row groups are encoded in parts of leaves and joined
 * (pq_writer_encode_leaves, pq_encoded_join), as the pipeline splits a
 * large one between workers. */

#define PAR_THREADS 4
#define PAR_GROUPS 12

typedef struct par_run {
    pq_writer *w;
    pq_rowgroup *rgs[PAR_GROUPS];
    pq_encoded *enc[PAR_GROUPS];
    int rc[PAR_GROUPS];
    pq_err err[PAR_GROUPS];
    atomic_int done[PAR_GROUPS];
    atomic_int next;
} par_run;

/* Row group k in k % 3 + 1 parts of leaves (pq_writer_encode_leaves),
 * joined in order into enc: the file must not tell the difference. */
static int encode_in_parts(par_run *p, int k)
{
    size_t leaves = pq_schema_num_leaves(pq_rowgroup_schema(p->rgs[k]));
    size_t parts = (size_t)k % 3 + 1;
    if (parts == 1)
        return pq_writer_encode(p->w, p->rgs[k], k, p->enc[k], &p->err[k]);
    pq_encoded *part = enc_new();
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < parts; i++) {
        size_t first = leaves * i / parts, end = leaves * (i + 1) / parts;
        pq_encoded *e = i == 0 ? p->enc[k] : part;
        rc = pq_writer_encode_leaves(p->w, p->rgs[k], k, first, end, e, &p->err[k]);
        if (rc == 0 && i > 0)
            rc = pq_encoded_join(p->enc[k], part, &p->err[k]);
    }
    pq_encoded_destroy(part);
    return rc;
}

/* Takes row groups in ordinal order and encodes them; each result is
 * published with a release store the appender acquires. */
static void *par_encoder(void *arg)
{
    par_run *p = arg;
    for (;;) {
        int k = atomic_fetch_add(&p->next, 1);
        if (k >= PAR_GROUPS)
            return NULL;
        p->rc[k] = encode_in_parts(p, k);
        atomic_store_explicit(&p->done[k], 1, memory_order_release);
    }
}

/* Encodes the row groups on PAR_THREADS threads while this thread appends
 * them in order as each becomes ready (appends overlap later encodes).
 * Failures are reported after the threads are joined. */
static void write_parallel(par_run *p)
{
    pthread_t t[PAR_THREADS];
    atomic_store(&p->next, 0);
    for (int k = 0; k < PAR_GROUPS; k++) {
        atomic_store(&p->done[k], 0);
        p->enc[k] = enc_new();
    }
    for (int i = 0; i < PAR_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, par_encoder, p), 0);
    char failed[600] = "";
    for (int k = 0; k < PAR_GROUPS && !failed[0]; k++) {
        while (!atomic_load_explicit(&p->done[k], memory_order_acquire))
            sched_yield();
        uint64_t before = pq_writer_bytes_written(p->w), bytes = pq_encoded_bytes(p->enc[k]);
        pq_err err = {0};
        if (p->rc[k] != 0)
            snprintf(failed, sizeof failed, "encode %d: %s", k, p->err[k].msg);
        else if (pq_encoded_rows(p->enc[k]) != pq_rowgroup_rows(p->rgs[k]) || bytes == 0)
            snprintf(failed, sizeof failed, "encode %d: %" PRIu64 " rows, %" PRIu64 " bytes", k,
                     pq_encoded_rows(p->enc[k]), bytes);
        else if (pq_writer_append_encoded(p->w, p->enc[k], &err) != 0)
            snprintf(failed, sizeof failed, "append %d: %s", k, err.msg);
        else if (pq_writer_bytes_written(p->w) - before != bytes)
            snprintf(failed, sizeof failed, "append %d: wrote %" PRIu64 " bytes, not %" PRIu64,
                     k, pq_writer_bytes_written(p->w) - before, bytes);
    }
    for (int i = 0; i < PAR_THREADS; i++)
        pthread_join(t[i], NULL);
    for (int k = 0; k < PAR_GROUPS; k++)
        pq_encoded_destroy(p->enc[k]);
    if (failed[0])
        fail_msg("%s", failed);
}

/* The same row groups through the classic API, flushed at the same rows. */
static void write_classic_groups(pq_schema *s, const pq_writer_opts *o, uint64_t seed,
                                 const uint64_t *first, pq_buf *out)
{
    pq_err err = {0};
    pq_writer *w = writer_open(s, o, out);
    for (int k = 0; k < PAR_GROUPS; k++) {
        for (uint64_t r = first[k]; r < first[k + 1]; r++)
            if (pqt_rowgen_writer(w, pq_schema_num_leaves(s), seed, r, &err) != 0)
                fail_msg("row %" PRIu64 ": %s", r, err.msg);
        if (pq_writer_flush_row_group(w, &err) != 0)
            fail_msg("flush: %s", err.msg);
    }
    writer_close(w);
}

/* codec < 0: the option set's own */
static void parallel_case(enc_mode mode, int codec)
{
    uint64_t seed = pqt_seed();
    printf("[ seed     ] PQ_TEST_SEED=%" PRIu64 " (encryption mode %d, codec %d)\n", seed,
           (int)mode, codec);
    pqt_rng r = {.state = seed};
    pq_schema *s = pqt_rowgen_schema(NULL);
    test_keys kp, kc; /* parallel, classic: each write counts its own key uses */
    keys_init(&kp, mode);
    keys_init(&kc, mode);
    pq_writer_opts o;
    variant_opts(&o, (int)mode, 0);
    if (codec >= 0)
        o.codec = (pq_codec)codec;
    par_run p = {0};
    uint64_t first[PAR_GROUPS + 1] = {0};
    for (int k = 0; k < PAR_GROUPS; k++) {
        first[k + 1] = first[k] + 1 + pqt_rng_below(&r, 400);
        p.rgs[k] = rg_new(s);
        for (uint64_t row = first[k]; row < first[k + 1]; row++)
            assert_int_equal(pqt_rowgen_rg(p.rgs[k], seed, row), 0);
    }
    pq_buf par, classic;
    o.encryption = mode == ENC_NONE ? NULL : &kp.enc;
    p.w = writer_open(s, &o, &par);
    write_parallel(&p);
    writer_close(p.w);
    o.encryption = mode == ENC_NONE ? NULL : &kc.enc;
    write_classic_groups(s, &o, seed, first, &classic);

    pqc_file f;
    open_read(&f, &par, &kp.read, "parallel");
    assert_file_holds(&f, p.rgs, PAR_GROUPS);
    pqc_close(&f);
    /* page CRCs cover encrypted bytes (random nonces), and their varints
     * vary in length: sizes match only without them */
    if (mode == ENC_NONE || !o.crc)
        assert_int_equal(par.len, classic.len);
    if (mode == ENC_NONE) {
        assert_memory_equal(par.data, classic.data, par.len);
    } else {
        /* random nonces: the same values, and exactly the same number of
         * cipher invocations per key */
        open_read(&f, &classic, &kc.read, "classic");
        assert_file_holds(&f, p.rgs, PAR_GROUPS);
        pqc_close(&f);
        assert_true(kp.footer.uses > 0);
        assert_int_equal(kp.footer.uses, kc.footer.uses);
        assert_int_equal(kp.k1.uses, kc.k1.uses);
        assert_int_equal(kp.k2.uses, kc.k2.uses);
    }
    for (int k = 0; k < PAR_GROUPS; k++)
        pq_rowgroup_destroy(p.rgs[k]);
    pq_buf_free(&par);
    pq_buf_free(&classic);
    keys_free(&kp);
    keys_free(&kc);
    pq_schema_destroy(s);
}

/* Every codec: each encoder has its own compressor contexts. */
static void test_writer_parallel_encodes_plaintext(void **state)
{
    (void)state;
    const pq_codec codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP,
                               PQ_CODEC_BROTLI, PQ_CODEC_LZ4_RAW, PQ_CODEC_ZSTD};
    for (size_t i = 0; i < sizeof codecs / sizeof codecs[0]; i++)
        parallel_case(ENC_NONE, (int)codecs[i]);
}

static void test_writer_parallel_encodes_gcm_uniform(void **state)
{
    (void)state;
    parallel_case(ENC_GCM_UNIFORM, -1);
}

static void test_writer_parallel_encodes_ctr_column_keys(void **state)
{
    (void)state;
    parallel_case(ENC_CTR_COLUMNS, -1);
}

/* ---- ordinals, empty row groups, errors ------------------------------------------ */

static pq_rowgroup *fixture_rows(fixture *f, int64_t first, int n)
{
    pq_rowgroup *rg = rg_new(f->schema);
    for (int i = 0; i < n; i++) {
        assert_int_equal(pq_column_put_i64(pq_rowgroup_column(rg, 0), 0, first + i), 0);
        assert_int_equal(pq_column_put_bytes(pq_rowgroup_column(rg, 1), 0, "t", 1), 0);
        pq_rowgroup_end_row(rg);
    }
    return rg;
}

static void test_writer_append_takes_ordinals_in_order_only(void **state)
{
    (void)state;
    fixture f;
    pq_err err = {0};
    open_fixture(&f, NULL);
    pq_rowgroup *a = fixture_rows(&f, 0, 3), *b = fixture_rows(&f, 3, 5);
    pq_encoded *e0 = enc_new(), *e1 = enc_new(), *e5 = enc_new();
    assert_int_equal(pq_writer_encode(f.w, b, 1, e1, &err), 0);
    assert_int_equal(pq_writer_encode(f.w, a, 0, e0, &err), 0);
    assert_int_equal(pq_writer_encode(f.w, a, 5, e5, &err), 0);
    assert_int_equal(pq_writer_append_encoded(f.w, e1, &err), PQ_ESTATE);
    assert_non_null(strstr(err.msg, "row group 1 appended where 0 is next"));
    assert_int_equal(pq_writer_row_groups(f.w), 0);
    uint64_t before = pq_writer_bytes_written(f.w);
    assert_int_equal(pq_writer_append_encoded(f.w, e0, &err), 0);
    /* what was appended stays readable until the next encode */
    assert_int_equal(pq_encoded_rows(e0), 3);
    assert_int_equal(pq_writer_bytes_written(f.w) - before, pq_encoded_bytes(e0));
    assert_int_equal(pq_writer_append_encoded(f.w, e0, &err), PQ_ESTATE); /* already in */
    assert_int_equal(pq_writer_append_encoded(f.w, e1, &err), 0);
    assert_int_equal(pq_writer_append_encoded(f.w, e5, &err), PQ_ESTATE); /* a gap */
    assert_int_equal(pq_writer_row_groups(f.w), 2);
    assert_int_equal(pq_writer_rows_written(f.w), 8);
    /* a rejected append leaves the writer usable: the file is complete */
    assert_int_equal(pq_writer_close(f.w, &err), 0);
    pqc_file pf;
    pqc_opts none = {0};
    open_read(&pf, &f.out, &none, "ordinals");
    pq_rowgroup *rgs[] = {a, b};
    assert_file_holds(&pf, rgs, 2);
    pqc_close(&pf);
    pq_encoded_destroy(e0);
    pq_encoded_destroy(e1);
    pq_encoded_destroy(e5);
    pq_rowgroup_destroy(a);
    pq_rowgroup_destroy(b);
    close_fixture(&f);
}

static void test_writer_empty_row_group_is_skipped(void **state)
{
    (void)state;
    fixture f;
    pq_err err = {0};
    open_fixture(&f, NULL);
    pq_rowgroup *empty = rg_new(f.schema), *rows = fixture_rows(&f, 0, 4);
    pq_encoded *e = enc_new();
    assert_int_equal(pq_writer_encode(f.w, empty, 0, e, &err), 0);
    assert_int_equal(pq_encoded_rows(e), 0);
    assert_int_equal(pq_encoded_bytes(e), 0);
    assert_int_equal(pq_writer_append_encoded(f.w, e, &err), 0);
    assert_int_equal(pq_writer_row_groups(f.w), 0);
    assert_int_equal(pq_writer_bytes_written(f.w), 4); /* "PAR1" only */
    assert_int_equal(pq_writer_flush_row_group(f.w, &err), 0); /* nothing buffered either */
    assert_int_equal(pq_writer_row_groups(f.w), 0);
    /* ordinal 0 is still next; the same pq_encoded is reused */
    assert_int_equal(pq_writer_encode(f.w, rows, 0, e, &err), 0);
    assert_int_equal(pq_writer_append_encoded(f.w, e, &err), 0);
    assert_int_equal(pq_writer_row_groups(f.w), 1);
    assert_int_equal(pq_writer_close(f.w, &err), 0);
    pqc_file pf;
    pqc_opts none = {0};
    open_read(&pf, &f.out, &none, "empty");
    pq_rowgroup *rgs[] = {rows};
    assert_file_holds(&pf, rgs, 1);
    pqc_close(&pf);
    pq_encoded_destroy(e);
    pq_rowgroup_destroy(empty);
    pq_rowgroup_destroy(rows);
    close_fixture(&f);
}

static void test_writer_encode_refuses_what_it_cannot_encode(void **state)
{
    (void)state;
    fixture f, g;
    pq_err err = {0};
    open_fixture(&f, NULL);
    open_fixture(&g, NULL);
    pq_rowgroup *rg = fixture_rows(&f, 0, 2), *other = fixture_rows(&g, 0, 2);
    pq_encoded *e = enc_new();
    assert_int_equal(pq_writer_encode(f.w, other, 0, e, &err), PQ_EINVAL);
    assert_non_null(strstr(err.msg, "schema"));
    assert_int_equal(pq_writer_encode(f.w, rg, -1, e, &err), PQ_EINVAL);
    assert_int_equal(pq_column_put_i64(pq_rowgroup_column(rg, 0), 0, 9), 0);
    pq_rowgroup_end_row(rg); /* the list leaf misses this row */
    assert_int_equal(pq_writer_encode(f.w, rg, 0, e, &err), PQ_ESTATE);
    assert_non_null(strstr(err.msg, "tags.list.element"));
    assert_int_equal(pq_writer_append_encoded(f.w, e, &err), PQ_ESTATE); /* nothing encoded */
    /* another writer's encoding is refused */
    pq_rowgroup *ok = fixture_rows(&g, 0, 1);
    assert_int_equal(pq_writer_encode(g.w, ok, 0, e, &err), 0);
    assert_int_equal(pq_writer_append_encoded(f.w, e, &err), PQ_ESTATE);
    assert_int_equal(pq_writer_append_encoded(g.w, e, &err), 0);
    /* parts: only every leaf, joined in order, may be appended */
    size_t leaves = pq_schema_num_leaves(g.schema);
    pq_rowgroup *two = fixture_rows(&g, 1, 2);
    pq_encoded *part = enc_new();
    assert_int_equal(pq_writer_encode_leaves(g.w, two, 1, 1, leaves, e, &err), 0);
    assert_int_equal(pq_writer_append_encoded(g.w, e, &err), PQ_ESTATE);
    assert_non_null(strstr(err.msg, "leaves"));
    assert_int_equal(pq_writer_encode_leaves(g.w, two, 1, 0, 1, part, &err), 0);
    assert_int_equal(pq_encoded_join(e, part, &err), PQ_ESTATE); /* out of order */
    assert_int_equal(pq_writer_encode_leaves(g.w, two, 1, 0, leaves + 1, part, &err),
                     PQ_EINVAL);
    assert_int_equal(pq_writer_encode_leaves(g.w, two, 1, 0, 1, e, &err), 0);
    assert_int_equal(pq_writer_encode_leaves(g.w, two, 1, 1, leaves, part, &err), 0);
    assert_int_equal(pq_encoded_join(e, part, &err), 0);
    assert_int_equal(pq_writer_append_encoded(g.w, e, &err), 0);
    pq_encoded_destroy(part);
    pq_rowgroup_destroy(two);
    pq_encoded_destroy(e);
    pq_rowgroup_destroy(rg);
    pq_rowgroup_destroy(other);
    pq_rowgroup_destroy(ok);
    close_fixture(&f);
    close_fixture(&g);
}

/* Module AADs hold the ordinal in 2 bytes. */
static void test_writer_encrypted_encode_refuses_ordinals_past_32767(void **state)
{
    (void)state;
    pq_err err = {0};
    test_keys k;
    keys_init(&k, ENC_GCM_UNIFORM);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.encryption = &k.enc;
    fixture f;
    open_fixture(&f, &o);
    pq_rowgroup *rg = fixture_rows(&f, 0, 1);
    pq_encoded *e = enc_new();
    assert_int_equal(pq_writer_encode(f.w, rg, 32768, e, &err), PQ_ELIMIT);
    assert_non_null(strstr(err.msg, "rotate files sooner"));
    assert_int_equal(k.footer.uses, 0);
    pq_encoded_destroy(e);
    pq_rowgroup_destroy(rg);
    close_fixture(&f);
    keys_free(&k);
}

/* Rows moved into the writer's own buffer arrive in batches; the row and
 * byte limits still flush them. */
static void test_writer_check_limits_flushes_moved_rows(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.row_group_max_rows = 100;
    fixture f;
    open_fixture(&f, &o);
    pq_rowgroup *src = fixture_rows(&f, 0, 150);
    assert_int_equal(pq_rowgroup_move_rows(pq_writer_rowgroup(f.w), src, 99, &err), 0);
    assert_int_equal(pq_writer_check_limits(f.w, &err), 0);
    assert_int_equal(pq_writer_row_groups(f.w), 0);
    assert_int_equal(pq_rowgroup_move_rows(pq_writer_rowgroup(f.w), src, 51, &err), 0);
    assert_int_equal(pq_writer_check_limits(f.w, &err), 0);
    assert_int_equal(pq_writer_row_groups(f.w), 1);
    assert_int_equal(pq_writer_rows_written(f.w), 150);
    assert_int_equal(pq_writer_rows_buffered(f.w), 0);
    close_fixture(&f);
    /* bytes: a batch of 70 rows is past the 64 rows between size checks */
    o.row_group_max_rows = 0;
    o.row_group_max_bytes = 1000;
    open_fixture(&f, &o);
    pq_rowgroup_destroy(src);
    src = fixture_rows(&f, 0, 70);
    assert_int_equal(pq_rowgroup_move_rows(pq_writer_rowgroup(f.w), src, 70, &err), 0);
    assert_true(pq_writer_buffered_bytes(f.w) >= 1000);
    assert_int_equal(pq_writer_check_limits(f.w, &err), 0);
    assert_int_equal(pq_writer_rows_written(f.w), 70);
    pq_rowgroup_destroy(src);
    close_fixture(&f);
}

static int failing_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    (void)data;
    size_t *budget = ctx;
    if (n > *budget)
        return pq_err_set(err, PQ_EIO, "disk full");
    *budget -= n;
    return 0;
}

/* Part of a row group may be on the sink: the writer refuses to go on. */
static void test_writer_failed_append_leaves_the_writer_unusable(void **state)
{
    (void)state;
    pq_err err = {0};
    pq_schema *s = make_schema();
    size_t budget = 4; /* the magic fits, the row group does not */
    pq_writer *w = NULL;
    assert_int_equal(pq_writer_open(&w, s, NULL, (pq_sink){.ctx = &budget,
                                                           .write = failing_write}, &err), 0);
    put_row(w, 1, "x");
    assert_int_equal(pq_writer_flush_row_group(w, &err), PQ_EIO);
    assert_non_null(strstr(err.msg, "disk full"));
    assert_int_equal(pq_writer_rows_written(w), 0);
    assert_int_equal(pq_writer_flush_row_group(w, &err), PQ_ESTATE);
    pq_rowgroup *rg = rg_new(s);
    pq_encoded *e = enc_new();
    assert_int_equal(pq_writer_encode(w, rg, 1, e, &err), 0);
    assert_int_equal(pq_writer_append_encoded(w, e, &err), PQ_ESTATE);
    assert_int_equal(pq_writer_close(w, &err), PQ_ESTATE);
    pq_encoded_destroy(e);
    pq_rowgroup_destroy(rg);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
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
        cmocka_unit_test(test_writer_moved_rows_give_the_classic_file_byte_for_byte),
        cmocka_unit_test(test_writer_parallel_encodes_plaintext),
        cmocka_unit_test(test_writer_parallel_encodes_gcm_uniform),
        cmocka_unit_test(test_writer_parallel_encodes_ctr_column_keys),
        cmocka_unit_test(test_writer_append_takes_ordinals_in_order_only),
        cmocka_unit_test(test_writer_empty_row_group_is_skipped),
        cmocka_unit_test(test_writer_encode_refuses_what_it_cannot_encode),
        cmocka_unit_test(test_writer_encrypted_encode_refuses_ordinals_past_32767),
        cmocka_unit_test(test_writer_check_limits_flushes_moved_rows),
        cmocka_unit_test(test_writer_failed_append_leaves_the_writer_unusable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
