/* bss.c - BYTE_STREAM_SPLIT encoder (Encodings.md, "Byte Stream Split:
 * (BYTE_STREAM_SPLIT = 9)"). No metadata: the streams end where the page
 * does. */
#include "bss.h"
#include "err.h"

#include <stdint.h>

/* Source bytes scattered per pass: small enough to stay in L1 while each
 * of the width streams takes its bytes, so a value's bytes are read from
 * memory once instead of once per stream. */
#define BSS_CHUNK_BYTES 16384

/* `width` is a literal at the hot call sites so the inner loop unrolls. */
static inline void bss_scatter(uint8_t *dst, const uint8_t *src, size_t n, size_t first,
                               size_t count, size_t width)
{
    for (size_t k = 0; k < width; k++) {
        uint8_t *d = dst + k * n + first;
        const uint8_t *s = src + k;
        for (size_t i = 0; i < count; i++)
            d[i] = s[i * width];
    }
}

int pq_bss_encode(pq_buf *out, const void *vals, size_t n, size_t width)
{
    if (width == 0 || (n > 0 && vals == NULL) || n > SIZE_MAX / width)
        return PQ_EINVAL;
    if (n == 0)
        return 0; /* out->data may still be NULL: no pointer arithmetic */
    if (pq_buf_reserve(out, n * width) != 0)
        return PQ_ENOMEM;
    uint8_t *dst = out->data + out->len;
    size_t chunk = BSS_CHUNK_BYTES / width > 16 ? BSS_CHUNK_BYTES / width : 16;
    for (size_t c = 0; c < n; c += chunk) {
        size_t m = n - c < chunk ? n - c : chunk;
        const uint8_t *src = (const uint8_t *)vals + c * width;
        switch (width) {
        case 2: bss_scatter(dst, src, n, c, m, 2); break;
        case 4: bss_scatter(dst, src, n, c, m, 4); break;
        case 8: bss_scatter(dst, src, n, c, m, 8); break;
        default: bss_scatter(dst, src, n, c, m, width); break;
        }
    }
    out->len += n * width;
    return 0;
}
