/* page.c - PageHeader serialization (parquet.thrift PageHeader, DataPage-
 * Header, DataPageHeaderV2, DictionaryPageHeader), page compression and the
 * page CRC (CRC-32 over the page bytes as stored, after compression). */
#include "page.h"
#include "compress.h"

#include <limits.h>
#include <zlib.h>

void pq_thrift_statistics(pq_thrift *t, int16_t fid, const pq_stats_out *s)
{
    pq_thrift_field_struct_begin(t, fid);
    if (s->has_minmax && s->legacy_minmax) {
        pq_thrift_field_binary(t, 1, s->max, s->max_len);
        pq_thrift_field_binary(t, 2, s->min, s->min_len);
    }
    if (s->null_count >= 0)
        pq_thrift_field_i64(t, 3, s->null_count);
    if (s->has_minmax) {
        pq_thrift_field_binary(t, 5, s->max, s->max_len);
        pq_thrift_field_binary(t, 6, s->min, s->min_len);
        pq_thrift_field_bool(t, 7, s->max_exact);
        pq_thrift_field_bool(t, 8, s->min_exact);
    }
    if (s->has_nan_count)
        pq_thrift_field_i64(t, 9, s->nan_count);
    pq_thrift_struct_end(t);
}

static void write_type_header(pq_thrift *t, const pq_page_spec *spec, pq_codec codec)
{
    switch (spec->type) {
    case PQ_PAGE_DATA:
        pq_thrift_field_struct_begin(t, 5);
        pq_thrift_field_i32(t, 1, spec->num_values);
        pq_thrift_field_i32(t, 2, spec->encoding);
        pq_thrift_field_i32(t, 3, PQ_ENC_RLE);
        pq_thrift_field_i32(t, 4, PQ_ENC_RLE);
        if (spec->stats)
            pq_thrift_statistics(t, 5, spec->stats);
        pq_thrift_struct_end(t);
        break;
    case PQ_PAGE_DICTIONARY:
        pq_thrift_field_struct_begin(t, 7);
        pq_thrift_field_i32(t, 1, spec->num_values);
        pq_thrift_field_i32(t, 2, spec->encoding);
        pq_thrift_struct_end(t);
        break;
    case PQ_PAGE_DATA_V2:
    default:
        pq_thrift_field_struct_begin(t, 8);
        pq_thrift_field_i32(t, 1, spec->num_values);
        pq_thrift_field_i32(t, 2, spec->num_nulls);
        pq_thrift_field_i32(t, 3, spec->num_rows);
        pq_thrift_field_i32(t, 4, spec->encoding);
        pq_thrift_field_i32(t, 5, (int32_t)spec->def_len);
        pq_thrift_field_i32(t, 6, (int32_t)spec->rep_len);
        /* is_compressed defaults to true; say false when the codec is none
         * so readers skip the decompressor. */
        if (codec == PQ_CODEC_UNCOMPRESSED)
            pq_thrift_field_bool(t, 7, false);
        if (spec->stats)
            pq_thrift_statistics(t, 8, spec->stats);
        pq_thrift_struct_end(t);
        break;
    }
}

/* Compresses into scratch: for v2 the levels stay uncompressed in front. */
static int compress_body(const pq_page_spec *spec, pq_compressor *comp, pq_codec codec,
                         int level, pq_buf *scratch, pq_err *err)
{
    pq_buf_reset(scratch);
    if (spec->type == PQ_PAGE_DATA_V2 &&
        pq_buf_append(scratch, spec->levels, spec->rep_len + spec->def_len) != 0)
        return pq_err_set(err, PQ_ENOMEM, "page: out of memory");
    if (codec == PQ_CODEC_UNCOMPRESSED) {
        if (pq_buf_append(scratch, spec->body, spec->body_len) != 0)
            return pq_err_set(err, PQ_ENOMEM, "page: out of memory");
        return PQ_OK;
    }
    return pq_compressor_run(comp, codec, level, spec->body, spec->body_len, scratch, err);
}

