/* decode.c - test-only decoders for the value encodings (Encodings.md).
 * Deliberately shares no code with writer/: a bug copied into both sides
 * of a round trip would go unnoticed. Bit by bit, bounds-checked, slow. */
#include "decode.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEC_MAX_OUTPUT ((size_t)1 << 30)
#define DEC_MAX_RUN 0x7FFFFFFFu
#define DEC_MAX_BLOCK ((uint64_t)1 << 16) /* writers use 128; bounds junk counts */

typedef struct dec_rd {
    const uint8_t *p;
    size_t len, pos;
} dec_rd;

static size_t dec_left(const dec_rd *r)
{
    return r->len - r->pos;
}

/* ULEB128, at most 10 bytes, rejecting bits beyond 64. */
static int dec_uvarint(dec_rd *r, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 10; i++) {
        if (r->pos >= r->len)
            return PQ_EPARSE;
        uint8_t b = r->p[r->pos++];
        if (i == 9 && b > 1)
            return PQ_EPARSE;
        x |= (uint64_t)(b & 0x7F) << (7 * i);
        if ((b & 0x80) == 0) {
            *v = x;
            return 0;
        }
    }
    return PQ_EPARSE;
}

static int dec_zigzag(dec_rd *r, int64_t *v)
{
    uint64_t z;
    int rc = dec_uvarint(r, &z);
    if (rc == 0)
        *v = (int64_t)((z >> 1) ^ (~(z & 1) + 1));
    return rc;
}

/* Value idx of width w, packed LSB-first; caller checked the bytes exist. */
static uint64_t dec_unpack_lsb(const uint8_t *p, size_t idx, int w)
{
    uint64_t v = 0;
    size_t bit = idx * (size_t)w;
    for (int got = 0; got < w; got++, bit++)
        v |= (uint64_t)((p[bit / 8] >> (bit % 8)) & 1) << got;
    return v;
}

void pqt_bytes_free(pqt_bytes *b)
{
    free(b->heap);
    free(b->off);
    b->heap = NULL;
    b->off = NULL;
    b->n = 0;
}

int pqt_bytes_equal(const pqt_bytes *a, const pqt_bytes *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++) {
        uint32_t la = a->off[i + 1] - a->off[i], lb = b->off[i + 1] - b->off[i];
        if (la != lb || (la > 0 && memcmp(a->heap + a->off[i], b->heap + b->off[i], la) != 0))
            return 0;
    }
    return 1;
}

static void dec_set_used(size_t *used, size_t n)
{
    if (used != NULL)
        *used = n;
}

static int dec_rle_run(dec_rd *r, uint64_t count, int w, uint32_t *out, size_t n, size_t *i)
{
    size_t vbytes = ((size_t)w + 7) / 8;
    if (count == 0 || count > DEC_MAX_RUN || dec_left(r) < vbytes)
        return PQ_EPARSE;
    uint64_t v = 0;
    for (size_t b = 0; b < vbytes; b++)
        v |= (uint64_t)r->p[r->pos++] << (8 * b);
    if ((v >> w) != 0)
        return PQ_EPARSE;
    for (; count > 0 && *i < n; count--)
        out[(*i)++] = (uint32_t)v;
    return 0;
}

static int dec_packed_run(dec_rd *r, uint64_t groups, int w, uint32_t *out, size_t n, size_t *i)
{
    if (groups == 0 || groups > DEC_MAX_RUN / 8 || dec_left(r) < groups * (size_t)w)
        return PQ_EPARSE;
    const uint8_t *p = r->p + r->pos;
    for (size_t k = 0; k < groups * 8 && *i < n; k++)
        out[(*i)++] = (uint32_t)dec_unpack_lsb(p, k, w);
    r->pos += groups * (size_t)w;
    return 0;
}

