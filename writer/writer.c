/* writer.c - the file: PAR1 framing, row tracking and row-group flushes,
 * page indexes after the row groups, then the footer (parquet-format
 * README "File Format"). The only module that knows the file layout. */
#include "chunk.h"
#include "metadata.h"
#include "page.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pq_writer {
    pq_schema *schema;
    pq_writer_opts opts;
    char created_by[128];
    pq_out out;
    pq_column *cols;
    pq_chunk_opts *chunk_opts;
    size_t n_cols;
    pq_chunk_work work;
    pq_row_group_meta *rgs;
    size_t n_rgs, cap_rgs;
    pq_kv *kv;
    size_t n_kv;
    uint64_t rows_written, rows_buffered;
    bool closed;
    int failed;                 /* first fatal error; the file is unusable */
};

void pq_writer_opts_default(pq_writer_opts *o)
{
    memset(o, 0, sizeof *o);
    o->codec = PQ_CODEC_ZSTD;
    o->page_version = 2;
    o->crc = true;
    o->page_max_bytes = 1 << 20;
    o->page_max_rows = 20000;
    o->dictionary_max_bytes = 1 << 20;
    o->stats_truncate = 64;
    o->statistics = true;
    o->row_group_max_rows = 1000000;
    o->row_group_max_bytes = 64u << 20;
    o->page_index = true;
}

