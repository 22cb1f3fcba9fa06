/* test_encrypted_parqd.c - every Parquet Modular Encryption mode parqd
 * writes, read back by the test-only decrypting reader (tests/support/
 * pqcrypt.c, itself checked against the parquet-testing reference files in
 * test_encrypted_reference.c) and compared value by value.
 *
 * Mode matrix (36 files): AES_GCM_V1 / AES_GCM_CTR_V1 x encrypted (PARE) /
 * signed plaintext (PAR1) footer x uniform (footer key everywhere) / every
 * column its own key / partly plaintext (three columns with keys, one of
 * them a single nested leaf) x AAD prefix stored / supplied by the reader /
 * none. Key sizes rotate 128/192/256 bits, pages v1/v2, codecs
 * ZSTD/SNAPPY/UNCOMPRESSED. The schema has flat and nested columns (LIST
 * of strings, a struct), dictionary and plain/delta encodings, bloom
 * filters on every non-boolean leaf, page indexes, several row groups and
 * several pages per chunk (so data page ordinals > 0 are exercised).
 *
 * Also: wrong keys and wrong/missing AAD prefixes fail on the right
 * module; the metadata layout Encryption.md 5.3-5.5 asks for; a single
 * flipped byte in any GCM module (footer, column metadata, data page
 * header, data page, dictionary page header and page, column index, offset
 * index, bloom header, bloom bitset) fails that module's authentication,
 * on a seeded sample of positions; under AES_GCM_CTR_V1 page BODIES are
 * CTR-encrypted and not authenticated (Encryption.md 4.2.2: "tampering
 * with the page data might go unnoticed"), which the test shows, while
 * their headers still are; plaintext-footer files read without keys give
 * the plaintext columns, the signature verifies, a flipped footer byte
 * fails it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "buf.h"
#include "crypto.h"
#include "decode.h"
#include "err.h"
#include "pq_writer.h"
#include "pqcrypt.h"
#include "thrift_read.h"
#include "memsink.h"

/* ---- configuration ------------------------------------------------------- */

enum { LAYOUT_UNIFORM, LAYOUT_PER_COLUMN, LAYOUT_PARTIAL, LAYOUTS };
enum { AAD_NONE, AAD_STORED, AAD_SUPPLIED, AADS };
static const char *const LAYOUT_NAME[] = { "uniform", "per-column", "partly-plaintext" };
static const char *const AAD_NAME[] = { "no-aad", "aad-stored", "aad-supplied" };

typedef struct cfg {
    pq_crypto_algorithm alg;
    bool plain_footer;
    int layout, aad;
    int page_version;
    pq_codec codec;
    size_t key_len;
    char name[96];
} cfg;

static cfg make_cfg(size_t i)
{
    static const pq_codec codecs[] = { PQ_CODEC_ZSTD, PQ_CODEC_SNAPPY, PQ_CODEC_UNCOMPRESSED };
    cfg c = { 0 };
    c.aad = (int)(i % AADS);
    c.layout = (int)(i / AADS % LAYOUTS);
    c.plain_footer = i / (AADS * LAYOUTS) % 2 == 1;
    c.alg = i / (AADS * LAYOUTS * 2) % 2 == 0 ? PQ_AES_GCM_V1 : PQ_AES_GCM_CTR_V1;
    c.page_version = i % 2 == 0 ? 2 : 1;
    c.codec = codecs[i % 3];
    c.key_len = 16 + 8 * (i % 3);
    snprintf(c.name, sizeof c.name, "%s/%s/%s/%s/v%d/%zu-bit", c.alg == PQ_AES_GCM_V1 ? "GCM" : "GCM_CTR",
             c.plain_footer ? "plaintext-footer" : "encrypted-footer", LAYOUT_NAME[c.layout],
             AAD_NAME[c.aad], c.page_version, c.key_len * 8);
    return c;
}
#define NCFG (2 * 2 * LAYOUTS * AADS)

static const char AAD_PREFIX[] = "parqd/table=events/date=2026-01-01/part-0";

/* ---- keys ------------------------------------------------------------------ */

#define NKEYS 8   /* kf, kc0..kc6 */
typedef struct keys {
    pq_crypto_key k[NKEYS];
    pqc_key ids[NKEYS];
} keys;

static const char *const KEY_IDS[NKEYS] = { "kf", "kc0", "kc1", "kc2", "kc3", "kc4", "kc5", "kc6" };

static void keys_init(keys *K, size_t len, uint8_t salt)
{
    memset(K, 0, sizeof *K);
    for (int i = 0; i < NKEYS; i++) {
        uint8_t b[32];
        for (size_t j = 0; j < sizeof b; j++)
            b[j] = (uint8_t)(i * 31 + j * 7 + 1 + salt);
        assert_int_equal(pq_crypto_key_init(&K->k[i], b, len, KEY_IDS[i], NULL), 0);
        K->ids[i] = (pqc_key){ KEY_IDS[i], &K->k[i] };
    }
}

static void keys_free(keys *K)
{
    for (int i = 0; i < NKEYS; i++)
        pq_crypto_key_free(&K->k[i]);
}

/* ---- schema and data -------------------------------------------------------- */

/* Leaves (column ordinals):
 *   0 id            required int64              plain/delta, bloom
 *   1 name          optional string             dictionary, bloom
 *   2 score         required double             plain, bloom
 *   3 flag          required boolean
 *   4 tags.list.element  optional LIST of optional string   dictionary, bloom
 *   5 loc.lat       optional struct loc { required double lat;
 *   6 loc.city                           optional string city }   bloom
 *   7 code          required fixed_len_byte_array(4)   plain, bloom */
