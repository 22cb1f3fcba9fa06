/* delta.c - DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and
 * DELTA_BYTE_ARRAY encoders (Encodings.md, "Delta Encoding",
 * "Delta-length byte array", "Delta Strings"). All three feed one
 * streaming block encoder, so no encoder needs an array of n deltas. */
#include "delta.h"
#include "err.h"
#include "rle.h"

#include <stdbool.h>

/* common_prefix compares 8 bytes at a time and finds the first difference
 * with a count of trailing zeros, which is only right on little-endian. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "delta.c assumes a little-endian host");

/* One DELTA_BINARY_PACKED stream being written. Deltas are kept in the
 * unsigned domain so wrap-around is defined; the block is flushed to `out`
 * as soon as it is full. */
typedef struct delta_enc {
    pq_buf *out;
    uint64_t prev;
    size_t nd;     /* deltas buffered in the current block */
    uint32_t block, miniblocks, per_mini;
    int bits;      /* 32 or 64: the physical type's width */
    uint64_t d[PQ_DELTA_MAX_BLOCK];
} delta_enc;

/* The header carries the total count, so the caller must know n now. For
 * n == 0 the header is all there is, with a first value of 0. */
static int de_begin(delta_enc *e, pq_buf *out, size_t n, int64_t first, int bits,
                    uint32_t block, uint32_t miniblocks)
{
    e->out = out;
    e->prev = (uint64_t)first;
    e->nd = 0;
    e->block = block;
    e->miniblocks = miniblocks;
    e->per_mini = block / miniblocks;
    e->bits = bits;
    if (pq_buf_put_uvarint(out, block) != 0 || pq_buf_put_uvarint(out, miniblocks) != 0
        || pq_buf_put_uvarint(out, n) != 0 || pq_buf_put_zigzag(out, first) != 0)
        return PQ_ENOMEM;
    return 0;
}

/* Subtracts the block's min delta, then writes <min delta> <bit widths>
 * <miniblocks>. Miniblocks past the last delta keep a width byte of 0 but
 * get no body: readers stop by count and never look for one. */
static int de_flush(delta_enc *e)
{
    if (e->nd == 0)
        return 0;
    int64_t min = (int64_t)e->d[0];
    for (size_t i = 1; i < e->nd; i++)
        if ((int64_t)e->d[i] < min)
            min = (int64_t)e->d[i];
    uint8_t widths[PQ_DELTA_MAX_BLOCK / 8] = {0};
    size_t body = 0;
    for (size_t m = 0, lo = 0; lo < e->nd; m++, lo += e->per_mini) {
        size_t hi = lo + e->per_mini < e->nd ? lo + e->per_mini : e->nd;
        uint64_t any = 0; /* the OR has the same bit width as the max */
        for (size_t i = lo; i < hi; i++) {
            e->d[i] -= (uint64_t)min; /* wraps into [0, 2^bits) */
            any |= e->d[i];
        }
        widths[m] = (uint8_t)pq_rle_bit_width(any);
        body += (size_t)e->per_mini * widths[m] / 8;
    }
    if (pq_buf_put_zigzag(e->out, min) != 0
        || pq_buf_reserve(e->out, e->miniblocks + body) != 0)
        return PQ_ENOMEM;
    uint8_t *dst = e->out->data + e->out->len;
    memcpy(dst, widths, e->miniblocks);
    dst += e->miniblocks;
    for (size_t m = 0, lo = 0; lo < e->nd; m++, lo += e->per_mini) {
        size_t hi = lo + e->per_mini < e->nd ? lo + e->per_mini : e->nd;
        size_t bytes = (size_t)e->per_mini * widths[m] / 8;
        memset(dst, 0, bytes); /* the last miniblock's padding */
        pq_rle_pack_lsb(dst, e->d + lo, hi - lo, widths[m]);
        dst += bytes;
    }
    e->out->len += e->miniblocks + body;
    e->nd = 0;
    return 0;
}

static inline int de_push(delta_enc *e, int64_t v)
{
    uint64_t d = (uint64_t)v - e->prev;
    if (e->bits == 32) /* wrap at 32 bits so packing needs <= 32 bits */
        d = (uint64_t)(int64_t)(int32_t)(uint32_t)d;
    e->prev = (uint64_t)v;
    e->d[e->nd++] = d;
    return e->nd == e->block ? de_flush(e) : 0;
}