static int fd_write(void *ctx, const void *data, size_t n, pq_err *err)
{
    int fd = *(int *)ctx;
    const uint8_t *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return pq_err_set(err, PQ_EIO, "write failed: %s", strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return PQ_OK;
}

pq_sink pq_sink_fd(int *fd)
{
    pq_sink s = {.ctx = fd, .write = fd_write};
    return s;
}

static int resolve_chunk_opts(pq_writer *w, const pq_node *n, pq_chunk_opts *c, pq_err *err)
{
    const pq_column_opts *co = &n->opts;
    const pq_writer_opts *o = &w->opts;
    c->codec = co->codec >= 0 ? (pq_codec)co->codec : o->codec;
    c->codec_level = co->codec >= 0 ? co->codec_level : o->codec_level;
    c->encoding = co->encoding;
    c->dictionary = co->dictionary;
    c->dictionary_max_bytes = co->dictionary_max_bytes ? co->dictionary_max_bytes
                                                       : o->dictionary_max_bytes;
    c->statistics = co->statistics < 0 ? o->statistics : co->statistics != 0;
    c->stats_truncate = co->stats_truncate ? co->stats_truncate : o->stats_truncate;
    c->page_version = o->page_version;
    c->crc = o->crc;
    c->page_max_bytes = o->page_max_bytes;
    c->page_max_rows = o->page_max_rows;
    c->page_index = o->page_index;
    c->bloom = co->bloom;
    c->bloom_fpp = co->bloom_fpp;
    c->bloom_ndv = co->bloom_ndv;
    if (c->bloom_fpp < 0 || c->bloom_fpp >= 1)
        return pq_err_set(err, PQ_EINVAL, "column '%s': bloom fpp %g is not in (0, 1)",
                          n->path, c->bloom_fpp);
    int rc = pq_codec_check_level(c->codec, c->codec_level, err);
    return rc ? rc : pq_chunk_check_encoding(n, c->encoding, err);
}

static int check_opts(const pq_writer_opts *o, pq_err *err)
{
    if (o->page_version != 1 && o->page_version != 2)
        return pq_err_set(err, PQ_EINVAL, "page version must be 1 or 2, not %d", o->page_version);
    if (o->page_max_bytes == 0 || o->page_max_rows == 0)
        return pq_err_set(err, PQ_EINVAL, "page limits must be positive");
    return pq_codec_check_level(o->codec, o->codec_level, err);
}

static int writer_setup(pq_writer *w, pq_err *err)
{
    w->n_cols = pq_schema_num_leaves(w->schema);
    w->cols = calloc(w->n_cols, sizeof *w->cols);
    w->chunk_opts = calloc(w->n_cols, sizeof *w->chunk_opts);
    if (w->cols == NULL || w->chunk_opts == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    for (size_t i = 0; i < w->n_cols; i++) {
        const pq_node *n = pq_schema_leaf_node(w->schema, i);
        int rc = resolve_chunk_opts(w, n, &w->chunk_opts[i], err);
        if (rc != 0)
            return rc;
        if (pq_column_init(&w->cols[i], n) != 0)
            return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    }
    return pq_out_write(&w->out, "PAR1", 4, err);
}

int pq_writer_open(pq_writer **out, pq_schema *schema, const pq_writer_opts *opts,
                   pq_sink sink, pq_err *err)
{
    *out = NULL;
    pq_writer_opts defaults;
    pq_writer_opts_default(&defaults);
    if (opts == NULL)
        opts = &defaults;
    int rc = pq_schema_finish(schema, err);
    rc = rc ? rc : check_opts(opts, err);
    if (rc != 0)
        return rc;
    pq_writer *w = calloc(1, sizeof *w);
    if (w == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    w->schema = schema;
    w->opts = *opts;
    snprintf(w->created_by, sizeof w->created_by, "%s",
             opts->created_by ? opts->created_by : "parqd version " PARQD_VERSION);
    w->opts.created_by = w->created_by;
    w->out.sink = sink;
    pq_chunk_work_init(&w->work);
    rc = writer_setup(w, err);
    if (rc != 0) {
        pq_writer_destroy(w);
        return rc;
    }
    *out = w;
    return PQ_OK;
}

static void free_row_groups(pq_writer *w)
{
    for (size_t i = 0; i < w->n_rgs; i++) {
        for (size_t c = 0; c < w->n_cols; c++)
            pq_chunk_meta_free(&w->rgs[i].chunks[c]);
        free(w->rgs[i].chunks);
    }
    free(w->rgs);
}

void pq_writer_destroy(pq_writer *w)
{
    if (w == NULL)
        return;
    for (size_t i = 0; w->cols && i < w->n_cols; i++)
        pq_column_free(&w->cols[i]);
    free(w->cols);
    free(w->chunk_opts);
    free_row_groups(w);
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    free(w->kv);
    pq_chunk_work_free(&w->work);
    free(w);
}

int pq_writer_add_metadata(pq_writer *w, const char *key, const char *value, pq_err *err)
{
    pq_kv *kv = realloc(w->kv, (w->n_kv + 1) * sizeof *kv);
    if (kv == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    w->kv = kv;
    kv[w->n_kv].key = strdup(key);
    kv[w->n_kv].value = value ? strdup(value) : NULL;
    if (kv[w->n_kv].key == NULL || (value && kv[w->n_kv].value == NULL)) {
        free(kv[w->n_kv].key);
        free(kv[w->n_kv].value);
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    }
    w->n_kv++;
    return PQ_OK;
}

pq_column *pq_writer_column(pq_writer *w, size_t leaf)
{
    return leaf < w->n_cols ? &w->cols[leaf] : NULL;
}

size_t pq_writer_buffered_bytes(const pq_writer *w)
{
    size_t total = 0;
    for (size_t i = 0; i < w->n_cols; i++)
        total += pq_column_buffered_bytes(&w->cols[i]);
    return total;
}

uint64_t pq_writer_bytes_written(const pq_writer *w) { return w->out.offset; }
uint64_t pq_writer_rows_written(const pq_writer *w) { return w->rows_written; }
uint64_t pq_writer_rows_buffered(const pq_writer *w) { return w->rows_buffered; }

/* Byte size is checked every 64 rows: summing every column per row would
 * cost more than the row itself on wide schemas. */
int pq_writer_end_row(pq_writer *w, pq_err *err)
{
    w->rows_buffered++;
    const pq_writer_opts *o = &w->opts;
    bool full = o->row_group_max_rows && w->rows_buffered >= o->row_group_max_rows;
    if (!full && o->row_group_max_bytes && (w->rows_buffered & 63) == 0)
        full = pq_writer_buffered_bytes(w) >= o->row_group_max_bytes;
    return full ? pq_writer_flush_row_group(w, err) : PQ_OK;
}

void pq_writer_abort_row(pq_writer *w)
{
    for (size_t i = 0; i < w->n_cols; i++)
        pq_column_truncate_rows(&w->cols[i], w->rows_buffered);
}

static int check_row_counts(const pq_writer *w, pq_err *err)
{
    for (size_t i = 0; i < w->n_cols; i++)
        if (w->cols[i].n_rows != w->rows_buffered)
            return pq_err_set(err, PQ_ESTATE, "column '%s' has %zu rows, the row group has %llu",
                              w->cols[i].node->path, w->cols[i].n_rows,
                              (unsigned long long)w->rows_buffered);
    return PQ_OK;
}

static int grow_row_groups(pq_writer *w, pq_err *err)
{
    if (w->n_rgs < w->cap_rgs)
        return PQ_OK;
    size_t cap = w->cap_rgs ? w->cap_rgs * 2 : 4;
    pq_row_group_meta *p = realloc(w->rgs, cap * sizeof *p);
    if (p == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    w->rgs = p;
    w->cap_rgs = cap;
    return PQ_OK;
}

static int write_row_group(pq_writer *w, pq_row_group_meta *rg, pq_err *err)
{
    rg->file_offset = (int64_t)w->out.offset;
    for (size_t i = 0; i < w->n_cols; i++) {
        pq_chunk_meta *m = &rg->chunks[i];
        int rc = pq_chunk_write(&w->work, &w->cols[i], &w->chunk_opts[i], &w->out, m, err);
        if (rc != 0)
            return rc;
        rg->total_byte_size += m->total_uncompressed;
        rg->total_compressed_size += m->total_compressed;
    }
    return PQ_OK;
}

int pq_writer_flush_row_group(pq_writer *w, pq_err *err)
{
    if (w->closed || w->failed)
        return pq_err_set(err, PQ_ESTATE, "writer: flush after close or failure");
    if (w->rows_buffered == 0)
        return PQ_OK;
    int rc = check_row_counts(w, err);
    rc = rc ? rc : grow_row_groups(w, err);
    if (rc != 0)
        return rc;
    pq_row_group_meta *rg = &w->rgs[w->n_rgs];
    memset(rg, 0, sizeof *rg);
    rg->num_rows = (int64_t)w->rows_buffered;
    rg->chunks = calloc(w->n_cols, sizeof *rg->chunks);
    if (rg->chunks == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    w->n_rgs++; /* counted now so its chunk metas are freed on any path */
    rc = write_row_group(w, rg, err);
    if (rc != 0) {
        w->failed = rc; /* bytes of a partial row group are on the sink */
        return rc;
    }
    for (size_t i = 0; i < w->n_cols; i++)
        pq_column_reset(&w->cols[i]);
    w->rows_written += w->rows_buffered;
    w->rows_buffered = 0;
    return PQ_OK;
}

/* Bloom filters go together after the last row group (BloomFilter.md
 * "File Format"), so a reader probing several row groups reads one range. */
static int write_bloom_filters(pq_writer *w, pq_err *err)
{
    pq_buf buf;
    pq_buf_init(&buf);
    int rc = PQ_OK;
    for (size_t g = 0; rc == 0 && g < w->n_rgs; g++) {
        for (size_t c = 0; rc == 0 && c < w->n_cols; c++) {
            pq_chunk_meta *m = &w->rgs[g].chunks[c];
            if (m->bloom == NULL)
                continue;
            pq_buf_reset(&buf);
            if (pq_bloom_write(m->bloom, &buf) != 0) {
                rc = pq_err_set(err, PQ_ENOMEM, "writer: bloom filter for '%s' failed",
                                m->node->path);
                break;
            }
            m->bloom_offset = (int64_t)w->out.offset;
            m->bloom_length = (int32_t)buf.len;
            rc = pq_out_write(&w->out, buf.data, buf.len, err);
        }
    }
    pq_buf_free(&buf);
    return rc;
}

/* Page indexes go after the last row group, before the footer: all column
 * indexes, then all offset indexes (PageIndex.md), so a reader fetches
 * each kind with one read. */
static int write_page_indexes(pq_writer *w, bool column, pq_err *err)
{
    pq_buf buf;
    pq_buf_init(&buf);
    int rc = PQ_OK;
    for (size_t g = 0; rc == 0 && g < w->n_rgs; g++) {
        for (size_t c = 0; rc == 0 && c < w->n_cols; c++) {
            pq_chunk_meta *m = &w->rgs[g].chunks[c];
            if (column && !m->write_column_index)
                continue;
            pq_buf_reset(&buf);
            rc = column ? pq_meta_write_column_index(m, &buf) : pq_meta_write_offset_index(m, &buf);
            if (rc != 0) {
                rc = pq_err_set(err, rc, "writer: page index for '%s' failed", m->node->path);
                break;
            }
            int64_t at = (int64_t)w->out.offset;
            rc = pq_out_write(&w->out, buf.data, buf.len, err);
            if (column) {
                m->column_index_offset = at;
                m->column_index_length = (int32_t)buf.len;
            } else {
                m->offset_index_offset = at;
                m->offset_index_length = (int32_t)buf.len;
            }
        }
    }
    pq_buf_free(&buf);
    return rc;
}

static int write_footer(pq_writer *w, pq_err *err)
{
    pq_file_meta fm = {
        .schema = w->schema,
        .version = w->opts.page_version == 2 ? 2 : 1,
        .num_rows = (int64_t)w->rows_written,
        .row_groups = w->rgs,
        .n_row_groups = w->n_rgs,
        .kv = w->kv,
        .n_kv = w->n_kv,
        .created_by = w->created_by,
    };
    pq_buf buf;
    pq_buf_init(&buf);
    int rc = pq_meta_write_file(&fm, &buf);
    if (rc != 0) {
        pq_buf_free(&buf);
        return pq_err_set(err, rc, "writer: serializing the footer failed");
    }
    uint8_t tail[8];
    uint32_t len = (uint32_t)buf.len;
    for (size_t i = 0; i < 4; i++)
        tail[i] = (uint8_t)(len >> (8 * i));
    memcpy(tail + 4, "PAR1", 4);
    rc = pq_out_write(&w->out, buf.data, buf.len, err);
    rc = rc ? rc : pq_out_write(&w->out, tail, sizeof tail, err);
    pq_buf_free(&buf);
    return rc;
}

int pq_writer_close(pq_writer *w, pq_err *err)
{
    int rc = pq_writer_flush_row_group(w, err);
    if (rc != 0)
        return rc;
    rc = write_bloom_filters(w, err);
    if (rc == 0 && w->opts.page_index) {
        rc = write_page_indexes(w, true, err);
        rc = rc ? rc : write_page_indexes(w, false, err);
    }
    rc = rc ? rc : write_footer(w, err);
    w->closed = true;
    if (rc != 0)
        w->failed = rc;
    return rc;
}