enum { L_ID, L_NAME, L_SCORE, L_FLAG, L_TAG, L_LAT, L_CITY, L_CODE, NLEAVES };
static const char *const LEAF_PATH[NLEAVES] = { "id", "name", "score", "flag", "tags.list.element",
                                                "loc.lat", "loc.city", "code" };

typedef struct expect_col {
    uint16_t *def, *rep;
    size_t n, cap;
    pq_buf heap;
    uint32_t *off;
    size_t nvals, vcap;
} expect_col;

typedef struct gen {
    pq_schema *s;
    pq_writer *w;
    pq_column_opts opts[NLEAVES];
    uint16_t max_def[NLEAVES];
    expect_col ex[NLEAVES];
} gen;

static void ex_level(expect_col *e, uint16_t rep, uint16_t def)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 1024;
        e->def = realloc(e->def, e->cap * sizeof *e->def);
        e->rep = realloc(e->rep, e->cap * sizeof *e->rep);
        assert_non_null(e->def);
        assert_non_null(e->rep);
    }
    e->def[e->n] = def;
    e->rep[e->n] = rep;
    e->n++;
}

static void ex_value(expect_col *e, const void *p, size_t len)
{
    if (e->nvals + 2 > e->vcap) {
        e->vcap = e->vcap ? e->vcap * 2 : 1024;
        e->off = realloc(e->off, e->vcap * sizeof *e->off);
        assert_non_null(e->off);
        if (e->nvals == 0)
            e->off[0] = 0;
    }
    assert_int_equal(pq_buf_append(&e->heap, p, len), 0);
    e->off[++e->nvals] = (uint32_t)e->heap.len;
}

static void put_value(gen *g, int leaf, uint16_t rep, const void *p, size_t len, int type)
{
    pq_column *c = pq_writer_column(g->w, (size_t)leaf);
    int rc;
    switch (type) {
    case PQ_BOOLEAN: rc = pq_column_put_bool(c, rep, *(const uint8_t *)p != 0); break;
    case PQ_INT64: { int64_t v; memcpy(&v, p, 8); rc = pq_column_put_i64(c, rep, v); break; }
    case PQ_DOUBLE: { double v; memcpy(&v, p, 8); rc = pq_column_put_double(c, rep, v); break; }
    default: rc = pq_column_put_bytes(c, rep, p, len); break;
    }
    assert_int_equal(rc, 0);
    ex_level(&g->ex[leaf], rep, g->max_def[leaf]);
    ex_value(&g->ex[leaf], p, len);
}

static void put_null(gen *g, int leaf, uint16_t rep, uint16_t def)
{
    assert_int_equal(pq_column_put_null(pq_writer_column(g->w, (size_t)leaf), rep, def), 0);
    ex_level(&g->ex[leaf], rep, def);
}

static void put_str(gen *g, int leaf, uint16_t rep, const char *s)
{
    put_value(g, leaf, rep, s, strlen(s), PQ_BYTE_ARRAY);
}

/* Row r: every value is a function of r (so any reader can recompute it). */
static void gen_row(gen *g, uint64_t r)
{
    char s[64];
    int64_t id = (int64_t)(r * 7919) - 1000000;
    put_value(g, L_ID, 0, &id, 8, PQ_INT64);
    if (r % 11 == 3) {
        put_null(g, L_NAME, 0, 0);
    } else {
        snprintf(s, sizeof s, "name-%u", (unsigned)(r % 37));
        put_str(g, L_NAME, 0, s);
    }
    double score = (double)r * 0.25 - 3.5;
    put_value(g, L_SCORE, 0, &score, 8, PQ_DOUBLE);
    uint8_t flag = r % 3 == 0;
    put_value(g, L_FLAG, 0, &flag, 1, PQ_BOOLEAN);
    if (r % 13 == 0) {
        put_null(g, L_TAG, 0, 0);                  /* null list */
    } else if (r % 13 == 1) {
        put_null(g, L_TAG, 0, 1);                  /* empty list */
    } else {
        for (uint64_t j = 0; j <= r % 4; j++) {
            uint16_t rep = j == 0 ? 0 : 1;
            if ((r + j) % 5 == 0) {
                put_null(g, L_TAG, rep, 2);        /* null element */
            } else {
                snprintf(s, sizeof s, "t%u", (unsigned)((r + j) % 9));
                put_str(g, L_TAG, rep, s);
            }
        }
    }
    if (r % 7 == 0) {
        put_null(g, L_LAT, 0, 0);
        put_null(g, L_CITY, 0, 0);
    } else {
        double lat = (double)r / 1000.0;
        put_value(g, L_LAT, 0, &lat, 8, PQ_DOUBLE);
        if (r % 5 == 0) {
            put_null(g, L_CITY, 0, 1);
        } else {
            snprintf(s, sizeof s, "city%u", (unsigned)(r % 17));
            put_str(g, L_CITY, 0, s);
        }
    }
    uint8_t code[4] = { (uint8_t)(r >> 24), (uint8_t)(r >> 16), (uint8_t)(r >> 8), (uint8_t)r };
    put_value(g, L_CODE, 0, code, 4, PQ_FIXED_LEN_BYTE_ARRAY);
}

