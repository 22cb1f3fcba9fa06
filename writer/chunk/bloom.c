/* bloom.c - Split Block Bloom Filter (BloomFilter.md): block insert/check
 * with the eight salts, block selection from the hash's upper 32 bits,
 * XXH64 (seed 0) of PLAIN-encoded values, sizing from the SBBF
 * false-positive model, and the BloomFilterHeader + bitset layout. */
#include "bloom.h"
#include "thrift.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#define XXH_INLINE_ALL /* XXH64 inlined: one call per filtered value, not two */
#include <xxhash.h>

/* BloomFilter.md, "Technical Approach": odd constants, one per word. */
static const uint32_t pq_bloom_salt[8] = {
    0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
    0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U
};

/* ---- sizing -------------------------------------------------------------- */

/* P(false positive) for one block holding k values: each of the 8 words
 * must already have the probed bit, and a word has that bit unset with
 * probability (31/32)^k. */
static double bloom_block_fpp(double k)
{
    return pow(1.0 - pow(31.0 / 32.0, k), 8.0);
}

/* With many blocks, the number of values landing in one block is Poisson
 * with mean lambda = ndv / blocks; the filter's fpp is the Poisson-weighted
 * block fpp. This reproduces the spec's table (10.5 bits/value -> 1.0 %,
 * 16.9 -> 0.10 %), which the closed form -8/ln(1 - p^(1/8)) used by some
 * writers does not: it under-sizes by about 8 % at 1 %. */
double pq_bloom_expected_fpp(size_t num_bytes, uint64_t ndv)
{
    double blocks = (double)(num_bytes / PQ_BLOOM_BLOCK_BYTES);
    if (blocks < 1.0)
        return 1.0;
    double lambda = (double)ndv / blocks;
    if (lambda == 0.0)
        return 0.0;
    if (lambda > 4096.0) /* every bit of every block is set by then */
        return 1.0;
    double spread = 12.0 * sqrt(lambda) + 30.0;
    double lo = floor(fmax(0.0, lambda - spread));
    double hi = ceil(lambda + spread);
    double sum = 0.0;
    /* log-space terms: exp(-lambda) underflows long before lambda = 4096.
     * lgamma_r, not lgamma: lgamma sets the global signgam, a data race
     * when row groups are encoded on several threads. */
    for (double k = lo; k <= hi; k += 1.0) {
        int sign;
        double logp = -lambda + k * log(lambda) - lgamma_r(k + 1.0, &sign);
        sum += exp(logp) * bloom_block_fpp(k);
    }
    return sum > 1.0 ? 1.0 : sum;
}

/* The smallest whole number of blocks that reaches fpp, not the next
 * power of two: the spec's block index is a multiply-shift
 * ((h >> 32) * z >> 32), valid for any block count z, and rounding up to a
 * power of two costs up to twice the bytes for an fpp far below the one
 * asked for (200,000 values at 1 %: 512 KiB for an fpp of 0.01 %, where
 * 262 KB give 1 %). The expected fpp falls as blocks grow, so a binary
 * search finds the size. */
size_t pq_bloom_optimal_bytes(uint64_t ndv, double fpp)
{
    if (!(fpp > 0.0 && fpp < 1.0)) /* also rejects NaN */
        return 0;
    size_t lo = PQ_BLOOM_MIN_BYTES / PQ_BLOOM_BLOCK_BYTES;
    size_t hi = PQ_BLOOM_MAX_BYTES / PQ_BLOOM_BLOCK_BYTES;
    if (pq_bloom_expected_fpp(hi * PQ_BLOOM_BLOCK_BYTES, ndv) > fpp)
        return PQ_BLOOM_MAX_BYTES;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pq_bloom_expected_fpp(mid * PQ_BLOOM_BLOCK_BYTES, ndv) > fpp)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo * PQ_BLOOM_BLOCK_BYTES;
}

/* ---- the filter ---------------------------------------------------------- */

int pq_bloom_init(pq_bloom *b, size_t num_bytes, pq_err *err)
{
    b->words = NULL;
    b->num_bytes = 0;
    b->num_blocks = 0;
    if (num_bytes < PQ_BLOOM_MIN_BYTES || num_bytes > PQ_BLOOM_MAX_BYTES ||
        num_bytes % PQ_BLOOM_BLOCK_BYTES != 0)
        return pq_err_set(err, PQ_EINVAL,
                          "bloom filter size %zu bytes: must be a multiple of %u "
                          "between %zu and %zu", num_bytes, PQ_BLOOM_BLOCK_BYTES,
                          (size_t)PQ_BLOOM_MIN_BYTES, PQ_BLOOM_MAX_BYTES);
    b->words = calloc(num_bytes / 4, sizeof(uint32_t));
    if (b->words == NULL)
        return pq_err_set(err, PQ_ENOMEM, "bloom filter: cannot allocate %zu bytes",
                          num_bytes);
    b->num_bytes = num_bytes;
    b->num_blocks = (uint32_t)(num_bytes / PQ_BLOOM_BLOCK_BYTES);
    return 0;
}

