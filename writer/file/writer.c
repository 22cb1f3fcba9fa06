/* writer.c - the file: PAR1 framing, row-group encoding into memory and
 * appending in order, page indexes after the row groups, then the footer
 * (parquet-format README "File Format"). The only module that knows the
 * file layout.
 *
 * Threads: pq_writer_encode runs on any thread, several at once for one
 * writer; it reads only what is fixed at open (schema, resolved chunk
 * options, the file's crypto state and keys, which are safe to share) and
 * writes only into its pq_encoded. Everything else (the classic put/end_row
 * API, append, close) runs on one thread at a time. */
#include "page.h"
#include "writer_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    c->small_chunk_bytes = o->small_chunk_bytes;
    c->small_page_bytes = o->small_page_bytes;
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

/* Which key encrypts a leaf: the first configured column that is the leaf
 * or an ancestor of it; with no columns configured, the footer key
 * (uniform encryption); otherwise none. */
static const pq_column_key *column_key_for(const pq_encryption_opts *e, const pq_node *n)
{
    for (size_t i = 0; i < e->n_columns; i++) {
        const char *c = e->columns[i].column;
        size_t len = strlen(c);
        if (strncmp(n->path, c, len) == 0 && (n->path[len] == '\0' || n->path[len] == '.'))
            return &e->columns[i];
    }
    return NULL;
}

static int setup_leaf_crypto(pq_writer *w, size_t leaf, pq_chunk_opts *c, pq_err *err)
{
    const pq_encryption_opts *e = &w->enc;
    const pq_node *n = pq_schema_leaf_node(w->schema, leaf);
    const pq_column_key *ck = column_key_for(e, n);
    c->crypto_file = w->crypto;
    c->column = (int32_t)leaf;
    if (e->n_columns == 0) {
        c->crypto_key = e->footer_key;
        return PQ_OK;
    }
    if (ck == NULL)
        return PQ_OK;
    if (ck->key == NULL)
        return pq_err_set(err, PQ_EINVAL, "encryption: column '%s' has no key", ck->column);
    c->crypto_key = ck->key;
    if (ck->key_id && !(w->key_ids[leaf] = strdup(ck->key_id)))
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    c->crypto_key_id = w->key_ids[leaf];
    return PQ_OK;
}

static int setup_crypto(pq_writer *w, pq_err *err)
{
    const pq_encryption_opts *e = &w->enc;
    if (e->footer_key == NULL)
        return pq_err_set(err, PQ_EINVAL, "encryption: a footer key is required");
    if (e->algorithm != PQ_AES_GCM_V1 && e->algorithm != PQ_AES_GCM_CTR_V1)
        return pq_err_set(err, PQ_EINVAL, "encryption: unknown algorithm %d", (int)e->algorithm);
    for (size_t i = 0; i < e->n_columns; i++) {
        bool found = false;
        for (size_t l = 0; l < w->n_cols && !found; l++)
            found = column_key_for(&(pq_encryption_opts){.columns = &e->columns[i],
                                                           .n_columns = 1},
                                   pq_schema_leaf_node(w->schema, l)) != NULL;
        if (!found)
            return pq_err_set(err, PQ_EINVAL, "encryption: column '%s' is not in the schema",
                              e->columns[i].column);
    }
    int rc = pq_crypto_file_init(&w->crypto_file, e->algorithm, e->aad_prefix,
                                 e->aad_prefix_len, e->store_aad_prefix, err);
    if (rc != 0)
        return rc;
    w->crypto = &w->crypto_file;
    w->key_ids = calloc(w->n_cols, sizeof *w->key_ids);
    if (e->footer_key_id && !(w->footer_key_id = strdup(e->footer_key_id)))
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    return w->key_ids ? PQ_OK : pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
}