static pq_schema *build_schema(gen *g)
{
    pq_err err = { 0 };
    pq_schema *s = pq_schema_new(NULL);
    for (int i = 0; i < NLEAVES; i++) {
        pq_column_opts_default(&g->opts[i]);
        g->opts[i].bloom = i == L_FLAG ? 0 : 1;
        g->opts[i].dictionary = (i == L_NAME || i == L_TAG || i == L_CITY) ? 1 : 0;
    }
    g->opts[L_SCORE].encoding = PQ_ENC_PLAIN;
    g->opts[L_CODE].encoding = PQ_ENC_PLAIN;
    g->opts[L_NAME].bloom_fpp = 0.05;
    pq_logical str = { .kind = PQ_LT_STRING };
#define LEAF(parent, nm, rep, ty, len, lt, idx)                                                   \
    assert_true(pq_schema_add_leaf(s, parent, &(pq_node_spec){ .name = nm, .repetition = rep,   \
        .type = ty, .type_length = len, .logical = lt, .field_id = -1, .opts = &g->opts[idx] },  \
        &err) > 0)
    LEAF(0, "id", PQ_REQUIRED, PQ_INT64, 0, (pq_logical){ 0 }, L_ID);
    LEAF(0, "name", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, str, L_NAME);
    LEAF(0, "score", PQ_REQUIRED, PQ_DOUBLE, 0, (pq_logical){ 0 }, L_SCORE);
    LEAF(0, "flag", PQ_REQUIRED, PQ_BOOLEAN, 0, (pq_logical){ 0 }, L_FLAG);
    int list = pq_schema_add_list(s, 0, "tags", PQ_OPTIONAL, -1, &err);
    assert_true(list > 0);
    LEAF(list, "element", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, str, L_TAG);
    int loc = pq_schema_add_group(s, 0, &(pq_node_spec){ .name = "loc", .repetition = PQ_OPTIONAL,
                                                         .field_id = -1 }, &err);
    assert_true(loc > 0);
    LEAF(loc, "lat", PQ_REQUIRED, PQ_DOUBLE, 0, (pq_logical){ 0 }, L_LAT);
    LEAF(loc, "city", PQ_OPTIONAL, PQ_BYTE_ARRAY, 0, str, L_CITY);
    LEAF(0, "code", PQ_REQUIRED, PQ_FIXED_LEN_BYTE_ARRAY, 4, (pq_logical){ 0 }, L_CODE);
#undef LEAF
    if (pq_schema_finish(s, &err) != 0)
        fail_msg("schema: %s", err.msg);
    assert_int_equal(pq_schema_num_leaves(s), NLEAVES);
    for (int i = 0; i < NLEAVES; i++) {
        assert_string_equal(pq_schema_leaf_path(s, (size_t)i), LEAF_PATH[i]);
        g->max_def[i] = pq_schema_max_def(s, (size_t)i);
    }
    return s;
}

static void gen_free(gen *g)
{
    for (int i = 0; i < NLEAVES; i++) {
        free(g->ex[i].def);
        free(g->ex[i].rep);
        free(g->ex[i].off);
        pq_buf_free(&g->ex[i].heap);
    }
    if (g->s)
        pq_schema_destroy(g->s);
    memset(g, 0, sizeof *g);
}

/* Which key id encrypts a leaf in a layout: "" footer key, NULL none. */
static const char *leaf_key(int layout, int leaf)
{
    static const char *const per_column[NLEAVES] = { "kc0", "kc1", "kc2", "kc3", "kc4",
                                                     "kc5", "kc5", "kc6" };
    switch (layout) {
    case LAYOUT_UNIFORM: return "";
    case LAYOUT_PER_COLUMN: return per_column[leaf];
    default: /* partly plaintext: id, the tags list, and loc.city alone */
        return leaf == L_ID ? "kc0" : leaf == L_TAG ? "kc4" : leaf == L_CITY ? "kc5" : NULL;
    }
}

/* Writes `rows` rows with config c into out; g keeps the expectation. */
static void write_file(const cfg *c, keys *K, size_t rows, size_t rg_rows, size_t page_rows,
                       gen *g, pq_buf *out)
{
    memset(g, 0, sizeof *g);
    g->s = build_schema(g);
    pq_column_key cols[7];
    size_t ncols = 0;
    if (c->layout == LAYOUT_PER_COLUMN) {
        static const char *const top[7] = { "id", "name", "score", "flag", "tags", "loc", "code" };
        for (size_t i = 0; i < 7; i++)
            cols[ncols++] = (pq_column_key){ top[i], &K->k[1 + i], KEY_IDS[1 + i] };
    } else if (c->layout == LAYOUT_PARTIAL) {
        cols[ncols++] = (pq_column_key){ "id", &K->k[1], "kc0" };
        cols[ncols++] = (pq_column_key){ "tags", &K->k[5], "kc4" };
        cols[ncols++] = (pq_column_key){ "loc.city", &K->k[6], "kc5" };
    }
    pq_encryption_opts e = {
        .algorithm = c->alg, .plaintext_footer = c->plain_footer, .footer_key = &K->k[0],
        .footer_key_id = "kf", .columns = cols, .n_columns = ncols,
        .aad_prefix = c->aad == AAD_NONE ? NULL : AAD_PREFIX,
        .aad_prefix_len = c->aad == AAD_NONE ? 0 : strlen(AAD_PREFIX),
        .store_aad_prefix = c->aad == AAD_STORED,
    };
    pq_writer_opts o;
    pq_writer_opts_default(&o);
    o.encryption = &e;
    o.codec = c->codec;
    o.page_version = c->page_version;
    o.page_max_rows = page_rows;
    o.row_group_max_rows = rg_rows;
    pq_err err = { 0 };
    pq_buf_init(out);
    if (pq_writer_open(&g->w, g->s, &o, pqt_mem_sink(out), &err) != 0)
        fail_msg("%s: open: %s", c->name, err.msg);
    for (size_t r = 0; r < rows; r++) {
        gen_row(g, r);
        if (pq_writer_end_row(g->w, &err) != 0)
            fail_msg("%s: row %zu: %s", c->name, r, err.msg);
    }
    if (pq_writer_close(g->w, &err) != 0)
        fail_msg("%s: close: %s", c->name, err.msg);
    pq_writer_destroy(g->w);
    g->w = NULL;
}

