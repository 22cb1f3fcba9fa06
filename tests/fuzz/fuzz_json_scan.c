/* fuzz_json_scan.c - differential libFuzzer target for the string scan of
 * schema/json/json_scan.h, which the parser and the schema-directed parse
 * use to skip a string's plain bytes.
 *
 * From every start offset of the input (the first 64: the wide tiers'
 * alignment is what differs), json_skip_plain and each of its tiers run
 * alone to the end (SSE2 sixteen bytes at a time, SWAR eight at a time,
 * each finished by the byte loop) must stop at the same byte as a plain
 * byte-by-byte reference written here from the definition (printable
 * ASCII other than '"' and '\\'), never past the end. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "json_scan.h"

static const uint8_t *reference(const uint8_t *c, const uint8_t *end)
{
    for (; c < end; c++)
        if (*c < 0x20 || *c >= 0x80 || *c == '"' || *c == '\\')
            break;
    return c;
}

static void check(const uint8_t *got, const uint8_t *want)
{
    if (got != want)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of its own, so ASan sees any read past the end. */
    uint8_t *buf = malloc(size ? size : 1);
    if (buf == NULL)
        return 0;
    for (size_t i = 0; i < size; i++)
        buf[i] = data[i];
    const uint8_t *end = buf + size;
    for (size_t start = 0; start <= size && start < 64; start++) {
        const uint8_t *c = buf + start;
        const uint8_t *want = reference(c, end);
        check(json_skip_plain(c, end), want);
        check(json_skip_plain_bytes(c, end), want);
#if defined(__SSE2__)
        check(json_skip_plain_bytes(json_skip_plain_sse2(c, end), end), want);
#endif
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        check(json_skip_plain_bytes(json_skip_plain_swar(c, end), end), want);
#endif
    }
    free(buf);
    return 0;
}