static int writer_setup(pq_writer *w, pq_err *err)
{
    w->n_cols = pq_schema_num_leaves(w->schema);
    w->chunk_opts = calloc(w->n_cols, sizeof *w->chunk_opts);
    if (w->chunk_opts == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    int rc = w->opts.encryption ? setup_crypto(w, err) : 0;
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < w->n_cols; i++) {
        const pq_node *n = pq_schema_leaf_node(w->schema, i);
        rc = resolve_chunk_opts(w, n, &w->chunk_opts[i], err);
        if (rc == 0 && w->crypto)
            rc = setup_leaf_crypto(w, i, &w->chunk_opts[i], err);
        if (rc != 0)
            return rc;
    }
    bool pare = w->crypto && !w->enc.plaintext_footer;
    return pq_out_write(&w->out, pare ? "PARE" : "PAR1", 4, err);
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
    if (opts->encryption != NULL)
        w->enc = *opts->encryption;
    w->opts.encryption = opts->encryption ? &w->enc : NULL;
    w->out.sink = sink;
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
    pq_stream_destroy(w->stream);
    pq_rowgroup_destroy(w->rg);
    pq_encoded_destroy(w->own);
    free(w->chunk_opts);
    free_row_groups(w);
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].value);
    }
    free(w->kv);
    for (size_t i = 0; w->key_ids && i < w->n_cols; i++)
        free(w->key_ids[i]);
    free(w->key_ids);
    free(w->footer_key_id);
    if (w->crypto)
        pq_crypto_file_free(w->crypto);
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

/* The classic API's row buffer and its encoding scratch, made at its
 * first use: a writer whose row groups its caller encodes (the pipeline's
 * streams, one writer per partitioned file) never needs them, and making
 * one per file cost ~57 column buffers and their page faults. NULL when
 * out of memory. */
static pq_rowgroup *classic_rows(pq_writer *w)
{
    if (w->rg != NULL)
        return w->rg;
    pq_err ignored;
    w->own = w->own ? w->own : pq_encoded_new();
    if (w->own == NULL || pq_rowgroup_new(&w->rg, w->schema, &ignored) != 0)
        return NULL;             /* only out of memory: the schema is finished */
    return w->rg;
}

pq_column *pq_writer_column(pq_writer *w, size_t leaf)
{
    pq_rowgroup *rg = classic_rows(w);
    return rg != NULL && leaf < rg->n_cols ? &rg->cols[leaf] : NULL;
}

pq_rowgroup *pq_writer_rowgroup(pq_writer *w) { return classic_rows(w); }
uint64_t pq_writer_bytes_written(const pq_writer *w) { return w->out.offset; }
uint64_t pq_writer_rows_written(const pq_writer *w) { return w->rows_written; }
int32_t pq_writer_row_groups(const pq_writer *w) { return (int32_t)w->n_rgs; }

/* The classic API streams: its buffered rows go to the row group's
 * column writers (stream.h) each time they reach PQ_FEED_BYTES, so the
 * writer holds about that much raw data, plus the stream's open and
 * encoded pages, whatever the row group's size. */
#define PQ_FEED_BYTES ((size_t)1 << 20)

size_t pq_writer_buffered_bytes(const pq_writer *w)
{
    size_t raw = w->rg ? pq_rowgroup_buffered_bytes(w->rg) : 0;
    return raw + (w->stream ? pq_stream_fed_bytes(w->stream) : 0);
}

uint64_t pq_writer_rows_buffered(const pq_writer *w)
{
    return (w->rg ? w->rg->rows : 0) + (w->stream ? pq_stream_rows(w->stream) : 0);
}

static int writer_feed(pq_writer *w, pq_err *err)
{
    if (w->rg == NULL || w->rg->rows == 0)
        return PQ_OK;
    /* begun with the row group's first rows: an encrypted file that holds
     * the most row groups it may fails only when more rows come */
    /* created on the first rows: a writer whose row groups are encoded
     * by its caller's streams (pq_stream_new) never holds one */
    if (w->stream == NULL) {
        int rc = pq_stream_new(&w->stream, w, err);
        if (rc != 0)
            return rc;
    }
    if (!w->stream_begun) {
        int rc = pq_stream_begin(w->stream, (int32_t)w->n_rgs, err);
        if (rc != 0)
            return rc;           /* nothing fed: the rows stay buffered */
        w->stream_begun = true;
    }
    int rc = pq_stream_feed(w->stream, w->rg, 0, w->n_cols, w->own, err);
    if (rc != 0) {
        w->failed = rc; /* part of the rows may be in the stream */
        return rc;
    }
    pq_stream_add_rows(w->stream, w->rg->rows);
    pq_rowgroup_reset(w->rg);
    return PQ_OK;
}

