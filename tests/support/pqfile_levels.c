/* pqfile_levels.c - definition and repetition levels from the RLE /
 * bit-packed hybrid (Encodings.md "RLE = 3"). */
#include "pqfile_int.h"

int pqf_bit_width(int max_level)
{
    int w = 0;
    while (w < 31 && (max_level >> w) != 0)
        w++;
    return w;
}

typedef struct lvl_rd {
    const uint8_t *p;
    size_t len, pos;
    int bw, max;
    size_t i, num;                 /* levels produced so far, wanted */
    uint16_t *out;                 /* optional */
    int64_t *hist;                 /* optional */
    pq_err *err;
} lvl_rd;

static int lvl_uvarint(lvl_rd *r, uint64_t *v)
{
    *v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (r->pos >= r->len)
            return pq_err_set(r->err, PQ_EPARSE, "levels: run header truncated "
                              "at byte %zu", r->pos);
        uint8_t b = r->p[r->pos++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0)
            return 0;
    }
    return pq_err_set(r->err, PQ_EPARSE, "levels: run header overflows at "
                      "byte %zu", r->pos);
}

static int lvl_emit(lvl_rd *r, uint32_t v, uint64_t count)
{
    if ((int)v > r->max)
        return pq_err_set(r->err, PQ_EPARSE, "levels: level %u at index %zu "
                          "exceeds max level %d", v, r->i, r->max);
    if (r->hist != NULL)
        r->hist[v] += (int64_t)count;
    for (uint64_t k = 0; r->out != NULL && k < count; k++)
        r->out[r->i + k] = (uint16_t)v;
    r->i += (size_t)count;
    return 0;
}

/* Repeated value: ceil(bw / 8) little-endian bytes. */
static int lvl_rle_run(lvl_rd *r, uint64_t count)
{
    size_t nb = ((size_t)r->bw + 7) / 8;
    if (count == 0 || count > r->num - r->i)
        return pq_err_set(r->err, PQ_EPARSE, "levels: RLE run of %llu at index "
                          "%zu, %zu levels left", (unsigned long long)count,
                          r->i, r->num - r->i);
    if (nb > r->len - r->pos)
        return pq_err_set(r->err, PQ_EPARSE, "levels: RLE value truncated");
    uint32_t v = 0;
    for (size_t k = 0; k < nb; k++)
        v |= (uint32_t)r->p[r->pos + k] << (8 * k);
    r->pos += nb;
    return lvl_emit(r, v, count);
}

/* Bit-packed groups of 8, LSB first; the last group may be padding. */
static int lvl_packed_run(lvl_rd *r, uint64_t groups)
{
    if (groups == 0 || groups > (r->len - r->pos) / (size_t)r->bw)
        return pq_err_set(r->err, PQ_EPARSE, "levels: %llu bit-packed groups "
                          "do not fit %zu bytes", (unsigned long long)groups,
                          r->len - r->pos);
    const uint8_t *p = r->p + r->pos;
    size_t nvals = (size_t)groups * 8;
    for (size_t k = 0; k < nvals && r->i < r->num; k++) {
        uint32_t v = 0;
        for (int b = 0; b < r->bw; b++) {
            size_t bit = k * (size_t)r->bw + (size_t)b;
            v |= (uint32_t)((p[bit / 8] >> (bit % 8)) & 1) << b;
        }
        if (lvl_emit(r, v, 1) != 0)
            return PQ_EPARSE;
    }
    r->pos += (size_t)groups * (size_t)r->bw;
    return 0;
}

int pqf_levels_decode(const uint8_t *p, size_t len, int max_level, size_t num,
                      uint16_t *out, int64_t *hist, pq_err *err)
{
    if (max_level < 0 || max_level > UINT16_MAX)
        return pq_err_set(err, PQ_EINVAL, "levels: max level %d", max_level);
    lvl_rd r = { .p = p, .len = len, .bw = pqf_bit_width(max_level),
                 .max = max_level, .num = num, .out = out, .hist = hist,
                 .err = err };
    if (r.bw == 0)   /* max level 0: no bytes, every level is 0 */
        return lvl_emit(&r, 0, num);
    while (r.i < num) {
        uint64_t h;
        if (lvl_uvarint(&r, &h) != 0)
            return PQ_EPARSE;
        int rc = (h & 1) ? lvl_packed_run(&r, h >> 1) : lvl_rle_run(&r, h >> 1);
        if (rc != 0)
            return rc;
    }
    return 0;
}
