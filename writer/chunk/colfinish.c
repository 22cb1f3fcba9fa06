/* colfinish.c - what a streamed column chunk does once per page for the
 * chunk as a whole (bloom filter hashes, geospatial statistics) and at
 * its end: the dictionary page, written before the data pages it serves
 * though built after them; the chunk statistics and boundary order; the
 * bloom filter; the chunk's bytes appended in file order. Runs on the
 * thread feeding the colwriter (chunk.c).
 *
 * Bloom filters are sized when the chunk ends, from what it held: the
 * exact distinct count when every value went through the dictionary,
 * else (or a configured ndv) a HyperLogLog estimate (ndv.h, 1.6%
 * standard error) of the dictionary's entries and the other pages'
 * values, plus 5%, so that the configured fpp is the rate the filter
 * measures. The values outside the dictionary are kept as their 8-byte
 * hashes until then. */
#include "colfinish.h"
#include "values.h"

#include <stdlib.h>

bool pq_colfinish_order_has_nans(pq_sort_order order)
{
    return order == PQ_ORDER_FLOAT || order == PQ_ORDER_DOUBLE || order == PQ_ORDER_FLOAT16;
}

bool pq_colfinish_order_has_legacy(pq_sort_order order)
{
    return order == PQ_ORDER_SIGNED || order == PQ_ORDER_BOOLEAN ||
           order == PQ_ORDER_FLOAT || order == PQ_ORDER_DOUBLE;
}

/* PLAIN, unless the schema named an encoding: PLAIN writes nothing for
 * no values, where the delta encodings write their headers (10 bytes for
 * DELTA_BYTE_ARRAY, 4 for boolean RLE's length). Partitioned files with
 * automatic shredding have ~25 all-null `value` chunks each. */
pq_encoding pq_colfinish_null_encoding(const pq_colwriter *cw)
{
    pq_encoding e = cw->o.encoding;
    if (e == PQ_ENC_AUTO || e == PQ_ENC_RLE_DICTIONARY || e == PQ_ENC_PLAIN_DICTIONARY)
        return PQ_ENC_PLAIN;
    return e;
}

static uint64_t hash_value(const pq_node *n, const uint8_t *p, size_t len)
{
    switch (n->type) {
    case PQ_INT32: { int32_t v; memcpy(&v, p, 4); return pq_bloom_hash_i32(v); }
    case PQ_INT64: { int64_t v; memcpy(&v, p, 8); return pq_bloom_hash_i64(v); }
    case PQ_FLOAT: { float v; memcpy(&v, p, 4); return pq_bloom_hash_float(v); }
    case PQ_DOUBLE: { double v; memcpy(&v, p, 8); return pq_bloom_hash_double(v); }
    case PQ_BYTE_ARRAY: return pq_bloom_hash_bytes(p, len);
    default: return pq_bloom_hash_fixed(p, len);
    }
}

static int geo_values(pq_colwriter *cw, const pq_column *c, size_t v0, size_t n, pq_err *err)
{
    const uint32_t *off = pq_column_offsets(c);
    for (size_t i = v0; i < v0 + n; i++) {
        pq_err ignored;
        int rc = pq_geo_stats_add_wkb(&cw->geo, pq_column_bytes(c, i), off[i + 1] - off[i],
                                      &ignored);
        if (rc == PQ_ENOMEM)
            return pq_err_set(err, rc, "column '%s': out of memory", c->node->path);
    }
    return PQ_OK;
}

/* The estimate's 4 KiB come with the first values outside the dictionary:
 * a chunk whose dictionary holds (most of a partitioned output's many
 * open files) never needs them. */
static int ndv_ready(pq_colwriter *cw)
{
    if (cw->ndv == NULL) {
        if ((cw->ndv = malloc(sizeof *cw->ndv)) == NULL)
            return PQ_ENOMEM;
        pq_ndv_init(cw->ndv);
    }
    return PQ_OK;
}