/* Encodes v[0..n) of either width; `is32` is constant per call site. */
static inline int delta_encode(pq_buf *out, const void *v, size_t n, bool is32,
                               uint32_t block, uint32_t miniblocks)
{
    if (n > 0 && v == NULL)
        return PQ_EINVAL;
    const int32_t *v32 = v;
    const int64_t *v64 = v;
    delta_enc e;
    size_t mark = out->len;
    int64_t first = n == 0 ? 0 : is32 ? v32[0] : v64[0];
    int rc = de_begin(&e, out, n, first, is32 ? 32 : 64, block, miniblocks);
    for (size_t i = 1; rc == 0 && i < n; i++)
        rc = de_push(&e, is32 ? v32[i] : v64[i]);
    if (rc == 0)
        rc = de_flush(&e);
    if (rc != 0)
        out->len = mark;
    return rc;
}

/* The public encoders are flattened (the block flush and the bit packer
 * inlined into each): called per page, they run once per value. */
__attribute__((flatten))
int pq_delta_encode_i32(pq_buf *out, const int32_t *v, size_t n)
{
    return delta_encode(out, v, n, true, PQ_DELTA_BLOCK_SIZE, PQ_DELTA_MINIBLOCKS);
}

__attribute__((flatten))
int pq_delta_encode_i64(pq_buf *out, const int64_t *v, size_t n)
{
    return delta_encode(out, v, n, false, PQ_DELTA_BLOCK_SIZE, PQ_DELTA_MINIBLOCKS);
}

int pq_delta_encode_i64_layout(pq_buf *out, const int64_t *v, size_t n,
                               uint32_t block_size, uint32_t miniblocks)
{
    if (miniblocks == 0 || block_size == 0 || block_size > PQ_DELTA_MAX_BLOCK
        || block_size % miniblocks != 0 || (block_size / miniblocks) % 8 != 0)
        return PQ_EINVAL;
    return delta_encode(out, v, n, false, block_size, miniblocks);
}

/* Byte-array values, either offset-delimited (BYTE_ARRAY) or back to back
 * at a fixed width (FIXED_LEN_BYTE_ARRAY, off == NULL). */
typedef struct dba_src {
    const uint8_t *heap;
    const uint32_t *off;
    size_t width;
} dba_src;

static inline const uint8_t *dba_val(const dba_src *s, size_t i, size_t *len)
{
    if (s->off == NULL) {
        *len = s->width;
        return s->heap + i * s->width;
    }
    *len = s->off[i + 1] - s->off[i];
    return *len ? s->heap + s->off[i] : s->heap; /* heap may be NULL if all empty */
}

/* Runs before anything is read, so later passes may trust the lengths. */
static int dba_check(const dba_src *s, size_t n)
{
    if (n == 0)
        return 0;
    if (s->off == NULL)
        return s->width <= INT32_MAX && s->heap != NULL && n <= SIZE_MAX / s->width
                   ? 0 : PQ_EINVAL;
    if (s->heap == NULL && s->off[n] != s->off[0])
        return PQ_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (s->off[i + 1] < s->off[i] || s->off[i + 1] - s->off[i] > INT32_MAX)
            return PQ_EINVAL;
    return 0;
}

/* Lengths as int32 DELTA_BINARY_PACKED; the caller has run dba_check. */
static int dba_put_lengths(pq_buf *out, const dba_src *s, size_t n)
{
    delta_enc e;
    size_t len = 0;
    if (n > 0)
        dba_val(s, 0, &len);
    int rc = de_begin(&e, out, n, (int64_t)len, 32, PQ_DELTA_BLOCK_SIZE, PQ_DELTA_MINIBLOCKS);
    for (size_t i = 1; rc == 0 && i < n; i++) {
        dba_val(s, i, &len);
        rc = de_push(&e, (int64_t)len);
    }
    return rc == 0 ? de_flush(&e) : rc;
}

