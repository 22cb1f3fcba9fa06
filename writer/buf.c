/* buf.c - pq_buf growth and the small fixed-format appends. */
#include "buf.h"
#include "err.h"

#include <stdlib.h>

void pq_buf_init(pq_buf *b)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
}

void pq_buf_free(pq_buf *b)
{
    free(b->data);
    pq_buf_init(b);
}

void pq_buf_shrink(pq_buf *b, size_t cap)
{
    cap = cap > b->len ? cap : b->len;
    if (b->cap <= cap)
        return;
    if (cap == 0) {
        pq_buf_free(b);
        return;
    }
    uint8_t *p = realloc(b->data, cap);
    if (p != NULL) {
        b->data = p;
        b->cap = cap;
    }
}

int pq_buf_reserve_slow(pq_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return PQ_ENOMEM;
    size_t need = b->len + extra;
    if (b->data != NULL && need <= b->cap)
        return PQ_OK; /* exactly full: pq_buf_reserve's test is strict */
    /* at least double (appends stay amortised O(1)); a reservation for
     * more is taken as asked, not rounded up to a power of two times cap */
    size_t cap = b->cap ? b->cap : 64;
    cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    cap = cap < need ? need : cap;
    uint8_t *p = realloc(b->data, cap);
    if (p == NULL)
        return PQ_ENOMEM;
    b->data = p;
    b->cap = cap;
    return PQ_OK;
}

int pq_buf_put_u32le(pq_buf *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return pq_buf_append(b, le, sizeof le);
}

int pq_buf_put_u64le(pq_buf *b, uint64_t v)
{
    uint8_t le[8];
    for (size_t i = 0; i < 8; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    return pq_buf_append(b, le, sizeof le);
}

