/* gen_rng.c - the seeded PRNG every value comes from (xoshiro256**
 * seeded by splitmix64): the same seed gives the same files. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gen.h"

static uint64_t rng_s[4];

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void rng_seed(uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng_s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rnd(void)
{
    uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;
    rng_s[2] ^= rng_s[0];
    rng_s[3] ^= rng_s[1];
    rng_s[1] ^= rng_s[2];
    rng_s[0] ^= rng_s[3];
    rng_s[2] ^= t;
    rng_s[3] = rotl(rng_s[3], 45);
    return r;
}

uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }
/* [lo, hi] inclusive */
int64_t rnd_range(int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span == UINT64_MAX)
        return (int64_t)rnd();
    return (int64_t)((uint64_t)lo + rnd_below(span + 1));
}
int pct(int p) { return (int)rnd_below(100) < p; }