void pq_bloom_free(pq_bloom *b)
{
    free(b->words);
    b->words = NULL;
    b->num_bytes = 0;
    b->num_blocks = 0;
}

void pq_bloom_reset(pq_bloom *b)
{
    if (b->words != NULL)
        memset(b->words, 0, b->num_bytes);
}

/* Multiply-shift instead of modulo, exactly as the spec writes it. */
static inline uint32_t *bloom_block(const pq_bloom *b, uint64_t h)
{
    assert(b->words != NULL && b->num_blocks > 0);
    uint64_t i = ((h >> 32) * (uint64_t)b->num_blocks) >> 32;
    return b->words + i * 8;
}

/* Unrolled: the loop's own counting cost as much as its eight ORs, on
 * every value of a filtered column. */
void pq_bloom_insert_hash(pq_bloom *b, uint64_t h)
{
    uint32_t *block = bloom_block(b, h);
    uint32_t key = (uint32_t)h;
#define PQ_BLOOM_SET(i) (block[i] |= UINT32_C(1) << ((key * pq_bloom_salt[i]) >> 27))
    PQ_BLOOM_SET(0); PQ_BLOOM_SET(1); PQ_BLOOM_SET(2); PQ_BLOOM_SET(3);
    PQ_BLOOM_SET(4); PQ_BLOOM_SET(5); PQ_BLOOM_SET(6); PQ_BLOOM_SET(7);
#undef PQ_BLOOM_SET
}

void pq_bloom_insert_hashes(pq_bloom *b, const uint64_t *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        pq_bloom_insert_hash(b, h[i]);
}

bool pq_bloom_check_hash(const pq_bloom *b, uint64_t h)
{
    const uint32_t *block = bloom_block(b, h);
    uint32_t key = (uint32_t)h;
    for (int i = 0; i < 8; i++)
        if ((block[i] & (UINT32_C(1) << ((key * pq_bloom_salt[i]) >> 27))) == 0)
            return false;
    return true;
}

/* ---- hashing ------------------------------------------------------------- */

/* PLAIN is little-endian; spell the bytes out so big-endian hosts hash the
 * same bytes the spec (and every other writer) does. */
static uint64_t bloom_hash_le(uint64_t v, int width)
{
    uint8_t le[8];
    for (int i = 0; i < width; i++)
        le[i] = (uint8_t)(v >> (8 * i));
    return XXH64(le, (size_t)width, 0);
}

uint64_t pq_bloom_hash_i32(int32_t v) { return bloom_hash_le((uint32_t)v, 4); }
uint64_t pq_bloom_hash_i64(int64_t v) { return bloom_hash_le((uint64_t)v, 8); }

uint64_t pq_bloom_hash_float(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bloom_hash_le(bits, 4);
}

uint64_t pq_bloom_hash_double(double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bloom_hash_le(bits, 8);
}

uint64_t pq_bloom_hash_bytes(const void *p, size_t n)
{
    static const uint8_t empty = 0; /* XXH64 accepts NULL only with n == 0 */
    return XXH64(n ? p : &empty, n, 0);
}

uint64_t pq_bloom_hash_fixed(const void *p, size_t n)
{
    return pq_bloom_hash_bytes(p, n);
}

/* ---- serialization ------------------------------------------------------- */

/* A union member whose type is an empty struct: field fid { field 1 {} }. */
static void bloom_union_empty(pq_thrift *t, int16_t fid)
{
    pq_thrift_field_struct_begin(t, fid);
    pq_thrift_field_struct_begin(t, 1);
    pq_thrift_struct_end(t);
    pq_thrift_struct_end(t);
}

static int bloom_write_header(const pq_bloom *b, pq_buf *out)
{
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    pq_thrift_field_i32(&t, 1, (int32_t)b->num_bytes); /* <= 128 MiB */
    bloom_union_empty(&t, 2); /* algorithm: BLOCK */
    bloom_union_empty(&t, 3); /* hash: XXHASH */
    bloom_union_empty(&t, 4); /* compression: UNCOMPRESSED */
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}

static int bloom_write_bitset(const pq_bloom *b, pq_buf *out)
{
    if (pq_buf_reserve(out, b->num_bytes) != 0)
        return PQ_ENOMEM;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(out->data + out->len, b->words, b->num_bytes);
    out->len += b->num_bytes;
#else
    for (size_t i = 0; i < b->num_bytes / 4; i++)
        pq_buf_put_u32le(out, b->words[i]); /* cannot fail: reserved */
#endif
    return 0;
}

int pq_bloom_write(const pq_bloom *b, pq_buf *out)
{
    if (b->words == NULL)
        return PQ_ESTATE;
    int rc = bloom_write_header(b, out);
    return rc != 0 ? rc : bloom_write_bitset(b, out);
}

int pq_bloom_write_split(const pq_bloom *b, pq_buf *hdr, pq_buf *bitset)
{
    if (b->words == NULL)
        return PQ_ESTATE;
    int rc = bloom_write_header(b, hdr);
    return rc != 0 ? rc : bloom_write_bitset(b, bitset);
}
