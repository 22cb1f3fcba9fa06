/* memeq.h - pq_memeq, byte equality of two short strings, inline.
 *
 * Why not memcmp: the hot compares (a JSON key against the predicted one,
 * a dictionary probe against its entry) are of a few to a few dozen bytes
 * and nearly always equal, and only equality is wanted. A call to glibc's
 * memcmp cost about 35 instructions each there (the call, its length
 * dispatch, the ordering result), 2 to 3% of a convert; two overlapping
 * 8-byte loads settle 8 to 16 bytes in a handful. Long strings still go to
 * memcmp, which is faster per byte. */
#ifndef PQ_MEMEQ_H
#define PQ_MEMEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint64_t pq_memeq_load8(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline uint32_t pq_memeq_load4(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

/* Whether the n bytes at a and at b are equal. Reads only those bytes
 * (the loads overlap inside them, never past them); n == 0 reads none, so
 * either pointer may then be NULL. */
static inline bool pq_memeq(const void *a, const void *b, size_t n)
{
    const uint8_t *x = a, *y = b;
    if (n > 32)
        return memcmp(x, y, n) == 0;
    if (n >= 8) {
        for (; n > 8; n -= 8, x += 8, y += 8)
            if (pq_memeq_load8(x) != pq_memeq_load8(y))
                return false;
        return pq_memeq_load8(x + n - 8) == pq_memeq_load8(y + n - 8);
    }
    if (n >= 4)
        return pq_memeq_load4(x) == pq_memeq_load4(y) &&
               pq_memeq_load4(x + n - 4) == pq_memeq_load4(y + n - 4);
    if (n == 0)
        return true;
    return x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1];
}

#endif