static pqc_opts opts_for(const cfg *c, keys *K)
{
    pqc_opts o = { .keys = K->ids, .n_keys = NKEYS };
    if (c->aad == AAD_SUPPLIED) {
        o.aad_prefix = AAD_PREFIX;
        o.aad_prefix_len = strlen(AAD_PREFIX);
    }
    return o;
}

/* ---- checks ---------------------------------------------------------------- */

static void compare_leaf(const cfg *c, const pqc_column *col, const expect_col *e)
{
    if (col->n_levels != e->n)
        fail_msg("%s %s: %zu levels read, %zu written", c->name, col->path, col->n_levels, e->n);
    for (size_t i = 0; i < e->n; i++)
        if (col->def[i] != e->def[i] || col->rep[i] != e->rep[i])
            fail_msg("%s %s level %zu: read (rep %u, def %u), wrote (%u, %u)", c->name, col->path,
                     i, col->rep[i], col->def[i], e->rep[i], e->def[i]);
    if (col->values.n != e->nvals)
        fail_msg("%s %s: %zu values read, %zu written", c->name, col->path, col->values.n,
                 e->nvals);
    for (size_t i = 0; i < e->nvals; i++) {
        size_t len;
        const uint8_t *p = pqc_value(col, i, &len);
        size_t want = e->off[i + 1] - e->off[i];
        if (len != want || memcmp(p, e->heap.data + e->off[i], len) != 0)
            fail_msg("%s %s value %zu differs (%zu bytes read, %zu written)", c->name, col->path,
                     i, len, want);
    }
}

/* Every value of each row group is in that row group's bloom filter. */
static void check_blooms(const cfg *c, const pqc_file *f, const pqc_column *col)
{
    for (size_t g = 0; g < f->num_row_groups; g++) {
        const pqc_bloom *b = &col->blooms[g];
        size_t from = col->rg_first_value[g], to = col->rg_first_value[g + 1];
        if (col->type == PQ_BOOLEAN) {
            assert_null(b->bitset);
            continue;
        }
        if (to > from && b->bitset == NULL)
            fail_msg("%s %s rg %zu: no bloom filter", c->name, col->path, g);
        for (size_t i = from; i < to; i++) {
            size_t len;
            const uint8_t *p = pqc_value(col, i, &len);
            if (!pqc_bloom_check(b, XXH64(p, len, 0)))
                fail_msg("%s %s rg %zu: bloom filter misses value %zu", c->name, col->path, g, i);
        }
    }
}

static const tr_node *chunk_node(const pqc_file *f, size_t rg, size_t col)
{
    return tr_list_at(tr_field_list(pqf_row_group(&f->pf, rg), 1), col);
}

/* Encryption.md 5.3-5.5 layout of the footer, per column chunk. */
static void check_layout(const cfg *c, const pqc_file *f)
{
    assert_int_equal(f->encrypted_footer, !c->plain_footer);
    assert_int_equal(f->signed_footer, c->plain_footer);
    if (c->plain_footer)
        assert_true(f->signature_verified);
    assert_int_equal(f->algorithm, c->alg);
    assert_int_equal(f->aad_prefix_stored, c->aad == AAD_STORED);
    assert_int_equal(f->supply_aad_prefix, c->aad == AAD_SUPPLIED);
    assert_int_equal(f->padded_modules, 0);
    assert_true(f->crc_pages > 0); /* parqd writes page CRCs by default */
    assert_int_equal(f->meta_mismatches, 0);
    for (size_t g = 0; g < f->num_row_groups; g++) {
        /* RowGroup.ordinal (5.2): pqcrypt already checked it equals g */
        assert_true(tr_has(pqf_row_group(&f->pf, g), 7));
        for (size_t i = 0; i < NLEAVES; i++) {
            const char *k = leaf_key(c->layout, (int)i);
            const tr_node *cc = chunk_node(f, g, i);
            const tr_node *md = tr_field_struct(cc, 3);
            bool enc_meta = tr_has(cc, 9);
            if (k == NULL) {
                if (tr_has(cc, 8) || enc_meta || md == NULL)
                    fail_msg("%s rg %zu %s: plaintext column with crypto metadata or without "
                             "meta_data", c->name, g, LEAF_PATH[i]);
                continue;
            }
            const tr_node *cm = tr_field_struct(cc, 8);
            if (cm == NULL)
                fail_msg("%s rg %zu %s: encrypted column without crypto_metadata", c->name, g,
                         LEAF_PATH[i]);
            assert_int_equal(tr_has(cm, 1), k[0] == '\0');
            if (k[0] != '\0') {
                size_t len;
                const uint8_t *km = tr_field_bin(tr_field_struct(cm, 2), 2, &len);
                assert_non_null(km);
                assert_int_equal(len, strlen(k));
                assert_memory_equal(km, k, len);
            }
            if (!c->plain_footer && k[0] == '\0') {
                /* 5.4: footer-key columns keep meta_data in place */
                if (md == NULL || enc_meta)
                    fail_msg("%s rg %zu %s: footer-key column in an encrypted footer must keep "
                             "meta_data and have no encrypted_column_metadata", c->name, g,
                             LEAF_PATH[i]);
            } else if (!c->plain_footer) {
                /* 5.4: "This field is not set for columns encrypted with a
                 * column-specific key" */
                if (md != NULL || !enc_meta)
                    fail_msg("%s rg %zu %s: column-key column in an encrypted footer: meta_data "
                             "%s, encrypted_column_metadata %s", c->name, g, LEAF_PATH[i],
                             md ? "set" : "unset", enc_meta ? "set" : "unset");
            } else {
                /* 5.3 / 5.5: plaintext footer -> ColumnMetaData encrypted
                 * separately, meta_data kept for legacy readers but
                 * stripped of statistics */
                if (md == NULL || !enc_meta)
                    fail_msg("%s rg %zu %s: encrypted column in a plaintext footer: meta_data "
                             "%s, encrypted_column_metadata %s", c->name, g, LEAF_PATH[i],
                             md ? "set" : "unset", enc_meta ? "set" : "unset");
                if (tr_has(md, 12))
                    fail_msg("%s rg %zu %s: plaintext meta_data of an encrypted column keeps "
                             "its statistics", c->name, g, LEAF_PATH[i]);
            }
        }
    }
    /* footer key id: FileCryptoMetaData.key_metadata or FileMetaData 9 */
    if (c->plain_footer) {
        size_t len;
        const uint8_t *km = tr_field_bin(f->pf.meta, 9, &len);
        assert_non_null(km);
        assert_int_equal(len, 2);
        assert_memory_equal(km, "kf", 2);
        assert_true(tr_has(f->pf.meta, 8));
    }
}

