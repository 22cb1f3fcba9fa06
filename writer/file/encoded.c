/* encoded.c - pq_encoded's life cycle: a row group encoded into memory,
 * owned by whichever thread encodes or appends it. */
#include "encoded.h"

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
    e->ready = false;
}

void pq_encoded_destroy(pq_encoded *e)
{
    if (e == NULL)
        return;
    pq_encoded_drop(e);
    pq_chunk_work_free(&e->work);
    pq_buf_free(&e->bytes);
    free(e);
}

void pq_encoded_trim(pq_encoded *e)
{
    pq_encoded_drop(e);
    pq_buf_free(&e->bytes);
    pq_chunk_work_free(&e->work);
    pq_chunk_work_init(&e->work);
}

/* Both describe the last successful encode, appended or not. */
uint64_t pq_encoded_bytes(const pq_encoded *e) { return e->rows ? e->bytes.len : 0; }
uint64_t pq_encoded_rows(const pq_encoded *e) { return e->rows; }