/* Replaces the plaintext page bytes in scratch by their encrypted module;
 * the CRC and compressed_page_size then describe the bytes as stored. */
static int encrypt_body(const pq_page_spec *spec, pq_buf *scratch, pq_err *err)
{
    const pq_page_crypto *c = spec->crypto;
    bool dict = spec->type == PQ_PAGE_DICTIONARY;
    pq_buf_reset(c->scratch);
    int rc = pq_crypto_encrypt_module(c->file, c->key, dict ? PQ_MODULE_DICT_PAGE
                                                             : PQ_MODULE_DATA_PAGE,
                                      c->row_group, c->column, dict ? 0 : c->page,
                                      scratch->data, scratch->len, c->scratch, err);
    if (rc != 0)
        return rc;
    pq_buf_reset(scratch);
    return pq_buf_append(scratch, c->scratch->data, c->scratch->len) ? PQ_ENOMEM : PQ_OK;
}

static int write_header(const pq_page_spec *spec, pq_codec codec, size_t uncompressed,
                        const pq_buf *body, bool crc, pq_buf *out)
{
    pq_thrift t;
    pq_thrift_init(&t, out);
    pq_thrift_struct_begin(&t);
    pq_thrift_field_i32(&t, 1, spec->type);
    pq_thrift_field_i32(&t, 2, (int32_t)uncompressed);
    pq_thrift_field_i32(&t, 3, (int32_t)body->len);
    if (crc) {
        uLong c = crc32(0L, Z_NULL, 0);
        c = crc32_z(c, body->data, body->len);
        pq_thrift_field_i32(&t, 4, (int32_t)(uint32_t)c);
    }
    write_type_header(&t, spec, codec);
    pq_thrift_struct_end(&t);
    return pq_thrift_error(&t);
}

static int encrypt_header(const pq_page_spec *spec, pq_buf *out, size_t start, pq_err *err)
{
    const pq_page_crypto *c = spec->crypto;
    bool dict = spec->type == PQ_PAGE_DICTIONARY;
    pq_buf_reset(c->scratch);
    if (pq_buf_append(c->scratch, out->data + start, out->len - start) != 0)
        return pq_err_set(err, PQ_ENOMEM, "page: out of memory");
    out->len = start;
    return pq_crypto_encrypt_module(c->file, c->key, dict ? PQ_MODULE_DICT_PAGE_HEADER
                                                          : PQ_MODULE_DATA_PAGE_HEADER,
                                    c->row_group, c->column, dict ? 0 : c->page,
                                    c->scratch->data, c->scratch->len, out, err);
}

int pq_page_build(const pq_page_spec *spec, pq_compressor *comp, pq_codec codec,
                  int level, bool crc, pq_buf *scratch, pq_buf *out, pq_page_result *res,
                  pq_err *err)
{
    size_t levels_len = spec->type == PQ_PAGE_DATA_V2 ? spec->rep_len + spec->def_len : 0;
    size_t uncompressed = levels_len + spec->body_len;
    int rc = compress_body(spec, comp, codec, level, scratch, err);
    if (rc == 0 && spec->crypto)
        rc = encrypt_body(spec, scratch, err);
    if (rc != 0)
        return rc;
    if (uncompressed > INT32_MAX || scratch->len > INT32_MAX)
        return pq_err_set(err, PQ_ELIMIT, "page: %zu bytes exceeds the 2 GiB page limit",
                          uncompressed);
    size_t start = out->len;
    if (write_header(spec, codec, uncompressed, scratch, crc, out) != 0)
        return pq_err_set(err, PQ_ENOMEM, "page: out of memory");
    if (spec->crypto && (rc = encrypt_header(spec, out, start, err)) != 0)
        return rc;
    res->header_len = out->len - start;
    if (pq_buf_append(out, scratch->data, scratch->len) != 0)
        return pq_err_set(err, PQ_ENOMEM, "page: out of memory");
    res->compressed_len = scratch->len;
    res->uncompressed_len = uncompressed;
    return PQ_OK;
}