int pqt_rle_decode(const uint8_t *p, size_t len, int bit_width, uint32_t *out, size_t n,
                   size_t *used)
{
    if (bit_width < 0 || bit_width > 32 || (len > 0 && p == NULL) || (n > 0 && out == NULL))
        return PQ_EINVAL;
    dec_rd r = {p, len, 0};
    size_t i = 0;
    while (i < n) {
        uint64_t h;
        int rc = dec_uvarint(&r, &h);
        if (rc == 0)
            rc = (h & 1) ? dec_packed_run(&r, h >> 1, bit_width, out, n, &i)
                         : dec_rle_run(&r, h >> 1, bit_width, out, n, &i);
        if (rc != 0)
            return rc;
    }
    dec_set_used(used, r.pos);
    return 0;
}

int pqt_bitpacked_decode(const uint8_t *p, size_t len, int bit_width, uint16_t *out, size_t n,
                         size_t *used)
{
    if (bit_width < 0 || bit_width > 16 || (len > 0 && p == NULL) || (n > 0 && out == NULL)
        || n > SIZE_MAX / 16)
        return PQ_EINVAL;
    size_t nbytes = (n * (size_t)bit_width + 7) / 8;
    if (len < nbytes)
        return PQ_EPARSE;
    size_t bit = 0;
    for (size_t i = 0; i < n; i++) {
        uint16_t v = 0;
        for (int k = 0; k < bit_width; k++, bit++)
            v = (uint16_t)(v << 1 | ((p[bit / 8] >> (7 - bit % 8)) & 1));
        out[i] = v;
    }
    dec_set_used(used, nbytes);
    return 0;
}

int pqt_plain_decode_bool(const uint8_t *p, size_t len, uint8_t *out, size_t n, size_t *used)
{
    if ((len > 0 && p == NULL) || (n > 0 && out == NULL))
        return PQ_EINVAL;
    size_t nbytes = n / 8 + (n % 8 != 0);
    if (len < nbytes)
        return PQ_EPARSE;
    for (size_t i = 0; i < n; i++)
        out[i] = (p[i / 8] >> (i % 8)) & 1;
    dec_set_used(used, nbytes);
    return 0;
}

int pqt_plain_decode_fixed(const uint8_t *p, size_t len, void *out, size_t n, size_t width,
                           size_t *used)
{
    if (width == 0 || (len > 0 && p == NULL) || (n > 0 && out == NULL) || n > SIZE_MAX / width)
        return PQ_EINVAL;
    if (len < n * width)
        return PQ_EPARSE;
    if (n > 0)
        memcpy(out, p, n * width);
    dec_set_used(used, n * width);
    return 0;
}

/* off gets n + 1 entries; heap at least one byte so malloc(0) never
 * muddles the NULL check. */
static int dec_bytes_alloc(pqt_bytes *b, size_t n, size_t heap_len)
{
    if (heap_len > DEC_MAX_OUTPUT || n > DEC_MAX_OUTPUT / sizeof(uint32_t))
        return PQ_ELIMIT;
    b->off = malloc((n + 1) * sizeof *b->off);
    b->heap = malloc(heap_len ? heap_len : 1);
    b->n = n;
    if (b->off == NULL || b->heap == NULL) {
        pqt_bytes_free(b);
        return PQ_ENOMEM;
    }
    b->off[0] = 0;
    return 0;
}

static uint32_t dec_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int pqt_plain_decode_bytes(const uint8_t *p, size_t len, size_t n, pqt_bytes *out,
                           size_t *used)
{
    memset(out, 0, sizeof *out);
    if (len > 0 && p == NULL)
        return PQ_EINVAL;
    if (n > len / 4)
        return PQ_EPARSE; /* every value needs its 4-byte length */
    dec_rd r = {p, len, 0};
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (dec_left(&r) < 4 || dec_left(&r) - 4 < dec_le32(p + r.pos))
            return PQ_EPARSE;
        total += dec_le32(p + r.pos);
        r.pos += 4 + (size_t)dec_le32(p + r.pos);
    }
    int rc = dec_bytes_alloc(out, n, total);
    if (rc != 0)
        return rc;
    for (size_t i = 0, pos = 0; i < n; i++) {
        uint32_t l = dec_le32(p + pos);
        memcpy(out->heap + out->off[i], p + pos + 4, l);
        out->off[i + 1] = out->off[i] + l;
        pos += 4 + (size_t)l;
    }
    dec_set_used(used, r.pos);
    return 0;
}

