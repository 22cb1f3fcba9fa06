/* walk_decode.c - decoding a data page's values (Encodings.md: PLAIN,
 * RLE booleans, dictionary indices, DELTA_*, BYTE_STREAM_SPLIT) through
 * tests/support/decode.h, and folding them into the page's true min/max;
 * decoding the dictionary page. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "walk.h"

/* Where an empty byte range points: never NULL for memcmp and friends. */
const uint8_t no_bytes[1];

void scratch_free(page_scratch *s)
{
    free(s->mem);
    free(s->idx);
    pqt_bytes_free(&s->b);
}

static void fold_fixed(const col_order *o, vacc *a, const uint8_t *p, size_t n,
                       size_t width)
{
    for (size_t i = 0; i < n; i++)
        fold_value(o, a, p + i * width, width);
}

static void fold_bytes(const col_order *o, vacc *a, const pqt_bytes *b)
{
    const uint8_t *heap = b->heap ? b->heap : no_bytes;
    for (size_t i = 0; i < b->n; i++)
        fold_value(o, a, heap + b->off[i], b->off[i + 1] - b->off[i]);
}

static int alloc_scratch(walk *w, void **p, size_t n, size_t size)
{
    *p = malloc(n ? n * size : 1);
    return *p ? 0 : hard(w, "out of memory for %zu values", n);
}

/* Bytes left after the values: the spec defines none. */
static int trailing(walk *w, const char *enc, size_t used, size_t len, size_t n)
{
    if (used >= len)
        return 0;
    return note(w, "%s: %zu bytes follow the %zu encoded values in the page",
                enc, len - used, n);
}

static int decode_plain(walk *w, const chunk_state *cs, const pqf_parts *parts,
                        size_t n, vacc *a, page_scratch *s)
{
    const col_order *o = &cs->ord;
    size_t used = 0;
    if (cs->ch.type == PQ_BYTE_ARRAY) {
        if (pqt_plain_decode_bytes(parts->values, parts->values_len, n, &s->b, &used) != 0)
            return soft(w, "PLAIN: %zu byte arrays do not decode from %zu bytes", n,
                        parts->values_len);
        fold_bytes(o, a, &s->b);
        return 0;
    }
    if (cs->ch.type == PQ_BOOLEAN) {
        if (alloc_scratch(w, (void **)&s->mem, n, 1) != 0)
            return -1;
        if (pqt_plain_decode_bool(parts->values, parts->values_len, s->mem, n, &used) != 0)
            return soft(w, "PLAIN: %zu booleans do not decode from %zu bytes", n,
                        parts->values_len);
        fold_fixed(o, a, s->mem, n, 1);
        return 0;
    }
    if (o->width == 0 || parts->values_len / o->width < n)
        return soft(w, "PLAIN: %zu %s values do not fit in %zu bytes", n,
                    pqf_type_name(cs->ch.type), parts->values_len);
    fold_fixed(o, a, parts->values, n, o->width);
    return 0;
}

/* RLE booleans carry a 4-byte length in v1 and v2 pages (Encodings.md). */
static int decode_rle_bool(walk *w, const chunk_state *cs, const pqf_parts *parts,
                           size_t n, vacc *a, page_scratch *s)
{
    size_t len = parts->values_len, used = 0;
    if (cs->ch.type != PQ_BOOLEAN)
        return soft(w, "RLE values in a %s column (RLE is for BOOLEAN values only)",
                    pqf_type_name(cs->ch.type));
    if (len < 4 || le32(parts->values) > len - 4)
        return soft(w, "RLE booleans: the 4-byte length prefix %s", len < 4 ?
                    "is missing" : "runs past the page");
    size_t body = le32(parts->values);
    if (alloc_scratch(w, (void **)&s->idx, n, sizeof *s->idx) != 0 ||
        alloc_scratch(w, (void **)&s->mem, n, 1) != 0)
        return -1;
    if (pqt_rle_decode(parts->values + 4, body, 1, s->idx, n, &used) != 0)
        return soft(w, "RLE booleans: %zu values do not decode from %zu bytes", n, body);
    for (size_t i = 0; i < n; i++)
        s->mem[i] = (uint8_t)s->idx[i];
    fold_fixed(&cs->ord, a, s->mem, n, 1);
    if (used < body && trailing(w, "RLE booleans", used, body, n) != 0)
        return -1;
    return trailing(w, "RLE booleans", 4 + body, len, n);
}

