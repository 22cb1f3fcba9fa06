/* ndv.h - an estimate of the number of distinct values in a column chunk,
 * for sizing its bloom filter when no complete dictionary counted them
 * exactly (the dictionary gave up: too many values, or too many bytes).
 *
 * HyperLogLog (Flajolet et al., 2007) over the same 64-bit XXH64 hashes
 * the bloom filter uses, with 4096 one-byte registers: a standard error
 * of 1.04 / sqrt(4096) = 1.6%, and linear counting below 2.5 x 4096,
 * where HyperLogLog's raw estimate is biased. No allocation.
 *
 *     pq_ndv n;
 *     pq_ndv_init(&n);
 *     for each value: pq_ndv_add(&n, hash);
 *     uint64_t d = pq_ndv_estimate(&n); */
#ifndef PQ_NDV_H
#define PQ_NDV_H

#include <stdint.h>

#define PQ_NDV_BITS 12
#define PQ_NDV_REGISTERS (1u << PQ_NDV_BITS)

typedef struct pq_ndv {
    uint8_t reg[PQ_NDV_REGISTERS];
} pq_ndv;

void pq_ndv_init(pq_ndv *n);
void pq_ndv_add(pq_ndv *n, uint64_t hash);
uint64_t pq_ndv_estimate(const pq_ndv *n);

#endif
