/* rle.h - RLE / bit-packing hybrid and the deprecated BIT_PACKED encoder
 * (Encodings.md, "RLE = 3" and "BIT_PACKED = 4"). Used for definition and
 * repetition levels, booleans and dictionary indices. Every function
 * appends to `out` and, on error, leaves `out` as it found it. */
#ifndef PQ_RLE_H
#define PQ_RLE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* Bits needed to represent max_value (0..64); 0 for 0. */
int pq_rle_bit_width(uint64_t max_value);

/* Hybrid encoding without the 4-byte length prefix (the page decides
 * whether to prepend one). bit_width 0..32; every value must fit in it,
 * else PQ_EINVAL. */
int pq_rle_encode_u32(pq_buf *out, const uint32_t *vals, size_t n, int bit_width);
int pq_rle_encode_u16(pq_buf *out, const uint16_t *vals, size_t n, int bit_width);

/* Deprecated BIT_PACKED: MSB-first, last byte zero-padded. bit_width
 * 0..16. */
int pq_bitpacked_encode_u16(pq_buf *out, const uint16_t *vals, size_t n, int bit_width);

/* Packs `count` values of bit_width (0..64) bits LSB-first into dst, as the
 * hybrid's bit-packed runs and DELTA_BINARY_PACKED miniblocks both do.
 * Writes exactly ceil(count * bit_width / 8) bytes; values must already fit
 * in bit_width bits. */
void pq_rle_pack_lsb(uint8_t *dst, const uint64_t *vals, size_t count, int bit_width);

#endif