int pq_colfinish_page_values(pq_colwriter *cw, const pq_column *c, size_t v0, size_t n,
                             bool in_dict, pq_err *err)
{
    if (cw->geo_on && c->node->type == PQ_BYTE_ARRAY) {
        int rc = geo_values(cw, c, v0, n, err);
        if (rc != 0)
            return rc;
    }
    if (!cw->bloom_maybe || in_dict || n == 0)
        return PQ_OK;
    if (pq_buf_reserve(&cw->hashes, n * sizeof(uint64_t)) != 0 || ndv_ready(cw) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", c->node->path);
    uint64_t *h = (uint64_t *)(void *)(cw->hashes.data + cw->hashes.len);
    const uint32_t *off = pq_column_offsets(c);
    for (size_t i = 0; i < n; i++) {
        size_t v = v0 + i;
        h[i] = c->node->type == PQ_BYTE_ARRAY
            ? hash_value(c->node, pq_column_bytes(c, v), off[v + 1] - off[v])
            : hash_value(c->node, c->values.data + v * c->width, c->width);
        pq_ndv_add(cw->ndv, h[i]);
    }
    cw->hashes.len += n * sizeof(uint64_t);
    return PQ_OK;
}

/* zstd's level for one page: the chunk's, or -1 for a page under
 * small_page_bytes when the level is the writer's choice. zstd's fixed
 * cost per frame is its entropy tables, the literals' Huffman table most
 * (~20,000 instructions, at any level from 1); at -1 the literals are
 * stored raw. On 1,000 partitions of the 200 MB bench input, 20,000 of
 * the 29,000 zstd pages are under 1 KiB: those under 256 bytes came out
 * of level 1 at 92% of their size and cost 26,000 instructions each, 9,000
 * at -1 for 100%; 256 bytes to 1 KiB, 78% for 56,000 and 86% for 20,000.
 * The level depends on the page's own bytes only. */
static int page_level(const pq_colwriter *cw, const pq_page_spec *spec)
{
    if (cw->codec == PQ_CODEC_ZSTD && cw->o.codec_level == 0 &&
        spec->body_len < cw->o.small_page_bytes)
        return -1;
    return cw->level;
}

/* One page (data or dictionary) built into `to`: compressed, encrypted
 * with the page's module AAD (data pages count from 0; the dictionary
 * page has no ordinal), its sizes added to the chunk's. */
int pq_colfinish_emit(pq_colwriter *cw, pq_chunk_work *w, pq_page_spec *spec, pq_buf *to,
                      size_t *size_out, pq_err *err)
{
    pq_page_result res;
    pq_page_crypto crypto = {
        .file = cw->o.crypto_file, .key = cw->o.crypto_key,
        .row_group = cw->o.row_group, .column = cw->o.column,
        .page = (int32_t)cw->meta.n_pages, .scratch = &w->crypt,
    };
    if (crypto.key != NULL)
        spec->crypto = &crypto;
    size_t start = to->len;
    int rc = pq_page_build(spec, &w->comp, cw->codec, page_level(cw, spec), cw->o.crc,
                           &w->scratch, to, &res, err);
    if (rc != 0) {
        to->len = start;
        return rc;
    }
    *size_out = to->len - start;
    cw->meta.total_compressed += (int64_t)*size_out;
    cw->meta.total_uncompressed += (int64_t)(res.header_len + res.uncompressed_len);
    return PQ_OK;
}

/* ---- the chunk's end ---------------------------------------------------------- */

/* PageIndex.md: ASCENDING when the non-null pages' mins and maxes never
 * decrease, DESCENDING when they never increase, else UNORDERED. */
static int32_t boundary_order(const pq_chunk_meta *m, pq_sort_order order)
{
    bool asc = true, desc = true;
    const pq_page_entry *prev = NULL;
    for (size_t i = 0; i < m->n_pages && (asc || desc); i++) {
        const pq_page_entry *e = &m->pages[i];
        if (e->null_page)
            continue;
        if (prev != NULL) {
            const uint8_t *b = m->index_bytes.data;
            int cmin = pq_stats_compare_plain(order, b + prev->min_off, prev->min_len,
                                              b + e->min_off, e->min_len);
            int cmax = pq_stats_compare_plain(order, b + prev->max_off, prev->max_len,
                                              b + e->max_off, e->max_len);
            asc = asc && cmin <= 0 && cmax <= 0;
            desc = desc && cmin >= 0 && cmax >= 0;
        }
        prev = e;
    }
    return asc ? 1 : desc ? 2 : 0; /* BoundaryOrder */
}

static int finish_stats(pq_colwriter *cw)
{
    pq_chunk_meta *m = &cw->meta;
    if (!cw->o.statistics)
        return PQ_OK;
    m->has_stats = true;
    m->null_count = (int64_t)pq_stats_null_count(&cw->chunk_stats);
    m->has_nan_count = pq_colfinish_order_has_nans(cw->order);
    m->nan_count = (int64_t)pq_stats_nan_count(&cw->chunk_stats);
    m->write_column_index = cw->o.page_index && cw->order != PQ_ORDER_NONE &&
                            cw->order != PQ_ORDER_INT96 && !m->page_without_minmax;
    if (m->write_column_index)
        m->boundary_order = boundary_order(m, cw->order);
    if (cw->order == PQ_ORDER_NONE || !pq_stats_has_min_max(&cw->chunk_stats))
        return PQ_OK;
    int rc = pq_stats_min_max(&cw->chunk_stats, cw->o.stats_truncate, &m->min, &m->min_exact,
                              &m->max, &m->max_exact);
    m->has_minmax = rc == 0;
    m->legacy_minmax = pq_colfinish_order_has_legacy(cw->order);
    return rc;
}

/* Auto mode: identifiers are where a filter pays off: string-like columns
 * (bloom_maybe) with many distinct values. */
static bool bloom_wanted(const pq_colwriter *cw, size_t distinct)
{
    if (cw->o.bloom >= 0)
        return cw->o.bloom == 1 && cw->values > 0;
    return distinct >= 1024;
}

static uint64_t dict_entry_hash(const pq_colwriter *cw, uint32_t i)
{
    uint32_t len;
    const uint8_t *p = pq_dict_entry(&cw->dict, i, &len);
    return hash_value(cw->node, p, len);
}

/* The estimate: the values outside the dictionary are in cw->ndv; the
 * dictionary's entries join them. */
static uint64_t estimated_ndv(pq_colwriter *cw)
{
    if (ndv_ready(cw) != 0)
        return cw->values;       /* no estimate: sized for every value */
    uint32_t n = cw->dict_pages ? (uint32_t)pq_dict_count(&cw->dict) : 0;
    for (uint32_t i = 0; i < n; i++)
        pq_ndv_add(cw->ndv, dict_entry_hash(cw, i));
    uint64_t d = pq_ndv_estimate(cw->ndv);
    d += d / 20 + 1;
    return d < cw->values ? d : cw->values;
}

static int build_bloom(pq_colwriter *cw, pq_err *err)
{
    if (!cw->bloom_maybe)
        return PQ_OK;
    bool all_dict = cw->dict_pages && !cw->fallback_pages;
    size_t distinct = all_dict ? pq_dict_count(&cw->dict) : (size_t)cw->values;
    if (!bloom_wanted(cw, distinct))
        return PQ_OK;
    uint64_t ndv = cw->o.bloom_ndv ? cw->o.bloom_ndv : all_dict ? distinct : estimated_ndv(cw);
    double fpp = cw->o.bloom_fpp > 0 ? cw->o.bloom_fpp : 0.01;
    pq_bloom *b = calloc(1, sizeof *b);
    if (b == NULL)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", cw->node->path);
    int rc = pq_bloom_init(b, pq_bloom_optimal_bytes(ndv, fpp), err);
    if (rc != 0) {
        free(b);
        return rc;
    }
    uint32_t n = cw->dict_pages ? (uint32_t)pq_dict_count(&cw->dict) : 0;
    for (uint32_t i = 0; i < n; i++)
        pq_bloom_insert_hash(b, dict_entry_hash(cw, i));
    const uint64_t *h = (const uint64_t *)(const void *)cw->hashes.data;
    for (size_t i = 0; i < cw->hashes.len / sizeof(uint64_t); i++)
        pq_bloom_insert_hash(b, h[i]);
    cw->meta.bloom = b;
    return PQ_OK;
}

static void geo_finish(pq_colwriter *cw)
{
    if (!cw->geo_on)
        return;
    cw->meta.has_geo_bbox = pq_geo_stats_bbox(&cw->geo, &cw->meta.geo_bbox);
    cw->meta.n_geo_types = pq_geo_stats_types(&cw->geo, cw->meta.geo_types);
}

void pq_colfinish_rebase(pq_chunk_meta *m, int64_t delta)
{
    if (m->dictionary_page_offset >= 0)
        m->dictionary_page_offset += delta;
    if (m->data_page_offset >= 0)
        m->data_page_offset += delta;
    for (size_t p = 0; p < m->n_pages; p++)
        m->pages[p].offset += delta;
}

static int dictionary_page(pq_colwriter *cw, pq_chunk_work *w, pq_buf *out, pq_err *err)
{
    pq_buf *body = &w->body;
    pq_buf_reset(body);
    if (pq_dict_write_plain(&cw->dict, body) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", cw->node->path);
    pq_page_spec spec = {
        .type = PQ_PAGE_DICTIONARY,
        .num_values = (int32_t)pq_dict_count(&cw->dict),
        .encoding = PQ_ENC_PLAIN,
        .body = body->data,
        .body_len = body->len,
    };
    size_t size;
    cw->meta.dictionary_page_offset = (int64_t)out->len;
    int rc = pq_colfinish_emit(cw, w, &spec, out, &size, err);
    cw->meta.n_dict_pages++;
    cw->meta.encodings |= 1u << PQ_ENC_PLAIN;
    return rc;
}

int pq_colfinish_chunk(pq_colwriter *cw, pq_chunk_work *w, pq_buf *out, pq_buf *take,
                       pq_err *err)
{
    int rc = cw->dict_pages ? dictionary_page(cw, w, out, err) : PQ_OK;
    if (rc != 0)
        return rc;
    int64_t base = (int64_t)out->len;
    bool handed = take != NULL && cw->pages.len >= PQ_CW_SPLICE_MIN;
    if (handed) {
        pq_buf mine = cw->pages;   /* whole, not copied */
        cw->pages = *take;
        *take = mine;
    } else if (pq_buf_append(out, cw->pages.data, cw->pages.len) != 0) {
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", cw->node->path);
    }
    /* freed, not kept, unless small (PQ_CW_KEEP_PAGES: a partitioned
     * file's chunk, kept for the next chunk or file): the row group's
     * pages would otherwise be held twice (here and in out) until every
     * chunk is appended. The memory take gave is kept: it held an earlier
     * row group's pages of about this size, written since. */
    if (!handed && cw->pages.cap > PQ_CW_KEEP_PAGES)
        pq_buf_free(&cw->pages);
    pq_buf_reset(&cw->pages);
    int64_t dict = cw->meta.dictionary_page_offset;
    cw->meta.dictionary_page_offset = -1;
    pq_colfinish_rebase(&cw->meta, base);
    cw->meta.dictionary_page_offset = dict;
    if ((rc = finish_stats(cw)) != 0)
        return pq_err_set(err, rc, "column '%s': statistics failed", cw->node->path);
    rc = build_bloom(cw, err);
    geo_finish(cw);
    pq_buf_reset(&cw->hashes);
    return rc;
}
