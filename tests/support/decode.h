/* decode.h - test-only decoders for every value encoding the writer emits
 * (Encodings.md: PLAIN, RLE/bit-packing hybrid, deprecated BIT_PACKED,
 * DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
 * BYTE_STREAM_SPLIT). Written independently of writer/ as a second opinion,
 * and simple rather than fast.
 *
 * Every read is bounds-checked: truncated or corrupt input gives PQ_EPARSE,
 * never an out-of-bounds read; more values than the caller's array holds
 * gives PQ_ELIMIT. `used` (may be NULL) receives the bytes consumed, so a
 * caller can check that an encoding ends where its page does.
 *
 * Also the seeded PRNG and data generators the round-trip tests share. */
#ifndef PQ_TEST_DECODE_H
#define PQ_TEST_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Decoded byte arrays: value i is heap[off[i] .. off[i+1]), off[0] == 0,
 * the same shape the encoders take. Owned: release with pqt_bytes_free. */
typedef struct pqt_bytes {
    uint8_t *heap;
    uint32_t *off;
    size_t n;
} pqt_bytes;

void pqt_bytes_free(pqt_bytes *b);
/* Same count and the same bytes in every value (offsets may differ). */
int pqt_bytes_equal(const pqt_bytes *a, const pqt_bytes *b);

/* Hybrid RLE/bit-packed, no length prefix: exactly n values of bit_width
 * (0..32). Padding values of the last bit-packed run are skipped. */
int pqt_rle_decode(const uint8_t *p, size_t len, int bit_width, uint32_t *out, size_t n,
                   size_t *used);
/* Deprecated BIT_PACKED (MSB-first), bit_width 0..16. */
int pqt_bitpacked_decode(const uint8_t *p, size_t len, int bit_width, uint16_t *out, size_t n,
                         size_t *used);

/* PLAIN. Booleans come back as 0/1 bytes; fixed-width values as raw
 * little-endian bytes (width each). */
int pqt_plain_decode_bool(const uint8_t *p, size_t len, uint8_t *out, size_t n, size_t *used);
int pqt_plain_decode_fixed(const uint8_t *p, size_t len, void *out, size_t n, size_t width,
                           size_t *used);
int pqt_plain_decode_bytes(const uint8_t *p, size_t len, size_t n, pqt_bytes *out,
                           size_t *used);

/* DELTA_BINARY_PACKED. The value count comes from the header: *n_out; at
 * most cap values. The int32 variant rejects miniblocks wider than 32 bits
 * and wraps at 32 bits, as a conforming int32 reader does. Layouts are
 * accepted down to 8 values per miniblock (the spec's own examples use a
 * block of 8, which files may not). */
int pqt_delta_decode_i32(const uint8_t *p, size_t len, int32_t *out, size_t cap, size_t *n_out,
                         size_t *used);
int pqt_delta_decode_i64(const uint8_t *p, size_t len, int64_t *out, size_t cap, size_t *n_out,
                         size_t *used);

/* DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY; the count comes from the
 * encoded data. Output is capped at 1 GiB (a tiny corrupt DELTA_BYTE_ARRAY
 * could otherwise claim huge repeated prefixes). */
int pqt_delta_length_decode(const uint8_t *p, size_t len, pqt_bytes *out, size_t *used);
int pqt_delta_bytes_decode(const uint8_t *p, size_t len, pqt_bytes *out, size_t *used);

/* BYTE_STREAM_SPLIT of n values of `width` bytes. */
int pqt_bss_decode(const uint8_t *p, size_t len, void *out, size_t n, size_t width,
                   size_t *used);

/* Round-trip tests draw their data from this seeded PRNG (splitmix64) so
 * a failure can be replayed: the seed is PQ_TEST_SEED from the environment
 * if set, else taken from the clock, and PQT_CHECK prints it on failure. */
typedef struct pqt_rng {
    uint64_t state;
} pqt_rng;

uint64_t pqt_seed(void);
uint64_t pqt_rng_next(pqt_rng *r);
/* The same splitmix64 step on a bare state word. */
uint64_t pqt_splitmix64(uint64_t *state);
/* xorshift64 (13, 7, 17) on a state word that must not be 0. */
uint64_t pqt_xorshift64(uint64_t *state);
/* A test's fixed seed: PQ_TEST_SEED when set, else fallback; printed as
 * "[ seed     ] TEST: PQ_TEST_SEED=0x..." so a failure can be replayed. */
uint64_t pqt_test_seed(const char *test, uint64_t fallback);
/* Uniform in [0, bound); bound > 0. */
uint64_t pqt_rng_below(pqt_rng *r, uint64_t bound);

/* Random byte arrays for round trips. PREFIXES shares prefixes of random
 * length with the previous value (and repeats some outright), the case
 * DELTA_BYTE_ARRAY exists for; LONG mixes values up to 70000 bytes. */
typedef enum pqt_gen_kind {
    PQT_GEN_RANDOM,
    PQT_GEN_EMPTY,
    PQT_GEN_PREFIXES,
    PQT_GEN_LONG,
    PQT_GEN_KINDS
} pqt_gen_kind;

int pqt_gen_bytes(pqt_rng *rng, pqt_gen_kind kind, size_t n, pqt_bytes *out);

/* For cmocka tests (include cmocka.h first). */
#ifdef cmocka_unit_test
#include <inttypes.h>
#define PQT_CHECK(cond, seed)                                                            \
    do {                                                                                 \
        if (!(cond))                                                                     \
            fail_msg("%s:%d: %s failed; replay with PQ_TEST_SEED=%" PRIu64, __FILE__,    \
                     __LINE__, #cond, (uint64_t)(seed));                                 \
    } while (0)
#endif

#endif
