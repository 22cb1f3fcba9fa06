/* bss.h - BYTE_STREAM_SPLIT encoder (Encodings.md, "Byte Stream Split:
 * (BYTE_STREAM_SPLIT = 9)"). */
#ifndef PQ_BSS_H
#define PQ_BSS_H

#include <stddef.h>

#include "buf.h"

/* Scatters byte k of each of the n `width`-byte values into stream k and
 * appends the width streams back to back (n * width bytes). Any width >= 1
 * works: 4 and 8 for FLOAT/DOUBLE/INT32/INT64, 2 for FLOAT16, any
 * FIXED_LEN_BYTE_ARRAY length. Leaves `out` unchanged on error. */
int pq_bss_encode(pq_buf *out, const void *vals, size_t n, size_t width);

#endif