/* out == NULL: validate and count only. */
static void dec_store(void *out, size_t i, uint64_t v, bool is32)
{
    if (out == NULL)
        return;
    if (is32)
        ((int32_t *)out)[i] = (int32_t)(uint32_t)v;
    else
        ((int64_t *)out)[i] = (int64_t)v;
}

/* One block: <min delta> <bit widths> <miniblocks>. Miniblocks after the
 * last value have a width byte but no body, whatever the width says. */
static int dec_delta_block(dec_rd *r, bool is32, size_t per_mini, size_t mb, void *out,
                           size_t total, size_t *got, uint64_t *prev)
{
    int64_t min;
    if (dec_zigzag(r, &min) != 0 || dec_left(r) < mb)
        return PQ_EPARSE;
    const uint8_t *widths = r->p + r->pos;
    r->pos += mb;
    for (size_t m = 0; m < mb && *got < total; m++) {
        int w = widths[m];
        size_t bytes = per_mini * (size_t)w / 8;
        if (w > (is32 ? 32 : 64) || dec_left(r) < bytes)
            return PQ_EPARSE;
        for (size_t j = 0; j < per_mini && *got < total; j++) {
            *prev += (uint64_t)min + dec_unpack_lsb(r->p + r->pos, j, w);
            dec_store(out, (*got)++, *prev, is32);
        }
        r->pos += bytes;
    }
    return 0;
}

/* Arithmetic in uint64 wraps as the spec asks; int32 keeps the low half. */
static int dec_delta(dec_rd *r, bool is32, void *out, size_t cap, size_t *n_out)
{
    uint64_t block, mb, total;
    int64_t first;
    int rc;
    if ((rc = dec_uvarint(r, &block)) != 0 || (rc = dec_uvarint(r, &mb)) != 0
        || (rc = dec_uvarint(r, &total)) != 0 || (rc = dec_zigzag(r, &first)) != 0)
        return rc;
    if (block == 0 || block > DEC_MAX_BLOCK || mb == 0 || block % mb != 0
        || (block / mb) % 8 != 0 || (is32 && (first < INT32_MIN || first > INT32_MAX)))
        return PQ_EPARSE;
    /* A block of deltas costs at least 1 + mb bytes: reject impossible
     * counts before anyone allocates for them. */
    if (total > 1 && total - 1 > dec_left(r) / (1 + mb) * block)
        return PQ_EPARSE;
    if (total > cap)
        return PQ_ELIMIT;
    *n_out = (size_t)total;
    if (total == 0)
        return 0;
    dec_store(out, 0, (uint64_t)first, is32);
    uint64_t prev = (uint64_t)first;
    size_t got = 1;
    while (got < total)
        if ((rc = dec_delta_block(r, is32, block / mb, mb, out, total, &got, &prev)) != 0)
            return rc;
    return 0;
}

int pqt_delta_decode_i32(const uint8_t *p, size_t len, int32_t *out, size_t cap, size_t *n_out,
                         size_t *used)
{
    if ((len > 0 && p == NULL) || (cap > 0 && out == NULL) || n_out == NULL)
        return PQ_EINVAL;
    dec_rd r = {p, len, 0};
    int rc = dec_delta(&r, true, out, cap, n_out);
    if (rc == 0)
        dec_set_used(used, r.pos);
    return rc;
}

int pqt_delta_decode_i64(const uint8_t *p, size_t len, int64_t *out, size_t cap, size_t *n_out,
                         size_t *used)
{
    if ((len > 0 && p == NULL) || (cap > 0 && out == NULL) || n_out == NULL)
        return PQ_EINVAL;
    dec_rd r = {p, len, 0};
    int rc = dec_delta(&r, false, out, cap, n_out);
    if (rc == 0)
        dec_set_used(used, r.pos);
    return rc;
}

/* Decodes an int32 delta stream into a malloc'd array: a counting pass
 * first, so the allocation is sized by data that actually decodes. */
