/* test_colwriter.c - the streaming column writer (writer/chunk/chunk.c,
 * chooser.c, openpage.c): a dictionary column whose dictionary passes
 * dictionary.max_bytes in the middle of a row group keeps the pages
 * already written as dictionary pages and writes the later ones in the
 * fallback encoding; every value reads back, under both page versions and
 * with encryption. The same file shape is read by DuckDB, parquet-wasm and
 * hyparquet in the interop run (interop_gen's
 * enc_dictionary_fallback_mid_row_group_v1/v2). And small_chunk_bytes: a
 * chunk of one small page (and a small dictionary page, each measured
 * apart) is written UNCOMPRESSED, any other keeps the codec, and every
 * value reads back. A chunk's only data page carries no Statistics in its
 * header (the chunk's hold the same), a chunk of several pages keeps them
 * on every page, and a chunk without values writes PLAIN (no bytes for no
 * values) under both page versions. And small_page_bytes: a small zstd
 * page compresses at level -1 when the level is the writer's. */
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

#define ROWS 3000
#define PAGE_ROWS 250

/* Rows 0-999 repeat five values (the first page chooses the dictionary);
 * from row 1000 every value is new, so the dictionary passes 2 KiB within
 * the page of rows 1000-1249; the rows after it fall back. Every 7th row
 * is null. */
static int value_of(size_t row, char *buf, size_t cap)
{
    if (row % 7 == 3)
        return -1;
    if (row < 1000)
        return snprintf(buf, cap, "few-%zu", row % 5);
    return snprintf(buf, cap, "unique-%zu-%zu", row, row * 2654435761u % 100003);
}

static void write_file(pq_buf *out, int page_version, pq_crypto_key *key)
{
    pq_err err = {0};
    pq_column_opts co;
    pq_column_opts_default(&co);
    pq_schema *s = pq_schema_new(NULL);
    pq_node_spec leaf = {.name = "s", .repetition = PQ_OPTIONAL, .type = PQ_BYTE_ARRAY,
                         .logical = {.kind = PQ_LT_STRING}, .field_id = -1, .opts = &co};
    assert_true(pq_schema_add_leaf(s, 0, &leaf, &err) >= 0);
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.page_version = page_version;
    o.page_max_rows = PAGE_ROWS;
    o.dictionary_max_bytes = 2048;
    pq_encryption_opts enc = {.algorithm = PQ_AES_GCM_V1, .footer_key = key,
                              .footer_key_id = "kf"};
    o.encryption = key ? &enc : NULL;
    pq_writer *w = NULL;
    if (pq_writer_open(&w, s, &o, pqt_mem_sink(out), &err) != 0)
        fail_msg("open: %s", err.msg);
    char buf[64];
    for (size_t r = 0; r < ROWS; r++) {
        int n = value_of(r, buf, sizeof buf);
        pq_column *c = pq_writer_column(w, 0);
        assert_int_equal(n < 0 ? pq_column_put_null(c, 0, 0)
                               : pq_column_put_bytes(c, 0, buf, (size_t)n), 0);
        assert_int_equal(pq_writer_end_row(w, &err), 0);
    }
    if (pq_writer_close(w, &err) != 0)
        fail_msg("close: %s", err.msg);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
}

/* The data pages' encodings in order: dictionary indices first, then the
 * fallback, never back. */
static void check_pages(const pq_buf *file)
{
    pq_err err = {0};
    pqf_file f;
    if (pqf_open_mem(&f, file->data, file->len, "fallback", &err) != 0)
        fail_msg("open: %s", err.msg);
    assert_int_equal(pqf_num_row_groups(&f), 1);
    pqf_chunk ch;
    pqf_pages it;
    if (pqf_chunk_get(&f, 0, 0, &ch, &err) != 0 || pqf_pages_init(&it, &f, &ch, &err) != 0)
        fail_msg("chunk: %s", err.msg);
    size_t dict_pages = 0, dict_data = 0, fallback = 0;
    int more;
    while ((more = pqf_pages_next(&it, &err)) == 1) {
        if (it.page.type == PQ_PAGE_DICTIONARY) {
            dict_pages++;
            continue;
        }
        assert_non_null(it.page.stats);   /* one of several pages: its own */
        if (it.page.encoding == PQ_ENC_RLE_DICTIONARY) {
            assert_int_equal(fallback, 0); /* no dictionary page after a fallback */
            dict_data++;
        } else {
            fallback++;
        }
    }
    assert_int_equal(more, 0);
    pqf_pages_free(&it);
    print_message("%zu dictionary page, %zu data pages with indices, %zu fallback\n",
                  dict_pages, dict_data, fallback);
    assert_int_equal(dict_pages, 1);
    assert_int_equal(dict_data, 5);   /* rows 0-1249: the page that overflowed included */
    assert_int_equal(fallback, ROWS / PAGE_ROWS - 5);
    pqf_close(&f);
}

