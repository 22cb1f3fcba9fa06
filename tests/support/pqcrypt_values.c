/* pqcrypt_values.c - a decrypted, decompressed page's values decoded
 * (PLAIN, dictionary indices, RLE booleans, DELTA_*, BYTE_STREAM_SPLIT)
 * and appended to the column's value list. */
#include <stdlib.h>
#include <string.h>


#include "pqcrypt_int.h"

static size_t type_width(const pqc_column *c)
{
    switch (c->type) {
    case PQ_BOOLEAN: return 1;
    case PQ_INT32:
    case PQ_FLOAT: return 4;
    case PQ_INT64:
    case PQ_DOUBLE: return 8;
    case PQ_INT96: return 12;
    case PQ_FIXED_LEN_BYTE_ARRAY: return c->type_length > 0 ? (size_t)c->type_length : 0;
    default: return 0; /* BYTE_ARRAY */
    }
}

/* PLAIN values into a pqt_bytes (dictionary pages and PLAIN data pages). */
int pqc_plain_values(const pqc_column *c, const uint8_t *p, size_t len, size_t n,
                     pqt_bytes *out, pq_err *err)
{
    memset(out, 0, sizeof *out);
    size_t used = 0;
    if (c->type == PQ_BYTE_ARRAY) {
        if (pqt_plain_decode_bytes(p, len, n, out, &used) != 0)
            return pq_err_set(err, PQ_EPARSE, "PLAIN byte arrays: %zu values do not decode", n);
        return 0;
    }
    size_t w = type_width(c);
    if (w == 0)
        return pq_err_set(err, PQ_EPARSE, "FLBA without a type_length");
    out->off = malloc((n + 1) * sizeof *out->off);
    out->heap = malloc(n * w + 1);
    if (out->off == NULL || out->heap == NULL) {
        pqt_bytes_free(out);
        return pq_err_set(err, PQ_ENOMEM, "out of memory");
    }
    int rc = c->type == PQ_BOOLEAN ? pqt_plain_decode_bool(p, len, out->heap, n, &used)
                                   : pqt_plain_decode_fixed(p, len, out->heap, n, w, &used);
    if (rc != 0) {
        pqt_bytes_free(out);
        return pq_err_set(err, PQ_EPARSE, "PLAIN: %zu values of %zu bytes do not fit %zu bytes",
                          n, w, len);
    }
    for (size_t i = 0; i <= n; i++)
        out->off[i] = (uint32_t)(i * w);
    out->n = n;
    return 0;
}

