/* chunk.c - the streaming column writer (chunk.h): cuts a leaf's rows
 * into pages as they arrive, and encodes, compresses and encrypts each
 * page when it closes, with its statistics, page-index entry and level
 * histograms. The encoding decisions are chooser.c's; the chunk's end
 * (dictionary page, chunk statistics, bloom filter) is colfinish.c's.
 *
 * Runs on whichever thread feeds the colwriter (one at a time): a daemon
 * worker encoding a part of a row group, or the classic API's caller.
 *
 * A page closes at the first row start after its rows reach page_max_rows
 * or its values page_max_bytes (byte arrays counted with their 4-byte
 * length), so pages begin at row boundaries (v2 pages and the OffsetIndex
 * need it) and fall where they fell when whole chunks were buffered. A
 * page that lies whole inside what is fed is encoded from there, without
 * a copy; only the rows of a page still open when a feed ends are copied
 * into cw->open. */
#include "chooser.h"
#include "chunk.h"
#include "colfinish.h"
#include "openpage.h"
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
    if (o->spill && o->mem->len >= PQ_OUT_SPILL_BYTES)
        return pq_out_spill(o, err);
    return PQ_OK;
}

int pq_out_spill(pq_out *o, pq_err *err)
{
    if (o->mem->len == 0)
        return PQ_OK;
    int rc = o->sink.write(o->sink.ctx, o->mem->data, o->mem->len, err);
    pq_buf_reset(o->mem);
    return rc;
}

void pq_chunk_work_init(pq_chunk_work *w)
{
    pq_buf_init(&w->levels);
    pq_buf_init(&w->body);
    pq_buf_init(&w->scratch);
    pq_buf_init(&w->indices);
    pq_buf_init(&w->wide);
    pq_buf_init(&w->crypt);
    pq_buf_init(&w->page_min);
    pq_buf_init(&w->page_max);
    pq_compressor_init(&w->comp);
    for (size_t i = 0; i < sizeof w->sample_sizes / sizeof w->sample_sizes[0]; i++)
        w->sample_sizes[i] = SIZE_MAX;
}

void pq_chunk_work_free(pq_chunk_work *w)
{
    pq_buf_free(&w->levels);
    pq_buf_free(&w->body);
    pq_buf_free(&w->scratch);
    pq_buf_free(&w->indices);
    pq_buf_free(&w->wide);
    pq_buf_free(&w->crypt);
    pq_buf_free(&w->page_min);
    pq_buf_free(&w->page_max);
    pq_compressor_free(&w->comp);
}

/* What a chunk's metadata owns besides its arrays, packed or not: the
 * bloom filter and the encrypted ColumnMetaData. */
static void meta_free_own(pq_chunk_meta *m)
{
    pq_buf_free(&m->encrypted_meta);
    if (m->bloom != NULL)
        pq_bloom_free(m->bloom);
    free(m->bloom);
    m->bloom = NULL;
}

/* The byte arrays of a chunk's metadata, in meta_pack's order. */
enum { n_meta_bufs = 5 };
static void meta_bufs(pq_chunk_meta *m, pq_buf *b[n_meta_bufs])
{
    pq_buf *all[n_meta_bufs] = {&m->index_bytes, &m->page_def_hist, &m->page_rep_hist, &m->min,
                                &m->max};
    memcpy(b, all, sizeof all);
}

void pq_chunk_meta_free(pq_chunk_meta *m)
{
    meta_free_own(m);
    if (m->block != NULL) {
        free(m->block);          /* every array lies in it */
    } else {
        pq_buf *b[n_meta_bufs];
        meta_bufs(m, b);
        for (int k = 0; k < n_meta_bufs; k++)
            pq_buf_free(b[k]);
        free(m->def_hist);
        free(m->rep_hist);
        free(m->pages);
    }
    memset(m, 0, sizeof *m);
}

/* Empties m (the colwriter's: never a packed one) for the next chunk,
 * keeping its arrays' memory (the level histograms are the leaf's size);
 * only the bloom filter and encrypted_meta are freed. */
static void meta_keep(pq_chunk_meta *m)
{
    pq_chunk_meta k = *m;
    meta_free_own(m);
    memset(m, 0, sizeof *m);
    pq_buf *from[n_meta_bufs], *to[n_meta_bufs];
    meta_bufs(&k, from);
    meta_bufs(m, to);
    for (int i = 0; i < n_meta_bufs; i++) {
        *to[i] = *from[i];
        pq_buf_reset(to[i]);
    }
    m->def_hist = k.def_hist;
    m->rep_hist = k.rep_hist;
    m->pages = k.pages;
    m->cap_pages = k.cap_pages;
}

