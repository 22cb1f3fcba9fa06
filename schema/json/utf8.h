/* utf8.h - RFC 3629 UTF-8 validation (no overlongs, no encoded
 * surrogates, nothing above U+10FFFF), for strings that did not come
 * through the JSON parser (which checks its own): Variant strings and
 * keys (schema/variant/), protobuf strings (daemon/ingest/http_otlp.c).
 *
 * Thread: any (pure). */
#ifndef PQ_UTF8_H
#define PQ_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline bool utf8_valid(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t w;
        if (n - i >= 8 && (memcpy(&w, s + i, 8), (w & 0x8080808080808080ULL) == 0)) {
            i += 8;                     /* log text is mostly ASCII */
            continue;
        }
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            k = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            lo = c == 0xE0 ? 0xA0 : 0x80;
            hi = c == 0xED ? 0x9F : 0xBF;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            lo = c == 0xF0 ? 0x90 : 0x80;
            hi = c == 0xF4 ? 0x8F : 0xBF;
        } else
            return false;
        if (n - i <= k || s[i + 1] < lo || s[i + 1] > hi)
            return false;
        for (size_t j = 2; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return false;
        i += k + 1;
    }
    return true;
}

#endif
