/* encoded.c - pq_encoded's life cycle: a row group encoded into memory,
 * owned by whichever thread encodes or appends it. */
#include "encoded.h"

#include <stdint.h>
#include <stdlib.h>

pq_encoded *pq_encoded_new(void)
{
    pq_encoded *e = calloc(1, sizeof *e);
    if (e == NULL)
        return NULL;
    pq_chunk_work_init(&e->work);
    pq_buf_init(&e->bytes);
    return e;
}

void pq_encoded_drop(pq_encoded *e)
{
    for (size_t i = 0; e->meta.chunks && i < e->n_chunks; i++)
        pq_chunk_meta_free(&e->meta.chunks[i]);
    free(e->meta.chunks);
    memset(&e->meta, 0, sizeof e->meta);
    e->n_chunks = 0;
    e->n_pieces = 0;
    e->piece_bytes = 0;
    e->ready = false;
}

static void pieces_free(pq_encoded *e)
{
    for (size_t i = 0; i < e->cap_pieces; i++)
        pq_buf_free(&e->pieces[i].pages);
    free(e->pieces);
    e->pieces = NULL;
    e->cap_pieces = 0;
}

void pq_encoded_destroy(pq_encoded *e)
{
    if (e == NULL)
        return;
    pq_encoded_drop(e);
    pieces_free(e);
    pq_chunk_work_free(&e->work);
    pq_buf_free(&e->bytes);
    free(e);
}

void pq_encoded_trim(pq_encoded *e)
{
    pq_encoded_drop(e);
    pieces_free(e);
    pq_buf_free(&e->bytes);
    pq_chunk_work_free(&e->work);
    pq_chunk_work_init(&e->work);
}

void pq_encoded_move_pieces(pq_encoded *to, pq_encoded *from)
{
    pq_encoded_drop(to);
    pq_encoded_drop(from);
    if (from->cap_pieces == 0)
        return;
    pieces_free(to);
    to->pieces = from->pieces;
    to->cap_pieces = from->cap_pieces;
    from->pieces = NULL;
    from->cap_pieces = 0;
}

pq_buf *pq_encoded_piece_slot(pq_encoded *e)
{
    if (e->n_pieces == e->cap_pieces) {
        size_t cap = e->cap_pieces ? e->cap_pieces * 2 : 8;
        pq_encoded_piece *p = realloc(e->pieces, cap * sizeof *p);
        if (p == NULL)
            return NULL;
        /* a slot never added has no leaf: pq_stream_adopt_pieces reads
         * every slot's */
        for (size_t i = e->cap_pieces; i < cap; i++) {
            p[i].at = 0;
            p[i].leaf = SIZE_MAX;
            pq_buf_init(&p[i].pages);
        }
        e->pieces = p;
        e->cap_pieces = cap;
    }
    pq_buf *b = &e->pieces[e->n_pieces].pages;
    pq_buf_reset(b);
    return b;
}

void pq_encoded_piece_add(pq_encoded *e, size_t leaf)
{
    pq_encoded_piece *p = &e->pieces[e->n_pieces++];
    p->at = e->bytes.len;
    p->leaf = leaf;
    e->piece_bytes += p->pages.len;
}

/* Both describe the last successful encode, appended or not. */
uint64_t pq_encoded_bytes(const pq_encoded *e)
{
    return e->rows ? e->bytes.len + e->piece_bytes : 0;
}
uint64_t pq_encoded_rows(const pq_encoded *e) { return e->rows; }