void pq_chunk_meta_compact(pq_chunk_meta *m)
{
    if (m->block != NULL)
        return;                  /* exact already */
    if (m->n_pages < m->cap_pages && m->n_pages > 0) {
        pq_page_entry *p = realloc(m->pages, m->n_pages * sizeof *p);
        if (p != NULL) {
            m->pages = p;
            m->cap_pages = m->n_pages;
        }
    }
    pq_buf_shrink(&m->min, 0);
    pq_buf_shrink(&m->max, 0);
    pq_buf_shrink(&m->index_bytes, 0);
    pq_buf_shrink(&m->page_def_hist, 0);
    pq_buf_shrink(&m->page_rep_hist, 0);
    pq_buf_shrink(&m->encrypted_meta, 0);
}

int pq_chunk_check_encoding(const pq_node *node, pq_encoding enc, pq_err *err)
{
    if (enc == PQ_ENC_AUTO || pq_values_encoding_allowed(node->type, enc))
        return PQ_OK;
    return pq_err_set(err, PQ_EINVAL, "column '%s': encoding %d is not valid for its type",
                      node->name, (int)enc);
}

/* ---- life cycle ------------------------------------------------------------- */

int pq_colwriter_init(pq_colwriter *cw, const pq_node *node, const pq_chunk_opts *o)
{
    memset(cw, 0, sizeof *cw);
    return pq_colwriter_init_in(cw, node, o);
}

/* The buffers a released colwriter keeps, whatever its leaf's type (the
 * dictionary's are pq_dict_release's); n_kept_bufs of them. */
enum { n_own_bufs = 14, n_kept_bufs = n_own_bufs + n_meta_bufs };
static void kept_bufs(pq_colwriter *cw, pq_buf *b[n_kept_bufs])
{
    pq_buf *own[n_own_bufs] = {
        &cw->pages, &cw->hashes, &cw->open_idx, &cw->page_seen, &cw->picks,
        &cw->open.values, &cw->open.heap, &cw->open.offsets, &cw->open.def, &cw->open.rep,
        &cw->page_stats.min_bytes, &cw->page_stats.max_bytes,
        &cw->chunk_stats.min_bytes, &cw->chunk_stats.max_bytes,
    };
    memcpy(b, own, sizeof own);
    meta_bufs(&cw->meta, b + n_own_bufs);
}

int pq_colwriter_init_in(pq_colwriter *cw, const pq_node *node, const pq_chunk_opts *o)
{
    pq_colwriter kept = *cw;     /* a released colwriter's buffers, or none */
    pq_buf *from[n_kept_bufs], *to[n_kept_bufs];
    kept_bufs(&kept, from);
    memset(cw, 0, sizeof *cw);
    cw->node = node;
    cw->o = *o;
    cw->level = o->codec_level;
    cw->codec = o->codec;
    cw->order = pq_leaf_sort_order(node);
    pq_stats_init(&cw->page_stats, cw->order, node->type, (size_t)node->type_length);
    pq_stats_init(&cw->chunk_stats, cw->order, node->type, (size_t)node->type_length);
    kept_bufs(cw, to);
    for (int k = 0; k < n_kept_bufs; k++) {
        *to[k] = *from[k];
        pq_buf_reset(to[k]);
    }
    cw->meta.pages = kept.meta.pages;
    cw->meta.cap_pages = kept.meta.cap_pages;
    cw->meta.def_hist = kept.meta.def_hist;  /* PQ_CW_HIST_MIN slots, or NULL */
    cw->meta.rep_hist = kept.meta.rep_hist;
    cw->ndv = kept.ndv;          /* reset at each begin */
    pq_logical_kind k = node->logical.kind;
    cw->geo_on = k == PQ_LT_GEOMETRY || k == PQ_LT_GEOGRAPHY;
    pq_geo_stats_init(&cw->geo, k == PQ_LT_GEOGRAPHY);
    bool stringish = node->type == PQ_BYTE_ARRAY || k == PQ_LT_UUID;
    cw->bloom_maybe = node->type != PQ_BOOLEAN &&
                      (o->bloom == 1 || (o->bloom < 0 && stringish && !cw->geo_on));
    cw->dict = kept.dict;        /* freed by pq_colwriter_free if unused */
    if (pq_column_init_in(&cw->open, node) != 0)
        return PQ_ENOMEM;
    if (node->type != PQ_BOOLEAN) {
        if (pq_dict_init_in(&cw->dict, node->type, cw->open.width) != 0)
            return PQ_ENOMEM;
        cw->has_dict = true;
    }
    return PQ_OK;
}

