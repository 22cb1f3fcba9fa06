/* stream.c - pq_stream (stream.h): a row group encoded as its rows
 * arrive, one streaming column writer (chunk.h) per leaf, kept for the
 * life of the file so that each column's decisions can look at its
 * previous chunk. Threads: see stream.h. */
#include "colfinish.h"
#include "encoded.h"
#include "rowgroup_int.h"
#include "stream.h"

#include <stdlib.h>
#include <string.h>

struct pq_stream {
    const pq_writer *w;          /* the encoded row groups' writer */
    const pq_schema *schema;
    bool crypto;                 /* the file is encrypted */
    pq_colwriter *cols;
    size_t n_cols;
    size_t cap_cols;             /* cols' room (a released stream keeps it) */
    size_t n_kept;               /* cols [0, n_kept) may hold released memory */
    size_t kept_bytes;           /* their room, at the last release */
    int32_t ordinal;
    uint64_t rows;
};

/* shell: a released stream whose struct and column-writer array are
 * taken over when they have room for n_cols (else freed), or NULL. */
static pq_stream *stream_alloc(pq_stream *shell, size_t n_cols)
{
    size_t cap = n_cols ? n_cols : 1;
    if (shell != NULL && shell->cap_cols >= cap) {
        pq_colwriter *cols = shell->cols;
        size_t room = shell->cap_cols, kept = shell->n_kept, bytes = shell->kept_bytes;
        memset(shell, 0, sizeof *shell);
        shell->cols = cols;
        shell->cap_cols = room;
        shell->n_kept = kept;
        shell->kept_bytes = bytes;
        return shell;
    }
    pq_stream_destroy(shell);
    pq_stream *s = calloc(1, sizeof *s);
    if (s == NULL || (s->cols = calloc(cap, sizeof *s->cols)) == NULL) {
        free(s);
        return NULL;
    }
    s->cap_cols = cap;
    return s;
}

int pq_stream_create(pq_stream **out, const pq_schema *schema, const pq_chunk_opts *opts,
                     size_t n_cols, bool crypto, bool keep, const pq_writer *w, pq_err *err)
{
    return pq_stream_create_in(out, NULL, schema, opts, n_cols, crypto, keep, w, err);
}

int pq_stream_create_in(pq_stream **out, pq_stream *shell, const pq_schema *schema,
                        const pq_chunk_opts *opts, size_t n_cols, bool crypto, bool keep,
                        const pq_writer *w, pq_err *err)
{
    *out = NULL;
    pq_stream *s = stream_alloc(shell, n_cols);
    if (s == NULL)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    s->w = w;
    s->schema = schema;
    s->crypto = crypto;
    for (; s->n_cols < n_cols; s->n_cols++) {
        size_t i = s->n_cols;
        /* counted before init succeeds: init leaves a colwriter freeable */
        if (pq_colwriter_init_in(&s->cols[i], pq_schema_leaf_node(schema, i), &opts[i]) != 0) {
            s->n_cols++;
            pq_stream_destroy(s);
            return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
        }
        s->cols[i].keep_decisions = keep;
    }
    *out = s;
    return PQ_OK;
}

/* The column writers that hold memory: the leaves in use, and those a
 * release kept buffers in (a smaller schema's stream uses fewer). */
static size_t cols_holding(const pq_stream *s)
{
    return s->n_cols > s->n_kept ? s->n_cols : s->n_kept;
}

void pq_stream_destroy(pq_stream *s)
{
    if (s == NULL)
        return;
    size_t n = cols_holding(s);
    for (size_t i = 0; i < n; i++)
        pq_colwriter_free(&s->cols[i]);
    free(s->cols);
    free(s);
}

void pq_stream_release(pq_stream *s)
{
    size_t budget = PQ_STREAM_KEEP_BYTES;
    size_t n = cols_holding(s);
    for (size_t i = 0; i < n; i++)
        pq_colwriter_release(&s->cols[i], &budget);
    s->n_kept = n;
    s->kept_bytes = PQ_STREAM_KEEP_BYTES - budget;
    s->n_cols = 0;
    s->w = NULL;
    s->schema = NULL;
}

int pq_stream_begin(pq_stream *s, int32_t ordinal, pq_err *err)
{
    if (ordinal < 0)
        return pq_err_set(err, PQ_EINVAL, "writer: row group ordinal %d is negative",
                          (int)ordinal);
    if (s->crypto && ordinal > PQ_CRYPTO_MAX_ORDINAL)
        return pq_err_set(err, PQ_ELIMIT, "encryption: more than %d row groups in one file; "
                          "rotate files sooner", PQ_CRYPTO_MAX_ORDINAL + 1);
    s->ordinal = ordinal;
    s->rows = 0;
    for (size_t i = 0; i < s->n_cols; i++) {
        int rc = pq_colwriter_begin(&s->cols[i], ordinal, err);
        if (rc != 0)
            return rc;
    }
    return PQ_OK;
}

