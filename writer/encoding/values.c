/* values.c - dispatch from a page's encoding to the value encoders
 * (plain.c, rle.c, delta.c, bss.c) over a slice of buffered values. */
#include "values.h"
#include "bss.h"
#include "delta.h"
#include "plain.h"
#include "rle.h"

bool pq_values_encoding_allowed(pq_physical_type type, pq_encoding enc)
{
    switch (enc) {
    case PQ_ENC_PLAIN: return true;
    case PQ_ENC_RLE: return type == PQ_BOOLEAN;
    case PQ_ENC_RLE_DICTIONARY: case PQ_ENC_PLAIN_DICTIONARY: return type != PQ_BOOLEAN;
    case PQ_ENC_DELTA_BINARY_PACKED: return type == PQ_INT32 || type == PQ_INT64;
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY: return type == PQ_BYTE_ARRAY;
    case PQ_ENC_DELTA_BYTE_ARRAY:
        return type == PQ_BYTE_ARRAY || type == PQ_FIXED_LEN_BYTE_ARRAY;
    case PQ_ENC_BYTE_STREAM_SPLIT:
        return type == PQ_FLOAT || type == PQ_DOUBLE || type == PQ_INT32 ||
               type == PQ_INT64 || type == PQ_FIXED_LEN_BYTE_ARRAY;
    default: return false;
    }
}

/* Without a dictionary: integers in logs are mostly timestamps, counters and
 * sizes, where deltas are small; doubles compress better split into byte
 * streams; strings that missed the dictionary are paths, URLs and ids that
 * share prefixes. Booleans use RLE in v2 pages (as parquet-mr does) and
 * PLAIN in v1 for the oldest readers. */
pq_encoding pq_values_default_encoding(pq_physical_type type, int page_version)
{
    switch (type) {
    case PQ_BOOLEAN: return page_version == 2 ? PQ_ENC_RLE : PQ_ENC_PLAIN;
    case PQ_INT32: case PQ_INT64: return PQ_ENC_DELTA_BINARY_PACKED;
    case PQ_FLOAT: case PQ_DOUBLE: return PQ_ENC_BYTE_STREAM_SPLIT;
    case PQ_BYTE_ARRAY: return PQ_ENC_DELTA_BYTE_ARRAY;
    default: return PQ_ENC_PLAIN;
    }
}

/* Boolean RLE values carry a 4-byte length prefix in v1 and v2 pages. */
static int encode_bool_rle(pq_buf *out, const uint8_t *vals, size_t n, pq_buf *wide)
{
    pq_buf_reset(wide);
    if (pq_buf_reserve(wide, n * sizeof(uint16_t)) != 0)
        return PQ_ENOMEM;
    uint16_t *w = (uint16_t *)(void *)wide->data;
    for (size_t i = 0; i < n; i++)
        w[i] = vals[i];
    size_t at = out->len;
    int rc = pq_buf_put_u32le(out, 0);
    rc = rc ? rc : pq_rle_encode_u16(out, w, n, 1);
    if (rc != 0)
        return rc;
    uint32_t len = (uint32_t)(out->len - at - 4);
    for (size_t i = 0; i < 4; i++)
        out->data[at + i] = (uint8_t)(len >> (8 * i));
    return PQ_OK;
}

static int encode_dict_indices(pq_buf *out, const uint32_t *idx, size_t n, int bit_width)
{
    int rc = pq_buf_push(out, (uint8_t)bit_width);
    return rc ? rc : pq_rle_encode_u32(out, idx, n, bit_width);
}

int pq_values_encode(pq_buf *out, const pq_column *c, pq_encoding enc, size_t v0, size_t n,
                     const uint32_t *indices, int dict_bit_width, pq_buf *wide)
{
    pq_physical_type type = c->node->type;
    const uint8_t *fixed = c->values.data ? c->values.data + v0 * c->width : NULL;
    const uint32_t *off = type == PQ_BYTE_ARRAY ? pq_column_offsets(c) + v0 : NULL;
    switch (enc) {
    case PQ_ENC_PLAIN:
        if (type == PQ_BOOLEAN)
            return pq_plain_encode_bool(out, fixed, n);
        if (type == PQ_BYTE_ARRAY)
            return pq_plain_encode_bytes(out, c->heap.data, off, n);
        return pq_plain_encode_fixed(out, fixed, n, c->width);
    case PQ_ENC_RLE:
        return encode_bool_rle(out, fixed, n, wide);
    case PQ_ENC_RLE_DICTIONARY:
        /* an empty page's indices may be no memory at all (NULL + 0 is undefined) */
        return encode_dict_indices(out, n > 0 ? indices + v0 : indices, n, dict_bit_width);
    case PQ_ENC_DELTA_BINARY_PACKED:
        if (type == PQ_INT32)
            return pq_delta_encode_i32(out, (const int32_t *)(const void *)fixed, n);
        return pq_delta_encode_i64(out, (const int64_t *)(const void *)fixed, n);
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
        return pq_delta_length_encode(out, c->heap.data, off, n);
    case PQ_ENC_DELTA_BYTE_ARRAY:
        if (type == PQ_BYTE_ARRAY)
            return pq_delta_bytes_encode(out, c->heap.data, off, n);
        return pq_delta_bytes_encode_fixed(out, fixed, n, c->width);
    case PQ_ENC_BYTE_STREAM_SPLIT:
        return pq_bss_encode(out, fixed, n, c->width);
    default:
        return PQ_EINVAL;
    }
}