static size_t count_modules(const pqc_file *f, int type, bool gcm)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nmodules; i++)
        n += f->modules[i].type == type && f->modules[i].gcm == gcm;
    return n;
}

static void check_file(const cfg *c, const pqc_file *f, const gen *g, size_t rgs)
{
    assert_int_equal(f->ncols, NLEAVES);
    assert_int_equal(f->num_row_groups, rgs);
    for (int i = 0; i < NLEAVES; i++) {
        const pqc_column *col = &f->cols[i];
        assert_string_equal(col->path, LEAF_PATH[i]);
        compare_leaf(c, col, &g->ex[i]);
        check_blooms(c, f, col);
        const char *k = leaf_key(c->layout, i);
        assert_int_equal(col->encrypted, k != NULL);
        assert_int_equal(col->offset_indexes, rgs);
        assert_int_equal(col->column_indexes, rgs);
        assert_true(col->data_pages >= 2 * rgs);
        if (i == L_NAME || i == L_TAG || i == L_CITY)
            assert_int_equal(col->dict_pages, rgs);
    }
    check_layout(c, f);
    bool ctr = c->alg == PQ_AES_GCM_CTR_V1;
    assert_true(count_modules(f, PQ_MODULE_DATA_PAGE_HEADER, true) > 0);
    assert_true(count_modules(f, PQ_MODULE_DATA_PAGE, !ctr) > 0);
    assert_int_equal(count_modules(f, PQ_MODULE_DATA_PAGE, ctr), 0);
    assert_true(count_modules(f, PQ_MODULE_DICT_PAGE_HEADER, true) > 0);
    assert_true(count_modules(f, PQ_MODULE_COLUMN_INDEX, true) > 0);
    assert_true(count_modules(f, PQ_MODULE_OFFSET_INDEX, true) > 0);
    assert_true(count_modules(f, PQ_MODULE_BLOOM_HEADER, true) > 0);
    assert_true(count_modules(f, PQ_MODULE_BLOOM_BITSET, true) > 0);
}

/* ---- tests ------------------------------------------------------------------ */

#define ROWS 2400
#define RG_ROWS 800
#define PAGE_ROWS 300

static void test_parqd_every_mode_round_trips(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCFG; i++) {
        cfg c = make_cfg(i);
        keys K;
        keys_init(&K, c.key_len, (uint8_t)i);
        gen g;
        pq_buf out;
        write_file(&c, &K, ROWS, RG_ROWS, PAGE_ROWS, &g, &out);
        pqc_opts o = opts_for(&c, &K);
        pqc_file f;
        pq_err err = { 0 };
        if (pqc_open_mem(&f, out.data, out.len, c.name, &o, &err) != 0)
            fail_msg("%s: %s (module %s)", c.name, err.msg, pqc_module_name(f.fail_module));
        check_file(&c, &f, &g, ROWS / RG_ROWS);
        printf("[ ok       ] %-62s %7zu bytes, %3zu modules, every value equal\n", c.name,
               out.len, f.nmodules);
        pqc_close(&f);
        pq_buf_free(&out);
        gen_free(&g);
        keys_free(&K);
    }
}

