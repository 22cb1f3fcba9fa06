/* chunk.c - one column chunk: decides dictionary vs. fallback encoding,
 * splits the buffered values into pages at row boundaries, encodes levels,
 * gathers page and chunk statistics and the page-index records, and writes
 * the pages to the output.
 *
 * The dictionary decision is made once per chunk from all buffered values
 * (as DuckDB does), not mid-chunk (as Arrow does): the writer already holds
 * the whole row group, so it knows the distinct count before writing the
 * first page, every page of a chunk gets the same encoding, and no chunk
 * pays for a dictionary page it then abandons. The cost is one hash pass
 * over the values at flush time. */
#include "chunk.h"
#include "ndv.h"
#include "page.h"
#include "rle.h"
#include "values.h"

#include <stdint.h>
#include <stdlib.h>

int pq_out_write(pq_out *o, const void *p, size_t n, pq_err *err)
{
    int rc = o->mem ? pq_buf_append(o->mem, p, n) : o->sink.write(o->sink.ctx, p, n, err);
    if (rc != 0)
        return o->mem ? pq_err_set(err, PQ_ENOMEM, "writer: out of memory") : rc;
    o->offset += n;
    return PQ_OK;
}

void pq_chunk_work_init(pq_chunk_work *w)
{
    pq_buf_init(&w->levels);
    pq_buf_init(&w->body);
    pq_buf_init(&w->scratch);
    pq_buf_init(&w->page);
    pq_buf_init(&w->indices);
    pq_buf_init(&w->wide);
    pq_buf_init(&w->crypt);
    pq_compressor_init(&w->comp);
}

void pq_chunk_work_free(pq_chunk_work *w)
{
    pq_buf_free(&w->levels);
    pq_buf_free(&w->body);
    pq_buf_free(&w->scratch);
    pq_buf_free(&w->page);
    pq_buf_free(&w->indices);
    pq_buf_free(&w->wide);
    pq_buf_free(&w->crypt);
    pq_compressor_free(&w->comp);
}

void pq_chunk_meta_free(pq_chunk_meta *m)
{
    pq_buf_free(&m->min);
    pq_buf_free(&m->max);
    free(m->def_hist);
    free(m->rep_hist);
    free(m->pages);
    pq_buf_free(&m->index_bytes);
    pq_buf_free(&m->page_def_hist);
    pq_buf_free(&m->page_rep_hist);
    pq_buf_free(&m->encrypted_meta);
    if (m->bloom != NULL)
        pq_bloom_free(m->bloom);
    free(m->bloom);
    memset(m, 0, sizeof *m);
}

int pq_chunk_check_encoding(const pq_node *node, pq_encoding enc, pq_err *err)
{
    if (enc == PQ_ENC_AUTO || pq_values_encoding_allowed(node->type, enc))
        return PQ_OK;
    return pq_err_set(err, PQ_EINVAL, "column '%s': encoding %d is not valid for its type",
                      node->name, (int)enc);
}

/* State of one chunk being written. */
typedef struct chunk_state {
    pq_chunk_work *w;
    const pq_column *col;
    const pq_chunk_opts *o;
    pq_out *out;
    pq_chunk_meta *meta;
    pq_encoding enc;
    pq_dict dict;
    bool dict_used;
    bool dict_complete;          /* every value went into the dictionary */
    int dict_bit_width;
    pq_sort_order order;
    pq_stats page_stats, chunk_stats;
} chunk_state;

/* Checked every 1024 values: past the byte limit, or (in auto mode) after
 * 65536 values of which 90% were new (timestamps, ids), the dictionary will
 * not be used, and finishing it would cost a hash insert per value for
 * nothing. A smaller sample misjudges columns like latencies, whose values
 * repeat only once enough of them have been seen. */
static bool dictionary_still_viable(const chunk_state *st, size_t seen)
{
    if (pq_dict_plain_bytes(&st->dict) > st->o->dictionary_max_bytes)
        return false;
    bool auto_mode = st->o->dictionary != 1 && st->o->encoding == PQ_ENC_AUTO;
    return !(auto_mode && seen >= 65536 && pq_dict_count(&st->dict) * 10 > seen * 9);
}