static void check_values(const pq_buf *file, pq_crypto_key *key)
{
    pq_err err = {0};
    pqc_key ids[1] = {{.id = "kf", .key = key}};
    pqc_opts ro = {.keys = ids, .n_keys = key ? 1 : 0};
    pqc_file f;
    if (pqc_open_mem(&f, file->data, file->len, "fallback", &ro, &err) != 0)
        fail_msg("read: %s", err.msg);
    const pqc_column *c = &f.cols[0];
    assert_int_equal(c->n_levels, ROWS);
    char want[64];
    size_t v = 0;
    for (size_t r = 0; r < ROWS; r++) {
        int n = value_of(r, want, sizeof want);
        assert_int_equal(c->def[r], n < 0 ? 0 : 1);
        if (n < 0)
            continue;
        size_t len;
        const uint8_t *got = pqc_value(c, v++, &len);
        assert_int_equal(len, (size_t)n);
        assert_memory_equal(got, want, len);
    }
    assert_int_equal(c->dict_pages, 1);
    pqc_close(&f);
}

static void test_dictionary_falls_back_mid_row_group(void **state)
{
    (void)state;
    for (int v = 1; v <= 2; v++) {
        pq_buf out;
        pq_buf_init(&out);
        write_file(&out, v, NULL);
        check_pages(&out);
        check_values(&out, NULL);
        pq_buf_free(&out);
    }
}

static void test_dictionary_fallback_mid_row_group_encrypted(void **state)
{
    (void)state;
    uint8_t raw[16];
    for (size_t i = 0; i < sizeof raw; i++)
        raw[i] = (uint8_t)(i * 7 + 1);
    pq_crypto_key key;
    pq_err err = {0};
    assert_int_equal(pq_crypto_key_init(&key, raw, sizeof raw, "kf", &err), 0);
    pq_buf out;
    pq_buf_init(&out);
    write_file(&out, 2, &key);
    check_values(&out, &key);
    pq_buf_free(&out);
    pq_crypto_key_free(&key);
}

/* Row r's value: one of five short ones (SHORT), or 40 bytes with no
 * prefix in common with its neighbours', so that DELTA_BYTE_ARRAY does
 * not make them small: distinct (WIDE), five repeating (WIDE_FEW: a
 * dictionary of 220 bytes and a few bytes of indices), or four (WIDE_FOUR:
 * a dictionary of 176 bytes, and on 200 rows some 55 bytes of levels and
 * indices: each page under 192 bytes, the two together over). */
enum { SHORT, WIDE, WIDE_FEW, WIDE_FOUR };

static int small_value(size_t r, int kind, char *buf, size_t cap)
{
    bool wide = kind != SHORT;
    r = kind == WIDE_FEW ? r % 5 : kind == WIDE_FOUR ? r % 4 : r;
    uint64_t h = (uint64_t)(r + 1) * 0x9E3779B97F4A7C15u;
    return wide ? snprintf(buf, cap, "%016llx%016llx%08x", (unsigned long long)h,
                           (unsigned long long)(h * 31), (unsigned)(h >> 7))
                : snprintf(buf, cap, "v%zu", r % 5);
}

/* A file of one optional string column with options o: `rows` rows of
 * small_value (wide or SHORT), or nulls. */
static void write_strings(pq_buf *out, size_t rows, int wide, bool nulls, const pq_writer_opts *o)
{
    pq_err err = {0};
    pq_column_opts co;
    pq_column_opts_default(&co);
    pq_schema *s = pq_schema_new(NULL);
    pq_node_spec leaf = {.name = "s", .repetition = PQ_OPTIONAL, .type = PQ_BYTE_ARRAY,
                         .logical = {.kind = PQ_LT_STRING}, .field_id = -1, .opts = &co};
    assert_true(pq_schema_add_leaf(s, 0, &leaf, &err) >= 0);
    pq_writer *w = NULL;
    if (pq_writer_open(&w, s, o, pqt_mem_sink(out), &err) != 0)
        fail_msg("open: %s", err.msg);
    char buf[64];
    for (size_t r = 0; r < rows; r++) {
        pq_column *c = pq_writer_column(w, 0);
        int n = small_value(r, wide, buf, sizeof buf);
        assert_int_equal(nulls ? pq_column_put_null(c, 0, 0)
                               : pq_column_put_bytes(c, 0, buf, (size_t)n), 0);
        assert_int_equal(pq_writer_end_row(w, &err), 0);
    }
    if (pq_writer_close(w, &err) != 0)
        fail_msg("close: %s", err.msg);
    pq_writer_destroy(w);
    pq_schema_destroy(s);
}

