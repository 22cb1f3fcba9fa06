/* buf.h - pq_buf, the growable byte buffer behind every encoder and page.
 * Buffers grow geometrically and are reset (len = 0), not freed, between
 * pages and row groups, so steady-state writing does not allocate. */
#ifndef PQ_BUF_H
#define PQ_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct pq_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} pq_buf;

void pq_buf_init(pq_buf *b);
void pq_buf_free(pq_buf *b);
/* Gives back the capacity beyond max(len, cap); keeps it if realloc fails. */
void pq_buf_shrink(pq_buf *b, size_t cap);

/* Makes room for `extra` more bytes. Returns 0 or PQ_ENOMEM. Afterwards
 * `data` is never NULL, even for extra 0: callers compute `data + len`,
 * and NULL + 0 is undefined in C. */
int pq_buf_reserve_slow(pq_buf *b, size_t extra);

static inline int pq_buf_reserve(pq_buf *b, size_t extra)
{
    if (b->cap - b->len > extra)
        return 0;
    return pq_buf_reserve_slow(b, extra);
}

static inline void pq_buf_reset(pq_buf *b) { b->len = 0; }

static inline int pq_buf_append(pq_buf *b, const void *p, size_t n)
{
    if (n == 0)
        return 0;
    if (pq_buf_reserve(b, n) != 0)
        return -2; /* PQ_ENOMEM */
    memcpy(b->data + b->len, p, n);
    b->len += n;
    return 0;
}

static inline int pq_buf_push(pq_buf *b, uint8_t byte)
{
    if (pq_buf_reserve(b, 1) != 0)
        return -2; /* PQ_ENOMEM */
    b->data[b->len++] = byte;
    return 0;
}

/* Little-endian fixed-width appends (Parquet PLAIN is little-endian). */
int pq_buf_put_u32le(pq_buf *b, uint32_t v);
int pq_buf_put_u64le(pq_buf *b, uint64_t v);

/* ULEB128 and zigzag varints (Thrift compact protocol, DELTA encodings).
 * Inline, bytes stored in place: every page header and footer field is
 * one, and a copy through memcpy per varint was 2% of writing many small
 * files. */
/* The ULEB128 of v at p (room for 10 bytes); returns the byte after it.
 * For writers that reserve once for several fields (thrift.c). */
static inline uint8_t *pq_uvarint_store(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static inline uint64_t pq_zigzag64(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int pq_buf_put_uvarint(pq_buf *b, uint64_t v)
{
    if (pq_buf_reserve(b, 10) != 0)
        return -2; /* PQ_ENOMEM */
    b->len = (size_t)(pq_uvarint_store(b->data + b->len, v) - b->data);
    return 0;
}

static inline int pq_buf_put_zigzag(pq_buf *b, int64_t v)
{
    return pq_buf_put_uvarint(b, pq_zigzag64(v));
}

#endif
