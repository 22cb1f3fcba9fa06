/* rle.c - RLE / bit-packing hybrid encoder and the deprecated BIT_PACKED
 * encoder (Encodings.md, "RLE = 3" and "BIT_PACKED = 4"). Knows nothing of
 * pages: the caller adds the length prefix where the page kind wants one. */
#include "rle.h"
#include "err.h"

#include <stdbool.h>
#include <string.h>

/* Spec note 3: run lengths must fit a signed 32-bit integer, so longer
 * runs are split. A bit-packed header counts groups of 8 values. */
#define RLE_MAX_RUN 0x7FFFFFFFu
#define RLE_MAX_GROUPS (RLE_MAX_RUN / 8)

int pq_rle_bit_width(uint64_t max_value)
{
    return max_value == 0 ? 0 : 64 - __builtin_clzll(max_value);
}

static inline void rle_store_le64(uint8_t *dst, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        dst[i] = (uint8_t)(v >> (8 * i));
}

/* u16 levels and u32 indices share one encoder; `es` is a constant at
 * each call site, so the compiler specialises the loads. */
static inline uint32_t rle_load(const void *vals, size_t i, size_t es)
{
    return es == 2 ? ((const uint16_t *)vals)[i] : ((const uint32_t *)vals)[i];
}

/* The one bit packer: vals[start .. start+count) (elements of es bytes:
 * 2, 4, or 8 for DELTA_BINARY_PACKED's 64-bit deltas) LSB first, the
 * last byte zero-padded; returns the bytes written, ceil(count * bw / 8).
 * Inlined into both callers, so es is a constant in each. */
static inline size_t rle_pack_bits(uint8_t *dst, const void *vals, size_t es, size_t start,
                                   size_t count, int bw)
{
    uint8_t *d = dst;
    uint64_t acc = 0;
    int nb = 0; /* bits pending in acc, always < 64 */
    for (size_t i = start; i < start + count; i++) {
        uint64_t x = es == 8 ? ((const uint64_t *)vals)[i] : rle_load(vals, i, es);
        acc |= x << nb;
        nb += bw;
        if (nb >= 64) {
            rle_store_le64(d, acc);
            d += 8;
            nb -= 64;
            /* The high bits of x that did not fit start the next word. */
            acc = nb ? x >> (bw - nb) : 0;
        }
    }
    for (; nb > 0; nb -= 8) {
        *d++ = (uint8_t)acc;
        acc >>= 8;
    }
    return (size_t)(d - dst);
}

static int rle_put_run(pq_buf *out, uint32_t value, size_t count, int bw)
{
    size_t vbytes = ((size_t)bw + 7) / 8;
    while (count > 0) {
        size_t c = count < RLE_MAX_RUN ? count : RLE_MAX_RUN;
        if (pq_buf_put_uvarint(out, (uint64_t)c << 1) != 0 || pq_buf_reserve(out, vbytes) != 0)
            return PQ_ENOMEM;
        for (size_t b = 0; b < vbytes; b++)
            out->data[out->len++] = (uint8_t)(value >> (8 * b));
        count -= c;
    }
    return 0;
}

/* vals[start .. start+count) as one LSB-first bit stream, zero-padded to
 * nbytes. Groups of 8 values fill whole bytes (8 * bw bits), so packing
 * a literal run at once gives the bytes packing it group by group gives,
 * without copying each group out first. */
static void rle_pack_values(uint8_t *dst, const void *vals, size_t es, size_t start,
                            size_t count, int bw, size_t nbytes)
{
    size_t n = rle_pack_bits(dst, vals, es, start, count, bw);
    memset(dst + n, 0, nbytes - n);
}

void pq_rle_pack_lsb(uint8_t *dst, const uint64_t *vals, size_t count, int bit_width)
{
    rle_pack_bits(dst, vals, sizeof *vals, 0, count, bit_width);
}

/* Bit-packs vals[start .. start+count) in groups of 8; only the final call
 * of an encoding may pass a count that is not a multiple of 8 (the spec
 * pads the last group with zeros). */
static int rle_put_literal(pq_buf *out, const void *vals, size_t es, size_t start,
                           size_t count, int bw)
{
    while (count > 0) {
        size_t c = count < (size_t)RLE_MAX_GROUPS * 8 ? count : (size_t)RLE_MAX_GROUPS * 8;
        size_t groups = (c + 7) / 8;
        if (pq_buf_put_uvarint(out, (uint64_t)groups << 1 | 1) != 0
            || pq_buf_reserve(out, groups * (size_t)bw) != 0)
            return PQ_ENOMEM;
        rle_pack_values(out->data + out->len, vals, es, start, c, bw, groups * (size_t)bw);
        out->len += groups * (size_t)bw;
        start += c;
        count -= c;
    }
    return 0;
}

