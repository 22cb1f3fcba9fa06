/* ndv.c - HyperLogLog distinct-value estimate (ndv.h). */
#include "ndv.h"

#include <math.h>
#include <string.h>

void pq_ndv_init(pq_ndv *n)
{
    memset(n->reg, 0, sizeof n->reg);
}

/* The top PQ_NDV_BITS bits pick the register; the register keeps the
 * largest position of the first 1 bit seen in the remaining bits. */
void pq_ndv_add(pq_ndv *n, uint64_t hash)
{
    uint32_t r = (uint32_t)(hash >> (64 - PQ_NDV_BITS));
    uint64_t rest = hash << PQ_NDV_BITS;
    uint8_t rank = rest == 0 ? (uint8_t)(64 - PQ_NDV_BITS + 1)
                             : (uint8_t)(__builtin_clzll(rest) + 1);
    if (rank > n->reg[r])
        n->reg[r] = rank;
}

uint64_t pq_ndv_estimate(const pq_ndv *n)
{
    const double m = PQ_NDV_REGISTERS;
    const double alpha = 0.7213 / (1.0 + 1.079 / m);
    double sum = 0;
    unsigned zeros = 0;
    for (unsigned i = 0; i < PQ_NDV_REGISTERS; i++) {
        sum += ldexp(1.0, -(int)n->reg[i]);
        zeros += n->reg[i] == 0;
    }
    double e = alpha * m * m / sum;
    if (e <= 2.5 * m && zeros > 0)
        e = m * log(m / zeros); /* linear counting: exact-ish while registers are empty */
    return (uint64_t)(e + 0.5);
}