void pq_colwriter_release(pq_colwriter *cw, size_t *budget)
{
    pq_chunk_meta *m = &cw->meta;  /* a kept or unfinished one, never packed */
    /* the level histograms: PQ_CW_HIST_MIN slots (meta_init), or their
     * leaf's levels when more; kept for the next leaf in the first case */
    if (cw->open.max_def + 1 > PQ_CW_HIST_MIN) {
        free(m->def_hist);
        m->def_hist = NULL;
    }
    if (cw->open.max_rep + 1 > PQ_CW_HIST_MIN) {
        free(m->rep_hist);
        m->rep_hist = NULL;
    }
    meta_keep(m);
    size_t pages = m->cap_pages * sizeof *m->pages;
    if (pages > *budget) {
        free(m->pages);
        m->pages = NULL;
        m->cap_pages = 0;
    }
    *budget -= m->pages != NULL ? pages : 0;
    pq_geo_stats_free(&cw->geo);
    if (cw->ndv != NULL && sizeof *cw->ndv <= *budget) {
        *budget -= sizeof *cw->ndv;  /* reset by the next leaf's begin */
    } else {
        free(cw->ndv);
        cw->ndv = NULL;
    }
    pq_buf *b[n_kept_bufs];
    kept_bufs(cw, b);
    for (int k = 0; k < n_kept_bufs; k++) {
        if (b[k]->cap <= *budget) {
            *budget -= b[k]->cap;
            pq_buf_reset(b[k]);
        } else {
            pq_buf_free(b[k]);
        }
    }
    pq_dict_release(&cw->dict, budget);
    cw->node = NULL;
    cw->has_dict = false;
}

void pq_colwriter_free(pq_colwriter *cw)
{
    pq_chunk_meta_free(&cw->meta);
    pq_buf_free(&cw->pages);
    pq_buf_free(&cw->hashes);
    pq_buf_free(&cw->open_idx);
    pq_buf_free(&cw->page_seen);
    pq_buf_free(&cw->picks);
    pq_column_free(&cw->open);
    pq_dict_free(&cw->dict);     /* a released colwriter's too (has_dict unset) */
    pq_stats_free(&cw->page_stats);
    pq_stats_free(&cw->chunk_stats);
    pq_geo_stats_free(&cw->geo);
    free(cw->ndv);
    memset(cw, 0, sizeof *cw);
}

/* A finished chunk's metadata, moved to `to` packed into one allocation
 * (to->block): a file keeps every chunk's until its footer, and its ~8
 * arrays a chunk, grown as pages came and freed one by one at the close,
 * were a partitioned convert's most frequent mallocs and frees. from
 * keeps its arrays for the next chunk (meta_keep). */
static int meta_pack(pq_chunk_meta *from, const pq_column *col, pq_chunk_meta *to)
{
    enum { n_parts = 8 };
    struct { void *src; size_t len; void *dst; } part[n_parts] = {
        {from->pages, from->n_pages * sizeof *from->pages, NULL},
        {from->def_hist, from->def_hist ? ((size_t)col->max_def + 1) * sizeof(uint64_t) : 0, NULL},
        {from->rep_hist, from->rep_hist ? ((size_t)col->max_rep + 1) * sizeof(uint64_t) : 0, NULL},
        {from->index_bytes.data, from->index_bytes.len, NULL},
        {from->page_def_hist.data, from->page_def_hist.len, NULL},
        {from->page_rep_hist.data, from->page_rep_hist.len, NULL},
        {from->min.data, from->min.len, NULL},
        {from->max.data, from->max.len, NULL},
    };
    size_t total = 0;
    for (int k = 0; k < n_parts; k++)
        total += (part[k].len + 7) & ~(size_t)7;  /* each 8-byte aligned */
    uint8_t *block = malloc(total ? total : 1);
    if (block == NULL)
        return PQ_ENOMEM;
    for (size_t k = 0, at = 0; k < n_parts; k++) {
        if (part[k].src == NULL)
            continue;                /* absent stays NULL, empty stays non-NULL */
        part[k].dst = block + at;
        memcpy(part[k].dst, part[k].src, part[k].len);
        at += (part[k].len + 7) & ~(size_t)7;
    }
    *to = *from;                 /* bloom and encrypted_meta move with it */
    to->block = block;
    to->pages = part[0].dst;
    to->cap_pages = from->n_pages;
    to->def_hist = part[1].dst;
    to->rep_hist = part[2].dst;
    pq_buf *bufs[n_meta_bufs];
    meta_bufs(to, bufs);
    for (int k = 0; k < n_meta_bufs; k++)
        *bufs[k] = (pq_buf){.data = part[3 + k].dst, .len = part[3 + k].len,
                            .cap = part[3 + k].len};
    from->bloom = NULL;
    pq_buf_init(&from->encrypted_meta);
    meta_keep(from);
    return PQ_OK;
}

/* A chunk's level histogram for levels 0..max, zeroed: NULL when max is
 * 0 (the chunk has none); a kept one (meta_keep, or another leaf's within
 * PQ_CW_HIST_MIN slots: pq_colwriter_release) when it has room. */
static int hist_ready(uint64_t **h, uint16_t max)
{
    size_t n = (size_t)max + 1;
    if (max == 0 || n > PQ_CW_HIST_MIN) {
        free(*h);                /* none, or not known to have room */
        *h = NULL;
    }
    if (max == 0)
        return PQ_OK;
    if (*h == NULL && !(*h = calloc(n > PQ_CW_HIST_MIN ? n : PQ_CW_HIST_MIN, sizeof **h)))
        return PQ_ENOMEM;
    memset(*h, 0, n * sizeof **h);
    return PQ_OK;
}

