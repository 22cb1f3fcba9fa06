/* plain.h - PLAIN encoder for every physical type (Encodings.md,
 * "Plain: (PLAIN = 0)"). Functions append to `out` and leave it unchanged
 * on error. */
#ifndef PQ_PLAIN_H
#define PQ_PLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

/* One byte per value (0 = false, anything else = true), packed LSB-first
 * into ceil(n / 8) bytes, the last one zero-padded. */
int pq_plain_encode_bool(pq_buf *out, const uint8_t *vals, size_t n);

/* INT32, INT64, INT96, FLOAT, DOUBLE and FIXED_LEN_BYTE_ARRAY: n values of
 * `width` bytes each, already in the host's (little-endian) order. */
int pq_plain_encode_fixed(pq_buf *out, const void *vals, size_t n, size_t width);

/* BYTE_ARRAY: value i is heap[off[i] .. off[i+1]); each is written as a
 * 4-byte little-endian length followed by its bytes. PQ_EINVAL if the
 * offsets decrease. */
int pq_plain_encode_bytes(pq_buf *out, const uint8_t *heap, const uint32_t *off, size_t n);

#endif
