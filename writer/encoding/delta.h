/* delta.h - DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY and
 * DELTA_BYTE_ARRAY encoders (Encodings.md, "DELTA_BINARY_PACKED = 5",
 * "DELTA_LENGTH_BYTE_ARRAY = 6", "DELTA_BYTE_ARRAY = 7"). Functions append
 * to `out` and leave it unchanged on error. None allocates scratch memory:
 * a block's deltas live on the stack. */
#ifndef PQ_DELTA_H
#define PQ_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* The layout every mainstream writer uses: 128-value blocks of 4
 * miniblocks of 32 values. */
#define PQ_DELTA_BLOCK_SIZE 128
#define PQ_DELTA_MINIBLOCKS 4
/* Largest block pq_delta_encode_i64_layout accepts (bounds stack use). */
#define PQ_DELTA_MAX_BLOCK 1024

/* Deltas wrap in two's complement at the type's width, so int32 data never
 * needs more than 32 bits per packed value (the spec forbids more). */
int pq_delta_encode_i32(pq_buf *out, const int32_t *v, size_t n);
int pq_delta_encode_i64(pq_buf *out, const int64_t *v, size_t n);

/* DELTA_BINARY_PACKED (64-bit) with a chosen layout. block_size must be a
 * multiple of `miniblocks`, at most PQ_DELTA_MAX_BLOCK, with a multiple of
 * 8 values per miniblock. The spec requires multiples of 128 and 32 in
 * files; smaller layouts exist to reproduce the spec's own examples. */
int pq_delta_encode_i64_layout(pq_buf *out, const int64_t *v, size_t n,
                               uint32_t block_size, uint32_t miniblocks);

/* Value i is heap[off[i] .. off[i+1]). Lengths are DELTA_BINARY_PACKED as
 * int32, so a value longer than INT32_MAX or decreasing offsets give
 * PQ_EINVAL. */
int pq_delta_length_encode(pq_buf *out, const uint8_t *heap, const uint32_t *off, size_t n);
int pq_delta_bytes_encode(pq_buf *out, const uint8_t *heap, const uint32_t *off, size_t n);

/* DELTA_BYTE_ARRAY for FIXED_LEN_BYTE_ARRAY: n values of `width` bytes back
 * to back. Lengths are still written, as the spec says. */
int pq_delta_bytes_encode_fixed(pq_buf *out, const uint8_t *vals, size_t n, size_t width);

#endif