static int feed(pq_stream *s, const pq_rowgroup *rows, size_t first, size_t end,
                pq_encoded *scratch, bool last, pq_err *err)
{
    if (pq_rowgroup_schema(rows) != s->schema)
        return pq_err_set(err, PQ_EINVAL, "writer: the rows have another schema");
    if (first > end || end > s->n_cols)
        return pq_err_set(err, PQ_EINVAL, "writer: leaves %zu..%zu of %zu", first, end,
                          s->n_cols);
    for (size_t i = first; i < end; i++) {
        if (rows->cols[i].n_rows != rows->rows)
            return pq_err_set(err, PQ_ESTATE, "column '%s' has %zu rows, the row group has "
                              "%llu", rows->cols[i].node->path, rows->cols[i].n_rows,
                              (unsigned long long)rows->rows);
        pq_colwriter *cw = &s->cols[i];
        int rc = last ? pq_colwriter_feed_last(cw, &scratch->work, &rows->cols[i], err)
                      : pq_colwriter_feed(cw, &scratch->work, &rows->cols[i], err);
        if (rc != 0)
            return rc;
    }
    return PQ_OK;
}

int pq_stream_feed(pq_stream *s, const pq_rowgroup *rows, size_t first, size_t end,
                   pq_encoded *scratch, pq_err *err)
{
    return feed(s, rows, first, end, scratch, false, err);
}

int pq_stream_feed_last(pq_stream *s, const pq_rowgroup *rows, size_t first, size_t end,
                        pq_encoded *scratch, pq_err *err)
{
    return feed(s, rows, first, end, scratch, true, err);
}

void pq_stream_adopt_pieces(pq_stream *s, pq_encoded *e)
{
    pq_encoded_drop(e);
    for (size_t k = 0; k < e->cap_pieces; k++) {
        pq_encoded_piece *p = &e->pieces[k];
        pq_buf *pages = p->leaf < s->n_cols ? &s->cols[p->leaf].pages : NULL;
        if (pages != NULL && pages->len == 0 && pages->cap < p->pages.cap) {
            pq_buf smaller = *pages;
            *pages = p->pages;
            pq_buf_reset(pages);
            p->pages = smaller;
        }
        pq_buf_free(&p->pages);
    }
}

void pq_stream_add_rows(pq_stream *s, uint64_t rows)
{
    s->rows += rows;
}

void pq_stream_trim(pq_stream *s)
{
    for (size_t i = 0; i < s->n_cols; i++)
        pq_colwriter_trim(&s->cols[i]);
}

uint64_t pq_stream_rows(const pq_stream *s) { return s->rows; }
int32_t pq_stream_ordinal(const pq_stream *s) { return s->ordinal; }

size_t pq_stream_held_bytes(const pq_stream *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_cols; i++)
        n += pq_colwriter_held_bytes(&s->cols[i]);
    return n;
}

size_t pq_stream_kept_bytes(const pq_stream *s) { return s->kept_bytes; }

size_t pq_stream_fed_bytes(const pq_stream *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_cols; i++)
        n += pq_colwriter_fed_bytes(&s->cols[i]);
    return n;
}

int pq_stream_finish(pq_stream *s, pq_encoded *e, pq_encoded *scratch, pq_err *err)
{
    pq_encoded_drop(e);
    pq_buf_reset(&e->bytes);
    e->rows = 0;
    e->w = s->w;
    e->ordinal = s->ordinal;
    e->first_leaf = 0;
    e->end_leaf = s->n_cols;
    e->meta.num_rows = (int64_t)s->rows;
    if (s->rows == 0) {
        e->ready = true; /* append skips it */
        return PQ_OK;
    }
    e->meta.chunks = calloc(s->n_cols, sizeof *e->meta.chunks);
    e->n_chunks = e->meta.chunks ? s->n_cols : 0;
    size_t room = 0;
    for (size_t i = 0; i < s->n_cols; i++)
        room += pq_colwriter_finish_bound(&s->cols[i], true);
    if (e->meta.chunks == NULL || pq_buf_reserve(&e->bytes, room) != 0)
        return pq_err_set(err, PQ_ENOMEM, "writer: out of memory");
    for (size_t i = 0; i < s->n_cols; i++) {
        pq_chunk_meta *m = &e->meta.chunks[i];
        /* a large chunk's pages become a piece of e (encoded.h); without
         * a slot (out of memory) they are copied, as a small one's are */
        pq_buf *take = pq_encoded_piece_slot(e);
        size_t before = e->piece_bytes;
        int rc = pq_colwriter_finish(&s->cols[i], &scratch->work, &e->bytes, take, m, err);
        if (rc != 0) {
            pq_encoded_drop(e);
            pq_buf_reset(&e->bytes);
            return rc;
        }
        if (take != NULL && take->len > 0)
            pq_encoded_piece_add(e, i);
        pq_colfinish_rebase(m, (int64_t)before); /* the pieces before it */
        e->meta.total_byte_size += m->total_uncompressed;
        e->meta.total_compressed_size += m->total_compressed;
    }
    e->rows = s->rows;
    e->ready = true;
    s->rows = 0;
    return PQ_OK;
}