/* Byte size is checked every 64 rows: summing every column per row would
 * cost more than the row itself on wide schemas. Counted from the last
 * check, not by row number, because moved rows arrive in batches. */
int pq_writer_check_limits(pq_writer *w, pq_err *err)
{
    const pq_writer_opts *o = &w->opts;
    uint64_t rows = pq_writer_rows_buffered(w);
    if (o->row_group_max_rows && rows >= o->row_group_max_rows)
        return pq_writer_flush_row_group(w, err);
    if (rows - w->rows_size_checked < 64)
        return PQ_OK;
    w->rows_size_checked = rows;
    size_t raw = w->rg ? pq_rowgroup_buffered_bytes(w->rg) : 0;
    if (o->row_group_max_bytes && pq_writer_buffered_bytes(w) >= o->row_group_max_bytes)
        return pq_writer_flush_row_group(w, err);
    return raw >= PQ_FEED_BYTES ? writer_feed(w, err) : PQ_OK;
}

int pq_writer_end_row(pq_writer *w, pq_err *err)
{
    pq_rowgroup *rg = classic_rows(w);
    if (rg == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    rg->rows++;
    return pq_writer_check_limits(w, err);
}

void pq_writer_abort_row(pq_writer *w)
{
    if (w->rg != NULL)
        pq_rowgroup_abort_row(w->rg);
}

void pq_writer_abort_leaf(pq_writer *w, size_t leaf)
{
    if (w->rg != NULL)
        pq_rowgroup_abort_leaf(w->rg, leaf);
}

/* The classic flush finishes the stream's row group and appends it. A row
 * group the file may not hold (encryption's ordinal limit) fails before
 * anything is fed, the rows staying buffered; a failed encode or append
 * leaves the file unusable. */
int pq_writer_flush_row_group(pq_writer *w, pq_err *err)
{
    if (w->closed || w->failed)
        return pq_err_set(err, PQ_ESTATE, "writer: flush after close or failure");
    if (pq_writer_rows_buffered(w) == 0)
        return PQ_OK;
    int rc = pq_rowgroup_check(w->rg, err);
    rc = rc ? rc : writer_feed(w, err);
    if (rc != 0)
        return rc;               /* writer_feed marked the file if it must */
    rc = pq_stream_finish(w->stream, w->own, w->own, err);
    rc = rc ? rc : pq_writer_append_encoded(w, w->own, err);
    w->stream_begun = false;
    if (rc != 0) {
        w->failed = w->failed ? w->failed : rc;
        return rc;
    }
    w->rows_size_checked = 0;
    return PQ_OK;
}

/* ---- encoding row groups in memory, appending them in order ---------------- */

int pq_stream_new(pq_stream **out, pq_writer *w, pq_err *err)
{
    return pq_stream_new_in(out, NULL, w, err);
}

int pq_stream_new_in(pq_stream **out, pq_stream *shell, pq_writer *w, pq_err *err)
{
    return pq_stream_create_in(out, shell, w->schema, w->chunk_opts, w->n_cols,
                               w->crypto != NULL, !w->opts.decide_each_row_group, w, err);
}


static int encode_check(const pq_writer *w, const pq_rowgroup *rg, int32_t ordinal, pq_err *err)
{
    if (pq_rowgroup_schema(rg) != w->schema)
        return pq_err_set(err, PQ_EINVAL, "writer: the row group has another schema");
    if (ordinal < 0)
        return pq_err_set(err, PQ_EINVAL, "writer: row group ordinal %d is negative",
                          (int)ordinal);
    if (w->crypto && ordinal > PQ_CRYPTO_MAX_ORDINAL)
        return pq_err_set(err, PQ_ELIMIT, "encryption: more than %d row groups in one file; "
                          "rotate files sooner", PQ_CRYPTO_MAX_ORDINAL + 1);
    return pq_rowgroup_check(rg, err);
}

/* Each chunk gets its own copy of the leaf's options, carrying this
 * encode's ordinal: the writer's copy is shared by concurrent encodes. */
static int encode_chunks(const pq_writer *w, const pq_rowgroup *rg, pq_encoded *e,
                         pq_err *err)
{
    pq_out out = {.mem = &e->bytes};
    for (size_t i = e->first_leaf; i < e->end_leaf; i++) {
        pq_chunk_opts o = w->chunk_opts[i];
        o.row_group = e->ordinal;
        pq_chunk_meta *m = &e->meta.chunks[i];
        int rc = pq_chunk_write(&e->work, &rg->cols[i], &o, &out, m, err);
        if (rc != 0)
            return rc;
        e->meta.total_byte_size += m->total_uncompressed;
        e->meta.total_compressed_size += m->total_compressed;
    }
    return PQ_OK;
}

int pq_writer_encode(pq_writer *w, const pq_rowgroup *rg, int32_t ordinal, pq_encoded *e,
                     pq_err *err)
{
    return pq_writer_encode_leaves(w, rg, ordinal, 0, w->n_cols, e, err);
}

int pq_writer_encode_leaves(pq_writer *w, const pq_rowgroup *rg, int32_t ordinal, size_t first,
                            size_t end, pq_encoded *e, pq_err *err)
{
    pq_encoded_drop(e);
    pq_buf_reset(&e->bytes);
    e->rows = 0;
    int rc = encode_check(w, rg, ordinal, err);
    if (rc != 0)
        return rc;
    if (first > end || end > w->n_cols)
        return pq_err_set(err, PQ_EINVAL, "writer: leaves %zu..%zu of %zu", first, end,
                          w->n_cols);
    e->w = w;
    e->ordinal = ordinal;
    e->first_leaf = first;
    e->end_leaf = end;
    e->meta.num_rows = (int64_t)pq_rowgroup_rows(rg);
    if (e->meta.num_rows == 0) {
        e->ready = true; /* append skips it */
        return PQ_OK;
    }
    /* Room for the buffered size up front: encoded pages rarely exceed
     * it, so the buffer does not grow by copying what it holds (untouched
     * capacity costs address space, not memory). A no-op once e has
     * encoded a row group this large. */
    /* the first part (or the whole) gets room for everything, since the
     * other parts are joined onto it; a later part, its own leaves' share */
    size_t room = 0;
    if (first == 0)
        room = pq_rowgroup_buffered_bytes(rg);
    for (size_t i = first; first > 0 && i < end; i++)
        room += pq_column_buffered_bytes(&rg->cols[i]);
    e->meta.chunks = calloc(w->n_cols, sizeof *e->meta.chunks);
    e->n_chunks = e->meta.chunks ? w->n_cols : 0;
    if (e->meta.chunks == NULL || pq_buf_reserve(&e->bytes, room) != 0)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    rc = encode_chunks(w, rg, e, err);
    if (rc != 0) {
        pq_encoded_drop(e);
        pq_buf_reset(&e->bytes);
        return rc;
    }
    e->rows = (uint64_t)e->meta.num_rows;
    e->ready = true;
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

/* Encoded offsets count from the row group's first byte; in the file they
 * count from the file's. Bloom filter and page index offsets are not set
 * yet: close writes those. */
static void rebase_chunk(pq_chunk_meta *m, int64_t base)
{
    if (m->dictionary_page_offset >= 0)
        m->dictionary_page_offset += base;
    if (m->data_page_offset >= 0)
        m->data_page_offset += base;
    for (size_t p = 0; p < m->n_pages; p++)
        m->pages[p].offset += base;
}

int pq_encoded_join(pq_encoded *e, pq_encoded *part, pq_err *err)
{
    if (!e->ready || !part->ready || e->w != part->w || e->ordinal != part->ordinal ||
        e->meta.num_rows != part->meta.num_rows || e->end_leaf != part->first_leaf)
        return pq_err_set(err, PQ_ESTATE, "writer: joining parts of different row groups, "
                          "or out of leaf order");
    if (part->n_pieces > 0)
        return pq_err_set(err, PQ_ESTATE, "writer: joining a streamed row group's part");
    if (part->meta.num_rows > 0) {
        int64_t base = (int64_t)(e->bytes.len + e->piece_bytes);
        if (pq_buf_append(&e->bytes, part->bytes.data, part->bytes.len) != 0)
            return pq_err_set(err, PQ_ENOMEM, "writer: out of memory joining a row group");
        for (size_t i = part->first_leaf; i < part->end_leaf; i++) {
            rebase_chunk(&part->meta.chunks[i], base);
            e->meta.chunks[i] = part->meta.chunks[i]; /* moves its buffers */
            memset(&part->meta.chunks[i], 0, sizeof part->meta.chunks[i]);
        }
        e->meta.total_byte_size += part->meta.total_byte_size;
        e->meta.total_compressed_size += part->meta.total_compressed_size;
    }
    e->end_leaf = part->end_leaf;
    pq_encoded_drop(part);
    pq_buf_reset(&part->bytes);
    return PQ_OK;
}

/* e's bytes with its pieces spliced in (encoded.h); nothing is written
 * for an empty run of bytes between two pieces. */
static int write_encoded(pq_writer *w, const pq_encoded *e, pq_err *err)
{
    size_t at = 0;
    int rc = PQ_OK;
    for (size_t i = 0; rc == 0 && i <= e->n_pieces; i++) {
        size_t end = i < e->n_pieces ? e->pieces[i].at : e->bytes.len;
        if (end > at)
            rc = pq_out_write(&w->out, e->bytes.data + at, end - at, err);
        if (rc == 0 && i < e->n_pieces)
            rc = pq_out_write(&w->out, e->pieces[i].pages.data, e->pieces[i].pages.len, err);
        at = end;
    }
    return rc;
}

int pq_writer_append_encoded(pq_writer *w, pq_encoded *e, pq_err *err)
{
    if (w->closed || w->failed)
        return pq_err_set(err, PQ_ESTATE, "writer: append after close or failure");
    if (!e->ready || e->w != w)
        return pq_err_set(err, PQ_ESTATE, "writer: append of a row group not encoded "
                          "for this writer (or already appended)");
    if (e->first_leaf != 0 || e->end_leaf != w->n_cols)
        return pq_err_set(err, PQ_ESTATE, "writer: append of a row group with leaves "
                          "%zu..%zu of %zu encoded", e->first_leaf, e->end_leaf, w->n_cols);
    if (e->meta.num_rows == 0) {
        e->ready = false;
        return PQ_OK;
    }
    if (e->ordinal != (int32_t)w->n_rgs)
        return pq_err_set(err, PQ_ESTATE, "writer: row group %d appended where %zu is next",
                          (int)e->ordinal, w->n_rgs);
    int rc = grow_row_groups(w, err);
    if (rc != 0)
        return rc;
    int64_t base = (int64_t)w->out.offset;
    for (size_t i = 0; i < e->n_chunks; i++)
        rebase_chunk(&e->meta.chunks[i], base);
    /* Kept until the footer: the previous row group's chunk metadata is
     * compacted once another follows it. The last one (a partitioned
     * file's only one, most often) goes to the footer as it is: shrinking
     * its ~6 buffers a leaf just before the close frees them cost 1.6% of
     * a 1,000-partition convert's instructions and split chunks for
     * malloc to consolidate. */
    if (w->n_rgs > 0)
        for (size_t c = 0; c < w->n_cols; c++)
            pq_chunk_meta_compact(&w->rgs[w->n_rgs - 1].chunks[c]);
    e->meta.file_offset = base;
    uint64_t rows = (uint64_t)e->meta.num_rows;
    w->rgs[w->n_rgs++] = e->meta; /* the chunk metas move to the writer */
    memset(&e->meta, 0, sizeof e->meta);
    e->n_chunks = 0;
    e->ready = false;
    rc = write_encoded(w, e, err);
    if (rc != 0) {
        w->failed = rc; /* part of the row group may be on the sink */
        return rc;
    }
    w->rows_written += rows;
    return PQ_OK;
}

/* Writes plain as is, or as an encrypted module of an encrypted chunk.
 * Returns the number of bytes written in *len. */
static int write_module(pq_writer *w, const pq_chunk_meta *m, pq_crypto_module type,
                        const pq_buf *plain, pq_buf *scratch, size_t *len, pq_err *err)
{
    if (m->crypto_key == NULL) {
        *len = plain->len;
        return pq_out_write(&w->out, plain->data, plain->len, err);
    }
    pq_buf_reset(scratch);
    int rc = pq_crypto_encrypt_module(w->crypto, m->crypto_key, type, m->row_group, m->column,
                                      0, plain->data, plain->len, scratch, err);
    *len = scratch->len;
    return rc ? rc : pq_out_write(&w->out, scratch->data, scratch->len, err);
}

/* Header and bitset are separate modules when encrypted (Encryption.md
 * 4.4.2), written back to back; bloom_filter_length covers both. */
static int write_bloom(pq_writer *w, pq_chunk_meta *m, pq_buf *hdr, pq_buf *bits,
                       pq_buf *scratch, pq_err *err)
{
    pq_buf_reset(hdr);
    pq_buf_reset(bits);
    if (pq_bloom_write_split(m->bloom, hdr, bits) != 0)
        return pq_err_set(err, PQ_ENOMEM, "writer: bloom filter for '%s' failed", m->node->path);
    size_t a, b;
    m->bloom_offset = (int64_t)w->out.offset;
    int rc = write_module(w, m, PQ_MODULE_BLOOM_HEADER, hdr, scratch, &a, err);
    rc = rc ? rc : write_module(w, m, PQ_MODULE_BLOOM_BITSET, bits, scratch, &b, err);
    m->bloom_length = rc ? 0 : (int32_t)(a + b);
    return rc;
}

/* Bloom filters go together after the last row group (BloomFilter.md
 * "File Format"), so a reader probing several row groups reads one range. */
static int write_bloom_filters(pq_writer *w, pq_err *err)
{
    pq_buf hdr, bits, scratch;
    pq_buf_init(&hdr);
    pq_buf_init(&bits);
    pq_buf_init(&scratch);
    int rc = PQ_OK;
    for (size_t g = 0; rc == 0 && g < w->n_rgs; g++)
        for (size_t c = 0; rc == 0 && c < w->n_cols; c++)
            if (w->rgs[g].chunks[c].bloom != NULL)
                rc = write_bloom(w, &w->rgs[g].chunks[c], &hdr, &bits, &scratch, err);
    pq_buf_free(&hdr);
    pq_buf_free(&bits);
    pq_buf_free(&scratch);
    return rc;
}

static int write_page_index(pq_writer *w, pq_chunk_meta *m, bool column, pq_buf *buf,
                            pq_buf *scratch, pq_err *err)
{
    pq_buf_reset(buf);
    int rc = column ? pq_meta_write_column_index(m, buf) : pq_meta_write_offset_index(m, buf);
    if (rc != 0)
        return pq_err_set(err, rc, "writer: page index for '%s' failed", m->node->path);
    int64_t at = (int64_t)w->out.offset;
    size_t len;
    rc = write_module(w, m, column ? PQ_MODULE_COLUMN_INDEX : PQ_MODULE_OFFSET_INDEX, buf,
                      scratch, &len, err);
    if (column) {
        m->column_index_offset = at;
        m->column_index_length = (int32_t)len;
    } else {
        m->offset_index_offset = at;
        m->offset_index_length = (int32_t)len;
    }
    return rc;
}

/* Page indexes go after the bloom filters, before the footer: all column
 * indexes, then all offset indexes (PageIndex.md), so a reader fetches
 * each kind with one read. */
static int write_page_indexes(pq_writer *w, bool column, pq_err *err)
{
    pq_buf buf, scratch;
    pq_buf_init(&buf);
    pq_buf_init(&scratch);
    int rc = PQ_OK;
    for (size_t g = 0; rc == 0 && g < w->n_rgs; g++) {
        for (size_t c = 0; rc == 0 && c < w->n_cols; c++) {
            pq_chunk_meta *m = &w->rgs[g].chunks[c];
            if (!column || m->write_column_index)
                rc = write_page_index(w, m, column, &buf, &scratch, err);
        }
    }
    pq_buf_free(&buf);
    pq_buf_free(&scratch);
    return rc;
}

/* Encryption.md 5.3-5.5: a column with its own key (encrypted footer), or
 * any encrypted column (plaintext footer), carries its full ColumnMetaData
 * encrypted with the column key. */
static int encrypt_column_metadata(pq_writer *w, pq_err *err)
{
    pq_buf plain;
    pq_buf_init(&plain);
    int rc = PQ_OK;
    for (size_t g = 0; rc == 0 && g < w->n_rgs; g++) {
        for (size_t c = 0; rc == 0 && c < w->n_cols; c++) {
            pq_chunk_meta *m = &w->rgs[g].chunks[c];
            bool needed = m->crypto_key &&
                          (w->enc.plaintext_footer || m->crypto_key != w->enc.footer_key);
            if (!needed)
                continue;
            pq_buf_reset(&plain);
            pq_buf_reset(&m->encrypted_meta);
            rc = pq_meta_write_column_metadata(m, &plain);
            rc = rc ? pq_err_set(err, rc, "writer: out of memory")
                    : pq_crypto_encrypt_module(w->crypto, m->crypto_key, PQ_MODULE_COLUMN_META,
                                               m->row_group, m->column, 0, plain.data,
                                               plain.len, &m->encrypted_meta, err);
        }
    }
    pq_buf_free(&plain);
    return rc;
}

static int write_tail(pq_writer *w, uint32_t len, const char *magic, pq_err *err)
{
    uint8_t tail[8];
    for (size_t i = 0; i < 4; i++)
        tail[i] = (uint8_t)(len >> (8 * i));
    memcpy(tail + 4, magic, 4);
    return pq_out_write(&w->out, tail, sizeof tail, err);
}

/* PARE: FileCryptoMetaData, then the FileMetaData as a GCM footer module;
 * the length covers both (Encryption.md 5.4). */
static int write_encrypted_footer(pq_writer *w, const pq_buf *footer, pq_err *err)
{
    pq_buf out;
    pq_buf_init(&out);
    const char *id = w->footer_key_id;
    int rc = pq_crypto_write_file_crypto_metadata(w->crypto, id, id ? strlen(id) : 0, &out);
    if (rc != 0)
        rc = pq_err_set(err, rc, "writer: out of memory");
    rc = rc ? rc : pq_crypto_encrypt_module(w->crypto, w->enc.footer_key, PQ_MODULE_FOOTER, 0, 0,
                                            0, footer->data, footer->len, &out, err);
    rc = rc ? rc : pq_out_write(&w->out, out.data, out.len, err);
    rc = rc ? rc : write_tail(w, (uint32_t)out.len, "PARE", err);
    pq_buf_free(&out);
    return rc;
}

/* PAR1 with a 28-byte signature after the footer (Encryption.md 5.5). */
static int write_signed_footer(pq_writer *w, const pq_buf *footer, pq_err *err)
{
    uint8_t sig[PQ_CRYPTO_SIGNATURE_LEN];
    int rc = pq_crypto_sign_footer(w->crypto, w->enc.footer_key, footer->data, footer->len,
                                   sig, err);
    rc = rc ? rc : pq_out_write(&w->out, footer->data, footer->len, err);
    rc = rc ? rc : pq_out_write(&w->out, sig, sizeof sig, err);
    return rc ? rc : write_tail(w, (uint32_t)(footer->len + sizeof sig), "PAR1", err);
}

/* About what the footer and page indexes take (the footer ~150 bytes a
 * chunk and ~30 a schema node, the page indexes their bytes and ~20 a
 * page): reserved at once, their buffers do not grow from 64 bytes by
 * doubling, a dozen reallocs a file (with 1,000 small files open, malloc
 * then walks a fragmented heap). Only a size hint: nothing depends on it. */
static size_t tail_estimate(const pq_writer *w)
{
    size_t n = 512 + 64 * w->n_cols;
    for (size_t g = 0; g < w->n_rgs; g++) {
        for (size_t c = 0; c < w->n_cols; c++) {
            const pq_chunk_meta *m = &w->rgs[g].chunks[c];
            n += 256 + m->min.len + m->max.len + m->index_bytes.len + m->page_def_hist.len +
                 m->page_rep_hist.len + 32 * m->n_pages;
        }
    }
    for (size_t i = 0; i < w->n_kv; i++)
        n += 16 + strlen(w->kv[i].key) + (w->kv[i].value ? strlen(w->kv[i].value) : 0);
    return n < PQ_OUT_SPILL_BYTES ? n : PQ_OUT_SPILL_BYTES;
}

static int write_footer(pq_writer *w, size_t room, pq_err *err)
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
        .crypto = w->crypto,
        .plaintext_footer = w->enc.plaintext_footer,
        .footer_key = w->enc.footer_key,
        .footer_key_id = w->footer_key_id,
    };
    pq_buf buf;
    pq_buf_init(&buf);
    int rc = pq_buf_reserve(&buf, room) != 0 ? PQ_ENOMEM : pq_meta_write_file(&fm, &buf);
    if (rc != 0)
        rc = pq_err_set(err, rc, "writer: serializing the footer failed");
    else if (w->crypto && !w->enc.plaintext_footer)
        rc = write_encrypted_footer(w, &buf, err);
    else if (w->crypto)
        rc = write_signed_footer(w, &buf, err);
    else
        rc = pq_out_write(&w->out, buf.data, buf.len, err);
    if (rc == 0 && !w->crypto)
        rc = write_tail(w, (uint32_t)buf.len, "PAR1", err);
    pq_buf_free(&buf);
    return rc;
}

