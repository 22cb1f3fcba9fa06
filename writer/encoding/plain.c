/* plain.c - PLAIN encoder (Encodings.md, "Plain: (PLAIN = 0)"): booleans
 * bit-packed LSB-first, fixed-width values little-endian, byte arrays as
 * length-prefixed bytes. */
#include "plain.h"
#include "err.h"

/* PLAIN is little-endian; on a little-endian host fixed-width values are a
 * plain memcpy. A big-endian port must byte-swap here instead. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "plain.c assumes a little-endian host");

int pq_plain_encode_bool(pq_buf *out, const uint8_t *vals, size_t n)
{
    if (n > 0 && vals == NULL)
        return PQ_EINVAL;
    size_t nbytes = n / 8 + (n % 8 != 0);
    if (nbytes == 0)
        return 0; /* out->data may still be NULL: no pointer arithmetic */
    if (pq_buf_reserve(out, nbytes) != 0)
        return PQ_ENOMEM;
    uint8_t *dst = out->data + out->len;
    for (size_t i = 0; i < n; i += 8) {
        size_t m = n - i < 8 ? n - i : 8;
        uint8_t byte = 0;
        for (size_t j = 0; j < m; j++)
            byte |= (uint8_t)((vals[i + j] != 0) << j);
        *dst++ = byte;
    }
    out->len += nbytes;
    return 0;
}

int pq_plain_encode_fixed(pq_buf *out, const void *vals, size_t n, size_t width)
{
    if (width == 0 || (n > 0 && vals == NULL) || n > SIZE_MAX / width)
        return PQ_EINVAL;
    return pq_buf_append(out, vals, n * width);
}

/* Reserves the whole output once: a long page of short strings would
 * otherwise pay a capacity check per value, twice. */
int pq_plain_encode_bytes(pq_buf *out, const uint8_t *heap, const uint32_t *off, size_t n)
{
    if (n == 0)
        return 0;
    if (off == NULL || (heap == NULL && off[n] != off[0]) || off[n] < off[0]
        || n > (SIZE_MAX - (off[n] - off[0])) / 4)
        return PQ_EINVAL;
    if (pq_buf_reserve(out, 4 * n + (off[n] - off[0])) != 0)
        return PQ_ENOMEM;
    uint8_t *dst = out->data + out->len;
    for (size_t i = 0; i < n; i++) {
        /* Checking against off[n] too keeps every write inside the
         * reservation even if the offsets decrease later on. */
        if (off[i + 1] < off[i] || off[i + 1] > off[n])
            return PQ_EINVAL; /* out->len not yet advanced: out unchanged */
        uint32_t len = off[i + 1] - off[i];
        dst[0] = (uint8_t)len;
        dst[1] = (uint8_t)(len >> 8);
        dst[2] = (uint8_t)(len >> 16);
        dst[3] = (uint8_t)(len >> 24);
        if (len > 0)
            memcpy(dst + 4, heap + off[i], len);
        dst += 4 + (size_t)len;
    }
    out->len = (size_t)(dst - out->data);
    return 0;
}
