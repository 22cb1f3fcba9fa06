/* bloom.h - Split Block Bloom Filter (BloomFilter.md, "Technical Approach"
 * and "File Format"): sizing, XXH64 hashing of PLAIN-encoded values,
 * insert/check, and serialization as BloomFilterHeader + bitset.
 *
 * A column-chunk writer typically does:
 *     pq_bloom_init(&b, pq_bloom_optimal_bytes(ndv, fpp), err);
 *     for each value: pq_bloom_insert_hash(&b, pq_bloom_hash_i64(v));
 *     pq_bloom_write(&b, out);                 (plaintext column)
 *     pq_bloom_write_split(&b, &hdr, &bits);   (encrypted column: two modules)
 *     pq_bloom_reset(&b);                      (next row group, same size)
 * The pq_bloom struct is caller-owned; pq_bloom_free releases the bitset. */
#ifndef PQ_BLOOM_H
#define PQ_BLOOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define PQ_BLOOM_BLOCK_BYTES 32u
/* Sizing bounds: one block at least; 128 MiB at most (parquet-mr and Arrow
 * use the same upper bound, so every reader accepts our filters). */
#define PQ_BLOOM_MIN_BYTES PQ_BLOOM_BLOCK_BYTES
#define PQ_BLOOM_MAX_BYTES ((size_t)128 * 1024 * 1024)

typedef struct pq_bloom {
    uint32_t *words;   /* 8 words per block, host order; LE when written */
    size_t num_bytes;  /* bitset size: num_blocks * 32 */
    uint32_t num_blocks;
} pq_bloom;

/* Bitset size for ndv distinct values at false-positive probability fpp:
 * the smallest multiple of the 32-byte block whose expected fpp is at most
 * fpp, clamped to [PQ_BLOOM_MIN_BYTES, PQ_BLOOM_MAX_BYTES]. Returns 0 if
 * fpp is not in (0, 1). */
size_t pq_bloom_optimal_bytes(uint64_t ndv, double fpp);

/* The SBBF false-positive probability after ndv inserts into num_bytes
 * (the model behind the spec's sizing table). */
double pq_bloom_expected_fpp(size_t num_bytes, uint64_t ndv);

/* num_bytes must be a multiple of 32 in [PQ_BLOOM_MIN_BYTES,
 * PQ_BLOOM_MAX_BYTES]; a power of two is customary but not required.
 * Returns 0, PQ_EINVAL or PQ_ENOMEM. */
int pq_bloom_init(pq_bloom *b, size_t num_bytes, pq_err *err);
void pq_bloom_free(pq_bloom *b);
/* Clears all bits, keeping the size (reuse across row groups). */
void pq_bloom_reset(pq_bloom *b);

void pq_bloom_insert_hash(pq_bloom *b, uint64_t h);
void pq_bloom_insert_hashes(pq_bloom *b, const uint64_t *h, size_t n);
bool pq_bloom_check_hash(const pq_bloom *b, uint64_t h);

/* XXH64 (seed 0) of the value's PLAIN encoding. BYTE_ARRAY hashes only the
 * bytes, without PLAIN's 4-byte length prefix (as parquet-mr, Arrow and
 * parquet-rs do, and as bloom_filter.xxhash.bin confirms). Floats hash
 * their IEEE bits as-is, so -0.0 and +0.0 (and NaN payloads) differ. */
uint64_t pq_bloom_hash_i32(int32_t v);
uint64_t pq_bloom_hash_i64(int64_t v);
uint64_t pq_bloom_hash_float(float v);
uint64_t pq_bloom_hash_double(double v);
uint64_t pq_bloom_hash_bytes(const void *p, size_t n);   /* BYTE_ARRAY */
uint64_t pq_bloom_hash_fixed(const void *p, size_t n);   /* FLBA, INT96 */

/* Appends the Thrift BloomFilterHeader (numBytes, BLOCK, XXHASH,
 * UNCOMPRESSED) followed by the bitset. Returns 0, PQ_ENOMEM, or
 * PQ_ESTATE if b was never initialized. */
int pq_bloom_write(const pq_bloom *b, pq_buf *out);
/* Appends the header to hdr and the bitset to bitset: encrypted columns
 * encrypt them as two modules (BloomFilter Header = 8, Bitset = 9). */
int pq_bloom_write_split(const pq_bloom *b, pq_buf *hdr, pq_buf *bitset);

#endif
