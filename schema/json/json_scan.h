/* json_scan.h - the scan of a string's plain bytes, shared by the parser
 * (json.c) and the schema-directed parse (schema/shred/shred_direct.c),
 * which inlines it: a call per string value would cost about as much as
 * the scan of a short one. Pure function, any thread. */
#ifndef PQ_JSON_SCAN_H
#define PQ_JSON_SCAN_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* Skips plain string bytes (printable ASCII other than '"' and '\\') and
 * returns the first other byte, or end. With SSE2 (every x86-64) sixteen
 * bytes at a time; then, or elsewhere, eight bytes at a time: a byte is
 * special when it is < 0x20, == '"', == '\\' or has its top bit set; the
 * classic "has zero/less byte" bit tricks never flag a byte below the
 * first truly special one, so the lowest flag is exact. */
static inline const uint8_t *json_skip_plain(const uint8_t *c, const uint8_t *end)
{
#if defined(__SSE2__)
    /* 16 at a time: as signed bytes, both < 0x20 and >= 0x80 are < 0x20. */
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - c >= 16) {
        const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)c);
        const __m128i sp = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
            _mm_cmplt_epi8(v, space));
        const unsigned mask = (unsigned)_mm_movemask_epi8(sp);
        if (mask != 0)
            return c + __builtin_ctz(mask);
        c += 16;
    }
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    const uint64_t ones = 0x0101010101010101ULL;
    const uint64_t highs = 0x8080808080808080ULL;
    while (end - c >= 8) {
        uint64_t v;
        memcpy(&v, c, 8);
        const uint64_t q = v ^ (ones * '"');
        const uint64_t b = v ^ (ones * '\\');
        const uint64_t t = (((v - ones * 0x20) & ~v) | ((q - ones) & ~q) |
                            ((b - ones) & ~b) | v) & highs;
        if (t != 0)
            return c + (__builtin_ctzll(t) >> 3);
        c += 8;
    }
#endif
    while (c < end && *c >= 0x20 && *c < 0x80 && *c != '"' && *c != '\\')
        c++;
    return c;
}

#endif