static void test_parqd_wrong_keys_and_prefixes_fail(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCFG; i++) {
        cfg c = make_cfg(i);
        keys K;
        keys_init(&K, c.key_len, (uint8_t)i);
        gen g;
        pq_buf out;
        write_file(&c, &K, 400, 200, 100, &g, &out);
        pq_err err = { 0 };
        pqc_file f;
        keys W; /* same ids, other bytes */
        keys_init(&W, c.key_len, (uint8_t)(i + 100));

        /* wrong footer key: the footer (PARE) or its signature (PAR1) */
        pqc_opts o = opts_for(&c, &K);
        o.footer_key = &W.k[0];
        assert_int_equal(pqc_open_mem(&f, out.data, out.len, c.name, &o, &err), PQ_ECRYPTO);
        assert_int_equal(f.fail_module, PQ_MODULE_FOOTER);
        pqc_close(&f);

        /* wrong column key: that column's first module */
        if (c.layout != LAYOUT_UNIFORM) {
            o = opts_for(&c, &K);
            pqc_key ids[NKEYS];
            memcpy(ids, K.ids, sizeof ids);
            ids[5].key = &W.k[5]; /* kc4: tags.list.element, leaf 4 */
            o.keys = ids;
            assert_int_equal(pqc_open_mem(&f, out.data, out.len, c.name, &o, &err), PQ_ECRYPTO);
            assert_int_equal(f.fail_col, L_TAG);
            assert_int_equal(f.fail_rg, 0);
            /* ColumnMetaData comes first where it is encrypted separately */
            assert_int_equal(f.fail_module, PQ_MODULE_COLUMN_META);
            pqc_close(&f);
        }

        /* AAD prefix: a wrong one fails; a missing one fails when the
         * prefix was not stored; none may be supplied when none was used */
        o = opts_for(&c, &K);
        o.aad_prefix = "parqd/other-table";
        o.aad_prefix_len = strlen(o.aad_prefix);
        assert_int_equal(pqc_open_mem(&f, out.data, out.len, c.name, &o, &err), PQ_ECRYPTO);
        pqc_close(&f);
        if (c.aad == AAD_SUPPLIED) {
            o = opts_for(&c, &K);
            o.aad_prefix = NULL;
            o.aad_prefix_len = 0;
            assert_int_equal(pqc_open_mem(&f, out.data, out.len, c.name, &o, &err), PQ_ECRYPTO);
            pqc_close(&f);
        }
        keys_free(&W);
        pq_buf_free(&out);
        gen_free(&g);
        keys_free(&K);
    }
}

/* ---- tampering -------------------------------------------------------------- */

/* Re-encrypts a PARE footer after flipping plaintext byte `at` of the
 * encrypted_column_metadata module at `mod_off` (an offset inside the
 * decrypted footer): the footer then authenticates, and only the
 * ColumnMetaData module is corrupt. */
static void reencrypt_footer_with_flip(const pqc_file *f, const pq_crypto_key *kf,
                                       const pqc_module *m, size_t at, pq_buf *file_out)
{
    const uint8_t *d = f->data;
    size_t n = f->size;
    size_t len = (size_t)d[n - 8] | (size_t)d[n - 7] << 8 | (size_t)d[n - 6] << 16 |
                 (size_t)d[n - 5] << 24;
    size_t start = n - 8 - len;
    /* FileCryptoMetaData is left as is; the footer module follows it */
    const pqc_module *fm = NULL;
    for (size_t i = 0; i < f->nmodules; i++)
        if (f->modules[i].type == PQ_MODULE_FOOTER)
            fm = &f->modules[i];
    assert_non_null(fm);
    pq_buf aad, pt;
    pq_buf_init(&aad);
    pq_buf_init(&pt);
    pq_err err = { 0 };
    assert_int_equal(pq_crypto_module_aad(&aad, f->file_aad.data, f->file_aad.len,
                                          PQ_MODULE_FOOTER, 0, 0, 0, &err), 0);
    /* the decrypted footer is in the synthetic frame after "PAR1" */
    assert_int_equal(pq_buf_append(&pt, f->pf.data + 4, f->pf.footer_len), 0);
    assert_true(m->offset + at < pt.len);
    pt.data[m->offset + at] ^= 0x01;
    pq_buf_init(file_out);
    assert_int_equal(pq_buf_append(file_out, d, fm->offset), 0);
    pq_crypto_key k;
    assert_int_equal(pq_crypto_key_init(&k, kf->bytes, kf->len, "kf", &err), 0);
    assert_int_equal(pq_crypto_gcm_encrypt(&k, aad.data, aad.len, pt.data, pt.len, file_out,
                                           &err), 0);
    size_t total = file_out->len - start;
    uint8_t tail[8] = { (uint8_t)total, (uint8_t)(total >> 8), (uint8_t)(total >> 16),
                        (uint8_t)(total >> 24), 'P', 'A', 'R', 'E' };
    assert_int_equal(pq_buf_append(file_out, tail, 8), 0);
    pq_crypto_key_free(&k);
    pq_buf_free(&aad);
    pq_buf_free(&pt);
}

typedef struct tamper_stats {
    size_t flips[10], detected[10];
    size_t ctr_body_flips, ctr_body_silent, ctr_body_decode_errors;
} tamper_stats;

/* Flips byte `pos` of the file and reopens; returns the open's rc. */
static int reopen_flipped(const pq_buf *file, size_t pos, const pqc_opts *o, pqc_file *f,
                          pq_err *err)
{
    uint8_t *copy = malloc(file->len);
    assert_non_null(copy);
    memcpy(copy, file->data, file->len);
    copy[pos] ^= 0x01;
    int rc = pqc_open_mem(f, copy, file->len, "tampered", o, err);
    free(copy);
    return rc;
}

/* A module's bytes after the length prefix: nonce, ciphertext, tag. The
 * sample: first nonce byte, last tag byte, and two seeded random bytes. */
static size_t sample_pos(const pqc_module *m, int k, pqt_rng *rng)
{
    size_t body = m->len - 4;
    switch (k) {
    case 0: return m->offset + 4;
    case 1: return m->offset + m->len - 1;
    default: return m->offset + 4 + (size_t)pqt_rng_below(rng, body);
    }
}