/* The writer's defaults, with pages of PAGE_ROWS rows. */
static pq_writer_opts page_opts(int page_version)
{
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.page_version = page_version;
    o.page_max_rows = PAGE_ROWS;
    return o;
}

static void write_small(pq_buf *out, size_t rows, int wide, size_t small, int page_version)
{
    pq_writer_opts o = page_opts(page_version);
    o.small_chunk_bytes = small;
    write_strings(out, rows, wide, false, &o);
}

/* The codec of the file's one chunk; every value read back. */
static int small_codec(const pq_buf *file, size_t rows, int wide)
{
    pq_err err = {0};
    pqf_file f;
    pqf_chunk ch;
    if (pqf_open_mem(&f, file->data, file->len, "small", &err) != 0 ||
        pqf_chunk_get(&f, 0, 0, &ch, &err) != 0)
        fail_msg("open: %s", err.msg);
    int codec = ch.codec;
    pqf_close(&f);
    pqc_opts ro = {0};
    pqc_file c;
    if (pqc_open_mem(&c, file->data, file->len, "small", &ro, &err) != 0)
        fail_msg("read: %s", err.msg);
    assert_int_equal(c.cols[0].n_levels, rows);
    char want[64];
    for (size_t r = 0; r < rows; r++) {
        int n = small_value(r, wide, want, sizeof want);
        size_t len;
        const uint8_t *got = pqc_value(&c.cols[0], r, &len);
        assert_int_equal(len, (size_t)n);
        assert_memory_equal(got, want, len);
    }
    pqc_close(&c);
    return codec;
}

static void test_small_chunk_uncompressed(void **state)
{
    (void)state;
    static const struct {
        size_t rows;
        int wide;
        size_t small;
        int codec;
    } cases[] = {
        {10, SHORT, 192, PQ_CODEC_UNCOMPRESSED}, /* a few bytes of indices and values */
        {10, SHORT, 0, PQ_CODEC_ZSTD},           /* the option off */
        {10, WIDE, 192, PQ_CODEC_ZSTD},          /* 400 bytes of values */
        {10, WIDE, 1024, PQ_CODEC_UNCOMPRESSED},
        {40, WIDE_FEW, 192, PQ_CODEC_ZSTD},      /* the dictionary counts */
        {40, WIDE_FEW, 1024, PQ_CODEC_UNCOMPRESSED},
        {200, WIDE_FOUR, 192, PQ_CODEC_UNCOMPRESSED}, /* each page counts apart */
        {200, WIDE_FOUR, 160, PQ_CODEC_ZSTD},
        {3000, SHORT, 192, PQ_CODEC_ZSTD},       /* 12 pages: the codec was chosen
                                                    before the last */
        {PAGE_ROWS, SHORT, 4096, PQ_CODEC_UNCOMPRESSED},
    };
    for (int v = 1; v <= 2; v++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            pq_buf out;
            pq_buf_init(&out);
            write_small(&out, cases[i].rows, cases[i].wide, cases[i].small, v);
            int got = small_codec(&out, cases[i].rows, cases[i].wide);
            if (got != cases[i].codec)
                fail_msg("page v%d, case %zu: codec %d, want %d", v, i, got, cases[i].codec);
            pq_buf_free(&out);
        }
    }
}

/* small_page_bytes: a zstd page under it compresses at level -1 (its
 * bytes differ from level 1's: raw literals), only when the level is the
 * writer's; a page at or over it, or a level the column sets, is written
 * as without the option; every value reads back. */
static void write_small_page(pq_buf *out, size_t rows, size_t small_page, int level, int v)
{
    pq_writer_opts o = page_opts(v);
    o.codec_level = level;
    o.small_page_bytes = small_page;
    write_strings(out, rows, WIDE, false, &o);
    assert_int_equal(small_codec(out, rows, WIDE), PQ_CODEC_ZSTD);
}

static bool same_file(const pq_buf *a, const pq_buf *b)
{
    return a->len == b->len && memcmp(a->data, b->data, a->len) == 0;
}