static int push_all(pqc_column *c, const pqt_bytes *b, pq_err *err)
{
    for (size_t i = 0; i < b->n; i++)
        if (pqc_col_push(c, b->heap + b->off[i], b->off[i + 1] - b->off[i]) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}

static int push_fixed(pqc_column *c, const uint8_t *raw, size_t n, size_t w, pq_err *err)
{
    for (size_t i = 0; i < n; i++)
        if (pqc_col_push(c, raw + i * w, w) != 0)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
    return 0;
}

/* n defined values of one data page in encoding enc. */
int pqc_decode_values(pqc_column *c, int enc, const uint8_t *p, size_t len, size_t n,
                      const pqt_bytes *dict, pq_err *err)
{
    size_t w = type_width(c);
    int rc = 0;
    if (n == 0)
        return 0;
    switch (enc) {
    case PQ_ENC_PLAIN: {
        pqt_bytes b;
        if ((rc = pqc_plain_values(c, p, len, n, &b, err)) != 0)
            return rc;
        rc = push_all(c, &b, err);
        pqt_bytes_free(&b);
        return rc;
    }
    case PQ_ENC_PLAIN_DICTIONARY:
    case PQ_ENC_RLE_DICTIONARY: {
        if (dict == NULL)
            return pq_err_set(err, PQ_EPARSE, "dictionary-encoded page without a dictionary page");
        if (len < 1 || p[0] > 32)
            return pq_err_set(err, PQ_EPARSE, "dictionary indices: bad bit width");
        uint32_t *idx = malloc((n + 1) * sizeof *idx);
        if (idx == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        if (pqt_rle_decode(p + 1, len - 1, p[0], idx, n, NULL) != 0)
            rc = pq_err_set(err, PQ_EPARSE, "dictionary indices: %zu do not decode", n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            if (idx[i] >= dict->n)
                rc = pq_err_set(err, PQ_EPARSE, "dictionary index %u >= %zu entries", idx[i],
                                dict->n);
            else if (pqc_col_push(c, dict->heap + dict->off[idx[i]],
                              dict->off[idx[i] + 1] - dict->off[idx[i]]) != 0)
                rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
        }
        free(idx);
        return rc;
    }
    case PQ_ENC_RLE: { /* booleans: 4-byte length, then the hybrid, width 1 */
        if (c->type != PQ_BOOLEAN || len < 4 || pqc_rd_le32(p) > len - 4)
            return pq_err_set(err, PQ_EPARSE, "RLE values: not a well-formed boolean run");
        uint32_t *v = malloc((n + 1) * sizeof *v);
        if (v == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        if (pqt_rle_decode(p + 4, pqc_rd_le32(p), 1, v, n, NULL) != 0)
            rc = pq_err_set(err, PQ_EPARSE, "RLE booleans: %zu do not decode", n);
        for (size_t i = 0; rc == 0 && i < n; i++) {
            uint8_t b = (uint8_t)v[i];
            if (pqc_col_push(c, &b, 1) != 0)
                rc = pq_err_set(err, PQ_ENOMEM, "out of memory");
        }
        free(v);
        return rc;
    }
    case PQ_ENC_DELTA_BINARY_PACKED: {
        if (c->type != PQ_INT32 && c->type != PQ_INT64)
            return pq_err_set(err, PQ_EPARSE, "DELTA_BINARY_PACKED on a non-integer column");
        size_t got = 0;
        uint8_t *raw = malloc(n * w + 1);
        if (raw == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        rc = c->type == PQ_INT32 ? pqt_delta_decode_i32(p, len, (int32_t *)(void *)raw, n, &got, NULL)
                                 : pqt_delta_decode_i64(p, len, (int64_t *)(void *)raw, n, &got, NULL);
        if (rc != 0 || got != n)
            rc = pq_err_set(err, PQ_EPARSE, "DELTA_BINARY_PACKED: %zu of %zu values", got, n);
        else
            rc = push_fixed(c, raw, n, w, err);
        free(raw);
        return rc;
    }
    case PQ_ENC_DELTA_LENGTH_BYTE_ARRAY:
    case PQ_ENC_DELTA_BYTE_ARRAY: {
        pqt_bytes b = { 0 };
        rc = enc == PQ_ENC_DELTA_BYTE_ARRAY ? pqt_delta_bytes_decode(p, len, &b, NULL)
                                            : pqt_delta_length_decode(p, len, &b, NULL);
        if (rc != 0 || b.n != n)
            rc = pq_err_set(err, PQ_EPARSE, "%s: %zu of %zu values", pqf_encoding_name(enc),
                            b.n, n);
        else
            rc = push_all(c, &b, err);
        pqt_bytes_free(&b);
        return rc;
    }
    case PQ_ENC_BYTE_STREAM_SPLIT: {
        if (w == 0 || c->type == PQ_BOOLEAN)
            return pq_err_set(err, PQ_EPARSE, "BYTE_STREAM_SPLIT on %s", pqf_type_name(c->type));
        uint8_t *raw = malloc(n * w + 1);
        if (raw == NULL)
            return pq_err_set(err, PQ_ENOMEM, "out of memory");
        if (pqt_bss_decode(p, len, raw, n, w, NULL) != 0)
            rc = pq_err_set(err, PQ_EPARSE, "BYTE_STREAM_SPLIT: %zu values do not decode", n);
        else
            rc = push_fixed(c, raw, n, w, err);
        free(raw);
        return rc;
    }
    default:
        return pq_err_set(err, PQ_EPARSE, "unsupported value encoding %d (%s)", enc,
                          pqf_encoding_name(enc));
    }
}
