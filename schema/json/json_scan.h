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

/* A plain byte: printable ASCII other than '"' and '\\'. */
static inline int json_plain_byte(uint8_t b)
{
    return b >= 0x20 && b < 0x80 && b != '"' && b != '\\';
}

/* The tiers of json_skip_plain. Each skips plain bytes while it can and
 * stops at the first other byte or where fewer bytes than it takes at a
 * time remain; the differential fuzz target fuzz_json_scan runs each to
 * its end against json_skip_plain_bytes on arbitrary input. */
#if defined(__SSE2__)
/* Sixteen at a time: as signed bytes, both < 0x20 and >= 0x80 are < 0x20. */
static inline const uint8_t *json_skip_plain_sse2(const uint8_t *c, const uint8_t *end)
{
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
    return c;
}
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/* Eight at a time: a byte is special when it is < 0x20, == '"', == '\\'
 * or has its top bit set; the classic "has zero/less byte" bit tricks
 * never flag a byte below the first truly special one, so the lowest flag
 * is exact. */
static inline const uint8_t *json_skip_plain_swar(const uint8_t *c, const uint8_t *end)
{
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
    return c;
}
#endif

static inline const uint8_t *json_skip_plain_bytes(const uint8_t *c, const uint8_t *end)
{
    while (c < end && json_plain_byte(*c))
        c++;
    return c;
}

/* Skips plain string bytes and returns the first other byte, or end: SSE2
 * (every x86-64) sixteen bytes at a time, then (or elsewhere) eight, then
 * one. A tier that stopped with its width still left stopped at a special
 * byte, which is the answer. */
static inline const uint8_t *json_skip_plain(const uint8_t *c, const uint8_t *end)
{
#if defined(__SSE2__)
    c = json_skip_plain_sse2(c, end);
    if (end - c >= 16)
        return c;
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    c = json_skip_plain_swar(c, end);
    if (end - c >= 8)
        return c;
#endif
    return json_skip_plain_bytes(c, end);
}

#endif