/* The length of the run of x starting at vals[i] (at least 1). Definition
 * levels are mostly one long run (a column present in every row), so the
 * values are compared a word at a time (4 levels, 2 indices) before the
 * tail one by one: a quarter of the instructions on such pages. */
static inline size_t rle_run_length(const void *vals, size_t i, size_t n, size_t es, uint32_t x)
{
    size_t r = 1;
    const uint64_t pat = es == 2 ? 0x0001000100010001u * (uint64_t)x
                                 : 0x0000000100000001u * (uint64_t)x;
    const uint8_t *base = (const uint8_t *)vals;
    while (i + r + 8 / es <= n) {
        uint64_t w;
        memcpy(&w, base + (i + r) * es, sizeof w);
        if (w != pat)
            break;
        r += 8 / es;
    }
    while (i + r < n && rle_load(vals, i + r, es) == x)
        r++;
    return r;
}

/* Runs of 8+ equal values become RLE runs; everything else is bit-packed.
 * A pending bit-packed run can only end on a group boundary, so a run that
 * follows it first lends values to close the group, and stays RLE only if
 * 8+ remain. A lone trailing run is RLE too: it is never larger. Width 0
 * means every value is 0: one RLE run with a zero-byte value. */
static inline int rle_encode(pq_buf *out, const void *vals, size_t n, size_t es, int bw)
{
    if (bw < 0 || bw > 32 || (n > 0 && vals == NULL))
        return PQ_EINVAL;
    size_t mark = out->len, lit = 0, i = 0;
    uint32_t seen = 0; /* the values the fast path passed, OR-ed: checked at the end */
    int rc = 0;
    while (i < n) {
        uint32_t x = rle_load(vals, i, es);
        /* A value unlike the next starts no run (dictionary indices are
         * mostly such): it joins the bit-packed run as it is. */
        if (i + 1 < n && rle_load(vals, i + 1, es) != x) {
            seen |= x;
            i++;
            continue;
        }
        size_t r = rle_run_length(vals, i, n, es, x);
        if (((uint64_t)x >> bw) != 0) {
            rc = PQ_EINVAL;
            goto fail;
        }
        size_t pad = (8 - (i - lit) % 8) % 8;
        bool lone_tail = i == lit && i + r == n;
        bool as_run = r >= pad + 8 || (pad == 0 && (lone_tail || bw == 0));
        if (!as_run) {
            i += r;
            continue;
        }
        i += pad;
        if ((rc = rle_put_literal(out, vals, es, lit, i - lit, bw)) != 0
            || (rc = rle_put_run(out, x, r - pad, bw)) != 0)
            goto fail;
        i += r - pad;
        lit = i;
    }
    if (((uint64_t)seen >> bw) != 0) {
        rc = PQ_EINVAL;
        goto fail;
    }
    if ((rc = rle_put_literal(out, vals, es, lit, n - lit, bw)) != 0)
        goto fail;
    return 0;
fail:
    out->len = mark;
    return rc;
}

/* Flattened (the literal and run writers inlined): a page's indices and
 * levels pass here, and the calls per run cost more than their bodies. */
__attribute__((flatten))
int pq_rle_encode_u32(pq_buf *out, const uint32_t *vals, size_t n, int bit_width)
{
    return rle_encode(out, vals, n, sizeof *vals, bit_width);
}

__attribute__((flatten))
int pq_rle_encode_u16(pq_buf *out, const uint16_t *vals, size_t n, int bit_width)
{
    return rle_encode(out, vals, n, sizeof *vals, bit_width);
}

/* MSB-first, unlike the hybrid: kept only for readers of old files. */
int pq_bitpacked_encode_u16(pq_buf *out, const uint16_t *vals, size_t n, int bit_width)
{
    if (bit_width < 0 || bit_width > 16 || (n > 0 && vals == NULL) || n > SIZE_MAX / 16)
        return PQ_EINVAL;
    size_t nbytes = (n * (size_t)bit_width + 7) / 8;
    if (nbytes == 0)
        return 0; /* out->data may still be NULL: no pointer arithmetic */
    if (pq_buf_reserve(out, nbytes) != 0)
        return PQ_ENOMEM;
    uint8_t *dst = out->data + out->len;
    uint32_t acc = 0; /* only the low nb bits matter; older bits wrap away */
    int nb = 0;
    for (size_t i = 0; i < n; i++) {
        if ((vals[i] >> bit_width) != 0)
            return PQ_EINVAL; /* out->len not yet advanced: out unchanged */
        acc = (acc << bit_width) | vals[i];
        nb += bit_width;
        while (nb >= 8) {
            nb -= 8;
            *dst++ = (uint8_t)(acc >> nb);
        }
    }
    if (nb > 0)
        *dst = (uint8_t)(acc << (8 - nb));
    out->len += nbytes;
    return 0;
}