/* Builds the dictionary over all values; *fits is false if it was given up. */
static int build_dictionary(chunk_state *st, bool *fits, pq_err *err)
{
    const pq_column *c = st->col;
    size_t n = c->n_values;
    *fits = false;
    pq_buf_reset(&st->w->indices);
    if (pq_buf_reserve(&st->w->indices, n * sizeof(uint32_t)) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", c->node->path);
    uint32_t *idx = (uint32_t *)(void *)st->w->indices.data;
    const uint32_t *off = pq_column_offsets(c);
    for (size_t i = 0; i < n; i++) {
        int rc = c->node->type == PQ_BYTE_ARRAY
            ? pq_dict_insert_bytes(&st->dict, c->heap.data + off[i], off[i + 1] - off[i], &idx[i])
            : pq_dict_insert_fixed(&st->dict, c->values.data + i * c->width, &idx[i]);
        if (rc != 0)
            return pq_err_set(err, rc, "column '%s': dictionary insert failed", c->node->path);
        if ((i & 1023) == 1023 && !dictionary_still_viable(st, i + 1))
            return PQ_OK;
    }
    *fits = pq_dict_plain_bytes(&st->dict) <= st->o->dictionary_max_bytes;
    st->dict_complete = true;
    return PQ_OK;
}

/* Auto mode measures instead of guessing: a sample of the chunk is
 * encoded and compressed each candidate way (the way DuckDB's analyze step
 * decides) and the smallest wins. The sample is the chunk's last values,
 * where a dictionary has stopped growing and its indices show their steady
 * cost: about 128 KiB of values (at most 16384, at least 1024, the whole
 * chunk when it is smaller), so measuring costs a few percent of the
 * chunk's own compression, not a second pass over it. */
#define PQ_SAMPLE_BYTES (128u * 1024u)
#define PQ_SAMPLE_MAX 16384u
#define PQ_SAMPLE_MIN 1024u
#define PQ_SAMPLE_MARGIN 0.97   /* what an alternative must save to be chosen */

typedef struct sample_range {
    size_t v0, n;
} sample_range;

static sample_range encoding_sample(const pq_column *c)
{
    size_t bytes = c->node->type == PQ_BYTE_ARRAY ? c->heap.len + 4 * c->n_values
                                                   : c->width * c->n_values;
    size_t avg = c->n_values ? bytes / c->n_values + 1 : 1;
    size_t n = PQ_SAMPLE_BYTES / avg;
    n = n > PQ_SAMPLE_MAX ? PQ_SAMPLE_MAX : n < PQ_SAMPLE_MIN ? PQ_SAMPLE_MIN : n;
    n = n < c->n_values ? n : c->n_values;
    return (sample_range){c->n_values - n, n};
}

/* Samples compress at the codec's fastest level: the ranking of the
 * candidates is what matters, and it holds across levels, while a high
 * level (brotli 11, zstd 19) would make measuring cost more than writing. */
static int sample_level(pq_codec codec, int level)
{
    bool leveled = codec == PQ_CODEC_ZSTD || codec == PQ_CODEC_GZIP || codec == PQ_CODEC_BROTLI;
    return leveled && level != 1 ? 1 : level;
}

static int sample_compress(chunk_state *st, pq_err *err)
{
    pq_chunk_work *w = st->w;
    pq_buf_reset(&w->scratch);
    return pq_compressor_run(&w->comp, st->o->codec, sample_level(st->o->codec, st->o->codec_level),
                             w->body.data, w->body.len, &w->scratch, err);
}

/* Compressed size of the sample in one encoding (RLE_DICTIONARY: of its
 * indices, without the dictionary page). */
static int sample_size(chunk_state *st, pq_encoding enc, sample_range r, size_t *size, pq_err *err)
{
    pq_chunk_work *w = st->w;
    *size = SIZE_MAX;
    const uint32_t *indices = enc == PQ_ENC_RLE_DICTIONARY
        ? (const uint32_t *)(const void *)w->indices.data : NULL;
    pq_buf_reset(&w->body);
    int rc = pq_values_encode(&w->body, st->col, enc, r.v0, r.n, indices, st->dict_bit_width,
                              &w->wide);
    if (rc != 0)
        return pq_err_set(err, rc, "column '%s': encoding a sample failed", st->col->node->path);
    rc = sample_compress(st, err);
    *size = w->scratch.len;
    return rc;
}

/* The encodings auto mode weighs for values outside a dictionary; the
 * first is kept unless another saves PQ_SAMPLE_MARGIN on the sample. Integers: deltas for counters and sorted ids, PLAIN for
 * random ones (ports, sizes), whose bytes the codec compresses better than
 * bit-packed deltas. Floats: BYTE_STREAM_SPLIT for noisy measurements,
 * PLAIN for decimal-looking values whose byte patterns the codec finds
 * whole (PLAIN first: every reader supports it). Strings: prefix deltas for
 * paths and URLs, PLAIN for random ids. */
static size_t fallback_candidates(pq_physical_type type, int page_version, pq_encoding out[2])
{
    out[0] = pq_values_default_encoding(type, page_version);
    switch (type) {
    case PQ_INT32: case PQ_INT64: case PQ_BYTE_ARRAY:
        out[1] = PQ_ENC_PLAIN;
        return 2;
    case PQ_FLOAT: case PQ_DOUBLE:
        out[0] = PQ_ENC_PLAIN;
        out[1] = PQ_ENC_BYTE_STREAM_SPLIT;
        return 2;
    default:
        return 1;
    }
}

/* Sets st->enc to the candidate chosen on the sample, *size to its
 * compressed sample size (SIZE_MAX when there was nothing to weigh). */
static int choose_fallback(chunk_state *st, sample_range r, size_t *size, pq_err *err)
{
    pq_encoding cand[2];
    size_t n = fallback_candidates(st->col->node->type, st->o->page_version, cand);
    st->enc = cand[0];
    *size = SIZE_MAX;
    if (r.n == 0 || n == 1)
        return PQ_OK;
    for (size_t i = 0; i < n; i++) {
        size_t sz;
        int rc = sample_size(st, cand[i], r, &sz, err);
        if (rc != 0)
            return rc;
        /* an alternative must win clearly: a sample's small margins flip
         * with the sample and do not carry to the whole chunk */
        if (i == 0 || (double)sz < (double)*size * PQ_SAMPLE_MARGIN) {
            *size = sz;
            st->enc = cand[i];
        }
    }
    return PQ_OK;
}

/* A large dictionary does not always pay: random ports or byte counts have
 * thousands of distinct values whose indices compress worse than the
 * values themselves. Estimated for the whole chunk: the compressed
 * dictionary page once plus the indices, against the fallback's values. */
#define PQ_DICT_MEASURE_MIN 1024

static int dictionary_pays(chunk_state *st, bool *pays, pq_err *err)
{
    sample_range r = encoding_sample(st->col);
    size_t idx, fb;
    *pays = true;
    int rc = sample_size(st, PQ_ENC_RLE_DICTIONARY, r, &idx, err);
    rc = rc ? rc : choose_fallback(st, r, &fb, err);
    if (rc != 0 || fb == SIZE_MAX)
        return rc;
    pq_chunk_work *w = st->w;
    pq_buf_reset(&w->body);
    if (pq_dict_write_plain(&st->dict, &w->body) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", st->col->node->path);
    rc = sample_compress(st, err);
    double scale = (double)st->col->n_values / (double)r.n;
    *pays = rc != 0 || ((double)w->scratch.len + (double)idx * scale) * PQ_SAMPLE_MARGIN <=
                           (double)fb * scale;
    return rc;
}

/* Auto mode keeps the dictionary only where values repeat (a dictionary of
 * all-distinct values, timestamps or ids, costs a page and an index per
 * value and saves nothing) and, for large dictionaries, only where it
 * measures smaller than the best fallback. */
static int choose_encoding(chunk_state *st, pq_err *err)
{
    const pq_chunk_opts *o = st->o;
    pq_physical_type type = st->col->node->type;
    bool auto_mode = o->encoding == PQ_ENC_AUTO;
    bool dict_encoding = o->encoding == PQ_ENC_RLE_DICTIONARY ||
                         o->encoding == PQ_ENC_PLAIN_DICTIONARY;
    /* dictionary: true with an explicit encoding means "dictionary first,
     * that encoding when the dictionary overflows" */
    bool want_dict = type != PQ_BOOLEAN && o->dictionary != 0 &&
        (o->dictionary == 1 || auto_mode || dict_encoding);
    st->enc = o->encoding;
    if (want_dict && st->col->n_values > 0) {
        bool fits;
        int rc = build_dictionary(st, &fits, err);
        if (rc != 0)
            return rc;
        size_t distinct = pq_dict_count(&st->dict);
        bool worth = o->dictionary == 1 || !auto_mode || distinct * 2 <= st->col->n_values;
        if (fits && worth) {
            st->dict_bit_width = pq_rle_bit_width(distinct - 1);
            bool pays = true;
            if (auto_mode && o->dictionary != 1 && distinct >= PQ_DICT_MEASURE_MIN &&
                (rc = dictionary_pays(st, &pays, err)) != 0)
                return rc;
            if (pays) {
                st->dict_used = true;
                st->enc = PQ_ENC_RLE_DICTIONARY;
            } /* else dictionary_pays left the best fallback in st->enc */
            return PQ_OK;
        }
    }
    if (auto_mode) {
        size_t ignored;
        return choose_fallback(st, encoding_sample(st->col), &ignored, err);
    }
    if (dict_encoding)
        st->enc = pq_values_default_encoding(type, o->page_version);
    return PQ_OK;
}

static int emit_page(chunk_state *st, pq_page_spec *spec, int64_t *offset_out,
                     size_t *size_out, pq_err *err)
{
    pq_chunk_work *w = st->w;
    pq_page_result res;
    pq_page_crypto crypto = {
        .file = st->o->crypto_file, .key = st->o->crypto_key,
        .row_group = st->o->row_group, .column = st->o->column,
        .page = (int32_t)st->meta->n_pages, .scratch = &w->crypt,
    };
    if (crypto.key != NULL)
        spec->crypto = &crypto;
    pq_out *out = st->out;
    pq_buf *page = out->mem ? out->mem : &w->page; /* in memory: built in place */
    size_t start = out->mem ? out->mem->len : 0;
    pq_buf_reset(&w->page);
    int rc = pq_page_build(spec, &w->comp, st->o->codec, st->o->codec_level, st->o->crc,
                           &w->scratch, page, &res, err);
    if (rc != 0) {
        page->len = start;
        return rc;
    }
    size_t size = page->len - start;
    *offset_out = (int64_t)out->offset;
    *size_out = size;
    st->meta->total_compressed += (int64_t)size;
    st->meta->total_uncompressed += (int64_t)(res.header_len + res.uncompressed_len);
    if (out->mem) {
        out->offset += size;
        return PQ_OK;
    }
    return pq_out_write(out, page->data, size, err);
}

static int write_dictionary_page(chunk_state *st, pq_err *err)
{
    pq_buf *body = &st->w->body;
    pq_buf_reset(body);
    if (pq_dict_write_plain(&st->dict, body) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", st->col->node->path);
    pq_page_spec spec = {
        .type = PQ_PAGE_DICTIONARY,
        .num_values = (int32_t)pq_dict_count(&st->dict),
        .encoding = PQ_ENC_PLAIN,
        .body = body->data,
        .body_len = body->len,
    };
    size_t size;
    int rc = emit_page(st, &spec, &st->meta->dictionary_page_offset, &size, err);
    st->meta->n_dict_pages++;
    st->meta->encodings |= 1u << PQ_ENC_PLAIN;
    return rc;
}

/* The page covering levels [l0, *l1) and values [v0, *v1): it ends at the
 * first row start after the row or byte budget is spent, so pages always
 * begin at row boundaries (required for v2 pages and the OffsetIndex). */
typedef struct page_extent {
    size_t l0, l1, v0, v1, rows;
} page_extent;

static void find_page_extent(const chunk_state *st, page_extent *pe)
{
    const pq_column *c = st->col;
    const uint16_t *def = c->max_def ? pq_column_def(c) : NULL;
    const uint16_t *rep = c->max_rep ? pq_column_rep(c) : NULL;
    const uint32_t *off = pq_column_offsets(c);
    size_t l = pe->l0, v = pe->v0, rows = 0, bytes = 0;
    for (; l < c->n_levels; l++) {
        if (rep == NULL || rep[l] == 0) {
            if (l > pe->l0 && (rows >= st->o->page_max_rows || bytes >= st->o->page_max_bytes))
                break;
            rows++;
        }
        if (def == NULL || def[l] == c->max_def) {
            bytes += off ? 4 + (size_t)(off[v + 1] - off[v]) : c->width;
            v++;
        }
    }
    pe->l1 = l;
    pe->v1 = v;
    pe->rows = rows;
}

/* v1 levels carry a 4-byte length prefix; v2 levels do not. */
static int encode_levels(pq_buf *out, const uint16_t *levels, size_t n, uint16_t max,
                         bool prefixed, size_t *len_out)
{
    size_t at = out->len;
    int bw = pq_rle_bit_width(max);
    int rc = prefixed ? pq_buf_put_u32le(out, 0) : 0;
    rc = rc ? rc : pq_rle_encode_u16(out, levels, n, bw);
    if (rc != 0)
        return rc;
    *len_out = out->len - at;
    if (prefixed) {
        uint32_t len = (uint32_t)(*len_out - 4);
        for (size_t i = 0; i < 4; i++)
            out->data[at + i] = (uint8_t)(len >> (8 * i));
    }
    return PQ_OK;
}

static int encode_page_levels(chunk_state *st, const page_extent *pe, pq_buf *out,
                              size_t *rep_len, size_t *def_len)
{
    const pq_column *c = st->col;
    bool v1 = st->o->page_version == 1;
    size_t n = pe->l1 - pe->l0;
    *rep_len = *def_len = 0;
    int rc = 0;
    if (c->max_rep > 0)
        rc = encode_levels(out, pq_column_rep(c) + pe->l0, n, c->max_rep, v1, rep_len);
    if (rc == 0 && c->max_def > 0)
        rc = encode_levels(out, pq_column_def(c) + pe->l0, n, c->max_def, v1, def_len);
    return rc;
}

static int add_hist(pq_buf *page_hists, uint64_t *chunk_hist, const uint16_t *levels,
                    size_t n, uint16_t max)
{
    size_t slots = (size_t)max + 1;
    size_t at = page_hists->len;
    if (pq_buf_reserve(page_hists, slots * sizeof(uint64_t)) != 0)
        return PQ_ENOMEM;
    uint64_t *h = (uint64_t *)(void *)(page_hists->data + at);
    memset(h, 0, slots * sizeof(uint64_t));
    pq_level_histogram_add(h, levels, n);
    page_hists->len += slots * sizeof(uint64_t);
    for (size_t i = 0; i < slots; i++)
        chunk_hist[i] += h[i];
    return PQ_OK;
}

static bool order_has_nans(pq_sort_order order)
{
    return order == PQ_ORDER_FLOAT || order == PQ_ORDER_DOUBLE || order == PQ_ORDER_FLOAT16;
}

static bool order_has_legacy(pq_sort_order order)
{
    return order == PQ_ORDER_SIGNED || order == PQ_ORDER_BOOLEAN ||
           order == PQ_ORDER_FLOAT || order == PQ_ORDER_DOUBLE;
}

/* Gathers the page's statistics into out (min/max in mn/mx). */
static int page_statistics(chunk_state *st, const page_extent *pe, pq_buf *mn, pq_buf *mx,
                           pq_stats_out *out)
{
    const pq_column *c = st->col;
    size_t nv = pe->v1 - pe->v0;
    pq_stats_reset(&st->page_stats);
    if (c->node->type == PQ_BYTE_ARRAY)
        pq_stats_add_bytes(&st->page_stats, c->heap.data, pq_column_offsets(c) + pe->v0, nv);
    else if (nv > 0)
        pq_stats_add_fixed(&st->page_stats, c->values.data + pe->v0 * c->width, nv);
    pq_stats_add_nulls(&st->page_stats, (pe->l1 - pe->l0) - nv);
    if (pq_stats_merge(&st->chunk_stats, &st->page_stats) != 0)
        return PQ_ENOMEM;
    memset(out, 0, sizeof *out);
    out->null_count = (int64_t)pq_stats_null_count(&st->page_stats);
    out->has_nan_count = order_has_nans(st->order);
    out->nan_count = (int64_t)pq_stats_nan_count(&st->page_stats);
    pq_buf_reset(mn);
    pq_buf_reset(mx);
    if (st->order == PQ_ORDER_NONE || !pq_stats_has_min_max(&st->page_stats))
        return PQ_OK;
    int rc = pq_stats_min_max(&st->page_stats, st->o->stats_truncate, mn, &out->min_exact,
                              mx, &out->max_exact);
    if (rc != 0)
        return rc;
    out->has_minmax = true;
    out->min = mn->data;
    out->min_len = mn->len;
    out->max = mx->data;
    out->max_len = mx->len;
    out->legacy_minmax = order_has_legacy(st->order);
    return PQ_OK;
}

static int record_page(chunk_state *st, const page_extent *pe, const pq_stats_out *ps,
                       int64_t offset, size_t size, int64_t first_row)
{
    pq_chunk_meta *m = st->meta;
    const pq_column *c = st->col;
    if (m->n_pages == m->cap_pages) {
        size_t cap = m->cap_pages ? m->cap_pages * 2 : 8;
        pq_page_entry *p = realloc(m->pages, cap * sizeof *p);
        if (p == NULL)
            return PQ_ENOMEM;
        m->pages = p;
        m->cap_pages = cap;
    }
    pq_page_entry *e = &m->pages[m->n_pages++];
    memset(e, 0, sizeof *e);
    e->offset = offset;
    e->size = (int32_t)size;
    e->first_row = first_row;
    e->null_count = ps->null_count;
    e->null_page = pe->v1 == pe->v0;
    /* An all-NaN page has values but no min/max: a ColumnIndex cannot
     * describe it, so the chunk gets only an OffsetIndex. */
    if (!e->null_page && !ps->has_minmax)
        m->page_without_minmax = true;
    if (c->node->type == PQ_BYTE_ARRAY) {
        const uint32_t *off = pq_column_offsets(c);
        e->unencoded_ba_bytes = (int64_t)(off[pe->v1] - off[pe->v0]);
        m->unencoded_ba_bytes += e->unencoded_ba_bytes;
    }
    e->min_off = m->index_bytes.len;
    e->min_len = ps->has_minmax ? ps->min_len : 0;
    if (pq_buf_append(&m->index_bytes, ps->min, e->min_len) != 0)
        return PQ_ENOMEM;
    e->max_off = m->index_bytes.len;
    e->max_len = ps->has_minmax ? ps->max_len : 0;
    if (pq_buf_append(&m->index_bytes, ps->max, e->max_len) != 0)
        return PQ_ENOMEM;
    int rc = 0;
    size_t nl = pe->l1 - pe->l0;
    if (c->max_def > 0)
        rc = add_hist(&m->page_def_hist, m->def_hist, pq_column_def(c) + pe->l0, nl, c->max_def);
    if (rc == 0 && c->max_rep > 0)
        rc = add_hist(&m->page_rep_hist, m->rep_hist, pq_column_rep(c) + pe->l0, nl, c->max_rep);
    return rc;
}

static int write_data_page(chunk_state *st, const page_extent *pe, int64_t first_row,
                           pq_buf *mn, pq_buf *mx, pq_err *err)
{
    pq_chunk_work *w = st->w;
    const pq_column *c = st->col;
    bool v2 = st->o->page_version == 2;
    size_t nv = pe->v1 - pe->v0, nl = pe->l1 - pe->l0;
    pq_buf *lv = v2 ? &w->levels : &w->body; /* v1 levels lead the body */
    size_t rep_len, def_len;
    pq_buf_reset(&w->levels);
    pq_buf_reset(&w->body);
    int rc = encode_page_levels(st, pe, lv, &rep_len, &def_len);
    rc = rc ? rc : pq_values_encode(&w->body, c, st->enc, pe->v0, nv,
                                    (const uint32_t *)(void *)w->indices.data,
                                    st->dict_bit_width, &w->wide);
    if (rc != 0)
        return pq_err_set(err, rc, "column '%s': encoding a page failed", c->node->path);
    pq_stats_out ps = {.null_count = (int64_t)(nl - nv)};
    if (st->o->statistics && (rc = page_statistics(st, pe, mn, mx, &ps)) != 0)
        return pq_err_set(err, rc, "column '%s': page statistics failed", c->node->path);
    pq_page_spec spec = {
        .type = v2 ? PQ_PAGE_DATA_V2 : PQ_PAGE_DATA,
        .num_values = (int32_t)nl,
        .num_nulls = (int32_t)(nl - nv),
        .num_rows = (int32_t)pe->rows,
        .encoding = st->enc,
        .levels = w->levels.data,
        .rep_len = v2 ? rep_len : 0,
        .def_len = v2 ? def_len : 0,
        .body = w->body.data,
        .body_len = w->body.len,
        .stats = st->o->statistics ? &ps : NULL,
    };
    int64_t offset;
    size_t size;
    rc = emit_page(st, &spec, &offset, &size, err);
    if (rc != 0)
        return rc;
    if (st->meta->data_page_offset < 0)
        st->meta->data_page_offset = offset;
    st->meta->data_pages[st->enc]++;
    if ((rc = record_page(st, pe, &ps, offset, size, first_row)) != 0)
        return pq_err_set(err, rc, "column '%s': out of memory", c->node->path);
    return PQ_OK;
}

/* PageIndex.md: ASCENDING when the non-null pages' mins and maxes never
 * decrease, DESCENDING when they never increase, else UNORDERED. Lets a
 * reader binary-search pages (time-sorted logs are ASCENDING). */
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

static int finish_chunk_stats(chunk_state *st)
{
    pq_chunk_meta *m = st->meta;
    if (!st->o->statistics)
        return PQ_OK;
    m->has_stats = true;
    m->null_count = (int64_t)pq_stats_null_count(&st->chunk_stats);
    m->has_nan_count = order_has_nans(st->order);
    m->nan_count = (int64_t)pq_stats_nan_count(&st->chunk_stats);
    m->write_column_index = st->o->page_index && st->order != PQ_ORDER_NONE &&
                            st->order != PQ_ORDER_INT96 && !m->page_without_minmax;
    if (m->write_column_index)
        m->boundary_order = boundary_order(m, st->order);
    if (st->order == PQ_ORDER_NONE || !pq_stats_has_min_max(&st->chunk_stats))
        return PQ_OK;
    int rc = pq_stats_min_max(&st->chunk_stats, st->o->stats_truncate, &m->min, &m->min_exact,
                              &m->max, &m->max_exact);
    m->has_minmax = rc == 0;
    m->legacy_minmax = order_has_legacy(st->order);
    return rc;
}

/* Auto mode: identifiers are where a filter pays off: string-like columns
 * with many distinct values. Low-cardinality columns are better served by
 * the dictionary and min/max; numbers by min/max and the page index. */
static bool bloom_wanted(const chunk_state *st, size_t distinct)
{
    const pq_node *n = st->col->node;
    if (st->o->bloom >= 0)
        return st->o->bloom == 1 && st->col->n_values > 0;
    bool stringish = n->type == PQ_BYTE_ARRAY || n->logical.kind == PQ_LT_UUID;
    bool geo = n->logical.kind == PQ_LT_GEOMETRY || n->logical.kind == PQ_LT_GEOGRAPHY;
    return stringish && !geo && distinct >= 1024;
}

static uint64_t hash_value(const pq_column *c, const uint8_t *p, size_t len)
{
    switch (c->node->type) {
    case PQ_INT32: { int32_t v; memcpy(&v, p, 4); return pq_bloom_hash_i32(v); }
    case PQ_INT64: { int64_t v; memcpy(&v, p, 8); return pq_bloom_hash_i64(v); }
    case PQ_FLOAT: { float v; memcpy(&v, p, 4); return pq_bloom_hash_float(v); }
    case PQ_DOUBLE: { double v; memcpy(&v, p, 8); return pq_bloom_hash_double(v); }
    case PQ_BYTE_ARRAY: return pq_bloom_hash_bytes(p, len);
    default: return pq_bloom_hash_fixed(p, len);
    }
}

/* The value's hash by index (nulls are not values). */
static uint64_t value_hash(const pq_column *c, const uint32_t *off, size_t i)
{
    if (c->node->type == PQ_BYTE_ARRAY)
        return hash_value(c, c->heap.data + off[i], off[i + 1] - off[i]);
    return hash_value(c, c->values.data + i * c->width, c->width);
}

/* With a dictionary, each distinct value is hashed once; without one,
 * every value is (duplicates set the same bits). */
static void bloom_fill(const chunk_state *st, pq_bloom *b)
{
    const pq_column *c = st->col;
    if (st->dict_used) {
        uint32_t n = (uint32_t)pq_dict_count(&st->dict);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t len;
            const uint8_t *p = pq_dict_entry(&st->dict, i, &len);
            pq_bloom_insert_hash(b, hash_value(c, p, len));
        }
        return;
    }
    const uint32_t *off = pq_column_offsets(c);
    for (size_t i = 0; i < c->n_values; i++)
        pq_bloom_insert_hash(b, value_hash(c, off, i));
}

/* Without a complete dictionary the distinct count is estimated from the
 * hashes the filter will take (ndv.h: 1.6% standard error), plus 5% so
 * that an estimate on the low side still meets the fpp; sizing for every
 * value instead would give a column of repeating paths a filter twice as
 * large as it needs. Costs one more hash per value, only for such columns. */
static uint64_t estimated_ndv(const pq_column *c)
{
    pq_ndv est;
    pq_ndv_init(&est);
    const uint32_t *off = pq_column_offsets(c);
    for (size_t i = 0; i < c->n_values; i++)
        pq_ndv_add(&est, value_hash(c, off, i));
    uint64_t d = pq_ndv_estimate(&est);
    d += d / 20 + 1;
    return d < c->n_values ? d : c->n_values;
}

/* ndv: configured, else the exact distinct count when the dictionary saw
 * every value, else the estimate above. */
static int build_bloom(chunk_state *st, pq_err *err)
{
    const pq_column *c = st->col;
    bool dict_complete = st->dict_used || st->dict_complete;
    size_t distinct = dict_complete ? pq_dict_count(&st->dict) : c->n_values;
    if (c->node->type == PQ_BOOLEAN || !bloom_wanted(st, distinct))
        return PQ_OK;
    uint64_t ndv = st->o->bloom_ndv ? st->o->bloom_ndv
                   : dict_complete  ? distinct
                                    : estimated_ndv(c);
    double fpp = st->o->bloom_fpp > 0 ? st->o->bloom_fpp : 0.01;
    pq_bloom *b = calloc(1, sizeof *b);
    if (b == NULL)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", c->node->path);
    int rc = pq_bloom_init(b, pq_bloom_optimal_bytes(ndv, fpp), err);
    if (rc != 0) {
        free(b);
        return rc;
    }
    bloom_fill(st, b);
    st->meta->bloom = b;
    return PQ_OK;
}

/* Geospatial.md: the bounding box and type codes of all WKB values in the
 * chunk. Invalid WKB adds nothing to the box and makes the type list
 * unknown (omitted); it is not an error for the file. */
static int geo_statistics(chunk_state *st, pq_err *err)
{
    const pq_column *c = st->col;
    pq_logical_kind k = c->node->logical.kind;
    if (k != PQ_LT_GEOMETRY && k != PQ_LT_GEOGRAPHY)
        return PQ_OK;
    pq_geo_stats g;
    pq_geo_stats_init(&g, k == PQ_LT_GEOGRAPHY);
    const uint32_t *off = pq_column_offsets(c);
    for (size_t i = 0; i < c->n_values; i++) {
        pq_err ignored;
        int rc = pq_geo_stats_add_wkb(&g, c->heap.data + off[i], off[i + 1] - off[i], &ignored);
        if (rc == PQ_ENOMEM) {
            pq_geo_stats_free(&g);
            return pq_err_set(err, rc, "column '%s': out of memory", c->node->path);
        }
    }
    st->meta->has_geo_bbox = pq_geo_stats_bbox(&g, &st->meta->geo_bbox);
    st->meta->n_geo_types = pq_geo_stats_types(&g, st->meta->geo_types);
    pq_geo_stats_free(&g);
    return PQ_OK;
}

static int meta_init(pq_chunk_meta *m, const pq_column *col, const pq_chunk_opts *o)
{
    memset(m, 0, sizeof *m);
    m->node = col->node;
    m->codec = o->codec;
    m->num_values = (int64_t)col->n_levels;
    m->dictionary_page_offset = -1;
    m->data_page_offset = -1;
    m->crypto_key = o->crypto_key;
    m->crypto_key_id = o->crypto_key_id;
    m->row_group = o->row_group;
    m->column = o->column;
    pq_buf_init(&m->encrypted_meta);
    m->data_page_type = o->page_version == 2 ? PQ_PAGE_DATA_V2 : PQ_PAGE_DATA;
    pq_buf_init(&m->min);
    pq_buf_init(&m->max);
    pq_buf_init(&m->index_bytes);
    pq_buf_init(&m->page_def_hist);
    pq_buf_init(&m->page_rep_hist);
    if (col->max_def > 0 && !(m->def_hist = calloc((size_t)col->max_def + 1, sizeof(uint64_t))))
        return PQ_ENOMEM;
    if (col->max_rep > 0 && !(m->rep_hist = calloc((size_t)col->max_rep + 1, sizeof(uint64_t))))
        return PQ_ENOMEM;
    if (col->max_def > 0 || col->max_rep > 0)
        m->encodings |= 1u << PQ_ENC_RLE;
    return PQ_OK;
}

static int write_pages(chunk_state *st, pq_err *err)
{
    pq_buf mn, mx;
    pq_buf_init(&mn);
    pq_buf_init(&mx);
    page_extent pe = {0};
    int64_t row = 0;
    int rc = PQ_OK;
    while (rc == 0 && pe.l0 < st->col->n_levels) {
        find_page_extent(st, &pe);
        rc = write_data_page(st, &pe, row, &mn, &mx, err);
        row += (int64_t)pe.rows;
        pe.l0 = pe.l1;
        pe.v0 = pe.v1;
    }
    pq_buf_free(&mn);
    pq_buf_free(&mx);
    return rc;
}

int pq_chunk_write(pq_chunk_work *w, const pq_column *col, const pq_chunk_opts *o,
                   pq_out *out, pq_chunk_meta *meta, pq_err *err)
{
    chunk_state st = {.w = w, .col = col, .o = o, .out = out, .meta = meta};
    const pq_node *node = col->node;
    if (meta_init(meta, col, o) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", node->path);
    st.order = pq_leaf_sort_order(node);
    pq_stats_init(&st.page_stats, st.order, node->type, (size_t)node->type_length);
    pq_stats_init(&st.chunk_stats, st.order, node->type, (size_t)node->type_length);
    bool has_dict = node->type != PQ_BOOLEAN;
    int rc = has_dict ? pq_dict_init(&st.dict, node->type, col->width) : 0;
    if (rc != 0) {
        has_dict = false;
        rc = pq_err_set(err, rc, "column '%s': dictionary init failed", node->path);
    }
    rc = rc ? rc : choose_encoding(&st, err);
    if (rc == 0 && st.dict_used)
        rc = write_dictionary_page(&st, err);
    rc = rc ? rc : write_pages(&st, err);
    if (rc == 0 && (rc = finish_chunk_stats(&st)) != 0)
        rc = pq_err_set(err, rc, "column '%s': statistics failed", node->path);
    rc = rc ? rc : build_bloom(&st, err);
    rc = rc ? rc : geo_statistics(&st, err);
    meta->encodings |= 1u << st.enc;
    if (has_dict)
        pq_dict_free(&st.dict);
    pq_stats_free(&st.page_stats);
    pq_stats_free(&st.chunk_stats);
    return rc;
}