/* Dictionary indices: bit width byte, then the hybrid without length. */
static int decode_dict_ids(walk *w, const chunk_state *cs, const pqf_page *pg,
                           const pqf_parts *parts, size_t n, vacc *a, page_scratch *s)
{
    const char *enc = pqf_encoding_name(pg->encoding);
    size_t len = parts->values_len, used = 0;
    if (!cs->dict_ok)
        return soft(w, "%s page, but the chunk has no decodable dictionary page", enc);
    if (len < 1 || parts->values[0] > 32)
        return soft(w, "%s: %s", enc, len < 1 ? "no bit width byte"
                                            : "bit width above 32");
    if (alloc_scratch(w, (void **)&s->idx, n, sizeof *s->idx) != 0)
        return -1;
    if (pqt_rle_decode(parts->values + 1, len - 1, parts->values[0], s->idx, n, &used) != 0)
        return soft(w, "%s: %zu indices of %d bits do not decode from %zu bytes", enc, n,
                    parts->values[0], len - 1);
    const pqt_bytes *d = &cs->dict;
    const uint8_t *heap = d->heap ? d->heap : no_bytes;
    for (size_t i = 0; i < n; i++) {
        uint32_t k = s->idx[i];
        if (k >= d->n)
            return soft(w, "%s: value %zu is dictionary index %u, the dictionary has "
                        "%zu entries", enc, i, k, d->n);
        fold_value(&cs->ord, a, heap + d->off[k], d->off[k + 1] - d->off[k]);
    }
    return trailing(w, enc, 1 + used, len, n);
}

static int decode_delta_ints(walk *w, const chunk_state *cs, const pqf_parts *parts,
                             size_t n, vacc *a, page_scratch *s)
{
    size_t got = 0, used = 0;
    bool is32 = cs->ch.type == PQ_INT32;
    if (!is32 && cs->ch.type != PQ_INT64)
        return soft(w, "DELTA_BINARY_PACKED in a %s column (INT32/INT64 only)",
                    pqf_type_name(cs->ch.type));
    size_t width = is32 ? 4 : 8;
    if (alloc_scratch(w, (void **)&s->mem, n, width) != 0)
        return -1;
    int rc = is32 ? pqt_delta_decode_i32(parts->values, parts->values_len,
                                         (int32_t *)(void *)s->mem, n, &got, &used)
                  : pqt_delta_decode_i64(parts->values, parts->values_len,
                                         (int64_t *)(void *)s->mem, n, &got, &used);
    if (rc == PQ_ELIMIT)
        return soft(w, "DELTA_BINARY_PACKED header counts more values than the "
                    "%zu non-null levels", n);
    if (rc != 0)
        return soft(w, "DELTA_BINARY_PACKED: %zu values do not decode from %zu bytes",
                    n, parts->values_len);
    if (got != n)
        return soft(w, "DELTA_BINARY_PACKED header counts %zu values, the levels "
                    "say %zu non-null", got, n);
    for (size_t i = 0; i < n; i++) {   /* native ints to PLAIN bytes, in place */
        uint8_t *p = s->mem + i * width;
        if (is32) {
            int32_t v;
            memcpy(&v, p, 4);
            put_le32(p, (uint32_t)v);
        } else {
            int64_t v;
            memcpy(&v, p, 8);
            put_le64(p, (uint64_t)v);
        }
    }
    fold_fixed(&cs->ord, a, s->mem, n, width);
    return trailing(w, "DELTA_BINARY_PACKED", used, parts->values_len, n);
}

static int decode_delta_bytes(walk *w, const chunk_state *cs, const pqf_page *pg,
                              const pqf_parts *parts, size_t n, vacc *a, page_scratch *s)
{
    const char *enc = pqf_encoding_name(pg->encoding);
    bool front = pg->encoding == PQ_ENC_DELTA_BYTE_ARRAY;
    size_t used = 0;
    if (cs->ch.type != PQ_BYTE_ARRAY &&
        !(front && cs->ch.type == PQ_FIXED_LEN_BYTE_ARRAY))
        return soft(w, "%s in a %s column", enc, pqf_type_name(cs->ch.type));
    int rc = front ? pqt_delta_bytes_decode(parts->values, parts->values_len, &s->b, &used)
                   : pqt_delta_length_decode(parts->values, parts->values_len, &s->b, &used);
    if (rc != 0)
        return soft(w, "%s: the values do not decode from %zu bytes", enc,
                    parts->values_len);
    if (s->b.n != n)
        return soft(w, "%s holds %zu values, the levels say %zu non-null", enc, s->b.n, n);
    for (size_t i = 0; cs->ch.type == PQ_FIXED_LEN_BYTE_ARRAY && i < n; i++)
        if (s->b.off[i + 1] - s->b.off[i] != cs->ord.width)
            return soft(w, "%s: value %zu is %u bytes in a FIXED_LEN_BYTE_ARRAY(%zu) "
                        "column", enc, i, s->b.off[i + 1] - s->b.off[i], cs->ord.width);
    fold_bytes(&cs->ord, a, &s->b);
    return trailing(w, enc, used, parts->values_len, n);
}