/* Bloom filters, page indexes and the footer, gathered into few writes
 * (pq_out's spill): 1,000 partitioned files of 55 leaves made 83 write(2)
 * calls each, a seventh of the run's system time. */
static int write_file_tail(pq_writer *w, pq_err *err)
{
    pq_buf gather;
    pq_buf_init(&gather);
    size_t room = tail_estimate(w);
    if (pq_buf_reserve(&gather, room) != 0)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    w->out.mem = &gather;
    w->out.spill = true;
    int rc = write_bloom_filters(w, err);
    if (rc == 0 && w->opts.page_index) {
        rc = write_page_indexes(w, true, err);
        rc = rc ? rc : write_page_indexes(w, false, err);
    }
    if (rc == 0 && w->crypto)
        rc = encrypt_column_metadata(w, err);
    rc = rc ? rc : write_footer(w, room, err);
    rc = rc ? rc : pq_out_spill(&w->out, err);
    w->out.mem = NULL;
    w->out.spill = false;
    pq_buf_free(&gather);
    return rc;
}

int pq_writer_close(pq_writer *w, pq_err *err)
{
    int rc = pq_writer_flush_row_group(w, err);
    if (rc != 0)
        return rc;
    rc = write_file_tail(w, err);
    w->closed = true;
    if (rc != 0)
        w->failed = rc;
    return rc;
}