static void test_small_page_level(void **state)
{
    (void)state;
    static const struct {
        size_t rows, small_page;
        int level;
        bool same;               /* as the file without the option */
    } cases[] = {
        {10, 1024, 0, false},    /* ~400 bytes of distinct hex values */
        {10, 1024, 1, true},     /* the level is the column's */
        {10, 256, 0, true},      /* the page is larger */
        {40, 1024, 0, true},
    };
    for (int v = 1; v <= 2; v++) {
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            pq_buf on, off;
            pq_buf_init(&on);
            pq_buf_init(&off);
            write_small_page(&on, cases[i].rows, cases[i].small_page, cases[i].level, v);
            write_small_page(&off, cases[i].rows, 0, cases[i].level, v);
            if (same_file(&on, &off) != cases[i].same)
                fail_msg("page v%d, case %zu: the option %s the bytes", v, i,
                         cases[i].same ? "changed" : "left");
            pq_buf_free(&on);
            pq_buf_free(&off);
        }
    }
}

/* A file of one optional column, `rows` rows of small_value SHORT (null
 * every row when nulls), pages of PAGE_ROWS rows. */
static void write_column(pq_buf *out, size_t rows, bool nulls, int page_version)
{
    pq_writer_opts o = page_opts(page_version);
    write_strings(out, rows, SHORT, nulls, &o);
}

/* The chunk's data pages: how many, how many with Statistics in their
 * header, the last one's encoding and value bytes (after its levels); the
 * chunk's own Statistics must be there and count the nulls. */
typedef struct page_census {
    size_t pages, with_stats;
    int32_t encoding;
    size_t value_bytes;
} page_census;

static page_census census(const pq_buf *file, int64_t want_nulls)
{
    pq_err err = {0};
    pqf_file f;
    pqf_chunk ch;
    pqf_pages it;
    if (pqf_open_mem(&f, file->data, file->len, "census", &err) != 0 ||
        pqf_chunk_get(&f, 0, 0, &ch, &err) != 0 || pqf_pages_init(&it, &f, &ch, &err) != 0)
        fail_msg("open: %s", err.msg);
    const tr_node *st = tr_field_struct(ch.md, 12);
    assert_non_null(st);
    assert_int_equal(tr_field_int(st, 3, -1), want_nulls);
    page_census pc = {0};
    int more;
    while ((more = pqf_pages_next(&it, &err)) == 1) {
        if (!pqf_page_is_data(&it.page))
            continue;
        pc.pages++;
        pc.with_stats += it.page.stats != NULL;
        pc.encoding = it.page.encoding;
        size_t levels = it.page.def_len >= 0 ? (size_t)it.page.def_len : 0;
        pc.value_bytes = (size_t)it.page.uncompressed_size - levels;
    }
    assert_int_equal(more, 0);
    pqf_pages_free(&it);
    pqf_close(&f);
    return pc;
}

static void test_page_header_statistics(void **state)
{
    (void)state;
    for (int v = 1; v <= 2; v++) {
        pq_buf out;
        pq_buf_init(&out);
        write_column(&out, PAGE_ROWS - 50, false, v);    /* one page */
        page_census pc = census(&out, 0);
        assert_int_equal(pc.pages, 1);
        assert_int_equal(pc.with_stats, 0);
        pq_buf_reset(&out);
        write_column(&out, 4 * PAGE_ROWS, false, v);     /* four pages */
        pc = census(&out, 0);
        assert_int_equal(pc.pages, 4);
        assert_int_equal(pc.with_stats, 4);
        pq_buf_free(&out);
    }
}

static void test_all_null_chunk_plain(void **state)
{
    (void)state;
    for (int v = 1; v <= 2; v++) {
        pq_buf out;
        pq_buf_init(&out);
        write_column(&out, 100, true, v);
        page_census pc = census(&out, 100);
        assert_int_equal(pc.pages, 1);
        assert_int_equal(pc.encoding, PQ_ENC_PLAIN);
        if (v == 2)
            assert_int_equal(pc.value_bytes, 0);  /* DELTA_BYTE_ARRAY wrote 10 */
        pqc_opts ro = {0};
        pqc_file c;
        pq_err err = {0};
        if (pqc_open_mem(&c, out.data, out.len, "nulls", &ro, &err) != 0)
            fail_msg("read: %s", err.msg);
        assert_int_equal(c.cols[0].n_levels, 100);
        for (size_t r = 0; r < 100; r++)
            assert_int_equal(c.cols[0].def[r], 0);
        pqc_close(&c);
        pq_buf_free(&out);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_chunk_uncompressed),
        cmocka_unit_test(test_small_page_level),
        cmocka_unit_test(test_page_header_statistics),
        cmocka_unit_test(test_all_null_chunk_plain),
        cmocka_unit_test(test_dictionary_falls_back_mid_row_group),
        cmocka_unit_test(test_dictionary_fallback_mid_row_group_encrypted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