static int decode_bss(walk *w, const chunk_state *cs, const pqf_parts *parts, size_t n,
                      vacc *a, page_scratch *s)
{
    size_t width = cs->ord.width, used = 0;
    int t = cs->ch.type;
    if (t == PQ_BOOLEAN || t == PQ_BYTE_ARRAY || t == PQ_INT96 || width == 0)
        return soft(w, "BYTE_STREAM_SPLIT in a %s column", pqf_type_name(t));
    /* The value count of a stream split is its length / width. */
    if (parts->values_len / width != n || parts->values_len % width != 0)
        return soft(w, "BYTE_STREAM_SPLIT: %zu bytes, %zu non-null values of %zu bytes "
                    "need %zu", parts->values_len, n, width, n * width);
    if (alloc_scratch(w, (void **)&s->mem, n, width) != 0)
        return -1;
    if (pqt_bss_decode(parts->values, parts->values_len, s->mem, n, width, &used) != 0)
        return soft(w, "BYTE_STREAM_SPLIT: %zu values do not decode", n);
    fold_fixed(&cs->ord, a, s->mem, n, width);
    return 0;
}

int decode_values(walk *w, const chunk_state *cs, const pqf_page *pg,
                  const pqf_parts *parts, size_t n, vacc *a, page_scratch *s)
{
    switch (pg->encoding) {
    case PQ_ENC_PLAIN: return decode_plain(w, cs, parts, n, a, s);
    case PQ_ENC_RLE: return decode_rle_bool(w, cs, parts, n, a, s);
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: return decode_dict_ids(w, cs, pg, parts, n, a, s);
    case PQ_ENC_DELTA_BINARY_PACKED: return decode_delta_ints(w, cs, parts, n, a, s);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: return decode_delta_bytes(w, cs, pg, parts, n, a, s);
    case PQ_ENC_BYTE_STREAM_SPLIT: return decode_bss(w, cs, parts, n, a, s);
    default:
        return soft(w, "values in encoding %s cannot be decoded (not a value "
                    "encoding of a data page)", pqf_encoding_name(pg->encoding));
    }
}

/* PLAIN dictionary page values, kept for the chunk's dictionary pages. */
int decode_dict(walk *w, chunk_state *cs, const pqf_page *pg, const uint8_t *buf,
                size_t len)
{
    size_t n = (size_t)pg->num_values, used = 0, width = cs->ord.width;
    pqt_bytes *d = &cs->dict;
    int rc;
    if (cs->ch.type == PQ_BYTE_ARRAY) {
        rc = pqt_plain_decode_bytes(buf, len, n, d, &used);
    } else {
        bool is_bool = cs->ch.type == PQ_BOOLEAN;
        if (width == 0 || (is_bool ? n / 8 > len : n > len / width))
            return soft(w, "dictionary: %zu %s values do not fit in %zu bytes", n,
                        pqf_type_name(cs->ch.type), len);
        d->heap = malloc(n ? n * width : 1);
        d->off = malloc((n + 1) * sizeof *d->off);
        if (d->heap == NULL || d->off == NULL)
            return hard(w, "out of memory for a %zu-entry dictionary", n);
        for (size_t i = 0; i <= n; i++)
            d->off[i] = (uint32_t)(i * width);
        d->n = n;
        rc = is_bool ? pqt_plain_decode_bool(buf, len, d->heap, n, &used)
                     : pqt_plain_decode_fixed(buf, len, d->heap, n, width, &used);
    }
    if (rc != 0)
        return soft(w, "dictionary: %zu PLAIN %s values do not decode from %zu bytes",
                    n, pqf_type_name(cs->ch.type), len);
    if (used != len)
        return soft(w, "dictionary: %zu values take %zu of the page's %zu bytes", n,
                    used, len);
    cs->dict_ok = true;
    return 0;
}