static int dec_delta_alloc32(dec_rd *r, int32_t **vals, size_t *n)
{
    dec_rd probe = *r;
    size_t count;
    *vals = NULL;
    int rc = dec_delta(&probe, true, NULL, SIZE_MAX, &count);
    if (rc != 0)
        return rc;
    if (count > DEC_MAX_OUTPUT / sizeof(int32_t))
        return PQ_ELIMIT;
    *vals = malloc(count ? count * sizeof(int32_t) : 1);
    if (*vals == NULL)
        return PQ_ENOMEM;
    rc = dec_delta(r, true, *vals, count, n);
    if (rc != 0) {
        free(*vals);
        *vals = NULL;
    }
    return rc;
}

/* The data section of DELTA_LENGTH_BYTE_ARRAY: n values back to back. */
static int dec_concat(dec_rd *r, const int32_t *lens, size_t n, pqt_bytes *out)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (lens[i] < 0 || (size_t)lens[i] > dec_left(r) - total)
            return PQ_EPARSE;
        total += (size_t)lens[i];
    }
    int rc = dec_bytes_alloc(out, n, total);
    if (rc != 0)
        return rc;
    if (total > 0)
        memcpy(out->heap, r->p + r->pos, total);
    for (size_t i = 0; i < n; i++)
        out->off[i + 1] = out->off[i] + (uint32_t)lens[i];
    r->pos += total;
    return 0;
}

static int dec_delta_length(dec_rd *r, pqt_bytes *out)
{
    int32_t *lens;
    size_t n;
    int rc = dec_delta_alloc32(r, &lens, &n);
    if (rc == 0)
        rc = dec_concat(r, lens, n, out);
    free(lens);
    return rc;
}

int pqt_delta_length_decode(const uint8_t *p, size_t len, pqt_bytes *out, size_t *used)
{
    memset(out, 0, sizeof *out);
    if (len > 0 && p == NULL)
        return PQ_EINVAL;
    dec_rd r = {p, len, 0};
    int rc = dec_delta_length(&r, out);
    if (rc == 0)
        dec_set_used(used, r.pos);
    return rc;
}

/* Value i is the first pre[i] bytes of value i - 1, then suffix i. */
static int dec_front_coded(const int32_t *pre, const pqt_bytes *suf, pqt_bytes *out)
{
    size_t total = 0, prev_len = 0;
    for (size_t i = 0; i < suf->n; i++) {
        if (pre[i] < 0 || (size_t)pre[i] > prev_len)
            return PQ_EPARSE; /* also rejects a non-zero first prefix */
        prev_len = (size_t)pre[i] + (suf->off[i + 1] - suf->off[i]);
        if (prev_len > DEC_MAX_OUTPUT - total)
            return PQ_ELIMIT;
        total += prev_len;
    }
    int rc = dec_bytes_alloc(out, suf->n, total);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < suf->n; i++) {
        uint8_t *dst = out->heap + out->off[i];
        uint32_t slen = suf->off[i + 1] - suf->off[i];
        if (pre[i] > 0)
            memcpy(dst, out->heap + out->off[i - 1], (size_t)pre[i]);
        if (slen > 0)
            memcpy(dst + pre[i], suf->heap + suf->off[i], slen);
        out->off[i + 1] = out->off[i] + (uint32_t)pre[i] + slen;
    }
    return 0;
}

int pqt_delta_bytes_decode(const uint8_t *p, size_t len, pqt_bytes *out, size_t *used)
{
    memset(out, 0, sizeof *out);
    if (len > 0 && p == NULL)
        return PQ_EINVAL;
    dec_rd r = {p, len, 0};
    int32_t *pre;
    size_t npre;
    pqt_bytes suf = {0};
    int rc = dec_delta_alloc32(&r, &pre, &npre);
    if (rc != 0)
        return rc;
    rc = dec_delta_length(&r, &suf);
    if (rc == 0 && suf.n != npre)
        rc = PQ_EPARSE;
    if (rc == 0)
        rc = dec_front_coded(pre, &suf, out);
    free(pre);
    pqt_bytes_free(&suf);
    if (rc == 0)
        dec_set_used(used, r.pos);
    return rc;
}