static int meta_init(pq_colwriter *cw)
{
    pq_chunk_meta *m = &cw->meta;
    const pq_column *col = &cw->open;
    meta_keep(m);
    m->node = cw->node;
    m->codec = cw->codec = cw->o.codec;
    m->dictionary_page_offset = -1;
    m->data_page_offset = -1;
    m->crypto_key = cw->o.crypto_key;
    m->crypto_key_id = cw->o.crypto_key_id;
    m->row_group = cw->o.row_group;
    m->column = cw->o.column;
    m->data_page_type = cw->o.page_version == 2 ? PQ_PAGE_DATA_V2 : PQ_PAGE_DATA;
    if (hist_ready(&m->def_hist, col->max_def) != 0 ||
        hist_ready(&m->rep_hist, col->max_rep) != 0)
        return PQ_ENOMEM;
    if (col->max_def > 0 || col->max_rep > 0)
        m->encodings |= 1u << PQ_ENC_RLE;
    return PQ_OK;
}

int pq_colwriter_begin(pq_colwriter *cw, int32_t ordinal, pq_err *err)
{
    cw->o.row_group = ordinal;
    if (meta_init(cw) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", cw->node->path);
    pq_buf_reset(&cw->pages);
    pq_buf_reset(&cw->hashes);
    pq_column_reset(&cw->open);
    pq_buf_reset(&cw->open_idx);
    cw->open_dict = false;
    cw->open_ba_bytes = 0;
    cw->open_rows = cw->open_bytes = cw->fed_bytes = 0;
    cw->mode = PQ_CW_UNDECIDED;
    cw->enc = cw->o.encoding;
    cw->level = cw->kept ? cw->kept_level : cw->o.codec_level;
    cw->dict_bit_width = 0;
    if (cw->has_dict)
        pq_dict_reset(&cw->dict);
    cw->dict_pages = cw->fallback_pages = false;
    pq_stats_reset(&cw->chunk_stats);
    cw->rows = 0;
    cw->values = 0;
    if (cw->ndv != NULL)
        pq_ndv_init(cw->ndv);
    pq_geo_stats_reset(&cw->geo);
    return PQ_OK;
}

void pq_colwriter_trim(pq_colwriter *cw)
{
    pq_chunk_meta_free(&cw->meta); /* the arrays meta_keep kept */
    pq_buf_free(&cw->pages);
    pq_buf_free(&cw->hashes);
    pq_buf_free(&cw->open_idx);
    pq_buf_free(&cw->page_seen);
    pq_buf_free(&cw->picks);
    pq_column_trim(&cw->open);
    if (cw->has_dict)
        pq_dict_trim(&cw->dict);
    free(cw->ndv);
    cw->ndv = NULL;
}

size_t pq_colwriter_held_bytes(const pq_colwriter *cw)
{
    size_t open = cw->open.n_levels ? pq_column_buffered_bytes(&cw->open) : 0;
    return open + cw->open_idx.len + cw->pages.len +
           cw->hashes.len +
           (cw->has_dict ? cw->dict.arena.len + cw->dict.count * 16 : 0) +
           cw->meta.index_bytes.len + cw->meta.n_pages * sizeof(pq_page_entry);
}

size_t pq_colwriter_finish_bound(const pq_colwriter *cw, bool take)
{
    size_t dict = cw->dict_pages || cw->mode == PQ_CW_DICT ? pq_dict_plain_bytes(&cw->dict) : 0;
    if (take && cw->pages.len >= PQ_CW_SPLICE_MIN)
        return dict + 1024;      /* the data pages, the open one too, go to take */
    return cw->pages.len + dict + pq_column_buffered_bytes(&cw->open) + cw->open_idx.len + 1024;
}

size_t pq_colwriter_fed_bytes(const pq_colwriter *cw)
{
    return cw->fed_bytes;
}

/* ---- one page ------------------------------------------------------------------ */

/* The page: levels [l0, l1) and values [v0, v1) of one column, rows rows. */
typedef struct page_extent {
    size_t l0, l1, v0, v1, rows;
} page_extent;

/* A page of indices: the open page while the dictionary is in use
 * (openpage.c), its statistics gathered as its rows arrived. */
static bool index_page(const pq_colwriter *cw, const pq_column *c)
{
    return c == &cw->open && cw->open_dict;
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

static int encode_page_levels(const pq_colwriter *cw, const pq_column *c, const page_extent *pe,
                              pq_buf *out, size_t *rep_len, size_t *def_len)
{
    bool v1 = cw->o.page_version == 1;
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

/* Gathers the page's statistics into out (min/max in mn/mx). */
static int page_statistics(pq_colwriter *cw, const pq_column *c, const page_extent *pe,
                           pq_buf *mn, pq_buf *mx, pq_stats_out *out)
{
    size_t nv = pe->v1 - pe->v0;
    if (!index_page(cw, c)) {
        pq_stats_reset(&cw->page_stats);
        pq_openpage_new_page(cw);
        if (c->node->type == PQ_BYTE_ARRAY)
            pq_stats_add_bytes(&cw->page_stats, c->heap.data, pq_column_offsets(c) + pe->v0, nv);
        else if (nv > 0)
            pq_stats_add_fixed(&cw->page_stats, c->values.data + pe->v0 * c->width, nv);
        pq_stats_add_nulls(&cw->page_stats, (pe->l1 - pe->l0) - nv);
    }
    if (pq_stats_merge(&cw->chunk_stats, &cw->page_stats) != 0)
        return PQ_ENOMEM;
    memset(out, 0, sizeof *out);
    out->null_count = (int64_t)pq_stats_null_count(&cw->page_stats);
    out->has_nan_count = pq_colfinish_order_has_nans(cw->order);
    out->nan_count = (int64_t)pq_stats_nan_count(&cw->page_stats);
    pq_buf_reset(mn);
    pq_buf_reset(mx);
    if (cw->order == PQ_ORDER_NONE || !pq_stats_has_min_max(&cw->page_stats))
        return PQ_OK;
    int rc = pq_stats_min_max(&cw->page_stats, cw->o.stats_truncate, mn, &out->min_exact,
                              mx, &out->max_exact);
    if (rc != 0)
        return rc;
    out->has_minmax = true;
    out->min = mn->data;
    out->min_len = mn->len;
    out->max = mx->data;
    out->max_len = mx->len;
    out->legacy_minmax = pq_colfinish_order_has_legacy(cw->order);
    return PQ_OK;
}

static int grow_pages(pq_chunk_meta *m)
{
    if (m->n_pages < m->cap_pages)
        return PQ_OK;
    size_t cap = m->cap_pages ? m->cap_pages * 2 : 8;
    pq_page_entry *p = realloc(m->pages, cap * sizeof *p);
    if (p == NULL)
        return PQ_ENOMEM;
    m->pages = p;
    m->cap_pages = cap;
    return PQ_OK;
}

static int record_page(pq_colwriter *cw, const pq_column *c, const page_extent *pe,
                       const pq_stats_out *ps, int64_t offset, size_t size)
{
    pq_chunk_meta *m = &cw->meta;
    if (grow_pages(m) != 0)
        return PQ_ENOMEM;
    pq_page_entry *e = &m->pages[m->n_pages++];
    memset(e, 0, sizeof *e);
    e->offset = offset;
    e->size = (int32_t)size;
    e->first_row = cw->rows;
    e->null_count = ps->null_count;
    e->null_page = pe->v1 == pe->v0;
    /* An all-NaN page has values but no min/max: a ColumnIndex cannot
     * describe it, so the chunk gets only an OffsetIndex. */
    if (!e->null_page && !ps->has_minmax)
        m->page_without_minmax = true;
    if (c->node->type == PQ_BYTE_ARRAY) {
        const uint32_t *off = pq_column_offsets(c);
        e->unencoded_ba_bytes = index_page(cw, c) ? cw->open_ba_bytes
                                                  : (int64_t)(off[pe->v1] - off[pe->v0]);
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

/* Before the page's levels are encoded (the chooser uses the scratch
 * buffers): the decision on the first page with values, the dictionary's
 * indices while it holds, and what the chunk's end needs of the values. */
static int page_prepare(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c,
                        const page_extent *pe, pq_err *err)
{
    size_t nv = pe->v1 - pe->v0;
    int rc = 0;
    if (index_page(cw, c))
        return PQ_OK;            /* its values went in as they arrived */
    if (cw->mode == PQ_CW_UNDECIDED && nv > 0)
        rc = pq_choose_first_page(cw, w, c, pe->v0, nv, err);
    else if (cw->mode == PQ_CW_REFALL && nv > 0)
        rc = pq_choose_fallback(cw, w, c, pe->v0, nv, err);
    else if (cw->mode == PQ_CW_DICT)
        rc = pq_choose_dict_insert(cw, w, c, pe->v0, nv, err);
    return rc ? rc : pq_colfinish_page_values(cw, c, pe->v0, nv, cw->mode == PQ_CW_DICT, err);
}

/* The page's values, after its levels in w->body. */
static int page_values(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c,
                       const page_extent *pe, pq_err *err)
{
    size_t nv = pe->v1 - pe->v0;
    int rc;
    if (cw->mode == PQ_CW_DICT) {
        const pq_buf *idx = index_page(cw, c) ? &cw->open_idx : &w->indices;
        cw->dict_pages = true;
        rc = pq_values_encode(&w->body, c, PQ_ENC_RLE_DICTIONARY, 0, nv,
                              (const uint32_t *)(const void *)idx->data,
                              cw->dict_bit_width, &w->wide);
    } else if (cw->mode == PQ_CW_UNDECIDED || cw->mode == PQ_CW_REFALL) { /* no values */
        rc = pq_values_encode(&w->body, c, pq_colfinish_null_encoding(cw), pe->v0, 0, NULL, 0,
                              &w->wide);
    } else {
        cw->fallback_pages = cw->fallback_pages || nv > 0;
        rc = pq_values_encode(&w->body, c, cw->enc, pe->v0, nv, NULL, 0, &w->wide);
    }
    return rc ? pq_err_set(err, rc, "column '%s': encoding a page failed", c->node->path) : 0;
}

/* After a dictionary page's indices: past dictionary_max_bytes, the
 * next pages fall back, to an encoding measured on the next page with
 * values. Always the next page, never this one: a page whose values
 * went into the dictionary as they arrived has none left to measure,
 * and the choice must not depend on how the rows arrived (a row group
 * fed in pieces gives the file the whole row group gives). */
static void check_dictionary(pq_colwriter *cw)
{
    if (cw->mode == PQ_CW_DICT && pq_dict_plain_bytes(&cw->dict) > cw->o.dictionary_max_bytes)
        cw->mode = PQ_CW_REFALL;
}

/* The chunk's only data page, closed by its finish: when it and the
 * dictionary (built after it, written before it) are small, the chunk is
 * written UNCOMPRESSED. Many small files (partitioned output) have mostly
 * such chunks: compressed they were larger, and zstd's per-call set-up
 * was a sixth of their encoding. Each page is measured apart, not their
 * sum: zstd compresses each page alone, so a dictionary page and a data
 * page each under the limit gain no more together than apart (on 1,000
 * partitions of the bench input pages under 192 bytes came out of zstd
 * at 98-103% of their size, each call ~20,000 instructions). */
static void small_chunk(pq_colwriter *cw, const pq_page_spec *spec)
{
    if (!cw->finishing || cw->meta.n_pages > 0 || cw->o.small_chunk_bytes == 0)
        return;
    size_t n = spec->body_len + spec->rep_len + spec->def_len;
    size_t dict = 0;
    if (cw->has_dict && (cw->dict_pages || cw->mode == PQ_CW_DICT))
        dict = pq_dict_plain_bytes(&cw->dict);
    if (n < cw->o.small_chunk_bytes && dict < cw->o.small_chunk_bytes)
        cw->codec = cw->meta.codec = PQ_CODEC_UNCOMPRESSED;
}

/* The page closed by the chunk's finish when none was written before it:
 * the chunk's only page. Its header carries no Statistics: they would be
 * the chunk's own (ColumnMetaData.statistics, same values, same
 * truncation) a second time, and the ColumnIndex's a third. Partitioned
 * output is mostly such chunks: on 1,000 partitions of the bench input
 * the page headers' statistics were ~1 KB of each 41 KB file. */
static bool only_page(const pq_colwriter *cw)
{
    return cw->finishing && cw->meta.n_pages == 0;
}

static int write_page(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c,
                      const page_extent *pe, pq_buf *mn, pq_buf *mx, pq_err *err)
{
    bool v2 = cw->o.page_version == 2;
    size_t nv = pe->v1 - pe->v0, nl = pe->l1 - pe->l0;
    pq_buf *lv = v2 ? &w->levels : &w->body; /* v1 levels lead the body */
    size_t rep_len, def_len;
    int rc = page_prepare(cw, w, c, pe, err);
    if (rc != 0)
        return rc;
    pq_buf_reset(&w->levels);
    pq_buf_reset(&w->body);
    if ((rc = encode_page_levels(cw, c, pe, lv, &rep_len, &def_len)) != 0)
        return pq_err_set(err, rc, "column '%s': encoding a page failed", c->node->path);
    if ((rc = page_values(cw, w, c, pe, err)) != 0)
        return rc;
    bool undecided = cw->mode == PQ_CW_UNDECIDED || cw->mode == PQ_CW_REFALL;
    pq_encoding enc = undecided ? pq_colfinish_null_encoding(cw) : cw->enc;
    pq_stats_out ps = {.null_count = (int64_t)(nl - nv)};
    if (cw->o.statistics && (rc = page_statistics(cw, c, pe, mn, mx, &ps)) != 0)
        return pq_err_set(err, rc, "column '%s': page statistics failed", c->node->path);
    pq_page_spec spec = {
        .type = v2 ? PQ_PAGE_DATA_V2 : PQ_PAGE_DATA,
        .num_values = (int32_t)nl,
        .num_nulls = (int32_t)(nl - nv),
        .num_rows = (int32_t)pe->rows,
        .encoding = enc,
        .levels = w->levels.data,
        .rep_len = v2 ? rep_len : 0,
        .def_len = v2 ? def_len : 0,
        .body = w->body.data,
        .body_len = w->body.len,
        .stats = cw->o.statistics && !only_page(cw) ? &ps : NULL,
    };
    small_chunk(cw, &spec);
    int64_t offset = (int64_t)cw->pages.len;
    size_t size;
    if ((rc = pq_colfinish_emit(cw, w, &spec, &cw->pages, &size, err)) != 0)
        return rc;
    if (cw->meta.data_page_offset < 0)
        cw->meta.data_page_offset = offset;
    cw->meta.data_pages[enc]++;
    cw->meta.encodings |= 1u << enc;
    if ((rc = record_page(cw, c, pe, &ps, offset, size)) != 0)
        return pq_err_set(err, rc, "column '%s': out of memory", c->node->path);
    cw->rows += (int64_t)pe->rows;
    cw->values += nv;
    cw->meta.num_values += (int64_t)nl;
    check_dictionary(cw);
    return PQ_OK;
}

/* Encodes a page of c, its min/max in the thread's scratch. */
static int close_page(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c,
                      const page_extent *pe, pq_err *err)
{
    return write_page(cw, w, c, pe, &w->page_min, &w->page_max, err);
}

/* ---- feeding rows ------------------------------------------------------------------ */

/* A page's budget as scan_page walks it: the open page's rows and value
 * bytes so far (bytes0 before value v0), and its limits. */
typedef struct scan_state {
    const uint16_t *def, *rep;
    const uint32_t *off;         /* byte arrays' offsets, else NULL */
    size_t width, v0, bytes0, max_rows, max_bytes;
    uint16_t max_def;
} scan_state;

/* The open page's value bytes once values [v0, v) joined it (byte arrays
 * count 4 for their length): offsets are cumulative, so nothing is summed
 * per value. */
static inline size_t scan_bytes(const scan_state *s, size_t v)
{
    return s->bytes0 + (s->off ? 4 * (v - s->v0) + (size_t)(s->off[v] - s->off[s->v0])
                               : s->width * (v - s->v0));
}

static inline size_t scan_defined(const scan_state *s, size_t l0, size_t l1)
{
    if (s->def == NULL)
        return l1 - l0;
    size_t n = 0;
    for (size_t l = l0; l < l1; l++)
        n += s->def[l] == s->max_def;
    return n;
}

#define SCAN_BLOCK 32

/* A leaf without repetition: every level starts a row, so the row budget
 * bounds the levels at once, and the byte budget (monotonic) is checked
 * a block of levels at a time, level by level only in the block where it
 * runs out. From level *l (value *v, *rows rows): returns whether the page
 * filled, *l at the row it stops before. */
static bool scan_flat(const scan_state *s, size_t n, size_t *l, size_t *v, size_t *rows)
{
    size_t room = s->max_rows > *rows ? s->max_rows - *rows : 0;
    size_t lim = n - *l > room ? *l + room : n;
    size_t at = *l, val = *v;
    bool full = lim < n;
    while (at < lim) {
        size_t end = lim - at > SCAN_BLOCK ? at + SCAN_BLOCK : lim;
        size_t last = val + scan_defined(s, at, end - 1); /* value index at level end - 1 */
        if (scan_bytes(s, last) < s->max_bytes) {
            val = last + scan_defined(s, end - 1, end);
            at = end;
            continue;
        }
        while (scan_bytes(s, val) < s->max_bytes) {
            val += scan_defined(s, at, at + 1);
            at++;
        }
        full = true;
        break;
    }
    *rows += at - *l;
    *l = at;
    *v = val;
    return full;
}

/* A repeated leaf: rows start where rep is 0. */
static bool scan_nested(const scan_state *s, size_t n, size_t *l, size_t *v, size_t *rows)
{
    for (; *l < n; (*l)++) {
        if (s->rep[*l] == 0) {
            if (*rows >= s->max_rows || scan_bytes(s, *v) >= s->max_bytes)
                return true;
            (*rows)++;
        }
        *v += scan_defined(s, *l, *l + 1);
    }
    return false;
}

/* Scans c from level l0 / value v0 with the open page's budget: *pe ends
 * at the first row start where the page is full (returns true), or at the
 * end of c (returns false). Counts into cw->open_rows / open_bytes.
 * Runs once per level of every leaf: kept to a few instructions a level
 * (it was a tenth of a typed convert's encoding). */
static bool scan_page(pq_colwriter *cw, const pq_column *c, size_t l0, size_t v0,
                      page_extent *pe)
{
    const scan_state s = {
        .def = c->max_def ? pq_column_def(c) : NULL,
        .rep = c->max_rep ? pq_column_rep(c) : NULL,
        .off = c->node->type == PQ_BYTE_ARRAY ? pq_column_offsets(c) : NULL,
        .width = c->width, .v0 = v0, .bytes0 = cw->open_bytes,
        .max_rows = cw->o.page_max_rows, .max_bytes = cw->o.page_max_bytes,
        .max_def = c->max_def,
    };
    size_t l = l0, v = v0, rows = cw->open_rows;
    const size_t n = c->n_levels, rows0 = rows;
    if (cw->open.n_levels == 0 && l < n) { /* an empty page takes its first row */
        rows += s.rep == NULL || s.rep[l] == 0;
        v += scan_defined(&s, l, l + 1);
        l++;
    }
    bool full = s.rep == NULL ? scan_flat(&s, n, &l, &v, &rows)
                              : scan_nested(&s, n, &l, &v, &rows);
    cw->open_rows = rows;
    cw->open_bytes = scan_bytes(&s, v);
    *pe = (page_extent){.l0 = l0, .l1 = l, .v0 = v0, .v1 = v, .rows = rows - rows0};
    return full;
}

static int open_page_close(pq_colwriter *cw, pq_chunk_work *w, pq_err *err)
{
    pq_column *o = &cw->open;
    page_extent pe = {.l1 = o->n_levels, .v1 = o->n_values, .rows = o->n_rows};
    int rc = o->n_levels > 0 ? close_page(cw, w, o, &pe, err) : PQ_OK;
    pq_column_reset(o);
    pq_buf_reset(&cw->open_idx);
    cw->open_dict = false;
    cw->open_ba_bytes = 0;
    cw->open_rows = cw->open_bytes = 0;
    return rc;
}

/* Rows that join the open page: with the dictionary in use, as indices
 * (openpage.c); else as they are. The mode changes only when a page
 * closes, so an open page is all one or the other. */
static int append_open(pq_colwriter *cw, const pq_column *c, const page_extent *pe, pq_err *err)
{
    if (cw->open.n_levels == 0) {
        cw->open_dict = cw->mode == PQ_CW_DICT;
        pq_stats_reset(&cw->page_stats);
        pq_openpage_new_page(cw);
    }
    if (cw->open_dict)
        return pq_openpage_append_dict(cw, c, pe->l0, pe->l1, pe->v0, pe->v1, pe->rows, err);
    int rc = pq_column_append_range(&cw->open, c, pe->l0, pe->l1, pe->v0, pe->v1, pe->rows);
    return rc ? pq_err_set(err, rc, "column '%s': out of memory", c->node->path) : PQ_OK;
}

/* last: the chunk's finish comes next, so a last page that lies whole in
 * c is encoded from c as finish would encode it from the open page (the
 * chunk's last page: finishing), not copied there first. */
static int feed(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, bool last, pq_err *err)
{
    size_t l = 0, v = 0;
    cw->fed_bytes += pq_column_buffered_bytes(c);
    while (l < c->n_levels) {
        page_extent pe;
        bool full = scan_page(cw, c, l, v, &pe);
        int rc;
        if ((full || last) && cw->open.n_levels == 0) {
            cw->finishing = !full;                     /* !full: c's end, the chunk's */
            rc = close_page(cw, w, c, &pe, err);       /* whole in c: no copy */
            cw->finishing = false;
            cw->open_rows = cw->open_bytes = 0;
        } else {
            rc = append_open(cw, c, &pe, err);
            if (rc == 0 && full)
                rc = open_page_close(cw, w, err);
        }
        if (rc != 0)
            return rc;
        l = pe.l1;
        v = pe.v1;
    }
    return PQ_OK;
}

int pq_colwriter_feed(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, pq_err *err)
{
    return feed(cw, w, c, false, err);
}

int pq_colwriter_feed_last(pq_colwriter *cw, pq_chunk_work *w, const pq_column *c, pq_err *err)
{
    return feed(cw, w, c, true, err);
}

int pq_colwriter_finish(pq_colwriter *cw, pq_chunk_work *w, pq_buf *out, pq_buf *take,
                        pq_chunk_meta *meta, pq_err *err)
{
    cw->finishing = true;
    int rc = open_page_close(cw, w, err);
    cw->finishing = false;
    rc = rc ? rc : pq_colfinish_chunk(cw, w, out, take, err);
    if (rc != 0)
        return rc;
    if (meta_pack(&cw->meta, &cw->open, meta) != 0)
        return pq_err_set(err, PQ_ENOMEM, "column '%s': out of memory", cw->node->path);
    cw->prev_values = cw->values;
    if (cw->has_dict)
        pq_dict_reset(&cw->dict); /* held until the next chunk's begin otherwise */
    return PQ_OK;
}

int pq_chunk_write(pq_chunk_work *w, const pq_column *col, const pq_chunk_opts *o,
                   pq_out *out, pq_chunk_meta *meta, pq_err *err)
{
    pq_colwriter cw;
    memset(meta, 0, sizeof *meta);
    int rc = pq_colwriter_init(&cw, col->node, o);
    if (rc != 0) {
        pq_colwriter_free(&cw);
        return pq_err_set(err, rc, "column '%s': out of memory", col->node->path);
    }
    size_t start = out->mem->len;
    rc = pq_colwriter_begin(&cw, o->row_group, err);
    rc = rc ? rc : pq_colwriter_feed(&cw, w, col, err);
    rc = rc ? rc : pq_colwriter_finish(&cw, w, out->mem, NULL, meta, err);
    if (rc == 0) {
        pq_colfinish_rebase(meta, (int64_t)out->offset - (int64_t)start);
        out->offset += out->mem->len - start;
    }
    pq_colwriter_free(&cw);
    return rc;
}
