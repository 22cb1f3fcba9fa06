/* decompress.h - test-only page decompression for every codec parqd
 * writes (Compression.md), so tests and the page walker can check what
 * the writer produced. Not linked into the daemon. */
#ifndef PQT_DECOMPRESS_H
#define PQT_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "types.h"

/* Decompresses src[0..n) into exactly dst_len bytes (the page header's
 * uncompressed_page_size). Returns 0, or PQ_EINVAL for an unknown codec,
 * or PQ_ECODEC when the data is corrupt or does not decompress to exactly
 * dst_len bytes. GZIP accepts multiple concatenated members, as
 * Compression.md asks of readers. */
int pqt_decompress(pq_codec codec, const uint8_t *src, size_t n,
                   uint8_t *dst, size_t dst_len, pq_err *err);

#endif