static void tamper_config(const cfg *c, tamper_stats *st, uint64_t seed)
{
    keys K;
    keys_init(&K, c->key_len, 7);
    gen g;
    pq_buf out;
    write_file(c, &K, 600, 300, 100, &g, &out);
    pqc_opts o = opts_for(c, &K);
    o.skip_crc = true; /* page CRCs would catch page flips before GCM does */
    pqc_file f;
    pq_err err = { 0 };
    if (pqc_open_mem(&f, out.data, out.len, c->name, &o, &err) != 0)
        fail_msg("%s: %s", c->name, err.msg);
    pqt_rng rng = { seed };
    /* up to 3 modules of each type, drawn at random, 4 positions each */
    size_t *order = malloc(f.nmodules * sizeof *order);
    assert_non_null(order);
    for (size_t i = 0; i < f.nmodules; i++)
        order[i] = i;
    for (size_t i = f.nmodules; i > 1; i--) { /* Fisher-Yates */
        size_t j = (size_t)pqt_rng_below(&rng, i), tmp = order[i - 1];
        order[i - 1] = order[j];
        order[j] = tmp;
    }
    size_t per_type[10] = { 0 };
    for (size_t oi = 0; oi < f.nmodules; oi++) {
        const pqc_module m = f.modules[order[oi]];
        if (per_type[m.type]++ >= 3)
            continue;
        for (int k = 0; k < 4; k++) {
            pqc_file t;
            pq_err terr = { 0 };
            int rc;
            if (m.type == PQ_MODULE_FOOTER && c->plain_footer) {
                /* FileMetaData bytes or the nonce || tag after them */
                size_t pos = m.offset + (size_t)pqt_rng_below(&rng, m.len);
                rc = reopen_flipped(&out, pos, &o, &t, &terr);
                st->flips[m.type]++;
                /* a flip that breaks the Thrift fails parsing before the
                 * signature is checked: still a failure at the footer */
                if (rc != 0 && t.fail_module == PQ_MODULE_FOOTER)
                    st->detected[m.type]++;
                else
                    fail_msg("%s: flipped footer byte %zu: rc %d, module %s", c->name, pos, rc,
                             pqc_module_name(t.fail_module));
                pqc_close(&t);
                continue;
            }
            if (m.type == PQ_MODULE_COLUMN_META && !c->plain_footer) {
                /* inside the encrypted footer: flip, then re-encrypt it */
                pq_buf forged;
                size_t at = k == 0 ? 4 : k == 1 ? m.len - 1
                                                : 4 + (size_t)pqt_rng_below(&rng, m.len - 4);
                reencrypt_footer_with_flip(&f, &K.k[0], &m, at, &forged);
                rc = pqc_open_mem(&t, forged.data, forged.len, "forged", &o, &terr);
                pq_buf_free(&forged);
            } else {
                pqc_opts to = o;
                to.skip_signature = m.type == PQ_MODULE_COLUMN_META; /* PAR1: reach the module */
                rc = reopen_flipped(&out, sample_pos(&m, k, &rng), &to, &t, &terr);
            }
            if (!m.gcm) {
                /* AES_GCM_CTR_V1 page body: no tag, nothing to authenticate */
                st->ctr_body_flips++;
                if (rc == PQ_ECRYPTO)
                    fail_msg("%s: CTR page flip reported as an authentication failure: %s",
                             c->name, terr.msg);
                if (rc == 0)
                    st->ctr_body_silent++;
                else
                    st->ctr_body_decode_errors++;
                pqc_close(&t);
                continue;
            }
            st->flips[m.type]++;
            if (rc != PQ_ECRYPTO || t.fail_module != m.type || t.fail_rg != m.rg ||
                t.fail_col != m.col || t.fail_page != m.page)
                fail_msg("%s: flip in %s (rg %d col %d page %d at %zu) gave rc %d in %s (rg %d "
                         "col %d page %d): %s; replay with PQ_TEST_SEED=%" PRIu64, c->name,
                         pqc_module_name(m.type), m.rg, m.col, m.page, m.offset, rc,
                         pqc_module_name(t.fail_module), t.fail_rg, t.fail_col, t.fail_page,
                         terr.msg, seed);
            if (!m.in_footer && t.fail_offset != m.offset)
                fail_msg("%s: %s failure at offset %zu, module at %zu", c->name,
                         pqc_module_name(m.type), t.fail_offset, m.offset);
            st->detected[m.type]++;
            pqc_close(&t);
        }
    }
    free(order);
    pqc_close(&f);
    pq_buf_free(&out);
    gen_free(&g);
    keys_free(&K);
}

static void test_parqd_flipped_byte_fails_that_modules_authentication(void **state)
{
    (void)state;
    uint64_t seed = pqt_seed();
    printf("[ seed     ] PQ_TEST_SEED=%" PRIu64 "\n", seed);
    tamper_stats st = { 0 };
    /* both algorithms x both footers, per-column keys (every module type
     * incl. ColumnMetaData) and uniform (footer-key modules) */
    for (size_t i = 0; i < NCFG; i++) {
        cfg c = make_cfg(i);
        if (c.aad != AAD_STORED || c.layout == LAYOUT_PARTIAL)
            continue;
        tamper_config(&c, &st, seed + i);
    }
    for (int t = 0; t < 10; t++) {
        printf("[ tamper   ] %-24s %3zu flips, %3zu failed authentication%s\n", pqc_module_name(t),
               st.flips[t], st.detected[t],
               t == PQ_MODULE_FOOTER ? " (PARE: GCM tag; PAR1: signature or parse)" : "");
        assert_true(st.flips[t] > 0);
        assert_int_equal(st.flips[t], st.detected[t]);
    }
    printf("[ tamper   ] AES_GCM_CTR_V1 page bodies: %zu flips, %zu read without any error "
           "(values silently changed), %zu failed only later in decoding - not authenticated, "
           "as Encryption.md 4.2.2 says; their headers were authenticated above\n",
           st.ctr_body_flips, st.ctr_body_silent, st.ctr_body_decode_errors);
    assert_true(st.ctr_body_flips > 0);
}