int pqt_bss_decode(const uint8_t *p, size_t len, void *out, size_t n, size_t width,
                   size_t *used)
{
    if (width == 0 || (len > 0 && p == NULL) || (n > 0 && out == NULL) || n > SIZE_MAX / width)
        return PQ_EINVAL;
    if (len < n * width)
        return PQ_EPARSE;
    uint8_t *dst = out;
    for (size_t k = 0; k < width; k++)
        for (size_t i = 0; i < n; i++)
            dst[i * width + k] = p[k * n + i];
    dec_set_used(used, n * width);
    return 0;
}

uint64_t pqt_seed(void)
{
    const char *env = getenv("PQ_TEST_SEED");
    if (env != NULL && *env != '\0')
        return strtoull(env, NULL, 0);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000007u ^ (uint64_t)ts.tv_nsec;
}

uint64_t pqt_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

uint64_t pqt_xorshift64(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

uint64_t pqt_rng_next(pqt_rng *r)
{
    return pqt_splitmix64(&r->state);
}

uint64_t pqt_test_seed(const char *test, uint64_t fallback)
{
    const char *env = getenv("PQ_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : fallback;
    printf("[ seed     ] %s: PQ_TEST_SEED=0x%llx\n", test, (unsigned long long)seed);
    return seed;
}

/* Modulo bias is irrelevant for test data. */
uint64_t pqt_rng_below(pqt_rng *r, uint64_t bound)
{
    return pqt_rng_next(r) % bound;
}

static size_t gen_len(pqt_rng *rng, pqt_gen_kind kind)
{
    switch (kind) {
    case PQT_GEN_EMPTY: return 0;
    case PQT_GEN_LONG: return pqt_rng_below(rng, 4) == 0 ? pqt_rng_below(rng, 70001) : 0;
    default: return pqt_rng_below(rng, 10) == 0 ? 0 : pqt_rng_below(rng, 21);
    }
}

/* PREFIXES: keep a random-length prefix of the previous value and add a
 * short suffix over a small alphabet; one value in eight is a repeat.
 * Lengths stay at most GEN_MAX_PREFIXED so the heap size is known. */
#define GEN_MAX_PREFIXED 64
static size_t gen_prefixed(pqt_rng *rng, uint8_t *dst, const uint8_t *prev, size_t prev_len)
{
    size_t keep = pqt_rng_below(rng, 8) == 0 ? prev_len : pqt_rng_below(rng, prev_len + 1);
    size_t add = keep == prev_len && prev_len > 0 ? 0 : pqt_rng_below(rng, 9);
    if (keep + add > GEN_MAX_PREFIXED)
        keep = GEN_MAX_PREFIXED - add;
    if (keep > 0)
        memcpy(dst, prev, keep);
    for (size_t k = 0; k < add; k++)
        dst[keep + k] = (uint8_t)('a' + pqt_rng_below(rng, 4));
    return keep + add;
}

int pqt_gen_bytes(pqt_rng *rng, pqt_gen_kind kind, size_t n, pqt_bytes *out)
{
    size_t cap = kind == PQT_GEN_LONG ? n * 70000
                 : kind == PQT_GEN_PREFIXES ? n * GEN_MAX_PREFIXED : n * 20;
    int rc = dec_bytes_alloc(out, n, cap);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        uint8_t *dst = out->heap + out->off[i];
        size_t len;
        if (kind == PQT_GEN_PREFIXES) {
            const uint8_t *prev = i ? out->heap + out->off[i - 1] : NULL;
            len = gen_prefixed(rng, dst, prev, i ? out->off[i] - out->off[i - 1] : 0);
        } else {
            len = gen_len(rng, kind);
            for (size_t k = 0; k < len; k++)
                dst[k] = (uint8_t)pqt_rng_next(rng);
        }
        out->off[i + 1] = out->off[i] + (uint32_t)len;
    }
    return 0;
}