/* Values are contiguous in the heap, so the data section is one copy. */
static int dba_length_encode(pq_buf *out, const dba_src *s, size_t n)
{
    int rc = dba_check(s, n);
    if (rc != 0)
        return rc;
    size_t mark = out->len;
    if ((rc = dba_put_lengths(out, s, n)) != 0)
        goto fail;
    if (n > 0 && s->off != NULL && s->off[n] > s->off[0])
        rc = pq_buf_append(out, s->heap + s->off[0], s->off[n] - s->off[0]);
    else if (n > 0)
        rc = pq_buf_append(out, s->heap, n * s->width);
    if (rc != 0)
        goto fail;
    return 0;
fail:
    out->len = mark;
    return rc;
}

int pq_delta_length_encode(pq_buf *out, const uint8_t *heap, const uint32_t *off, size_t n)
{
    if (n > 0 && off == NULL)
        return PQ_EINVAL;
    dba_src s = {heap, off, 0};
    return dba_length_encode(out, &s, n);
}

static size_t common_prefix(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t m = alen < blen ? alen : blen, k = 0;
    for (; k + 8 <= m; k += 8) {
        uint64_t x, y;
        memcpy(&x, a + k, 8);
        memcpy(&y, b + k, 8);
        if (x != y)
            return k + (size_t)__builtin_ctzll(x ^ y) / 8;
    }
    while (k < m && a[k] == b[k])
        k++;
    return k;
}

/* Prefix value i shares with value i - 1 (0 for the first value). It is
 * recomputed in each of the three passes rather than stored: the encoder
 * must not allocate n entries, and the compare costs no more than the
 * copy of the suffix that follows it. */
static size_t dba_prefix(const dba_src *s, size_t i, size_t *len)
{
    const uint8_t *cur = dba_val(s, i, len);
    if (i == 0)
        return 0;
    size_t plen;
    const uint8_t *prev = dba_val(s, i - 1, &plen);
    return common_prefix(prev, plen, cur, *len);
}

/* <prefix lengths> <suffix lengths> <suffix bytes>, as in the spec. */
static int dba_bytes_passes(pq_buf *out, const dba_src *s, size_t n)
{
    delta_enc e;
    size_t len, total = 0;
    int rc = de_begin(&e, out, n, 0, 32, PQ_DELTA_BLOCK_SIZE, PQ_DELTA_MINIBLOCKS);
    for (size_t i = 1; rc == 0 && i < n; i++)
        rc = de_push(&e, (int64_t)dba_prefix(s, i, &len));
    if (rc != 0 || (rc = de_flush(&e)) != 0)
        return rc;
    if (n > 0)
        dba_val(s, 0, &total);
    rc = de_begin(&e, out, n, (int64_t)total, 32, PQ_DELTA_BLOCK_SIZE, PQ_DELTA_MINIBLOCKS);
    for (size_t i = 1; rc == 0 && i < n; i++) {
        size_t p = dba_prefix(s, i, &len);
        total += len - p;
        rc = de_push(&e, (int64_t)(len - p));
    }
    if (rc != 0 || (rc = de_flush(&e)) != 0 || (rc = pq_buf_reserve(out, total)) != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        size_t p = dba_prefix(s, i, &len);
        if (len > p)
            memcpy(out->data + out->len, dba_val(s, i, &len) + p, len - p);
        out->len += len - p;
    }
    return 0;
}

static int dba_bytes_encode(pq_buf *out, const dba_src *s, size_t n)
{
    int rc = dba_check(s, n);
    if (rc != 0)
        return rc;
    size_t mark = out->len;
    if ((rc = dba_bytes_passes(out, s, n)) != 0)
        out->len = mark;
    return rc;
}

__attribute__((flatten))
int pq_delta_bytes_encode(pq_buf *out, const uint8_t *heap, const uint32_t *off, size_t n)
{
    if (n > 0 && off == NULL)
        return PQ_EINVAL;
    dba_src s = {heap, off, 0};
    return dba_bytes_encode(out, &s, n);
}

int pq_delta_bytes_encode_fixed(pq_buf *out, const uint8_t *vals, size_t n, size_t width)
{
    if (width == 0)
        return PQ_EINVAL;
    dba_src s = {vals, NULL, width};
    return dba_bytes_encode(out, &s, n);
}