/* A flipped length prefix breaks the module framing: the open fails. */
static void test_parqd_flipped_length_prefix_fails(void **state)
{
    (void)state;
    cfg c = make_cfg(1 * AADS + AAD_STORED); /* GCM, PARE, per-column keys, stored AAD */
    keys K;
    keys_init(&K, c.key_len, 3);
    gen g;
    pq_buf out;
    write_file(&c, &K, 300, 300, 100, &g, &out);
    pqc_opts o = opts_for(&c, &K);
    pqc_file f;
    pq_err err = { 0 };
    assert_int_equal(pqc_open_mem(&f, out.data, out.len, c.name, &o, &err), 0);
    size_t n = 0;
    for (size_t i = 0; i < f.nmodules; i++) {
        const pqc_module *m = &f.modules[i];
        if (!m->gcm || m->in_footer)
            continue;
        for (size_t b = 0; b < 4; b++) {
            pqc_file t;
            int rc = reopen_flipped(&out, m->offset + b, &o, &t, &err);
            if (rc == 0)
                fail_msg("%s: flipped length byte %zu of %s at %zu went unnoticed", c.name, b,
                         pqc_module_name(m->type), m->offset);
            pqc_close(&t);
            n++;
        }
    }
    printf("[ ok       ] %zu flipped length-prefix bytes, every one failed the open\n", n);
    pqc_close(&f);
    pq_buf_free(&out);
    gen_free(&g);
    keys_free(&K);
}

/* Plaintext footer: without any key the plaintext columns read (the legacy
 * reader case, Encryption.md 5.5), and a flipped footer byte fails the
 * signature when the key is there. */
static void test_parqd_plaintext_footer_without_keys(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCFG; i++) {
        cfg c = make_cfg(i);
        if (!c.plain_footer || c.aad == AAD_SUPPLIED)
            continue;
        keys K;
        keys_init(&K, c.key_len, 5);
        gen g;
        pq_buf out;
        write_file(&c, &K, 900, 300, 100, &g, &out);
        assert_memory_equal(out.data, "PAR1", 4);
        assert_memory_equal(out.data + out.len - 4, "PAR1", 4);
        pqc_opts none = { .allow_missing_keys = true };
        pqc_file f;
        pq_err err = { 0 };
        if (pqc_open_mem(&f, out.data, out.len, c.name, &none, &err) != 0)
            fail_msg("%s without keys: %s", c.name, err.msg);
        assert_false(f.signature_verified);
        assert_int_equal(f.nmodules, 0);
        size_t plain = 0;
        for (int l = 0; l < NLEAVES; l++) {
            bool enc = leaf_key(c.layout, l) != NULL;
            assert_int_equal(f.cols[l].skipped, enc);
            if (!enc) {
                compare_leaf(&c, &f.cols[l], &g.ex[l]);
                check_blooms(&c, &f, &f.cols[l]);
                plain++;
            }
        }
        pqc_close(&f);
        /* with the footer key the signature verifies... */
        pqc_opts o = opts_for(&c, &K);
        assert_int_equal(pqc_open_mem(&f, out.data, out.len, c.name, &o, &err), 0);
        assert_true(f.signature_verified);
        size_t len = (size_t)out.data[out.len - 8] | (size_t)out.data[out.len - 7] << 8 |
                     (size_t)out.data[out.len - 6] << 16 | (size_t)out.data[out.len - 5] << 24;
        size_t start = out.len - 8 - len;
        pqc_close(&f);
        /* ...and every flipped footer or signature byte fails it: the whole
         * footer for the small files here (<= 8 KiB), else a stride */
        size_t stride = len > 8192 ? len / 4096 : 1, sig_fail = 0, parse_fail = 0;
        for (size_t p = 0; p < len; p += stride) {
            pqc_file t;
            int rc = reopen_flipped(&out, start + p, &o, &t, &err);
            if (rc == 0 || t.fail_module != PQ_MODULE_FOOTER)
                fail_msg("%s: flipped footer byte %zu: rc %d, module %s", c.name, p, rc,
                         pqc_module_name(t.fail_module));
            sig_fail += rc == PQ_ECRYPTO;
            parse_fail += rc != PQ_ECRYPTO;
            pqc_close(&t);
        }
        printf("[ ok       ] %-62s %zu plaintext columns read without keys; %zu footer flips: "
               "%zu signature failures, %zu other failures (Thrift parse, key id)\n", c.name, plain,
               (len + stride - 1) / stride, sig_fail, parse_fail);
        assert_true(sig_fail > parse_fail);
        pq_buf_free(&out);
        gen_free(&g);
        keys_free(&K);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parqd_every_mode_round_trips),
        cmocka_unit_test(test_parqd_wrong_keys_and_prefixes_fail),
        cmocka_unit_test(test_parqd_flipped_byte_fails_that_modules_authentication),
        cmocka_unit_test(test_parqd_flipped_length_prefix_fails),
        cmocka_unit_test(test_parqd_plaintext_footer_without_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
